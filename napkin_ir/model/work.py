"""What one execution of an op computes: tensor-core FLOPs, other f32 instructions, and
special-function (MUFU) operations, counted from its types alone.

The rules are per kind of op, not per example: a contraction is 2 x (the product of all
the sizes of its operands' axes) multiply-add FLOPs, on the tensor cores when its
operands are bf16 or f16 and as f32 FMAs otherwise; an elementwise op (`ncd.map`,
`reg.map`, masks, conversions) is one f32 instruction per result value; exp, exp2, sqrt
and the reciprocal inside a division (one per divisor value) are special functions; a
reduction is one instruction per input value (a row reduction of fragments adds the
shuffle-and-combine steps across a quad of lanes). A normalisation along an axis is
costed as its kernel computes it (the exp2 form of softmax, with the scale folded into
one FMA; the reciprocal once per row). Fragments count the values their lanes hold (a
row fragment holds each row's value in the four lanes of a quad, and each computes it).
An op the rules do not know that produces a tile or a fragment is counted as one f32
instruction per value and named in the report.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute, Operation

from napkin_ir.dialects import hbm, ncd, reg, smem
from napkin_ir.dialects.ncd import ELEMENT_BYTES, NamedAxesType  # ELEMENT_BYTES: the model imports it from here too

TENSOR_CORE_TYPES = ("bf16", "f16")

# per element of the input, and per row (an element of the input without the axis)
# softmax: max, (x - max) * scale * log2(e) as one FMA, ex2, the running sum, the final multiply
SOFTMAX_ALU_PER_ELEMENT, SOFTMAX_SFU_PER_ELEMENT, SOFTMAX_SFU_PER_ROW = 4, 1, 1
# l2norm: the square-accumulate FMA and the final multiply; one rsqrt per row
L2NORM_ALU_PER_ELEMENT, L2NORM_SFU_PER_ROW = 2, 1
# a row reduction across the 4 lanes of a quad: 2 steps of a shuffle and a combine
QUAD_STEPS_PER_RESULT = 4

SFU_FUNCTIONS = {"exp": 1, "exp2": 1, "rcp": 1, "sqrt": 1, "rsqrt": 1, "log": 1, "log2": 1}
# exp(x) runs as ex2(x * log2 e): one multiply before the special function
ALU_WITH_SFU = {"exp": 1}
# sm_90a's asynchronous warpgroup product: A and B from shared memory, 16 deep
WGMMA_DEPTH = 16
# ops that move data or start values and compute nothing
MOVES = (hbm.LoadOp, hbm.FillOp, hbm.StoreOp, smem.ReadOp, smem.CopyOp, smem.AllocOp, reg.ZerosOp, reg.FillOp,
         reg.LdmatrixOp, reg.LoadOp, reg.StoreOp)
# elementwise ops whose cost the function rule gives (the rest of the fallback is a guess)
ELEMENTWISE = (ncd.MapOp, ncd.MaskOp, reg.MapOp, reg.MaskOp, reg.MaskBoundOp, reg.ToAOp)


@dataclass
class Work:
    tensor_flops: float = 0.0
    alu_ops: float = 0.0  # non-tensor f32 instructions per lane (an FMA counts one)
    sfu_ops: float = 0.0

    def __add__(self, other: Work) -> Work:
        return Work(self.tensor_flops + other.tensor_flops, self.alu_ops + other.alu_ops, self.sfu_ops + other.sfu_ops)

    def scaled(self, k: float) -> Work:
        return Work(self.tensor_flops * k, self.alu_ops * k, self.sfu_ops * k)

    @property
    def flops(self) -> float:
        """All arithmetic as FLOPs: tensor-core FLOPs plus one per other instruction."""
        return self.tensor_flops + self.alu_ops + self.sfu_ops


def elements(t: Attribute) -> int:
    assert isinstance(t, NamedAxesType)
    return math.prod(t.dims)


def type_bytes(t: Attribute) -> int:
    assert isinstance(t, NamedAxesType)
    return elements(t) * ELEMENT_BYTES[t.dtype]


def lane_values(t: Attribute, warps: int) -> int:
    """Values computed for a tile (its elements) or a fragment (what its lanes hold, in every warp)."""
    if isinstance(t, reg.FragType):
        return t.values_per_lane() * 32 * warps
    return elements(t)


def _contraction(lhs: NamedAxesType, rhs: NamedAxesType, copies: int = 1) -> Work:
    macs = math.prod({**lhs.shape, **rhs.shape}.values()) * copies
    if lhs.dtype in TENSOR_CORE_TYPES:
        return Work(tensor_flops=2 * macs)
    return Work(alu_ops=macs)


def _fn_work(fn: str, result: int, operands: list[int]) -> Work:
    if fn == "div":  # one reciprocal per divisor value, one multiply per result value
        return Work(alu_ops=result, sfu_ops=operands[-1])
    if fn in SFU_FUNCTIONS:
        return Work(alu_ops=ALU_WITH_SFU.get(fn, 0) * result, sfu_ops=SFU_FUNCTIONS[fn] * result)
    return Work(alu_ops=result)


def _along(op: ncd.AlongOneAxisOp, alu: int, sfu: int, sfu_per_row: int) -> Work:
    t: NamedAxesType = op.input.type  # type: ignore[assignment]
    n = elements(t)
    rows = n // t.shape[op.axis.data]
    return Work(alu_ops=alu * n, sfu_ops=sfu * n + sfu_per_row * rows)


def op_work(op: Operation, warps: int = 1) -> tuple[Work, bool]:
    """The work of one execution of `op` by one block (`warps` warps share a fragment op),
    and whether it was estimated by the one-instruction-per-value fallback."""
    if isinstance(op, ncd.ContractOp):
        return _contraction(op.lhs.type, op.rhs.type), False  # type: ignore[arg-type]
    if isinstance(op, reg.MmaOp):
        return _contraction(op.a.type, op.b.type, warps), False  # type: ignore[arg-type]
    if isinstance(op, (reg.WgmmaOp, reg.WgmmaRsOp)):  # each warp's accumulator rows, all columns, one 16-deep slice
        return Work(tensor_flops=2 * elements(op.c.type) * WGMMA_DEPTH * warps), False
    if isinstance(op, ncd.SoftmaxOp):
        return _along(op, SOFTMAX_ALU_PER_ELEMENT, SOFTMAX_SFU_PER_ELEMENT, SOFTMAX_SFU_PER_ROW), False
    if isinstance(op, ncd.L2NormOp):
        return _along(op, L2NORM_ALU_PER_ELEMENT, 0, L2NORM_SFU_PER_ROW), False
    if isinstance(op, ncd.ReduceOp):
        return Work(alu_ops=elements(op.input.type)), False
    if isinstance(op, (reg.RowReduceOp, reg.ColReduceOp)):
        return Work(alu_ops=lane_values(op.input.type, warps) + QUAD_STEPS_PER_RESULT * lane_values(op.result.type, warps)), False
    if isinstance(op, reg.RowAccumulateOp):  # an add a value, no exchange
        return Work(alu_ops=lane_values(op.input.type, warps)), False
    if isinstance(op, reg.RowCombineOp):  # the quad's exchange alone
        return Work(alu_ops=QUAD_STEPS_PER_RESULT * lane_values(op.result.type, warps)), False
    if isinstance(op, reg.LazyMaxOp):  # a value's growth, its test, the max and the choice; one vote a warp
        return Work(alu_ops=4 * lane_values(op.result.type, warps) + warps), False
    if isinstance(op, reg.RescaleOp):  # the factors tested and one vote a warp: the max kept, the products skipped
        return Work(alu_ops=2 * lane_values(op.factor.type, warps) + warps), False
    if isinstance(op, MOVES):
        return Work(), False
    outs = [r.type for r in op.results if isinstance(r.type, NamedAxesType)]
    if not outs:
        return Work(), False
    result = sum(lane_values(t, warps) for t in outs)
    operands = [lane_values(o.type, warps) for o in op.operands if isinstance(o.type, NamedAxesType)]
    fn = op.properties.get("fn")
    return _fn_work(fn.data if isinstance(fn, StringAttr) else "", result, operands), not isinstance(op, ELEMENTWISE)
