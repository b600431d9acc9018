"""What a diagram is, read off its structure: the shapes the recipes recognise.

A recipe asks these questions before it plans: is this one function of products over
one shared axis (`product_shape`), is it attention (`attention_axes`: two contractions,
the second over the first's keys), and what sizes do its axes have. Nothing here
chooses a tile.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import PassFailedException

from napkin_ir.dialects import ncd
from napkin_ir.passes.relabel import function_axes
from napkin_ir.target import Dtype, dtype


def the_function(module: ModuleOp) -> func.FuncOp | None:
    """The one function with a body, or None where there are none or several."""
    funcs = [f for f in module.walk() if isinstance(f, func.FuncOp) and f.body.blocks]
    return funcs[0] if len(funcs) == 1 else None


def operand_dtype(module: ModuleOp) -> Dtype:
    """The element type the first contraction reads (a GEMM's A, attention's Q)."""
    c = next(op for op in module.walk() if isinstance(op, ncd.ContractOp))
    return dtype(c.lhs.type.dtype)  # type: ignore[attr-defined]


def axis_sizes(module: ModuleOp) -> dict[str, int]:
    """The size of every axis of the one function's tensors."""
    f = the_function(module)
    assert f is not None, "one function with a body"
    return function_axes(f)


@dataclass(frozen=True)
class ProductShape:
    """How a diagram of products over one shared axis tiles: its outputs' leading axes
    (`batch`, a block each), their rows and columns (tiled), the contracted axis
    (streamed); `plain` for the one-contraction 2-D GEMM with B stored [k, n]."""

    batch: tuple[str, ...]
    rows: str
    cols: str
    k: str
    plain: bool
    outputs: int = 1  # products the block computes
    half_output: bool = True  # every output is bf16 or f16
    results: int = 1  # tiles the block stores (a sum of products stores one)


def product_shape(module: ModuleOp, pipeline: str = "napkin-sm80") -> ProductShape:
    """The tiling axes of a diagram whose contractions all contract one axis into outputs
    of the same axes (a GEMM, batched, B stored either way, several products of one A)."""
    funcs = [f for f in module.walk() if isinstance(f, func.FuncOp) and f.body.blocks]
    contracts = [op for f in funcs for op in f.walk() if isinstance(op, ncd.ContractOp)]
    what = "products over one shared axis (a GEMM, batched or not, or several of one operand)"
    if len(funcs) != 1 or not contracts:
        raise PassFailedException(f"{pipeline}: compiles one function of {what}" + (" or attention" if pipeline == "napkin-sm80" else ""))
    overs = {tuple(c.over_axes) for c in contracts}
    outs = {tuple(c.result.type.axis_names) for c in contracts}  # type: ignore[attr-defined]
    if len(overs) != 1 or len(next(iter(overs))) != 1 or len(outs) != 1 or len(next(iter(outs))) < 2:
        found = "; ".join(f"{list(c.over_axes)} -> {c.result.type}" for c in contracts)
        raise PassFailedException(f"{pipeline}: compiles {what}" + (" or attention" if pipeline == "napkin-sm80" else "")
                                  + f"; this diagram's contractions are {found}")
    (k,), out = next(iter(overs)), next(iter(outs))
    *batch, rows, cols = out
    c = contracts[0]
    b_kn = c.rhs.type.axis_names == (k, cols) or c.lhs.type.axis_names == (k, cols)  # type: ignore[attr-defined]
    halves = all(dtype(t.dtype).is_half for f in funcs for t in f.function_type.outputs.data)  # type: ignore[attr-defined]
    results = sum(len(f.function_type.outputs.data) for f in funcs)
    return ProductShape(tuple(batch), rows, cols, k, len(contracts) == 1 and not batch and b_kn, len(contracts), halves, results)


class AttentionAxes(NamedTuple):
    """The axes of an attention diagram: `batch` (Q, K, V and O have them: a batch entry, a
    head), `query` and `keys` (the scores' rows and the axis the second product
    contracts), `group` (the axes of Q and O that K and V lack: grouped-query
    attention's query heads of a group, which share a key/value head), and whether the
    keys are masked by the query's position (`masked`: causal attention). A gradient of
    grouped-query attention's K or V sums over a group's query heads as well as the
    streamed queries: those are `summed`, spread over the grid a head a block, each block
    adding its part into the f32 result."""

    batch: tuple[str, ...]
    query: str
    keys: str
    group: tuple[str, ...] = ()
    masked: bool = False  # a mask of the keys by the query's position (causal)
    summed: tuple[str, ...] = ()  # axes the last contraction sums besides the keys: split over the grid, a place a block


def group_size(axes: AttentionAxes, sizes: dict[str, int]) -> int:
    return math.prod(sizes[a] for a in axes.group)


def attention_shape(module: ModuleOp) -> tuple[AttentionAxes, dict[str, int]]:
    """`attention_axes` and the size of every axis of the diagram; a diagram that is not
    attention is refused."""
    axes = attention_axes(module)
    if axes is None:
        raise PassFailedException("the diagram is not attention (two contractions, the second over the first's keys)")
    if len(axes.group) > 1:
        raise PassFailedException(f"grouped-query attention with one axis of query heads a group is compiled; Q has "
                                  f"{len(axes.group)} that K and V lack: {list(axes.group)}")
    (f,) = [op for op in module.walk() if isinstance(op, func.FuncOp) and op.body.blocks]
    return axes, function_axes(f)


def attention_axes(module: ModuleOp) -> AttentionAxes | None:
    """The `AttentionAxes` of a diagram that is attention, else None: one function whose
    results are contractions over an axis (the keys) of a tile of scores that other
    contractions made (one, the forward's Q K^T; or more, as the gradient's dK, which
    contracts dS, made from Q K^T and dO V^T, with Q over the queries: its "keys" are
    the streamed queries, and its rows the keys); the scores' axes that the values lack
    are the query axis (the one a causal mask compares with the keys, else the last) and
    the query heads of a group (grouped-query attention: K and V broadcast over them by
    name). Several results (the gradient's dK and dV, made together) must agree on every
    axis, or, where one has the others' axes the other way round (dQ beside them), the
    most of them (`_across_rows`)."""
    funcs = [f for f in module.walk() if isinstance(f, func.FuncOp) and f.body.blocks]
    if len(funcs) != 1:
        return None
    (f,) = funcs
    contracts = [op for op in f.walk() if isinstance(op, ncd.ContractOp)]
    # the last contractions: those no other contraction reads, even through other ops
    seconds = [c for c in contracts if not any(o.lhs in made or o.rhs in made for made in [_made_from(f, [c])]
                                               for o in contracts if o is not c)]
    firsts = [c for c in contracts if c not in seconds]
    if not firsts or not seconds or any(len(c.over_axes) != 1 for c in firsts):
        return None
    found = [_attention_axes_of(f, firsts, second) for second in seconds]
    if len(set(found)) == 1:
        return found[0]
    return _across_rows(found)


def _across_rows(found: list[AttentionAxes | None]) -> AttentionAxes | None:
    """The axes of a gradient whose results disagree on which axis is the rows: the ones
    most of them agree on, where each other result has those axes the other way round
    (the gradient's dQ beside dK and dV: its rows are the queries the others stream, its
    sum runs over the keys the others hold). The blocks keep the most results in
    registers; each of the others is a sum over the block's rows, which every block
    adds, tile by tile of the stream, into its f32 output."""
    if None in found:
        return None
    counts = {a: found.count(a) for a in found}
    best = max(counts, key=counts.__getitem__)
    if list(counts.values()).count(counts[best]) > 1:
        return None
    others = [a for a in counts if a != best]
    if any((a.query, a.keys, a.batch) != (best.keys, best.query, best.batch) for a in others):  # type: ignore[union-attr]
        return None
    return best


def _attention_axes_of(f: func.FuncOp, firsts: list[ncd.ContractOp], second: ncd.ContractOp) -> AttentionAxes | None:
    masked_axes = {a for m in f.walk() if isinstance(m, ncd.MaskOp) for a in (m.row.data, m.col.data)}
    # the streamed axis of the last contraction: the one a mask compares, else the innermost of the scores'
    over = sorted(second.over_axes, key=lambda a: (a in masked_axes, second.lhs.type.axis_names.index(a)  # type: ignore[attr-defined]
                                                   if a in second.lhs.type.shape else -1))  # type: ignore[attr-defined]
    *summed, j = over
    if any(j not in c.result.type.shape or j in c.over_axes for c in firsts):  # type: ignore[attr-defined]
        return None
    made = _made_from(f, firsts)
    operands = [v for v in (second.lhs, second.rhs) if v in made]
    if len(operands) != 1:
        return None
    scores = operands[0].type
    values = (second.rhs if operands[0] is second.lhs else second.lhs).type
    queries = [a for a in scores.axis_names if a not in values.shape]  # type: ignore[attr-defined]
    if not queries:
        return None
    masks = {m.row.data if m.col.data == j else m.col.data for m in f.walk() if isinstance(m, ncd.MaskOp) and j in (m.row.data, m.col.data)}
    if len(masks) > 1 or masks - set(queries):
        return None
    query = next(iter(masks)) if masks else queries[-1]
    batch = tuple(a for a in second.result.type.axis_names if a in scores.shape and a in values.shape)  # type: ignore[attr-defined]
    return AttentionAxes(batch, query, j, tuple(a for a in queries if a != query), bool(masks), tuple(summed))


def _made_from(f: func.FuncOp, ops: list[ncd.ContractOp]) -> set:
    """The values of `f` computed from the results of `ops`."""
    made = {op.result for op in ops}
    for op in f.body.block.ops:
        if any(v in made for v in op.operands):
            made.update(op.results)
    return made
