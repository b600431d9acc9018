"""`ncd-fold-log2e`: e to a scaled tensor less a row statistic, as 2 to the power, log2 e
folded into the scale and into the statistic.

    %a = ncd.map scale %s by 0.125 : <i, j : f32> -> <i, j : f32>
    %x = ncd.map sub %a, %lse : <i, j : f32>, <i : f32> -> <i, j : f32>
    %p = ncd.map exp %x : <i, j : f32> -> <i, j : f32>
becomes
    %a = ncd.map scale %s by 0.18033688 : <i, j : f32> -> <i, j : f32>
    %lse_log2 = ncd.map scale %lse by 1.44269504 : <i : f32> -> <i : f32>
    %x = ncd.map sub %a, %lse_log2 : <i, j : f32>, <i : f32> -> <i, j : f32>
    %p = ncd.map exp2 %x : <i, j : f32> -> <i, j : f32>

e^(c s - L) = 2^((c log2 e) s - L log2 e). The special-function unit computes 2^x, so e^x
costs a multiply by log2 e an element before it (`smem-to-reg`); folded, that multiply is
one a row, and the scale and the subtraction are one fused multiply-add an element. The
attention gradient's probabilities are the case: P = e^(c S - L) over a queries x keys
tile, L the forward's log-sum-exp, one a query. The statistic in base 2 gets the name of
the statistic with `_log2` (`%lse_log2`): `ncd-extract{cut="delta,lse_log2"}` then makes it
an argument of the kernels that read it, computed once beside D by the row kernel that
`ncd-extract{value="delta,lse_log2"}` takes out (FlashAttention's backward preprocesses the
statistic the same way).

The pattern folds where the scaled tensor and the difference have no other reader and the
statistic has fewer elements than the difference (it is broadcast along an axis of it); it
leaves the rest as it is. The values differ from exp's by the roundings of the two
products, a few units in the last place of f32.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.ir import BlockArgument, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from napkin_ir.dialects import ncd
from napkin_ir.model.work import elements

LOG2E = math.log2(math.e)


def fold(exp: ncd.MapOp, in_base2: dict[SSAValue, SSAValue]) -> bool:
    """Rewrite `exp` of (a scale less a row statistic) as exp2, where the pass's conditions
    hold; `in_base2` holds each statistic already scaled by log2 e, for the next exp that
    reads it."""
    sub = exp.inputs[0].owner
    if not (isinstance(sub, ncd.MapOp) and sub.fn.data == "sub" and sub.result.get_user_of_unique_use() is exp):
        return False
    scaled, stat = sub.inputs
    scale = scaled.owner
    if not (isinstance(scale, ncd.MapOp) and scale.fn.data == "scale" and len(scale.inputs) == 1
            and scaled.get_user_of_unique_use() is sub) or elements(stat.type) >= elements(sub.result.type):  # type: ignore[arg-type]
        return False
    base2 = in_base2.get(stat)
    if base2 is None:
        op = ncd.MapOp("scale", [stat], stat.type, by=LOG2E)
        Rewriter.insert_op(op, InsertPoint.at_start(stat.block) if isinstance(stat, BlockArgument) else InsertPoint.after(stat.owner))
        if stat.name_hint:
            op.result.name_hint = f"{stat.name_hint}_log2"
        base2 = in_base2[stat] = op.result
    by = scale.by.value.data * LOG2E  # type: ignore[union-attr]
    Rewriter.replace_op(scale, ncd.MapOp("scale", [scale.inputs[0]], scale.result.type, by=by))
    sub.operands = [sub.inputs[0], base2]
    Rewriter.replace_op(exp, ncd.MapOp("exp2", [exp.inputs[0]], exp.result.type))
    return True


@dataclass(frozen=True)
class NcdFoldLog2ePass(ModulePass):
    name = "ncd-fold-log2e"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        in_base2: dict[SSAValue, SSAValue] = {}
        for exp in [o for o in op.walk() if isinstance(o, ncd.MapOp) and o.fn.data == "exp"]:
            fold(exp, in_base2)


__all__ = ["LOG2E", "NcdFoldLog2ePass", "fold"]
