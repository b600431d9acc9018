"""Small helpers shared by napkin's dialect definitions."""

from __future__ import annotations

from xdsl.irdl import IRDLOperation
from xdsl.utils.exceptions import VerifyException


def require(cond: bool, op: IRDLOperation, msg: str) -> None:
    """Fail `op`'s verification with a message that starts with the op's name."""
    if not cond:
        raise VerifyException(f"{op.name}: {msg}")
