"""`ncd-sink-scales`: a constant scale of a contraction's operand moves past the contraction.

    %s = ncd.map scale %x by 0.125 : <i, j : f32> -> <i, j : f32>
    %s16 = ncd.map cast %s : <i, j : f32> -> <i, j : bf16>
    %c = ncd.contract %s16, %k over [j] : <i, j : bf16>, <j, d : bf16> -> <i, d : f32>
becomes
    %x16 = ncd.map cast %x : <i, j : f32> -> <i, j : bf16>
    %c0 = ncd.contract %x16, %k over [j] : <i, j : bf16>, <j, d : bf16> -> <i, d : f32>
    %c = ncd.map scale %c0 by 0.125 : <i, d : f32> -> <i, d : f32>

A contraction is linear in each operand, so s (X Y) = (s X) Y. The pass moves a scale
where the values it multiplies are fewer: past the contractions that read it, where their
results together hold no more elements than the scaled tensor. Attention's gradient is the
case it is for: dS = scale * P * (dP - D) is a queries x keys tile, read only by dQ = dS K
and dK = dS^T Q, queries x head dim and keys x head dim. The kernel then multiplies dK once
in its epilogue, and a dQ that blocks add into (`ncd-widen-results`) leaves the kernel
unscaled: its caller multiplies the whole sum as it rounds it. FlashAttention's backward
scales the same way.

The scale moves only where every reader is a contraction with an f32 result (the sum
scaled before any rounding), read through nothing but casts and masks that fill with
zeros (causal attention's dS), which commute with it; a scaled value a function returns,
or one both operands of a contraction read, stays. The 16-bit operand then rounds the
unscaled values: for a scale that is no power of two the rounding differs, by no more
than a rounding.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from napkin_ir.dialects import ncd
from napkin_ir.model.work import elements


def _passes_scale(op: Operation) -> bool:
    """Whether `op` commutes with a constant scale of its one tensor operand: a cast (its
    rounding aside), or a mask that fills with zeros (causal attention's dS)."""
    if isinstance(op, ncd.MapOp):
        return op.fn.data == "cast" and len(op.inputs) == 1
    return isinstance(op, (ncd.MaskOp, ncd.MaskBoundOp)) and op.fill.value.data == 0.0


def _readers(v: SSAValue, contracts: list[ncd.ContractOp]) -> bool:
    """Collect the contractions that read `v`, directly or through casts and zero-filling
    masks; False where anything else reads it."""
    for use in v.uses:
        user = use.operation
        if isinstance(user, ncd.ContractOp):
            contracts.append(user)
        elif not (_passes_scale(user) and use.index == 0 and user.results[0].uses and _readers(user.results[0], contracts)):
            return False
    return True


def sink(scale: ncd.MapOp) -> bool:
    """Move `scale` past the contractions that read it, where the pass's conditions hold."""
    contracts: list[ncd.ContractOp] = []
    if not _readers(scale.result, contracts) or not contracts:
        return False
    if len({id(c) for c in contracts}) != len(contracts):  # both operands of one contraction
        return False
    if any(c.result.type.dtype != "f32" for c in contracts) or \
            sum(elements(c.result.type) for c in contracts) > elements(scale.result.type):  # type: ignore[attr-defined]
        return False
    source, by = scale.inputs[0], scale.by.value.data  # type: ignore[union-attr]
    scale.result.replace_all_uses_with(source)
    for contract in contracts:
        scaled = ncd.MapOp("scale", [contract.result], contract.result.type, by=by)
        Rewriter.insert_op(scaled, InsertPoint.after(contract))
        name = contract.result.name_hint
        contract.result.replace_uses_with_if(scaled.result, lambda use: use.operation is not scaled)
        if name:
            scaled.result.name_hint, contract.result.name_hint = name, f"{name}_unscaled"
    Rewriter.erase_op(scale)
    return True


@dataclass(frozen=True)
class NcdSinkScalesPass(ModulePass):
    name = "ncd-sink-scales"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for scale in [o for o in op.walk() if isinstance(o, ncd.MapOp) and o.fn.data == "scale" and len(o.inputs) == 1]:
            sink(scale)


__all__ = ["NcdSinkScalesPass", "sink"]
