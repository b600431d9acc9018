"""Tensor-core products: mma.sync on register fragments (sm_80), wgmma from shared memory (sm_90a).

- `reg.ldmatrix`: `ldmatrix.x4` per 16 rows of an `a` fragment; per two 8-column tiles of
  a `b` fragment, `.trans` when the buffer's rows are the contracted axis (V, a GEMM's B)
  and plain when they are the fragment's columns (K); an `a` fragment plain from rows of A,
  `.trans` from a buffer whose rows are the contracted axis (A^T B: a gradient's product over
  A's rows). Each lane gives the address of one
  row of one 8x8 matrix: its row address is made once per buffer and fragment shape, the
  stage, the tile and `at` are immediates where they are constants.
- `reg.read` of a `c` fragment (a staged tile entering the accumulators' math): the same
  matrices as an `a` fragment's, 16 columns at a time, widened to f32 (`.trans` where the
  buffer's rows are the fragment's columns, from plain rows or TMA-swizzled panels alike).
- `reg.mma`: one `mma.sync.m16n8k16` per (16, 8) tile, in a serpentine order (the next
  product shares an operand with the last).
- `reg.wgmma`: `wgmma.mma_async` m64nNk16 with both operands from shared-memory
  descriptors (A K-major, or for a [k, m] tile M-major with `imm-trans-a`; B K-major or, for
  a [k, n] tile, N-major with `imm-trans-b`),
  the warpgroup's 64 rows of A chosen by its index (A's rows may fold several axes, as a
  grouped-query tile's heads by positions: the warps are numbered as its rows are); a
  `wgmma.fence` precedes the first
  after registers changed. `reg.wgmma_commit` and `reg.wgmma_wait` are the group ops.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from napkin_ir.dialects import hbm, reg
from napkin_ir.dialects.ptx import ops as P
from napkin_ir.dialects.ptx import tensor_ops as T
from napkin_ir.dialects.ptx.registers import RegType
from napkin_ir.lowering.ptx_rules.context import F32, PANEL, Buffer, KernelLowering, constant, lowers


@lowers(reg.LdmatrixOp)
def _ldmatrix(k: KernelLowering, op: reg.LdmatrixOp) -> None:
    buf: Buffer = k.vals[op.source]
    t: reg.FragType = op.result.type  # type: ignore[assignment]
    at = hbm.parse_labels(op.at)
    role = t.role.data
    r_axis, c_axis = t.axis_names
    rows, cols = t.dims
    if role == "a" and (r_axis, c_axis) == (buf.rows_axis, buf.cols_axis):
        kind = "a"
    elif buf.panels:
        raise k.fail(f"ldmatrix from a TMA-swizzled buffer ({buf.type}) loads an `a` fragment of its rows by its innermost "
                     f"axis (wgmma's A in registers), got {t}")
    elif role == "b" and (r_axis, c_axis) == (buf.rows_axis, buf.cols_axis):
        kind = "b_trans"  # k-major: the buffer's rows are the contracted axis (V, a GEMM's B)
    elif role == "b" and (c_axis, r_axis) == (buf.rows_axis, buf.cols_axis):
        kind = "b"  # n-major: the buffer's rows are the fragment's columns (K)
    elif role == "a" and (c_axis, r_axis) == (buf.rows_axis, buf.cols_axis):
        kind = "a_trans"  # m-major: the buffer's rows are the contracted axis (a product over A's rows, A^T B)
    else:
        raise k.fail(f"ldmatrix of {t} from {buf.type} has no lowering")
    # where this warp's slice starts in the tile: rows and bytes along a row
    r0 = c0 = 0
    for axis in (r_axis, c_axis):
        if axis not in k.warps:
            o = at.get(axis, 0)
            if axis == buf.rows_axis:
                r0 += o
            else:
                c0 += buf.element.size(o)
    # each ldmatrix: (rows, bytes) past the lane's place, matrices, transposed
    if kind == "a":
        pieces = [(r0 + 16 * tm, c0, 4, False) for tm in range(rows // 16)]
    elif kind == "a_trans":  # matrices (rows 0-7 | 8-15) x (k lo | hi), each read transposed from 8 k rows
        pieces = [(r0, c0 + buf.element.size(16 * tm), 4, True) for tm in range(rows // 16)]
    else:
        pieces = [(r0 + (0 if kind == "b_trans" else 8 * tn), c0 + (16 * tn if kind == "b_trans" else 0), 4 if tn + 1 < cols // 8 else 2,
                   kind == "b_trans") for tn in range(0, cols // 8, 2)]
    k.vals[op.result] = load_matrices(k, buf, op.stage, kind, t, pieces)


def read_accumulator_layout(k: KernelLowering, op: reg.ReadOp) -> None:
    """`reg.read` of a `c` fragment: a staged 16-bit tile in the accumulators' lanes. The
    accumulators of two adjacent 8-column tiles lie as an `a` fragment of their 16 columns
    does (`reg.to_a`), so each 16 rows by 16 columns is one `ldmatrix.x4` (`.x2` for a last
    8 columns), plain from a buffer whose rows are the fragment's rows, `.trans` from one
    whose rows are its columns (the tile read transposed), each register's two values
    widened to f32 in the order of the accumulators. From TMA panels each lane's 16-byte
    row is found through the swizzle, as for the plain read; read transposed, a warp's
    part of the columns may start in a later panel (`_lane_base`)."""
    buf: Buffer = k.vals[op.source]
    t: reg.FragType = op.result.type  # type: ignore[assignment]
    r_axis, c_axis = t.axis_names
    rows, cols = t.dims
    if (r_axis, c_axis) == (buf.rows_axis, buf.cols_axis):
        kind = "a"
    elif (c_axis, r_axis) == (buf.rows_axis, buf.cols_axis):
        kind = "a_trans"
    else:
        raise k.fail(f"reg.read of {t} from {buf.type}: the buffer's rows and innermost axis are not the fragment's axes")
    size = buf.element.size
    pieces = [(16 * s, size(16 * tm), 4 if 16 * s + 16 <= cols else 2, True) if kind == "a_trans"
              else (16 * tm, size(16 * s), 4 if 16 * s + 16 <= cols else 2, False)
              for tm in range(rows // 16) for s in range(-(-cols // 16))]
    half = RegType(buf.type.dtype)
    out: list[SSAValue] = []
    for pair in load_matrices(k, buf, op.stage, kind, t, pieces):
        halves = k.emit(P.MovOp("b32", [pair], [half, half])).results
        out += [k.r(P.CvtOp("f32", buf.type.dtype, [x], F32)) for x in halves]
    k.vals[op.result] = out


def load_matrices(k: KernelLowering, buf: Buffer, stage_value: SSAValue, kind: str, t: reg.FragType,
                  pieces: list[tuple[int, int, int, bool]]) -> list[SSAValue]:
    """The registers of one `ldmatrix` per piece (rows and bytes past the lane's place,
    matrices, transposed) of fragment type `t` from a stage of `buf`, in order; the lanes
    give the rows of `kind`'s matrices (`_lane_base`)."""
    stage = constant(stage_value)
    regs: list[SSAValue] = []
    if buf.type.layout.data != "swizzle":  # one base register: the stage's start plus the lane's place
        base = k.add(k.stage_addr(buf, stage_value), _lane_base(k, buf, kind, t, 0, 0, False))
        for row, col_bytes, num, trans in pieces:
            regs += k.emit(T.LdmatrixOp(base, num, trans=trans, offset=row * buf.row_bytes + col_bytes)).results
        return regs
    stage_imm = stage * buf.stage_bytes if stage is not None else 0
    staged = None if stage is not None or buf.type.stages.data == 1 else k.mul(k.index(stage_value), buf.stage_bytes)
    moved: dict[SSAValue, SSAValue] = {}  # a lane base -> it in this op's stage
    for row, col_bytes, num, trans in pieces:
        base, imm = _ld_address(k, buf, kind, t, row, col_bytes)
        if staged is not None:
            base = moved[base] if base in moved else moved.setdefault(base, k.add(base, staged))
        regs += k.emit(T.LdmatrixOp(base, num, trans=trans, offset=stage_imm + imm)).results
    return regs


def _ld_address(k: KernelLowering, buf: Buffer, kind: str, t: reg.FragType, row: int, col_bytes: int):
    """Base register and immediate of an ldmatrix `row` rows and `col_bytes` bytes past the
    lane's place in a swizzled buffer: only whole swizzle periods (8 key rows down, 128
    bytes along) move as immediates; what lies within one is in the base register. In a
    panel buffer the 128 bytes along are the next panel, `rows` rows of 128 bytes on."""
    period = 8 * buf.key_rows
    r_in, c_in = row % period, col_bytes % 128 if buf.row_bytes > 128 or buf.panels else col_bytes
    along = (col_bytes - c_in) // PANEL * buf.rows * PANEL if buf.panels else col_bytes - c_in
    return _lane_base(k, buf, kind, t, r_in, c_in, True), (row - r_in) * buf.row_bytes + along


def _lane_base(k: KernelLowering, buf: Buffer, kind: str, t: reg.FragType, row_in: int, col_in: int, absolute: bool):
    """Where the row this lane gives ldmatrix lies, its warp's place included, `row_in`
    rows and `col_in` bytes on: an address (`absolute`) or bytes into a stage. x4 reads matrices 0-3 from the rows of lanes 0-7, 8-15,
    16-23, 24-31."""
    r_axis, c_axis = t.axis_names

    def make():
        lane = k.lane
        # b: matrices (n 0-7, k lo), (n 0-7, k hi), (n 8-15, k lo), (n 8-15, k hi);
        # a_trans: the same rows of the buffer, read as (m 0-7, k lo), (m 8-15, k lo), (m 0-7, k hi), (m 8-15, k hi)
        if kind in ("b", "a_trans"):
            row = k.add(k.op2(P.AndOp, "b32", lane, 7), k.op2(P.ShlOp, "b32", k.op2(P.ShrOp, "u32", lane, 4), 3))
            col = k.mul(k.op2(P.AndOp, "b32", k.op2(P.ShrOp, "u32", lane, 3), 1), 16)
        else:  # a: (rows 0-7 | 8-15) x (k lo | hi); b_trans: (k 0-7 | 8-15) x (n 0-7 | 8-15)
            row = k.op2(P.AndOp, "b32", lane, 15)
            col = k.mul(k.op2(P.ShrOp, "u32", lane, 4), 16)
        warp_cols = False
        for axis in (r_axis, c_axis):
            w = k.warp_place(axis, t.shape[axis] if axis == buf.rows_axis else buf.element.size(t.shape[axis]))
            if w is not None:
                if axis == buf.rows_axis:
                    row = k.add(row, w)
                else:
                    col, warp_cols = k.add(col, w), True
        for axis, w in k.held_places(t, buf.row_axes[:-1]).items():  # a place of a row axis the warp holds
            row = k.add(row, k.mul(w, buf.row_stride(axis)))
        row, col = k.add(row, row_in), k.add(col, col_in)
        if buf.panels and warp_cols:  # the warp's columns may lie in a later panel, `rows` rows of 128 bytes on
            panel = k.mul(k.op2(P.ShrOp, "u32", col, 7), buf.rows * PANEL)
            at = k.add(panel, k.placed(row, k.op2(P.AndOp, "b32", col, PANEL - 1), buf.row_bytes, True))
        else:
            at = k.placed(row, col, buf.row_bytes, buf.type.layout.data == "swizzle")
        return k.add(buf.base, at) if absolute else at

    held = tuple((a, buf.row_stride(a)) for a in k.held_places(t, buf.row_axes[:-1]))
    key = ("lane_base", buf.base if absolute else buf.row_bytes, kind, r_axis, t.shape[r_axis], c_axis, t.shape[c_axis], row_in, col_in,
           held)
    return k.once(key, make)


@lowers(reg.MmaOp)
def _mma(k: KernelLowering, op: reg.MmaOp) -> None:
    ta: reg.FragType = op.a.type  # type: ignore[assignment]
    tb: reg.FragType = op.b.type  # type: ignore[assignment]
    a, b, c = k.frag(op.a), k.frag(op.b), k.frag(op.c)
    mt, nt = ta.dims[0] // 16, tb.dims[1] // 8
    out = list(c)
    for tm in range(mt):
        for tn in range(nt) if tm % 2 == 0 else reversed(range(nt)):
            i = 4 * (tm * nt + tn)
            m = k.emit(T.MmaSyncOp("m16n8k16", ta.dtype, a[4 * tm : 4 * tm + 4], b[2 * tn : 2 * tn + 2], c[i : i + 4]))
            out[i : i + 4] = m.results
    k.vals[op.result] = out


def _descriptor(k: KernelLowering, buf: Buffer, stage: SSAValue, offset: int, lbo: int, sbo: int, rows: SSAValue | None = None) -> SSAValue:
    """The descriptor of the matrix at `offset` bytes into a stage (past `rows`, a per-thread
    offset): the stage's descriptor, built once (per kernel for a one-stage buffer, per
    stage value for the others), plus offset / 16 in its address field (addresses below
    256 KiB never carry out of it)."""
    key = ("wgmma_desc", buf.base, None if buf.type.stages.data == 1 else stage, rows, lbo, sbo)

    def make() -> SSAValue:
        base = k.stage_addr(buf, stage)
        return k.r(T.WgmmaDescOp(base if rows is None else k.add(base, rows), lbo, sbo, "128B"))

    if buf.type.stages.data == 1:
        desc = k.once(key, make)
    else:
        if key not in k.stage_values:
            k.stage_values[key] = make()
        desc = k.stage_values[key]
    return desc if offset == 0 else k.add64(desc, offset // 16)


def _panel_offset(buf: Buffer, kk: int) -> int:
    """Bytes from a panel buffer's stage to column `kk` (before the swizzle): whole panels of
    all its rows, then `kk`'s place within its panel."""
    per_panel = buf.element.elements(PANEL)
    return (kk // per_panel) * buf.rows * PANEL + buf.element.size(kk % per_panel)


def _b_descriptor(k: KernelLowering, op: reg.WgmmaOp | reg.WgmmaRsOp, cols: str, kx: str, kk: int,
                  group: SSAValue | None = None) -> tuple[SSAValue, bool]:
    """B's descriptor for the slice at `kk`, and whether B is N-major (transposed). With
    `group` (a split accumulator's column group: its warpgroup's place past the row
    groups), B's columns from `group` times the accumulators' on."""
    b: Buffer = k.vals[op.b]
    k_major = (b.rows_axis, b.cols_axis) == (cols, kx)
    at = None
    if group is not None:  # N-major B's columns from the warpgroup's on: within one 128-byte panel, or whole panels
        n = op.c.type.dims[1]  # type: ignore[attr-defined]
        per_panel = b.element.elements(PANEL)
        if k_major or b.type.shape[cols] > per_panel and n % per_panel:
            raise k.fail(f"a split accumulator's warpgroups read their own columns of an N-major B, within one 128-byte "
                         f"panel or whole panels each; got {n} columns a warpgroup of {b.type}")
        at = k.once(("b_group_cols", b.base, n), lambda: k.mul(group, _panel_offset(b, n)))
    if k_major:  # K-major as A
        return _descriptor(k, b, op.b_stage, _panel_offset(b, kk), 16, 1024, at), False
    # [k, n]: N-major; panels of 64 columns are LBO apart, 8-row groups SBO
    return _descriptor(k, b, op.b_stage, kk * PANEL, b.rows * PANEL, 1024, at), True


def _issue_wgmma(k: KernelLowering, op: reg.WgmmaOp | reg.WgmmaRsOp, a: list[SSAValue], bdesc: SSAValue, trans_b: bool,
                 trans_a: bool = False) -> None:
    """wgmma.fence where registers changed since the last group, then the product. A
    product onto `reg.zeros` ignores its accumulators (scale-d false) instead: they are
    registers never written, so no zeros are moved in (nor fenced) before it."""
    if k.wgmma_fence:
        k.emit(T.WgmmaFenceOp())
        k.wgmma_fence = False
    n = op.c.type.dims[1]  # type: ignore[attr-defined]
    onto_zeros = isinstance(op.c.owner, reg.ZerosOp)
    acc = list(k.emit(P.UnsetOp(n // 2, F32)).results) if onto_zeros else k.frag(op.c)
    scale_d = k.once(("scale_d", not onto_zeros), lambda: k.r(P.SetpOp("ne" if onto_zeros else "eq", "u32", k.u32(0), k.u32(0))))
    mma = k.emit(T.WgmmaMmaAsyncOp(n, op.b.type.dtype, acc, a, bdesc, scale_d, trans_a=trans_a, trans_b=trans_b))  # type: ignore[attr-defined]
    k.vals[op.result] = list(mma.results)


@lowers(reg.WgmmaOp)
def _wgmma(k: KernelLowering, op: reg.WgmmaOp) -> None:
    rows, cols, kx = op.axes()
    a: Buffer = k.vals[op.a]
    kk = hbm.parse_labels(op.at)[kx]
    if (a.rows_axis, a.cols_axis) == (kx, rows) and a.panels and len(a.row_axes) == 1:
        _wgmma_a_mn_major(k, op, a, rows, cols, kx, kk)
        return
    if (a.rows_axis, a.cols_axis) != (rows, kx):
        raise k.fail(f"A must be laid out [{rows}, {kx}] (K-major) or [{kx}, {rows}] (M-major, in 64-column panels) for wgmma "
                     f"from shared memory, got {list(a.type.axis_names)}")
    # A, K-major: 8-row groups 1024 bytes apart; the warpgroup's 64 rows, the slice's panel and its offset in it.
    # The warps share A's rows (folded from its row axes, the first outermost, as the warps
    # are numbered): warp w's 16 rows start at row 16 w
    if rows not in k.warps or list(k.warps) != [x for x in a.row_axes if x in k.warps] \
            or any(k.warps.get(x) != a.type.shape[x] for x in a.row_axes[:-1]) or 16 * k.warps[rows] != a.type.shape[rows]:
        raise k.fail(f"wgmma's warps share A's rows {' x '.join(a.row_axes)} ({a.type}), 16 rows of one place of the "
                     f"others a warp; got reg.warps {k.warps}")
    warp = k.warp_number()
    group_rows = k.once(("warpgroup_rows", a.rows), lambda: k.mul(k.op2(P.ShrOp, "u32", warp, 2), 64 * PANEL))
    adesc = _descriptor(k, a, op.a_stage, _panel_offset(a, kk), 16, 1024, group_rows)
    bdesc, trans_b = _b_descriptor(k, op, cols, kx, kk)
    _issue_wgmma(k, op, [adesc], bdesc, trans_b)


def _wgmma_a_mn_major(k: KernelLowering, op: reg.WgmmaOp, a: Buffer, rows: str, cols: str, kx: str, kk: int) -> None:
    """A stored [k, m] (a product over A's rows, as a gradient's A^T dC): M-major, its rows
    in panels of 64 columns, read with `imm-trans-a` as B's [k, n] tiles are. Warpgroup w
    takes A's rows 64 w to 64 w + 63 (along the `reg.warps` axis, or the rows of a `split`
    accumulator, 16 a warp: K's head dim in dQ^T = K^T dS^T): panel w, `a.rows` rows of
    128 bytes on; the slice at `kk` is `kk` rows of 128 bytes into it; 8-row groups are
    1024 bytes apart (SBO)."""
    split = op.c.type.split.data  # type: ignore[attr-defined]
    warps = split if split > 1 else k.warps.get(rows, 0) if len(k.warps) == 1 else 0
    if 16 * warps != a.type.shape[rows] or a.type.shape[rows] % 64:
        raise k.fail(f"wgmma's warps share A's rows '{rows}' ({a.type}), 64 a warpgroup; got reg.warps {k.warps}")
    warpgroup = k.once(("warpgroup",), lambda: k.op2(P.ShrOp, "u32", k.warp_number(), 2))
    row_groups = warps // 4
    # a split accumulator of fewer rows than the consumers' warps take: warpgroup g the
    # row panel g mod row_groups, of B's column group g / row_groups (`FragType.split_place`)
    grouped = split > 1 and k.consumer_threads // 32 > split
    if not grouped:
        group_panel: SSAValue | None = k.once(("warpgroup_panel", a.rows), lambda: k.mul(warpgroup, a.rows * PANEL))
    elif row_groups == 1:  # every warpgroup reads A's one panel
        group_panel = None
    else:
        group_panel = k.once(("warpgroup_panel", a.rows, row_groups),
                             lambda: k.mul(k.op2(P.RemOp, "u32", warpgroup, row_groups), a.rows * PANEL))
    adesc = _descriptor(k, a, op.a_stage, kk * PANEL, a.rows * PANEL, 1024, group_panel)
    group = k.once(("warpgroup_cols", row_groups), lambda: k.op2(P.DivOp, "u32", warpgroup, row_groups)) if grouped else None
    bdesc, trans_b = _b_descriptor(k, op, cols, kx, kk, group)
    _issue_wgmma(k, op, [adesc], bdesc, trans_b, trans_a=True)


@lowers(reg.WgmmaRsOp)
def _wgmma_rs(k: KernelLowering, op: reg.WgmmaRsOp) -> None:
    """A from this warp's `a` fragment: its four registers, as mma.sync's A operand."""
    rows, cols, kx = op.axes()
    bdesc, trans_b = _b_descriptor(k, op, cols, kx, hbm.parse_labels(op.at)[kx])
    _issue_wgmma(k, op, k.frag(op.a), bdesc, trans_b)


@lowers(reg.WgmmaCommitOp)
def _wgmma_commit(k: KernelLowering, op: reg.WgmmaCommitOp) -> None:
    k.emit(T.WgmmaCommitGroupOp())
    k.wgmma_fence = True


@lowers(reg.WgmmaWaitOp)
def _wgmma_wait(k: KernelLowering, op: reg.WgmmaWaitOp) -> None:
    k.emit(T.WgmmaWaitGroupOp(op.pending.value.data))


TURN_BARRIER = 2  # warpgroup w waits at named barrier TURN_BARRIER + w for its turn (0: the block's, 1: the consumers')


def _turns(k: KernelLowering) -> tuple[int, SSAValue] | None:
    """(consumer warpgroups, this one's index), or None for one warpgroup (no turns)."""
    groups = k.consumer_threads // 128
    if groups < 2:
        return None
    warp = k.warp_number()
    return groups, k.once(("warpgroup",), lambda: k.op2(P.ShrOp, "u32", warp, 2))


@lowers(reg.TurnStartOp)
def _turn_start(k: KernelLowering, op: reg.TurnStartOp) -> None:
    turns = _turns(k)
    if turns is None:
        return
    groups, wg = turns
    last, rest = k.branch(k.setp("eq", wg, groups - 1, "u32"))
    k.cur = last
    k.emit(P.BarNamedOp("arrive", k.u32(TURN_BARRIER), 256))
    k.jump(rest)
    k.cur = rest


@lowers(reg.TurnWaitOp)
def _turn_wait(k: KernelLowering, op: reg.TurnWaitOp) -> None:
    turns = _turns(k)
    if turns is not None:
        k.emit(P.BarNamedOp("sync", k.add(turns[1], TURN_BARRIER), 256))


@lowers(reg.TurnPassOp)
def _turn_pass(k: KernelLowering, op: reg.TurnPassOp) -> None:
    turns = _turns(k)
    if turns is not None:
        groups, wg = turns
        nxt = k.op2(P.RemOp, "u32", k.add(wg, 1), groups)
        k.emit(P.BarNamedOp("arrive", k.add(nxt, TURN_BARRIER), 256))
