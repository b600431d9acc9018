"""Fragment math: what attention computes on its scores between its two products.

Every op works lane by lane through the `c` layout of `reg.lane_layout` (value v of a
lane lies in m16n8 tile v / 4, at row g + 8 ((v mod 4) / 2) and column 2 t + v mod 2 of it;
a `row` fragment holds rows g and g + 8 of each 16, a `col` fragment columns 2 t and
2 t + 1 of each 8):
- `reg.zeros`, `reg.fill`: one constant register, shared by every value;
- `reg.map`: one instruction per value (`exp2` is `ex2.approx.ftz.f32`, `log2`
  `lg2.approx.ftz.f32`); a `row` (`col`)
  operand is read at the row (column) of each value; a division by a `row` or `col`
  fragment multiplies by its approximate reciprocal (`rcp.approx.ftz`: within 1 ulp, one
  instruction a vector value, where `div.rn` is a subroutine a tile value and `rcp.rn` a
  sequence of ten with a slow path; subnormal divisors flush to zero, so divide to
  infinity, as a zero does). Spherical attention's gradient divides its scores by the
  streamed rows' norms, a `col` fragment in its blocks of keys: with `rcp.rn` its dK and
  dV kernel ran 40% more instructions than the softmax's. A scaling by a positive constant is left
  pending (`Scaled`), so that a row max scales its result instead of every value and
  `scaled - max` is one `fma` (the online softmax's exp2(s c - m)). A `c` fragment times
  itself is left pending too (`Squared`);
- `reg.row_reduce`: a tree within the lane, then `shfl.sync.bfly` 1 and 2 across its quad
  (of a `line` fragment, across the span / 8 lanes of each row: 16, 8, 4, 2 and 1 where a
  row lies across the whole warp, 4, 2 and 1 for rows of 64 columns);
  the sum of a `Squared` fragment (spherical attention's squared norm) is four chains of
  `fma` in the lane, one instruction a value where squares and a tree take two;
- `reg.mask`, `reg.mask_bound`: one comparison and one select per value, against a
  difference computed once per lane;
- `line` fragments (a kernel with no product): value v of a lane lies in the lane's row of
  step v / (cols / (span / 8)) of the warp's rows; a `line` fragment of one axis holds its
  lane's row of step v, and is read by `reg.map` at the step of each value, as a `row`
  fragment is;
- `reg.col_reduce` (a `line` fragment's columns, down its rows): a tree within the lane over
  the rows it holds, then butterflies across the lanes of the other rows it holds at a time
  (16 and 8 for rows of 64 columns; none where a row lies across the whole warp); its
  `line_col` result holds a lane's columns, and is read by `reg.map` at the column of each
  value of a `line` fragment;
- `reg.to_a`: pairs of values packed with `cvt.rn.bf16x2.f32` (columns at .. at + 15 are
  the c tiles 2s and 2s + 1, whose pairs are the a registers in order: nothing moves
  between lanes).
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from napkin_ir.dialects import reg
from napkin_ir.dialects.ptx import ops as P
from napkin_ir.lowering.ptx_rules.context import KernelLowering, Scaled, Squared, lowers

@lowers(reg.ZerosOp, reg.FillOp)
def _fill(k: KernelLowering, op: reg.ZerosOp | reg.FillOp) -> None:
    value = op.value.value.data if isinstance(op, reg.FillOp) else 0.0
    k.vals[op.result] = [k.f32(value)] * op.result.type.values_per_lane()  # type: ignore[attr-defined]


def row_of(t: reg.FragType, v: int) -> int:
    """The `row` fragment value that holds the row of value v of a `c` fragment (the `line`
    value of one axis that holds the row of value v of a `line` fragment)."""
    if t.role.data == "line":
        return v // (t.dims[1] // t.lanes_a_row)
    nt = t.dims[1] // 8
    return 2 * (v // 4 // nt) + (v % 4) // 2


def col_of(t: reg.FragType, v: int) -> int:
    """The `col` fragment value that holds the column of value v of a `c` fragment."""
    nt = t.dims[1] // 8
    return 2 * (v // 4 % nt) + v % 2


@lowers(reg.MapOp)
def _map(k: KernelLowering, op: reg.MapOp) -> None:
    k.vals[op.result] = _map_values(k, op)


def _map_values(k: KernelLowering, op: reg.MapOp):
    fn = op.fn.data
    t: reg.FragType = op.result.type  # type: ignore[assignment]
    if fn == "scale" and op.by.value.data > 0 and reg.is_tile(t):  # type: ignore[union-attr]
        # left pending: a row max takes it after the reduction, x - m becomes fma(x, c, -m)
        return Scaled(k.frag(op.inputs[0]), op.by.value.data)  # type: ignore[union-attr]
    if fn == "mul" and op.inputs[0] is op.inputs[1] and reg.is_tile(t):  # type: ignore[attr-defined]
        return Squared(k.frag(op.inputs[0]))  # left pending: a row sum of it fuses the products
    first = k.vals[op.inputs[0]]
    if fn == "sub" and isinstance(first, Scaled) and (op.inputs[1].type.role.data == "row" or _per_row(t, op.inputs[1].type)):  # type: ignore[attr-defined]
        negs = [k.r(P.NegOp("f32", m)) for m in k.frag(op.inputs[1])]
        c = k.f32(first.by)
        return [k.r(P.FmaOp("f32", first.regs[v], c, negs[row_of(t, v)], mods="rn")) for v in range(t.values_per_lane())]
    ins = [(k.frag(v), v.type) for v in op.inputs]

    def arg(i: int, v: int):
        regs, it = ins[i]
        if _per_row(t, it):
            return regs[row_of(t, v)]
        if it.role.data == "line_col" and t.role.data == "line":  # the column of value v: its place in the lane's row
            return regs[v % (t.dims[1] // t.lanes_a_row)]
        if t.role.data != "c" or it.role.data == "c":  # type: ignore[attr-defined]
            return regs[v]
        return regs[row_of(t, v) if it.role.data == "row" else col_of(t, v)]  # type: ignore[attr-defined]

    n = t.values_per_lane()
    if fn == "div" and (ins[1][1].role.data in ("row", "col") or _per_row(t, ins[1][1])):  # type: ignore[attr-defined]
        ins[1] = ([k.r(P.RcpOp("f32", x, mods="approx.ftz")) for x in ins[1][0]], ins[1][1])
        fn = "mul"
    if fn == "scale":
        c = k.f32(op.by.value.data)  # type: ignore[union-attr]
        return [k.r(P.MulOp("f32", arg(0, v), c)) for v in range(n)]
    unary = {"exp2": (P.Ex2Op, "approx.ftz"), "log2": (P.Lg2Op, "approx.ftz"), "sqrt": (P.SqrtOp, "rn"), "neg": (P.NegOp, None)}
    if fn in unary:
        cls, mods = unary[fn]
        return [k.r(cls("f32", arg(0, v), mods=mods)) for v in range(n)]
    if fn == "ge":  # 1.0 where a >= b (a ReLU's gradient), else 0.0
        one, zero = k.f32(1.0), k.f32(0.0)
        c = k.f32(op.by.value.data) if op.by is not None else None  # type: ignore[union-attr]
        return [k.r(P.SelpOp("f32", one, zero, k.setp("ge", arg(0, v), arg(1, v) if c is None else c, "f32"))) for v in range(n)]
    binary = {"add": (P.AddOp, None), "sub": (P.SubOp, None), "mul": (P.MulOp, None), "div": (P.DivOp, "rn"), "max": (P.MaxOp, None)}
    cls, mods = binary[fn]
    if op.by is not None:  # the second operand is the constant `by` (max by 0.0: relu)
        c = k.f32(op.by.value.data)
        return [k.r(cls("f32", arg(0, v), c, mods=mods)) for v in range(n)]
    return [k.r(cls("f32", arg(0, v), arg(1, v), mods=mods)) for v in range(n)]


def _per_row(t: reg.FragType, it) -> bool:
    """Whether operand type `it` holds one value per row of a `line` fragment of type `t`."""
    return reg.is_tile(t) and t.role.data == "line" and it.role.data == "line" and len(it.dims) == 1


@lowers(reg.RowReduceOp)
def _row_reduce(k: KernelLowering, op: reg.RowReduceOp) -> None:
    t: reg.FragType = op.input.type  # type: ignore[assignment]
    x = k.vals[op.input]
    _reduce = _reduce_lines if t.role.data == "line" else _reduce_rows
    if isinstance(x, Scaled):  # max(c x) = c max(x) for c > 0, sum(c x) = c sum(x)
        k.vals[op.result] = [k.r(P.MulOp("f32", m, k.f32(x.by))) for m in _reduce(k, op.kind.data, t, x.regs)]
    elif isinstance(x, Squared) and op.kind.data == "sum":
        k.vals[op.result] = _reduce(k, "sum", t, x.regs, squares=True)
    else:
        k.vals[op.result] = _reduce(k, op.kind.data, t, k.frag(op.input))


def _lane_rows(t: reg.FragType, x: list) -> list[list]:
    """A lane's values of a `c` fragment, a list per row it holds (`row_of`: in the order of
    a `row` fragment's values), each in the lane's order."""
    rows: list[list] = [[] for _ in range(t.dims[0] // 8)]
    for v, value in enumerate(x):
        rows[row_of(t, v)].append(value)
    return rows


@lowers(reg.RowAccumulateOp)
def _row_accumulate(k: KernelLowering, op: reg.RowAccumulateOp) -> None:
    """One chain of adds a row, from the lane's part through its values in order."""
    out = []
    for acc, vals in zip(k.frag(op.acc), _lane_rows(op.input.type, k.frag(op.input))):  # type: ignore[arg-type]
        for v in vals:
            acc = k.r(P.AddOp("f32", acc, v))
        out.append(acc)
    k.vals[op.result] = out


@lowers(reg.RowCombineOp)
def _row_combine(k: KernelLowering, op: reg.RowCombineOp) -> None:
    """The quad's parts added by two butterflies, as `reg.row_reduce` ends."""
    k.vals[op.result] = [_across_quad(k, P.AddOp, acc) for acc in k.frag(op.input)]


@lowers(reg.LazyMaxOp)
def _lazy_max(k: KernelLowering, op: reg.LazyMaxOp) -> None:
    """Each of the lane's rows tested against the slack, the warp's tests joined by one vote
    (`vote.sync.all`), then the old max or each row's max by that predicate."""
    old, new = k.frag(op.old), k.frag(op.new)
    slack = k.f32(op.slack.value.data)
    # NaN grows: setp.le is false
    kept = _warp_all(k, (k.setp("le", k.r(P.SubOp("f32", b, a)), slack, "f32") for a, b in zip(old, new)))
    k.vals[op.result] = [k.r(P.SelpOp("f32", a, k.r(P.MaxOp("f32", a, b)), kept)) for a, b in zip(old, new)]


@lowers(reg.RescaleOp)
def _rescale(k: KernelLowering, op: reg.RescaleOp) -> None:
    """The products under a branch the warp takes together: skipped where every factor of
    the warp is 1, the accumulator then passed on as it is."""
    t: reg.FragType = op.acc.type  # type: ignore[assignment]
    acc, factor = k.frag(op.acc), k.frag(op.factor)
    one = k.f32(1.0)
    ones = _warp_all(k, (k.setp("eq", f, one, "f32") for f in factor))
    join = k.new_block([v.type for v in acc])
    skip, work = k.branch(ones)
    k.cur = skip
    k.jump(join, *acc)
    k.cur = work
    k.jump(join, *[k.r(P.MulOp("f32", x, factor[row_of(t, v)])) for v, x in enumerate(acc)])
    k.cur = join
    k.vals[op.result] = list(join.args)


def _warp_all(k: KernelLowering, tests) -> SSAValue:
    """Whether each of `tests` (predicates on the lane's values, made in turn) holds in every
    lane of the warp: their conjunction, then one `vote.sync.all`."""
    every = None
    for t in tests:
        every = k.both(every, t)
    assert every is not None
    return k.r(P.VoteOp("all", every))


def _across_quad(k: KernelLowering, cls, acc):
    """`acc` combined (`cls`: add or max) with the other 3 lanes' of the quad."""
    for lanes in (1, 2):
        acc = k.r(cls("f32", acc, k.r(P.ShflSyncOp("bfly", acc, lanes))))
    return acc


def _sum_of_squares(k: KernelLowering, vals: list, chains: int = 4) -> list:
    """Partial sums of the squares of `vals`: `chains` running fma chains (each started by
    a product), which the caller adds as a tree."""
    out = []
    for c in range(min(chains, len(vals))):
        acc = k.r(P.MulOp("f32", vals[c], vals[c]))
        for v in vals[c + chains::chains]:
            acc = k.r(P.FmaOp("f32", v, v, acc, mods="rn"))
        out.append(acc)
    return out


def _reduce_rows(k: KernelLowering, kind: str, t: reg.FragType, x: list, squares: bool = False) -> list:
    """Each row's max or sum (of the squares, with `squares`), in every lane of its quad."""
    cls = P.MaxOp if kind == "max" else P.AddOp
    out = []
    for vals in _lane_rows(t, x):  # rows g and g + 8 of each 16
        if squares:
            vals = _sum_of_squares(k, vals)
        while len(vals) > 1:  # a tree within the lane
            vals = [k.r(cls("f32", vals[i], vals[i + 1])) if i + 1 < len(vals) else vals[i] for i in range(0, len(vals), 2)]
        out.append(_across_quad(k, cls, vals[0]))  # the quad of lanes that hold the row
    return out


def _reduce_lines(k: KernelLowering, kind: str, t: reg.FragType, x: list, squares: bool = False) -> list:
    """Each row's max or sum (of the squares, with `squares`) of a `line` fragment, in every
    lane of the row: a tree within the lane, then butterflies across the span / 8 lanes of
    the row (offsets below span / 8 stay within them), for each of the rows it holds."""
    cls = P.MaxOp if kind == "max" else P.AddOp
    per = t.dims[1] // t.lanes_a_row
    out = []
    for r in range(t.dims[0] // t.rows_a_step):
        vals = x[r * per : (r + 1) * per]
        if squares:
            vals = _sum_of_squares(k, vals)
        while len(vals) > 1:
            vals = [k.r(cls("f32", vals[i], vals[i + 1])) if i + 1 < len(vals) else vals[i] for i in range(0, len(vals), 2)]
        acc = vals[0]
        for lanes in (b for b in (16, 8, 4, 2, 1) if b < t.lanes_a_row):
            acc = k.r(cls("f32", acc, k.r(P.ShflSyncOp("bfly", acc, lanes))))
        out.append(acc)
    return out


@lowers(reg.ColReduceOp)
def _col_reduce(k: KernelLowering, op: reg.ColReduceOp) -> None:
    """Each column's max or sum of a `line` fragment: a tree within the lane over the rows
    it holds (value c of each row's run of cols / (span / 8)), then butterflies across the
    lanes that hold the column's other rows (offsets from span / 8 up: lanes of other row
    slots, the same place in them)."""
    t: reg.FragType = op.input.type  # type: ignore[assignment]
    x = k.frag(op.input)
    cls = P.MaxOp if op.kind.data == "max" else P.AddOp
    per = t.dims[1] // t.lanes_a_row
    out = []
    for c in range(per):
        vals = x[c::per]
        while len(vals) > 1:
            vals = [k.r(cls("f32", vals[i], vals[i + 1])) if i + 1 < len(vals) else vals[i] for i in range(0, len(vals), 2)]
        acc = vals[0]
        for lanes in (b for b in (16, 8, 4, 2, 1) if b >= t.lanes_a_row):
            acc = k.r(cls("f32", acc, k.r(P.ShflSyncOp("bfly", acc, lanes))))
        out.append(acc)
    k.vals[op.result] = out


@lowers(reg.MaskOp, reg.MaskBoundOp)
def _mask(k: KernelLowering, op: reg.MaskOp | reg.MaskBoundOp) -> None:
    """keep(value) compares a per-lane difference with a constant per value."""
    t: reg.FragType = op.input.type  # type: ignore[assignment]
    x = k.frag(op.input)
    r_axis, c_axis = t.axis_names
    nt = t.dims[1] // 8
    offs = [k.index(o) for o in op.offsets]

    def place(axis: str):
        """This lane's first position along `axis` in the block's tile."""
        p = k.lane_row if axis == r_axis else k.mul(k.lane_pair, 2)
        w = k.warp_place(axis, t.shape[axis])
        return p if w is None else k.add(p, w)

    def within(v: int) -> tuple[int, int]:
        """Value v's row and column past this lane's first ones."""
        tile, q = divmod(v, 4)
        tm, tn = divmod(tile, nt)
        return 16 * tm + 8 * (q // 2), 8 * tn + q % 2

    fill = k.f32(op.fill.value.data)
    out = []
    if isinstance(op, reg.MaskOp):  # keep row >= col: (r0 + row) - (c0 + col) >= dc - dr
        # (the mask's row axis may be the fragment's columns: then the differences swap)
        flipped = op.row.data != r_axis
        diff = k.op2(P.SubOp, "s32", k.add(offs[0], place(op.row.data)), k.add(offs[1], place(op.col.data)))
        for v in range(t.values_per_lane()):
            dr, dc = within(v)
            out.append(k.r(P.SelpOp("f32", x[v], fill, k.setp("ge", diff, dr - dc if flipped else dc - dr))))
    else:  # keep pos < bound: bound - (o + place) > d
        axis = op.axis.data
        room = k.op2(P.SubOp, "s32", k.s32(op.bound.data), k.add(offs[0], place(axis)))
        for v in range(t.values_per_lane()):
            d = within(v)[0 if axis == r_axis else 1]
            out.append(k.r(P.SelpOp("f32", x[v], fill, k.setp("gt", room, d))))
    k.vals[op.result] = out


@lowers(reg.ToAOp)
def _to_a(k: KernelLowering, op: reg.ToAOp) -> None:
    t: reg.FragType = op.input.type  # type: ignore[assignment]
    a: reg.FragType = op.result.type  # type: ignore[assignment]
    x = k.frag(op.input)
    nt, s = t.dims[1] // 8, op.start // 16
    out = []
    for tm in range(t.dims[0] // 16):
        for tn in (2 * s, 2 * s + 1):
            i = 4 * (tm * nt + tn)
            for h in range(2):
                out.append(k.pack(a.dtype, x[i + 2 * h], x[i + 2 * h + 1]))
    k.vals[op.result] = out
