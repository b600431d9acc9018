"""`ncd-fold-casts`: a contraction of operands widened to f32 reads the 16-bit operands.

    %x32 = ncd.map cast %x : <m, k : bf16> -> <m, k : f32>
    %c = ncd.contract %x32, %y32 over [k] : ... -> <m, n : f32>
becomes
    %c = ncd.contract %x, %y over [k] : <m, k : bf16>, <k, n : bf16> -> <m, n : f32>

The two say the same: a product of two bf16 (or f16) values is exact in f32 and the
contraction accumulates in f32 either way. The tensor cores take the narrow operands, so
a diagram that widens first (as `ncd-grad` writes its cotangents, in f32) compiles as the
products family only once the casts are folded. Both operands of one contraction must come
from casts of one 16-bit type; a cast whose result has other users stays for them.

Where only one operand is a widened 16-bit tensor and the other is computed in f32 (the
attention gradient's dS, contracted with K for dQ and with Q for dK), the f32 operand is
rounded to that 16-bit type for the product, as FlashAttention's backward rounds dS and P
for the tensor cores; the accumulation stays f32. That rounding is the one change of value
the pass makes.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.ir import SSAValue
from xdsl.rewriter import InsertPoint
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (GreedyRewritePatternApplier, PatternRewriter, PatternRewriteWalker, RewritePattern,
                                   op_type_rewrite_pattern)

from napkin_ir.dialects import ncd
from napkin_ir.target import dtype


def _widened(v: SSAValue) -> SSAValue | None:
    """The 16-bit tensor `v` is an f32 cast of, or None."""
    op = v.owner
    if not (isinstance(op, ncd.MapOp) and op.fn.data == "cast" and len(op.inputs) == 1):
        return None
    src = op.inputs[0]
    if not isinstance(src.type, ncd.TensorType) or not dtype(src.type.dtype).is_half or v.type.dtype != "f32":  # type: ignore[attr-defined]
        return None
    return src


class FoldContractCasts(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ncd.ContractOp, rewriter: PatternRewriter) -> None:
        lhs, rhs = _widened(op.lhs), _widened(op.rhs)
        if op.result.type.dtype != "f32":  # type: ignore[attr-defined]
            return
        if (lhs is None) != (rhs is None):  # round the f32 side to the other's 16-bit type
            half = (lhs or rhs).type  # type: ignore[union-attr]
            wide = op.rhs if lhs is not None else op.lhs
            if wide.type.dtype != "f32":  # type: ignore[attr-defined]
                return
            rounded = ncd.MapOp("cast", [wide], ncd.TensorType(wide.type.shape, half.element_type))  # type: ignore[attr-defined]
            rewriter.insert(rounded, InsertPoint.before(op))
            if wide.name_hint:
                rounded.result.name_hint = f"{wide.name_hint}16"
            lhs, rhs = (lhs, rounded.result) if lhs is not None else (rounded.result, rhs)
        if lhs is None or rhs is None or lhs.type.dtype != rhs.type.dtype:  # type: ignore[attr-defined]
            return
        rewriter.replace(op, ncd.ContractOp(lhs, rhs, op.over_axes, op.result.type))
        for cast in {op.lhs.owner, op.rhs.owner}:
            if isinstance(cast, ncd.MapOp) and not cast.result.uses:
                rewriter.erase(cast)


@dataclass(frozen=True)
class NcdFoldCastsPass(ModulePass):
    name = "ncd-fold-casts"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier([FoldContractCasts()]), apply_recursively=True).rewrite_module(op)
