"""What the register-level emitters share: a kernel being written as blocks of ptx ops,
its values, and the few builders every lowering step uses."""

from __future__ import annotations

from typing import Any

from xdsl.ir import Block, Operation, SSAValue
from xdsl.utils.exceptions import PassFailedException

from napkin_ir.dialects import hbm
from napkin_ir.dialects.ptx import ops as P
from napkin_ir.dialects.ptx.registers import RegType
from napkin_ir.lowering.arith_to_ptx import ArithLowering

B32 = RegType("b32")


class PtxBuilder:
    """Emits into `self.cur`, a block of the kernel's `self.blocks`; `self.vals` maps the
    register-level values (index values through `convert-arith-to-ptx`'s rules) to theirs."""

    def __init__(self, kernel: hbm.KernelOp):
        self.kernel = kernel
        self.name = kernel.sym_name.data
        self.blocks: list[Block] = [Block()]
        self.cur = self.blocks[0]
        self.arith = ArithLowering()
        self.vals: dict[SSAValue, Any] = self.arith.values  # one map for index values and the rest

    def fail(self, msg: str) -> PassFailedException:
        return PassFailedException(f"reg-to-ptx: @{self.name}: {msg}")

    def emit(self, op: Operation) -> Operation:
        self.cur.add_op(op)
        return op

    def u32(self, v: int) -> SSAValue:
        return self.emit(P.ConstOp("u32", v, B32)).results[0]

    def op2(self, cls, ty: str, a: SSAValue, b: SSAValue | int, mods: str | None = None, result=B32) -> SSAValue:
        bv = self.u32(b) if isinstance(b, int) else b
        return self.emit(cls(ty, a, bv, result=result, mods=mods)).results[0]

    def add(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return a if isinstance(b, int) and b == 0 else self.op2(P.AddOp, "u32", a, b)

    def mul(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return self.op2(P.MulOp, "u32", a, b, mods="lo")
