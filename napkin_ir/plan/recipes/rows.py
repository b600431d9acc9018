"""The rows family: reductions with no product, each block a tile of whole rows.

A row softmax, a row L2 norm, a row sum or max (RMSNorm's statistics, the backward's
D = rowsum(dO * O)), with elementwise maps around them: one function with no contraction
whose normalisations and reductions all run along one axis, the innermost of every input
that has it (an input that lacks it, as the log-sum-exp a softmax's gradient reads, is a
statistic of the rows, read straight into registers); a function of maps alone (and
constants: the gradient of D above broadcasts D's cotangent along the head dim) is rows
along its widest input's innermost axis. Recognised by that structure (`recognise`). The plan, the same on sm_80 and sm_90a (the
kernel is bound by memory; cp.async, legal on both, stages the rows): the other axes spread
over the grid, the last of them cut into tiles of `rows` rows; each block copies its rows
whole into shared memory once; each of its warps holds whole rows in registers (`line`
fragments: 8 columns of every 256 a lane, or a row shorter than 256 across length / 8
lanes, 256 / length rows at a time: the attention backward's D over head dims of 64 or
128) and reduces them with shuffles; the output leaves 16 bytes a lane. Inputs are bf16,
f16 or f32 (an f32 tile staged and read as it lies, 32 bytes a lane).

A reduction down the columns (along the axis just outside the innermost: a bias's
gradient, the sum of dC's rows) is planned the other way round (`plan_down`): the
columns, innermost and so read coalesced, are tiled over the grid and split over the
block's warps, up to 64 a warp, and the rows stream through shared memory (cp.async, a
few dozen rows a stage); each warp sums down its own columns, in its lanes and then
across the lanes of the other rows it holds, and carries the sums through the stream.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp

from napkin_ir.dialects import ncd, reg
from napkin_ir.lowering.smem_to_reg import LINE_VALUES
from napkin_ir.plan.diagram import axis_sizes, the_function
from napkin_ir.plan.kernel_plan import CopyEngine, KernelPlan, Launch
from napkin_ir.plan.request import PlanRequest
from napkin_ir.target import Target, dtype

NAME = "rows"
WARPS = 4  # warps a block: 128 threads, as many rows a block at one row a warp


@dataclass(frozen=True)
class RowShape:
    """The grid axes (`batch` a block each, `rows` tiled), the reduced axis and its length;
    `down` where the reduction runs down the columns: `rows` is then the columns (the
    innermost axis), tiled over the grid, and `along` the rows, streamed."""

    batch: tuple[str, ...]
    rows: str
    along: str
    length: int
    element_bytes: int  # of the widest input (what a block stages)
    down: bool = False


def recognise(module: ModuleOp) -> RowShape | None:
    """The `RowShape` of a diagram of maps, normalisations and reductions along one axis,
    the innermost of every input that has it, with no contraction (an input that lacks
    it has the rows' axes only); None for any other."""
    f = the_function(module)
    if f is None:
        return None
    ops = list(f.body.walk())
    if any(isinstance(op, ncd.ContractOp) for op in ops):
        return None
    along = {op.axis.data for op in ops if isinstance(op, ncd.AlongOneAxisOp)}
    along |= {a for op in ops if isinstance(op, ncd.ReduceOp) for a in op.along_axes}
    inputs = [a.type for a in f.args]
    if not all(isinstance(t, ncd.TensorType) for t in inputs) or not all(
            isinstance(op, (ncd.MapOp, ncd.AlongOneAxisOp, ncd.ReduceOp, ncd.ConstantOp)) for op in ops if isinstance(op, ncd.NcdOp)):
        return None
    if not along and inputs:  # maps alone (a gradient broadcasting a row's cotangent): rows along the widest input's innermost axis
        along = {max(inputs, key=lambda t: len(t.dims)).axis_names[-1]}
    if len(along) != 1:
        return None
    (j,) = along
    rows = [t for t in inputs if j in t.shape]
    inner = {t.axis_names[-1] for t in rows}
    if len(inner) != 1:
        return None
    # a reduction down the columns (a bias's gradient) reduces the axis just outside the innermost
    down = inner != {j}
    if not rows or (down and not all(len(t.dims) > 1 and t.axis_names[-2] == j for t in rows)):
        return None
    others = [a for a in rows[0].axis_names if a != j]
    # a statistic of the rows (the forward's log-sum-exp, saved for the gradient): read
    # straight into registers, one value a row
    if not others or not all(set(t.axis_names) <= set(others) for t in inputs if j not in t.shape):
        return None
    return RowShape(tuple(others[:-1]), others[-1], j, axis_sizes(module)[j], max(dtype(t.dtype).bytes for t in rows), down)


def rows_at_a_time(shape: RowShape) -> int:
    """The rows a warp's lanes hold at a time: one, or 256 / length of rows shorter than 256
    (each across length / 8 lanes); 1 for a length no `line` fragment holds, which
    smem-to-reg refuses, saying which lengths it takes."""
    n = shape.length
    return reg.LINE_SPAN // n if n < reg.LINE_SPAN and n in reg.LINE_SPANS else 1


def default_rows(shape: RowShape) -> int:
    """Rows a block: a row a warp, or up to four a warp where the rows are short, so that a
    block moves enough bytes to hide the copy's latency, and at least the rows a warp holds
    at a time (smem-to-reg refuses rows a warp cannot hold in registers, saying how many fit)."""
    return WARPS * max(rows_at_a_time(shape), min(4, 1024 // max(shape.length, 1)))


def column_tiles(shape: RowShape, columns: int) -> tuple[int, int]:
    """(columns a warp, rows a stage) of a reduction down the columns: up to 64 columns a warp
    (8 lanes a row of 128 bytes, 4 rows at a time), fewer where the columns are few; as many
    rows as a lane holds `LINE_VALUES` values of, up to 64, a whole number of the rows a warp
    holds at a time."""
    per_warp = min(64, max(reg.LINE_CHUNK, 1 << max(0, math.ceil(columns / WARPS) - 1).bit_length()))
    step = reg.LINE_SPAN // per_warp if per_warp < reg.LINE_SPAN else 1
    rows = min(64, LINE_VALUES * 32 // per_warp, -(-shape.length // step) * step)
    return per_warp, rows


def plan_down(module: ModuleOp, shape: RowShape, target: Target, req: PlanRequest) -> KernelPlan:
    """A reduction down the columns (`shape.down`): the columns (innermost, coalesced) tiled
    over the grid, `block="C"` a block, split over `warps="W"` warps, each summing down its
    own columns; the rows streamed through shared memory with cp.async, a few at a time."""
    sizes = axis_sizes(module)
    per_warp, rows = column_tiles(shape, sizes[shape.rows])
    (warps,) = req.sized("warps", 1, "for a reduction down the columns: warps sharing the block's columns") or (WARPS,)
    (cols,) = req.sized("block", 1, "for a reduction down the columns: columns a block") or (warps * per_warp,)
    stages = req.stages or 2
    staged = stages * rows * cols * shape.element_bytes
    budget = target.smem_per_block(req.blocks_per_sm)
    if staged > budget:
        raise req.fail(f"a block of {cols} columns stages {stages} x {rows} rows of them, {staged} bytes, over the {budget} of "
                       f"shared memory a block has on {target.arch}: use fewer columns a block or fewer stages")
    return KernelPlan(NAME, target, grid=(*((b, None) for b in shape.batch), (shape.rows, cols)), stream=(shape.along, rows),
                      stages=stages, copy=CopyEngine.CP_ASYNC, product=None, warps=((shape.rows, warps),),
                      launch=Launch(blocks_per_sm=req.blocks_per_sm))


def plan(module: ModuleOp, shape: RowShape, target: Target, req: PlanRequest) -> KernelPlan:
    """The plan for `module`, a row reduction, on `target` as `req` asks: `block="R"` rows a
    block, `warps="W"` warps sharing them. Rows longer than a warp's registers hold are
    smem-to-reg's to refuse. A reduction down the columns is `plan_down`'s."""
    req.refuse("a row reduction (its rows are staged whole: there is no stream to tile, no product to tune)",
               ("autotile", "layout", "group", "cluster", "store", "q_registers", "split", "deterministic", "swap"))
    if shape.down:
        return plan_down(module, shape, target, req)
    (rows,) = req.sized("block", 1, "for a row reduction: rows a block") or (default_rows(shape),)
    step = rows_at_a_time(shape)
    (warps,) = req.sized("warps", 1, "for a row reduction: warps sharing the rows") or (min(WARPS, max(1, rows // step)),)
    sizes = axis_sizes(module)
    while rows > warps * step and rows > sizes[shape.rows]:  # a tile no longer than its axis, a step of rows a warp at least
        rows //= 2
    staged = rows * shape.length * shape.element_bytes
    budget = target.smem_per_block(req.blocks_per_sm)
    if staged > budget:
        raise req.fail(f"a block of {rows} rows of {shape.length} stages {staged} bytes, over the {budget} of shared memory a "
                       f"block has on {target.arch}: use fewer rows a block (block=\"{max(1, budget // (shape.length * shape.element_bytes))}\")")
    return KernelPlan(NAME, target, grid=(*((b, None) for b in shape.batch), (shape.rows, rows)), stream=None, stages=2,  # nothing streams: one buffer is used
                      copy=CopyEngine.CP_ASYNC, product=None, warps=((shape.rows, warps),),
                      launch=Launch(blocks_per_sm=req.blocks_per_sm))
