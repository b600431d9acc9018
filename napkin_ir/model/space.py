"""Where each op of a kernel runs: every block, times every iteration of its loops.

The model counts an op by the contexts it runs in, not by a formula per example. A
context is one block of the grid and one iteration of each enclosing `scf.for`; a
`Space` holds them as the axes of numpy arrays (one axis per grid axis, then one per
loop), and evaluates the index arithmetic of the kernel over all of them at once: the
block origins, the loop induction variables, the offsets of every tile. A loop whose
bounds depend on the block (causal attention skips the tiles above the diagonal) gets
as many iterations as its longest instance and a mask for the rest; an `scf.if`
narrows the mask. Index values the walk cannot evaluate are left out, and whatever
needs one says so.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Block, Operation, SSAValue

from napkin_ir.dialects import hbm, loop_facts
from napkin_ir.errors import UserError

_BINARY: dict[type, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    arith.AddiOp: np.add,
    arith.SubiOp: np.subtract,
    arith.MuliOp: np.multiply,
    arith.DivUIOp: np.floor_divide,
    arith.DivSIOp: lambda a, b: np.trunc(a / b).astype(np.int64),
    arith.FloorDivSIOp: np.floor_divide,
    arith.CeilDivSIOp: lambda a, b: -(-a // b),
    arith.CeilDivUIOp: lambda a, b: -(-a // b),
    arith.RemUIOp: np.remainder,
    arith.RemSIOp: np.fmod,
    arith.MinSIOp: np.minimum,
    arith.MinUIOp: np.minimum,
    arith.MaxSIOp: np.maximum,
    arith.MaxUIOp: np.maximum,
    arith.AndIOp: np.bitwise_and,
    arith.OrIOp: np.bitwise_or,
    arith.XOrIOp: np.bitwise_xor,
}

_COMPARE: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "eq": np.equal, "ne": np.not_equal,
    "slt": np.less, "sle": np.less_equal, "sgt": np.greater, "sge": np.greater_equal,
    "ult": np.less, "ule": np.less_equal, "ugt": np.greater, "uge": np.greater_equal,
}


@dataclass
class Space:
    """The contexts one region runs in: an array axis per grid axis, then one per loop."""

    shape: tuple[int, ...]
    grid_axes: tuple[str, ...]
    mask: np.ndarray | None = None  # where it runs (broadcast to `shape`); None: everywhere
    values: dict[SSAValue, np.ndarray] = field(default_factory=dict)
    group: int = 0  # launch order in bands of `group` block rows (`hbm.group`); 0: plain
    last_fastest: bool = False  # the last grid axis fastest (`hbm.order = "last"` or `"last_from_start"`)
    from_end: bool = True  # that axis walked from its end (`"last"`), else from its start

    # -- values -------------------------------------------------------------------------
    def get(self, v: SSAValue) -> np.ndarray | None:
        x = self.values.get(v)
        if x is None:
            return None
        return x.reshape(x.shape + (1,) * (len(self.shape) - x.ndim))

    def require(self, v: SSAValue, what: str) -> np.ndarray:
        x = self.get(v)
        if x is None:
            owner = v.owner.name if isinstance(v.owner, Operation) else "a block argument"
            raise UserError(f"cannot evaluate {what} (a value from {owner}); "
                            "the model follows index arithmetic of arith ops, scf.for and scf.if")
        return x

    # -- counting -----------------------------------------------------------------------
    def count(self) -> int:
        """How many contexts run the region."""
        if self.mask is None:
            return math.prod(self.shape)
        return int(np.broadcast_to(self.mask, self.shape).sum())

    def total(self, per_context: np.ndarray | float) -> float:
        """The sum over the contexts that run the region of a per-context quantity."""
        x = np.asarray(per_context, dtype=np.float64)
        x = x.reshape(x.shape + (1,) * (len(self.shape) - x.ndim))
        full = np.broadcast_to(x, self.shape)
        if self.mask is not None:
            full = np.where(np.broadcast_to(self.mask, self.shape), full, 0.0)
        return float(full.sum())

    def full(self, x: np.ndarray) -> np.ndarray:
        """`x` broadcast to every context, flattened: blocks first, then iterations."""
        x = x.reshape(x.shape + (1,) * (len(self.shape) - x.ndim))
        return np.broadcast_to(x, self.shape).reshape(-1)

    def full_mask(self) -> np.ndarray:
        if self.mask is None:
            return np.ones(math.prod(self.shape), bool)
        return self.full(self.mask)

    def block_ids(self) -> np.ndarray:
        """The linear launch index of each context's block: the first grid axis fastest, as
        `reg-to-ptx` maps grid axes to %ctaid.x, .y, .z; or, with `group`, bands of `group`
        block rows swept column by column (`hbm-launch{group=...}`); or, with `order=last`,
        the last grid axis fastest and walked from its end (or, `last_from_start`, its
        start)."""
        n = len(self.grid_axes)
        if self.group and n == 2:
            return self.full(grouped_ids(self.shape[0], self.shape[1], self.group))
        ids = np.zeros(self.shape[:n], np.int64)
        stride = 1
        for d in (reversed(range(n)) if self.last_fastest else range(n)):
            idx = np.arange(self.shape[d])
            if self.last_fastest and self.from_end and d == n - 1:
                idx = idx[::-1]
            ids = ids + idx.reshape((1,) * d + (-1,) + (1,) * (n - d - 1)) * stride
            stride *= self.shape[d]
        return self.full(ids)

    # -- nesting ------------------------------------------------------------------------
    def narrowed(self, cond: np.ndarray) -> Space:
        cond = _pad(cond, len(self.shape))
        mask = cond if self.mask is None else np.logical_and(self.mask, cond)
        return Space(self.shape, self.grid_axes, mask, dict(self.values), self.group, self.last_fastest, self.from_end)

    def with_loop(self, trips: int) -> Space:
        # the mask keeps its axes: a loop inside a branch adds one after them
        mask = None if self.mask is None else _pad(self.mask, len(self.shape) + 1)
        return Space(self.shape + (trips,), self.grid_axes, mask, dict(self.values), self.group, self.last_fastest, self.from_end)


def grouped_ids(rows: int, cols: int, group: int) -> np.ndarray:
    """Launch index of block (row, col) when bands of `group` rows (the last may be shorter)
    are swept column by column."""
    row = np.arange(rows).reshape(-1, 1)
    col = np.arange(cols).reshape(1, -1)
    first = row // group * group
    height = np.minimum(group, rows - first)
    return first * cols + col * height + (row - first)


def kernel_space(kernel: hbm.KernelOp) -> Space:
    """One context per block; the origins of the block's tile bound to the kernel's arguments."""
    grid, blocks = kernel.grid_tiles, kernel.grid_shape()
    axes = tuple(grid)
    space = Space(tuple(blocks[a] for a in axes), axes, group=kernel.group_rows, last_fastest=kernel.last_axis_fastest,
                  from_end=kernel.last_from_end)
    origins = kernel.body.block.args[len(kernel.globals):]
    for d, (a, arg) in enumerate(zip(axes, origins)):
        shape = [1] * len(axes)
        shape[d] = blocks[a]
        space.values[arg] = (np.arange(blocks[a], dtype=np.int64) * grid[a]).reshape(shape)
    return space


def stream_trips(kernel: hbm.KernelOp) -> np.ndarray:
    """Each block's trips of the kernel's outermost loops (its streams: a causal mask's
    diagonal tiles and the rest, say), summed: an array of the grid's shape."""
    space = kernel_space(kernel)
    total = np.zeros(space.shape, np.int64)
    for op in kernel.body.block.ops:
        if isinstance(op, scf.ForOp):
            lb, ub, step = (space.require(v, f"a bound of the loop {_loop_name(op)}") for v in (op.lb, op.ub, op.step))
            total = total + np.maximum(-(-(ub - lb) // np.maximum(step, 1)), 0)
        else:
            _evaluate(op, space)
    return total


Visitor = Callable[[Operation, Space], None]


def walk(block: Block, space: Space, visit: Visitor) -> None:
    """Evaluate the index arithmetic of `block` and hand every other op to `visit` with the
    contexts it runs in; loops and conditionals open their own spaces."""
    for op in block.ops:
        if isinstance(op, scf.ForOp):
            _walk_for(op, space, visit)
        elif isinstance(op, scf.IfOp):
            _walk_if(op, space, visit)
        elif not _evaluate(op, space):
            visit(op, space)
            for region in op.regions:  # e.g. a role's region of a warp-specialised kernel
                for b in region.blocks:
                    walk(b, space, visit)


def _evaluate(op: Operation, space: Space) -> bool:
    """Bind the result of an index op in `space`; False when `op` is not one."""
    if isinstance(op, arith.ConstantOp):
        if isinstance(op.value, IntegerAttr):
            space.values[op.result] = np.array(op.value.value.data, np.int64)
        return True
    if isinstance(op, arith.IndexCastOp):
        _bind(space, op.result, space.get(op.input))
        return True
    if type(op) in _BINARY:
        a, b = space.get(op.operands[0]), space.get(op.operands[1])
        _bind(space, op.results[0], None if a is None or b is None else _BINARY[type(op)](a, b))
        return True
    if isinstance(op, arith.CmpiOp):
        a, b = space.get(op.lhs), space.get(op.rhs)
        pred = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
        _bind(space, op.result, None if a is None or b is None else _COMPARE[pred](a, b))
        return True
    if isinstance(op, arith.SelectOp):
        c, a, b = (space.get(v) for v in (op.cond, op.lhs, op.rhs))
        _bind(space, op.result, None if c is None or a is None or b is None else np.where(c, a, b))
        return True
    return False


def _bind(space: Space, v: SSAValue, x: np.ndarray | None) -> None:
    if x is not None:
        space.values[v] = _squeeze_trailing(np.asarray(x))


def _squeeze_trailing(x: np.ndarray) -> np.ndarray:
    """Drop trailing unit axes, so a value computed in an outer loop broadcasts inward."""
    while x.ndim and x.shape[-1] == 1:
        x = x.reshape(x.shape[:-1])
    return x


def _walk_for(op: scf.ForOp, space: Space, visit: Visitor) -> None:
    lb = space.require(op.lb, f"the lower bound of the loop {_loop_name(op)}")
    ub = space.require(op.ub, f"the upper bound of the loop {_loop_name(op)}")
    step = space.require(op.step, f"the step of the loop {_loop_name(op)}")
    steps = np.unique(step)
    if steps.size != 1 or steps[0] <= 0:
        raise UserError(f"the loop {_loop_name(op)} has a step that varies or is not positive")
    s = int(steps[0])
    trips = np.maximum(-(-(ub - lb) // s), 0)
    if space.mask is not None:
        trips = np.where(np.broadcast_to(space.mask, space.shape), np.broadcast_to(trips, space.shape), 0)
    longest = int(np.max(trips)) if np.size(trips) else 0
    inner = space.with_loop(longest)
    t = np.arange(longest, dtype=np.int64).reshape((1,) * len(space.shape) + (-1,))
    n = len(inner.shape)
    inner.values[op.body.block.args[0]] = (_pad(lb, n) + s * t)
    if np.any(np.asarray(trips) != longest):
        inner = inner.narrowed(t < _pad(np.asarray(trips), n))
    walk(op.body.block, inner, visit)


def _walk_if(op: scf.IfOp, space: Space, visit: Visitor) -> None:
    cond = space.require(op.cond, "the condition of an scf.if").astype(bool)
    walk(op.true_region.block, space.narrowed(cond), visit)
    if op.false_region.blocks:
        walk(op.false_region.block, space.narrowed(np.logical_not(cond)), visit)


def _pad(x: np.ndarray, ndim: int) -> np.ndarray:
    x = np.asarray(x)
    return x.reshape(x.shape + (1,) * (ndim - x.ndim))


def _loop_name(op: scf.ForOp) -> str:
    axis = loop_facts.stream_axis(op)
    return f"over '{axis}'" if axis is not None else "(scf.for)"


def clipped_extent(offset: np.ndarray, tile: int, size: int) -> np.ndarray:
    """How much of a tile of `tile` starting at `offset` lies inside an axis of `size`."""
    return np.clip(np.minimum(offset + tile, size) - np.maximum(offset, 0), 0, None)


def clipped_elements(offsets: Sequence[np.ndarray], tile: Sequence[int], sizes: Sequence[int]) -> np.ndarray:
    """Elements of a tile inside its global, per context (offsets already in one space)."""
    out: np.ndarray = np.array(1, np.int64)
    for o, t, s in zip(offsets, tile, sizes):
        out = out * clipped_extent(o, t, s)
    return out
