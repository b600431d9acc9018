"""`ncd-widen-results`: return each result's f32 sum instead of its rounding to 16 bits.

    %c = ncd.contract %a, %b over [k] : ... -> <m, n : f32>
    %r = ncd.map cast %c : <m, n : f32> -> <m, n : bf16>
    func.return %r
becomes
    %c = ncd.contract %a, %b over [k] : ... -> <m, n : f32>
    func.return %c

and a contraction written straight to a 16-bit result (it accumulates in f32 and rounds
at the end) gets an f32 result.

A kernel that splits a sum over the grid (`split=S`, or a reduced axis a plan spreads over
blocks) adds each block's part into an f32 output: rounded parts would not add up. This
pass gives such a kernel its f32 result; the caller rounds it once the sum is whole (the
attention gradient's dK and dV of grouped heads, summed over a group's query heads, are
`napkin::attention_backward`'s). A result that is no rounding of an f32 value, or whose
f32 value other results or ops also use, is left as it is. `result=N` widens that result
only.

A constant scale between the sum and its rounding leaves with the rounding:

    %c = ncd.contract %a, %b over [k] : ... -> <m, n : f32>
    %s = ncd.map scale %c by 0.125 : <m, n : f32> -> <m, n : f32>
    %r = ncd.map cast %s : <m, n : f32> -> <m, n : bf16>
    func.return %r
becomes
    func.func @f(...) -> (!ncd.tensor<m, n : f32> {ncd.scale = 0.125 : f32})
    %c = ncd.contract %a, %b over [k] : ... -> <m, n : f32>
    func.return %c

The result attribute `ncd.scale` says the function's value is the returned sum times that
constant; the caller multiplies it as it rounds it (the launch contract's `scale`), so a
kernel whose blocks add into the sum (attention's dQ, its dS scale moved past the product
by `ncd-sink-scales`) pays no multiply for it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from napkin_ir.dialects import ncd


def rounding(v: SSAValue) -> ncd.MapOp | None:
    """The cast that rounds an f32 value to `v`, where `v` is only that rounding."""
    op = v.owner
    if not (isinstance(op, ncd.MapOp) and op.fn.data == "cast" and len(op.inputs) == 1):
        return None
    src = op.inputs[0].type
    return op if isinstance(src, ncd.TensorType) and src.dtype == "f32" and v.type.dtype in ("bf16", "f16") else None  # type: ignore[attr-defined]


def with_f32_result(op: Operation) -> Operation:
    """`op` (a contraction, or a reduce sum) made anew with an f32 result of its result's
    axes and name, not yet in any block: the sum before its rounding to 16 bits."""
    v = op.results[0]
    wide = type(op).create(operands=list(op.operands), properties=dict(op.properties), attributes=dict(op.attributes),
                           result_types=[ncd.TensorType(v.type.shape, builtin.f32)])  # type: ignore[attr-defined]
    wide.results[0].name_hint = v.name_hint
    return wide


SCALE_ATTR = "ncd.scale"


def _scaled_sum(v: SSAValue) -> tuple[SSAValue, float] | None:
    """(the f32 value, the constant) where `v` is only a constant scale of an f32 value."""
    op = v.owner
    if not (isinstance(op, ncd.MapOp) and op.fn.data == "scale" and len(op.inputs) == 1 and v.has_one_use()):
        return None
    return (op.inputs[0], op.by.value.data) if op.inputs[0].type.dtype == "f32" else None  # type: ignore[union-attr, attr-defined]


def result_scales(f: func.FuncOp) -> list[float | None]:
    """Each result's `ncd.scale`: the constant the caller multiplies it by (None: none)."""
    attrs = f.res_attrs.data if f.res_attrs is not None else ()
    scales: list[float | None] = []
    for k in range(len(f.function_type.outputs.data)):
        a = attrs[k].data.get(SCALE_ATTR) if k < len(attrs) else None
        scales.append(a.value.data if isinstance(a, builtin.FloatAttr) else None)
    return scales


@dataclass(frozen=True)
class NcdWidenResultsPass(ModulePass):
    name = "ncd-widen-results"
    result: int = -1  # -1: every result

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for f in [o for o in op.walk() if isinstance(o, func.FuncOp) and o.body.blocks]:
            ret = f.body.block.last_op
            assert isinstance(ret, func.ReturnOp)
            n = len(ret.arguments)
            scales = result_scales(f)
            if self.result >= n:
                raise PassFailedException(f"ncd-widen-results: @{f.sym_name.data} has {n} results; result={self.result} names none")
            for k, v in enumerate(list(ret.arguments)):
                if self.result not in (-1, k):
                    continue
                cast = rounding(v)
                if cast is not None:
                    ret.operands[k] = cast.inputs[0]
                    if not cast.result.uses:
                        Rewriter.erase_op(cast)
                    found = _scaled_sum(ret.operands[k])
                    if found is not None and scales[k] is None:
                        scale_op = ret.operands[k].owner
                        ret.operands[k], scales[k] = found
                        Rewriter.erase_op(scale_op)  # type: ignore[arg-type]
                elif isinstance(v.owner, ncd.ContractOp) and v.type.dtype in ("bf16", "f16") and len(list(v.uses)) == 1:
                    Rewriter.replace_op(v.owner, with_f32_result(v.owner))
            f.function_type = builtin.FunctionType.from_lists(f.function_type.inputs.data, [a.type for a in ret.arguments])
            if any(s is not None for s in scales):
                old = f.res_attrs.data if f.res_attrs is not None else [builtin.DictionaryAttr({})] * n
                f.res_attrs = builtin.ArrayAttr([builtin.DictionaryAttr({**a.data, **({SCALE_ATTR: builtin.FloatAttr(s, builtin.f32)}
                                                                                      if s is not None else {})})
                                                 for a, s in zip(old, scales)])


__all__ = ["SCALE_ATTR", "NcdWidenResultsPass", "result_scales", "rounding", "with_f32_result"]
