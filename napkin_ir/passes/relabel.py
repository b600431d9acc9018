"""`ncd-relabel`: say where each axis of a diagram lives.

    ncd-relabel{grid="m:128,n:128" stream="k:32"}

spreads axes `m` and `n` over thread blocks in tiles of 128 (each block owns one output
tile) and streams axis `k` through the block 32 at a time; unlabelled axes stay whole.
An axis named without a tile has tiles of 1: `grid="b,h,i:128"` gives each block one
batch entry and one head.
To let the napkin model choose the labels, run `ncd-autotile` instead (passes/autotile.py).
The labels are written on each function as `ncd.grid` and `ncd.stream`; `ncd-to-hbm`
reads them. A tile longer than its axis is one partial tile (the rest is masked, as at a
ragged edge): sm_90a attention takes 64 query rows a warpgroup at any sequence length.
A reduced axis spread over the grid is split: each block sums its tile of it (streamed
as well: `grid="m:128,n:128,k:1024" stream="k:64"` gives each block 1024 of `k` to
stream) and the blocks add their parts of the sum into the output (`ncd-to-hbm` stores it
with `accumulate`, and refuses what is not such a sum).
A result may hold the streamed axis only where it is such a sum: the blocks add it tile by
tile of the stream (the attention gradient's dQ, in blocks that hold keys and stream
queries). Labels that name no axis, tiles under 1, other streamed axes of an output, and a
split that is not a whole number of stream tiles, are refused with a diagnostic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from napkin_ir.dialects.hbm import format_labels
from napkin_ir.dialects.ncd import ContractOp, ReduceOp, TensorType

_LABEL = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?::\s*([0-9]+)\s*)?$")


def parse_label_option(option: str, text: str) -> dict[str, int]:
    labels: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        m = _LABEL.match(part)
        if not m:
            raise PassFailedException(f"ncd-relabel: cannot read {option}=\"{text}\": '{part}' should be axis:tile, e.g. m:128, "
                                      "or an axis alone for tiles of 1")
        axis, tile = m.group(1), int(m.group(2) or 1)
        if axis in labels:
            raise PassFailedException(f"ncd-relabel: axis '{axis}' is labelled twice in {option}")
        labels[axis] = tile
    return labels


def function_axes(f: func.FuncOp) -> dict[str, int]:
    """Every named axis of the function's tensors, with its size."""
    axes: dict[str, int] = {}
    values = list(f.body.block.args) + [r for op in f.body.walk() for r in op.results]
    for v in values:
        if isinstance(v.type, TensorType):
            axes.update(v.type.shape)
    return axes


def check_labels(f: func.FuncOp, grid: dict[str, int], stream: dict[str, int]) -> None:
    name = f"@{f.sym_name.data}"
    axes = function_axes(f)
    known = ", ".join(axes) or "none"
    outputs = [t for t in f.function_type.outputs.data if isinstance(t, TensorType)]
    for kind, labels in (("grid", grid), ("stream", stream)):
        for axis, tile in labels.items():
            if axis not in axes:
                raise PassFailedException(f"ncd-relabel: the {kind} label '{axis}' names no axis of {name}; its axes are {known}")
            if tile < 1:
                raise PassFailedException(f"ncd-relabel: a tile of {tile} along '{axis}' in {name}: tiles are 1 or more elements")
    for axis in grid:  # a reduced axis spread over the grid is split: ncd-to-hbm says which reductions can be
        if axis in stream and grid[axis] % stream[axis]:
            raise PassFailedException(f"ncd-relabel: axis '{axis}' is split over the grid in parts of {grid[axis]} and "
                                      f"streamed {stream[axis]} at a time; a part must be a whole number of stream tiles")
    ret = f.body.block.last_op
    results = list(ret.operands) if isinstance(ret, func.ReturnOp) else []
    for axis in stream:
        for n, t in enumerate(outputs):
            if axis in t.shape and not (n < len(results) and _summed_over(results[n], grid)):
                raise PassFailedException(f"ncd-relabel: axis '{axis}' is an axis of {name}'s output; stream only axes that are "
                                          "reduced (or that of a sum over an axis spread over the grid, added tile by tile)")


def _summed_over(v: SSAValue, grid: dict[str, int]) -> bool:
    """Whether result `v` is a sum along an axis spread over the grid (a contraction, or a
    reduce sum): each block adds its part into the output, so a streamed axis of the
    result is added tile by tile as the stream goes (the attention gradient's dQ in a
    block that holds keys and streams queries)."""
    op = v.owner
    if isinstance(op, ContractOp):
        return any(a in grid for a in op.over_axes)
    if isinstance(op, ReduceOp) and op.kind.data == "sum":
        return any(a in grid for a in op.along_axes)
    return False


@dataclass(frozen=True)
class RelabelPass(ModulePass):
    name = "ncd-relabel"
    grid: str = ""
    stream: str = ""

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        grid = parse_label_option("grid", self.grid)
        stream = parse_label_option("stream", self.stream)
        if not grid and not stream:
            raise PassFailedException('ncd-relabel: no labels given; say where axes live (grid="m:128,n:128" stream="k:32") '
                                      "or let the napkin model choose them with ncd-autotile{hw=h200}")
        label(op, grid, stream)


def label(op: builtin.ModuleOp, grid: dict[str, int], stream: dict[str, int]) -> None:
    """Write `grid` and `stream` on every function of `op`, after checking them."""
    funcs = [f for f in op.walk() if isinstance(f, func.FuncOp) and f.body.blocks]
    if not funcs:
        raise PassFailedException("ncd-relabel: the module has no function to label")
    for f in funcs:
        check_labels(f, grid, stream)
        f.attributes["ncd.grid"] = format_labels(grid)
        f.attributes["ncd.stream"] = format_labels(stream)
