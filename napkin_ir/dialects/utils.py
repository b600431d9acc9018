"""Small helpers shared by napkin's dialect definitions."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.utils.exceptions import VerifyException


def require(cond: bool, op: IRDLOperation, msg: str) -> None:
    """Fail `op`'s verification with a message that starts with the op's name."""
    if not cond:
        raise VerifyException(f"{op.name}: {msg}")


def constant(v: SSAValue) -> int | None:
    """The integer an `arith.constant` gives `v`, or None where `v` is not one."""
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    return None
