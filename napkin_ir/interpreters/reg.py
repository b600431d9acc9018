"""Numpy implementations of the `reg` ops, lane by lane.

A fragment value holds, for every warp of the block, the [32 lanes x values] registers
of its part, placed by `reg.lane_layout`: loads gather through the layout, mma scatters
its operands back to matrices, multiplies in f32 and gathers again, stores scatter. A
layout that dropped or doubled an element would lose numbers here, on the CPU.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import scf
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.ir import Operation
from xdsl.utils.exceptions import InterpretationError

from napkin_ir.dialects import hbm, reg
from napkin_ir.interpreters.smem import Buffer, check_readable
from napkin_ir.interpreters.tensors import NamedArray, round_to
from napkin_ir.interpreters.tiles import overlap, read_tile


def warp_grid(op: Operation) -> dict[str, int]:
    """Warps along each axis, from the enclosing kernel's `reg.warps`."""
    k = hbm.enclosing_kernel(op)
    return k.warp_grid if k is not None else {}


def warps_of(op: Operation) -> list[dict[str, int]]:
    grid = warp_grid(op)
    return [dict(zip(grid, idx)) for idx in itertools.product(*(range(n) for n in grid.values()))]


def _key(w: dict[str, int]) -> tuple[int, ...]:
    return tuple(w.values())


def gather(t: reg.FragType, matrix: np.ndarray) -> np.ndarray:
    rows, cols = lane_layout_of(t)
    return matrix[rows, cols]


def scatter(t: reg.FragType, lanes: np.ndarray) -> np.ndarray:
    """The fragment as a matrix (a `row` fragment as a column, a `col` fragment as a row:
    the lanes that hold one place agree)."""
    rows, cols = lane_layout_of(t)
    out = np.zeros(_matrix_shape(t), np.float32)
    out[rows, cols] = lanes
    return out


def lane_layout_of(t: reg.FragType):
    return reg.lane_layout(t.role.data, *t.dims, span=t.span.data)


def warp_origin(t: reg.FragType, w: dict[str, int], at: dict[str, int], number: int = 0) -> dict[str, int]:
    """Where warp `w` (the `number`th of `warps_of`) has its fragment in the block's tile:
    along a `reg.warps` axis its index times the fragment's size there (one place of an
    axis the fragment lacks, which the warp holds a place of), along the rows and columns
    of a `split` fragment where its number puts it (`FragType.split_place`), along the
    others at `at`."""
    origin = {a: w[a] * s if a in w else at.get(a, 0) for a, s in t.shape.items()}
    if t.split.data > 1:
        row, col = t.split_place(number)
        origin[t.rows_axis] = row
        origin[t.cols_axis] += col  # type: ignore[index]
    return {**origin, **{a: i for a, i in w.items() if a not in t.shape}}


def warp_window(t: reg.FragType, w: dict[str, int], at: dict[str, int], axes: tuple[str, ...]) -> tuple:
    """The index of warp `w`'s fragment in a tile of `axes`: a slice along the fragment's
    axes, the warp's place along the others (0 where they have one place)."""
    origin = warp_origin(t, w, at)
    return tuple(slice(origin[a], origin[a] + t.shape[a]) if a in t.shape else origin.get(a, 0) for a in axes)


@dataclass
class WgmmaGroup:
    """What a wgmma group holds until a wait retires it: the stages its products read, and
    the values they make."""

    reads: list[tuple[Buffer, int]] = field(default_factory=list)
    results: list[object] = field(default_factory=list)


@register_impls
@dataclass
class RegFunctions(InterpreterFunctions):
    open_wgmma: WgmmaGroup = field(default_factory=WgmmaGroup)
    wgmma_groups: list[WgmmaGroup] = field(default_factory=list)  # committed, until a wait retires them
    turn: str = "none"  # the warpgroups' turns: none started, passed, held

    def in_flight(self, value: object) -> bool:
        """Whether `value` is made by a wgmma group no wait has retired yet."""
        return any(value is r for g in (self.open_wgmma, *self.wgmma_groups) for r in g.results)

    def listener(self) -> InFlightReads:
        """The listener that refuses to let an op read what a group still in flight makes."""
        return InFlightReads(self)

    @impl(reg.ZerosOp)
    def run_zeros(self, interpreter: Interpreter, op: reg.ZerosOp, args: tuple[Any, ...]):
        t: reg.FragType = op.result.type  # type: ignore[assignment]
        return ({_key(w): np.zeros((32, t.values_per_lane()), np.float32) for w in warps_of(op)},)

    @impl(reg.LdmatrixOp)
    def run_ldmatrix(self, interpreter: Interpreter, op: reg.LdmatrixOp, args: tuple[Any, ...]):
        return (_fragments_of_stage(op, *args, hbm.parse_labels(op.at)),)

    @impl(reg.ReadOp)
    def run_read(self, interpreter: Interpreter, op: reg.ReadOp, args: tuple[Any, ...]):
        t: reg.FragType = op.result.type  # type: ignore[assignment]
        if op.vector:  # a staged vector: each warp's window of it, as reg.load reads one
            buf, stage = args
            check_readable(buf, stage, op.name)
            (axis,) = t.axis_names
            data = buf.data[stage].reshape(buf.type.shape[axis])
            out = {}
            for w in warps_of(op):
                first = warp_origin(t, w, {}).get(axis, 0)
                out[_key(w)] = gather(t, data[first : first + t.dims[0]].astype(np.float32).reshape(_matrix_shape(t)))
            return (out,)
        return (_fragments_of_stage(op, *args, {}, np.float32),)

    @impl(reg.MmaOp)
    def run_mma(self, interpreter: Interpreter, op: reg.MmaOp, args: tuple[Any, ...]):
        a, b, c = args
        ta, tb, tc = (v.type for v in (op.a, op.b, op.c))
        out = {}
        for key in c:
            d = scatter(tc, c[key]) + scatter(ta, a[key]) @ scatter(tb, b[key])
            out[key] = gather(tc, d.astype(np.float32))
        return (out,)

    def _wgmma_read(self, op, buf: Buffer, stage: int, axes: tuple[str, str]) -> np.ndarray:
        """The stage as a matrix over `axes` (its axes of one place dropped), counted as read
        by the open wgmma group until a wait retires it."""
        check_readable(buf, stage, op.name)
        buf.wgmma_reads[stage] = buf.wgmma_reads.get(stage, 0) + 1
        self.open_wgmma.reads.append((buf, stage))
        kept = reg.tile_axes(buf.type)
        return NamedArray(kept, buf.data[stage].reshape([buf.type.shape[x] for x in kept])).aligned(axes)

    @impl(reg.WgmmaOp)
    def run_wgmma(self, interpreter: Interpreter, op: reg.WgmmaOp, args: tuple[Any, ...]):
        a, a_stage, b, b_stage, c = args
        rows, cols, k = op.axes()
        t: reg.FragType = op.c.type  # type: ignore[assignment]
        kk = hbm.parse_labels(op.at)[k]
        kept = reg.tile_axes(a.type)
        a_all = self._wgmma_read(op, a, a_stage, kept)
        b_tile = self._wgmma_read(op, b, b_stage, (k, cols))[kk : kk + 16, :]
        out = {}
        n = t.shape[rows]
        for number, w in enumerate(warps_of(op)):  # the warp's rows: its place along each of A's row axes (held ones: one place)
            origin = warp_origin(t, w, {}, number)
            first = origin[rows]
            window = tuple(slice(first, first + n) if x == rows else w[x] if x in w and x != k else slice(None) for x in kept)
            a_rows = NamedArray(tuple(x for x in kept if x in (rows, k)), a_all[window]).aligned((rows, k))
            c0 = origin[cols] if t.split.data > 1 else 0  # a split fragment's warpgroup: its own columns of B
            d = scatter(t, c[_key(w)]) + a_rows[:, kk : kk + 16] @ b_tile[:, c0 : c0 + t.shape[cols]]
            out[_key(w)] = gather(t, d.astype(np.float32))
        self.open_wgmma.results.append(out)
        return (out,)

    @impl(reg.WgmmaRsOp)
    def run_wgmma_rs(self, interpreter: Interpreter, op: reg.WgmmaRsOp, args: tuple[Any, ...]):
        a, b, b_stage, c = args
        rows, cols, k = op.axes()
        ta: reg.FragType = op.a.type  # type: ignore[assignment]
        t: reg.FragType = op.c.type  # type: ignore[assignment]
        kk = hbm.parse_labels(op.at)[k]
        b_tile = self._wgmma_read(op, b, b_stage, (k, cols))[kk : kk + 16, :]
        out = {}
        for key in c:
            d = scatter(t, c[key]) + scatter(ta, a[key]) @ b_tile
            out[key] = gather(t, d.astype(np.float32))
        self.open_wgmma.results.append(out)
        return (out,)

    # the interpreter runs the warps in step, so the warpgroups' turns order nothing; it
    # checks that they are taken in order: started once, then waited for and passed in turn
    @impl(reg.TurnStartOp)
    def run_turn_start(self, interpreter: Interpreter, op: reg.TurnStartOp, args: tuple[Any, ...]):
        if self.turn != "none":
            raise InterpretationError(f"{op.name}: the turns were started already")
        self.turn = "passed"
        return ()

    @impl(reg.TurnWaitOp)
    def run_turn_wait(self, interpreter: Interpreter, op: reg.TurnWaitOp, args: tuple[Any, ...]):
        if self.turn != "passed":
            why = "before reg.turn_start: the first warpgroup would wait for a turn no one passes" if self.turn == "none" \
                else "twice without reg.turn_pass: the next warpgroup would never get its turn"
            raise InterpretationError(f"{op.name}: {why}")
        self.turn = "held"
        return ()

    @impl(reg.TurnPassOp)
    def run_turn_pass(self, interpreter: Interpreter, op: reg.TurnPassOp, args: tuple[Any, ...]):
        if self.turn != "held":
            raise InterpretationError(f"{op.name}: passes a turn this warpgroup does not hold")
        self.turn = "passed"
        return ()

    @impl(reg.WgmmaCommitOp)
    def run_wgmma_commit(self, interpreter: Interpreter, op: reg.WgmmaCommitOp, args: tuple[Any, ...]):
        self.wgmma_groups.append(self.open_wgmma)
        self.open_wgmma = WgmmaGroup()
        return ()

    @impl(reg.WgmmaWaitOp)
    def run_wgmma_wait(self, interpreter: Interpreter, op: reg.WgmmaWaitOp, args: tuple[Any, ...]):
        while len(self.wgmma_groups) > op.pending.value.data:
            for buf, stage in self.wgmma_groups.pop(0).reads:
                buf.wgmma_reads[stage] -= 1
        return ()

    @impl(reg.StoreOp)
    def run_store(self, interpreter: Interpreter, op: reg.StoreOp, args: tuple[Any, ...]):
        value, g, *offsets = args
        t: reg.FragType = op.value.type  # type: ignore[assignment]
        for number, w in enumerate(warps_of(op)):
            origin = warp_origin(t, w, {}, number)
            tile = scatter(t, value[_key(w)]).astype(np.float32)
            if [a for a in g.type.axis_names if a in t.shape] != list(t.axis_names):  # accumulators stored transposed
                tile = tile.T
            # the global's axes that the fragment lacks: one place, at the offset
            dims = [t.shape.get(a, 1) for a in g.type.axis_names]
            start = [o + origin.get(a, 0) for o, a in zip(offsets, g.type.axis_names)]
            src, dst = overlap(g, start, dims)
            if op.accumulate is not None:  # a block's part of a split contraction
                g.data[src] += tile.reshape(dims)[dst]
            else:
                g.data[src] = round_to(g.type.dtype, tile).reshape(dims)[dst]
        return ()

    @impl(reg.LoadOp)
    def run_load(self, interpreter: Interpreter, op: reg.LoadOp, args: tuple[Any, ...]):
        g, *offsets = args
        t: reg.FragType = op.result.type  # type: ignore[assignment]
        (axis,) = t.axis_names
        dims = [t.dims[0] if a == axis else 1 for a in g.type.axis_names]
        out = {}
        for w in warps_of(op):
            origin = warp_origin(t, w, {})  # the warp's place along the fragment's axis, and along axes it holds
            start = [o + origin.get(a, 0) for o, a in zip(offsets, g.type.axis_names)]
            out[_key(w)] = gather(t, read_tile(g, start, dims).reshape(_matrix_shape(t)))
        return (out,)

    @impl(reg.WriteOp)
    def run_write(self, interpreter: Interpreter, op: reg.WriteOp, args: tuple[Any, ...]):
        value, buf, stage = args
        buf.check_writable(stage, op.name)
        t: reg.FragType = op.value.type  # type: ignore[assignment]
        order = t.axis_names + tuple(a for a in buf.type.axis_names if a not in t.shape)
        data = np.ascontiguousarray(NamedArray(tuple(buf.type.axis_names), buf.data[stage]).aligned(order))
        for number, w in enumerate(warps_of(op)):
            origin = warp_origin(t, w, {}, number)
            where = tuple(slice(origin[a], origin[a] + n) for a, n in t.shape.items())
            data[where] = scatter(t, value[_key(w)]).reshape(data[where].shape)
        buf.data[stage] = NamedArray(order, data).aligned(buf.type.axis_names)
        buf.unsynced.add(stage)  # the other warps' values are visible after a barrier
        return ()

    @impl(reg.StmatrixOp)
    def run_stmatrix(self, interpreter: Interpreter, op: reg.StmatrixOp, args: tuple[Any, ...]):
        value, buf, stage = args
        buf.check_writable(stage, op.name)
        t: reg.FragType = op.value.type  # type: ignore[assignment]
        at = hbm.parse_labels(op.at)
        rows, cols = t.axis_names
        if op.transposed:  # the warps whose rows lie in the window write them as the buffer's columns
            r0, width = at.get(rows, 0), buf.type.shape[rows]
            tile = np.zeros((t.shape[cols], width), np.float32)
            for w in warps_of(op):
                origin = warp_origin(t, w, {})
                if r0 <= origin[rows] < r0 + width:
                    tile[:, origin[rows] - r0 : origin[rows] - r0 + t.shape[rows]] = scatter(t, value[_key(w)]).T
            order = (cols, rows) + tuple(a for a in buf.type.axis_names if a not in t.shape)
            full = tile.reshape([t.shape[cols], width] + [1] * (len(order) - 2))
            buf.data[stage] = round_to(buf.type.dtype, NamedArray(order, full).aligned(buf.type.axis_names))
            buf.unsynced.add(stage)
            return ()
        c0, width = at.get(cols, 0), buf.type.shape[cols]
        tile = np.zeros(buf.type.dims, np.float32)
        for w in warps_of(op):
            origin = warp_origin(t, w, {})  # its rows, and its place along axes it holds (a head of a group)
            if origin[rows] < buf.type.shape[rows]:
                where = tuple(slice(origin[rows], origin[rows] + t.shape[rows]) if a == rows else slice(None) if a == cols
                              else origin.get(a, 0) for a in buf.type.axis_names)
                tile[where] = scatter(t, value[_key(w)])[:, c0 : c0 + width]
        buf.data[stage] = round_to(buf.type.dtype, tile)
        buf.unsynced.add(stage)  # the other warps' rows of it are visible after a barrier
        return ()

    # -- fragment math -----------------------------------------------------------------------
    @impl(reg.FillOp)
    def run_fill(self, interpreter: Interpreter, op: reg.FillOp, args: tuple[Any, ...]):
        t: reg.FragType = op.result.type  # type: ignore[assignment]
        return ({_key(w): np.full((32, t.values_per_lane()), op.value.value.data, np.float32) for w in warps_of(op)},)

    @impl(reg.MapOp)
    def run_map(self, interpreter: Interpreter, op: reg.MapOp, args: tuple[Any, ...]):
        fn = op.fn.data
        t: reg.FragType = op.result.type  # type: ignore[assignment]
        if t.role.data == "row_part":  # lane by lane: a part and its row's value share a lane and a place
            out = {}
            for key in args[0]:
                with np.errstate(over="ignore", invalid="ignore"):
                    if fn == "scale":
                        y = args[0][key] * np.float32(op.by.value.data)  # type: ignore[union-attr]
                    else:
                        y = _MAP[fn](*(a[key] for a in args))
                out[key] = y.astype(np.float32)
            return (out,)
        if fn == "scale":
            return (_elementwise(op.inputs, args, t, lambda x: x * np.float32(op.by.value.data)),)  # type: ignore[union-attr]
        if op.by is not None:  # a binary function, its second operand the constant `by`
            return (_elementwise(op.inputs, args, t, lambda x: _MAP[fn](x, np.float32(op.by.value.data))),)  # type: ignore[union-attr]
        return (_elementwise(op.inputs, args, t, _MAP[fn]),)

    def _reduce(self, interpreter: Interpreter, op: reg.RowReduceOp | reg.ColReduceOp, args: tuple[Any, ...]):
        """Along each row (`reg.row_reduce`) or down each column (`reg.col_reduce`)."""
        (x,) = args
        red = np.max if op.kind.data == "max" else np.sum
        axis = 1 if isinstance(op, reg.RowReduceOp) else 0
        t: reg.FragType = op.result.type  # type: ignore[assignment]
        return ({key: gather(t, red(scatter(op.input.type, v), axis=axis, keepdims=True).astype(np.float32)) for key, v in x.items()},)  # type: ignore[arg-type]

    run_row_reduce = impl(reg.RowReduceOp)(_reduce)
    run_col_reduce = impl(reg.ColReduceOp)(_reduce)

    @impl(reg.RowAccumulateOp)
    def run_row_accumulate(self, interpreter: Interpreter, op: reg.RowAccumulateOp, args: tuple[Any, ...]):
        """Each lane's part plus its own values of the part's row."""
        acc, x = args
        rows, _ = lane_layout_of(op.input.type)  # type: ignore[arg-type]
        part_rows, _ = lane_layout_of(op.acc.type)  # type: ignore[arg-type]
        mine = rows[:, None, :] == part_rows[:, :, None]  # [lane, part, value]: value v of the lane is in part p's row
        return ({key: (acc[key] + np.where(mine, x[key][:, None, :], np.float32(0)).sum(axis=2, dtype=np.float32)).astype(np.float32)
                 for key in acc},)

    @impl(reg.RowCombineOp)
    def run_row_combine(self, interpreter: Interpreter, op: reg.RowCombineOp, args: tuple[Any, ...]):
        """The sum of a quad's 4 parts, in each of its lanes."""
        (x,) = args
        return ({key: np.repeat(v.reshape(8, 4, -1).sum(axis=1, dtype=np.float32), 4, axis=0) for key, v in x.items()},)

    @impl(reg.LazyMaxOp)
    def run_lazy_max(self, interpreter: Interpreter, op: reg.LazyMaxOp, args: tuple[Any, ...]):
        """Per warp: the old max where no row of the warp grows by more than the slack, else
        each row's max (a comparison with NaN counts as growing, as the vote does)."""
        old, new = args
        slack = np.float32(op.slack.value.data)
        out = {}
        for key in old:
            with np.errstate(invalid="ignore"):
                kept = bool(np.all(new[key] - old[key] <= slack))
            out[key] = old[key] if kept else _MAP["max"](old[key], new[key]).astype(np.float32)
        return (out,)

    @impl(reg.RescaleOp)
    def run_rescale(self, interpreter: Interpreter, op: reg.RescaleOp, args: tuple[Any, ...]):
        """`acc` times its rows' factors (skipping a warp's products where they are all 1 is
        the lowering's; x * 1 is x)."""
        return (_elementwise(op.operands, args, op.result.type, np.multiply),)  # type: ignore[arg-type]

    @impl(reg.MaskOp)
    def run_mask(self, interpreter: Interpreter, op: reg.MaskOp, args: tuple[Any, ...]):
        x, r0, c0 = args
        t: reg.FragType = op.input.type  # type: ignore[assignment]
        out = {}
        flipped = t.axis_names[0] != op.row.data  # the mask's rows are the fragment's columns
        for w in warps_of(op):
            rows, cols = _positions(t, w, (c0, r0) if flipped else (r0, c0))
            keep = rows[:, None] <= cols[None, :] if flipped else rows[:, None] >= cols[None, :]
            out[_key(w)] = _fill(t, x[_key(w)], keep, op.fill.value.data)
        return (out,)

    @impl(reg.MaskBoundOp)
    def run_mask_bound(self, interpreter: Interpreter, op: reg.MaskBoundOp, args: tuple[Any, ...]):
        x, start = args
        t: reg.FragType = op.input.type  # type: ignore[assignment]
        axis = t.axis_names.index(op.axis.data)
        out = {}
        for w in warps_of(op):
            pos = _positions(t, w, tuple(start if d == axis else 0 for d in range(2)))[axis]
            keep = (pos < op.bound.data)[:, None] if axis == 0 else (pos < op.bound.data)[None, :]
            out[_key(w)] = _fill(t, x[_key(w)], keep, op.fill.value.data)
        return (out,)

    @impl(reg.ToAOp)
    def run_to_a(self, interpreter: Interpreter, op: reg.ToAOp, args: tuple[Any, ...]):
        (x,) = args
        t: reg.FragType = op.result.type  # type: ignore[assignment]
        c0 = op.start
        return ({key: gather(t, round_to(t.dtype, scatter(op.input.type, v)[:, c0 : c0 + 16])) for key, v in x.items()},)  # type: ignore[arg-type]


_MAP = {"exp2": np.exp2, "log2": np.log2, "sqrt": np.sqrt, "neg": np.negative, "add": np.add, "sub": np.subtract, "mul": np.multiply,
        "div": np.divide, "max": np.maximum, "ge": lambda a, b: np.greater_equal(a, b).astype(np.float32)}


def _elementwise(inputs, args: tuple[Any, ...], t: reg.FragType, f) -> dict:
    """`f` of the fragments `args` (of the SSA values `inputs`), each warp's: a row (col)
    fragment scatters to a column (row) vector, which broadcasts along the columns (rows);
    the result gathered back as a fragment of type `t`."""
    out = {}
    for key in args[0]:
        xs = [scatter(v.type, a[key]) for v, a in zip(inputs, args)]
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            y = f(*xs)
        out[key] = gather(t, np.broadcast_to(y, _matrix_shape(t)).astype(np.float32))
    return out


def _matrix_shape(t: reg.FragType) -> tuple[int, int]:
    if t.role.data == "line" and len(t.dims) == 1:  # one value per row, as a `row` fragment
        return (t.dims[0], 1)
    return {"row": (t.dims[0], 1), "col": (1, t.dims[0]), "line_col": (1, t.dims[0])}.get(t.role.data, t.dims)  # type: ignore[return-value]


def _positions(t: reg.FragType, w: dict[str, int], starts: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """The positions in the block's tile (plus `starts`) of a warp's fragment's rows and columns."""
    origin = warp_origin(t, w, {})
    return tuple(s + origin[a] + np.arange(n) for s, (a, n) in zip(starts, t.shape.items()))  # type: ignore[return-value]


def _fill(t: reg.FragType, lanes: np.ndarray, keep: np.ndarray, fill: float) -> np.ndarray:
    return gather(t, np.where(keep, scatter(t, lanes), np.float32(fill)).astype(np.float32))


def _fragments_of_stage(op: reg.LdmatrixOp | reg.ReadOp, buf: Any, stage: int, at: dict[str, int], as_type: Any = None) -> dict:
    """Each warp's fragment of `op`'s type, read from stage `stage` of `buf` at `at` (as
    `as_type` where given): the warp's window of the tile, the buffer's other axes being the
    warp's place."""
    assert isinstance(buf, Buffer)
    check_readable(buf, stage, op.name)
    t: reg.FragType = op.result.type  # type: ignore[assignment]
    data = buf.data[stage] if as_type is None else buf.data[stage].astype(as_type)
    out = {}
    for w in warps_of(op):
        window = warp_window(t, w, at, buf.type.axis_names)
        kept = tuple(a for a in buf.type.axis_names if a in t.shape)
        out[_key(w)] = gather(t, NamedArray(kept, data[window]).aligned(t.axis_names))
    return out


@dataclass
class InFlightReads(Interpreter.Listener):
    """An interpreter listener: an op that reads a value a wgmma group makes before a
    `reg.wgmma_wait` has retired that group is an error (on the GPU it would read registers
    the tensor cores are still writing). Products may take such a value as their
    accumulator (wgmma chains them in order), and a loop may carry it to its next trip."""

    fns: RegFunctions

    def will_interpret_op(self, op: Operation, args: tuple[Any, ...]) -> None:
        if isinstance(op, (reg.WgmmaOp, reg.WgmmaRsOp, reg.WgmmaCommitOp, reg.WgmmaWaitOp, scf.YieldOp, scf.ForOp)):
            return
        for n, value in enumerate(args):
            if self.fns.in_flight(value):
                raise InterpretationError(f"{op.name} reads operand {n}, which a wgmma group still in flight makes: "
                                          "a reg.wgmma_wait must retire the group first")
