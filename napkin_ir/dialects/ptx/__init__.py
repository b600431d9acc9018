"""The `ptx` dialect: virtual registers and one op per PTX instruction (see ops.py,
tensor_ops.py), the attributes of a kernel (attributes.py); printer.py prints a module
of kernels as PTX."""

from xdsl.ir import Dialect

from napkin_ir.dialects.ptx import ops, tensor_ops
from napkin_ir.dialects.ptx.attributes import SharedAttr, TmaBoxAttr
from napkin_ir.dialects.ptx.ops import *  # noqa: F403
from napkin_ir.dialects.ptx.registers import RegType, reg
from napkin_ir.dialects.ptx.tensor_ops import *  # noqa: F403


def _op_classes(module) -> list:
    from xdsl.irdl import IRDLOperation

    return [v for v in vars(module).values() if isinstance(v, type) and issubclass(v, IRDLOperation) and getattr(v, "name", "").startswith("ptx.")]


PTX = Dialect("ptx", _op_classes(ops) + _op_classes(tensor_ops), [RegType, SharedAttr, TmaBoxAttr])

__all__ = ["PTX", "RegType", "SharedAttr", "TmaBoxAttr", "reg"]
