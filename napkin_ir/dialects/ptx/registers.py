"""Virtual PTX registers: one type per register class, numbered when the module is printed.

ptxas allocates physical registers, so the `ptx` dialect needs no allocator: each SSA
value of type `!ptx.reg<b32>` becomes one `%rN` when printed. bf16 values live in
`.b16` registers and bf16 pairs in `.b32` registers (PTX has no `.bf16` register type),
but keep their own class here so that the verifiers can tell them from f16 data.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException


@dataclass(frozen=True)
class RegClass:
    name: str  # our class name: b32, bf16x2 ...
    decl: str  # PTX `.reg` type
    prefix: str  # printed name prefix, unique per class
    bits: int
    kind: str  # "pred", "bits" or "float"


REG_CLASSES: dict[str, RegClass] = {
    c.name: c
    for c in [
        RegClass("pred", ".pred", "%p", 1, "pred"),
        RegClass("b16", ".b16", "%rs", 16, "bits"),
        RegClass("b32", ".b32", "%r", 32, "bits"),
        RegClass("b64", ".b64", "%rd", 64, "bits"),
        RegClass("f16", ".f16", "%h", 16, "float"),
        RegClass("f16x2", ".f16x2", "%hh", 32, "float"),
        RegClass("bf16", ".b16", "%bh", 16, "float"),
        RegClass("bf16x2", ".b32", "%bhh", 32, "float"),
        RegClass("f32", ".f32", "%f", 32, "float"),
        RegClass("f64", ".f64", "%fd", 64, "float"),
    ]
}

# PTX instruction types and their sizes in bits
TYPE_BITS: dict[str, int] = {
    "pred": 1,
    **{f"{k}{n}": n for k in "bus" for n in (8, 16, 32, 64)},
    "f16": 16, "f16x2": 32, "bf16": 16, "bf16x2": 32, "f32": 32, "f64": 64,
}


@irdl_attr_definition
class RegType(ParametrizedAttribute, TypeAttribute):
    """A virtual register of one PTX class: `!ptx.reg<b32>`, `!ptx.reg<pred>`, `!ptx.reg<f32>`."""

    name = "ptx.reg"
    cls: StringAttr

    def __init__(self, cls: str):
        super().__init__(StringAttr(cls))

    @property
    def reg_class(self) -> RegClass:
        return REG_CLASSES[self.cls.data]

    def verify(self) -> None:
        if self.cls.data not in REG_CLASSES:
            raise VerifyException(f"unknown PTX register class '{self.cls.data}'; expected one of {', '.join(REG_CLASSES)}")

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.cls.data}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[StringAttr]:
        parser.parse_punctuation("<")
        pos = parser.pos
        name = parser.parse_identifier(" (a PTX register class)")
        if name not in REG_CLASSES:
            parser.raise_error(f"unknown PTX register class '{name}'; expected one of {', '.join(REG_CLASSES)}", pos, parser.pos)
        parser.parse_punctuation(">")
        return (StringAttr(name),)


def reg(cls: str) -> RegType:
    return RegType(cls)


PRED, B16, B32, B64 = reg("pred"), reg("b16"), reg("b32"), reg("b64")
F16, F16X2, BF16, BF16X2, F32, F64 = reg("f16"), reg("f16x2"), reg("bf16"), reg("bf16x2"), reg("f32"), reg("f64")


def reg_class_of(v: SSAValue | Attribute) -> RegClass | None:
    t = v.type if isinstance(v, SSAValue) else v
    return t.reg_class if isinstance(t, RegType) else None


def fits(cls: RegClass, ptx_type: str) -> bool:
    """Whether a register of class `cls` may carry an operand of instruction type `ptx_type`.

    PTX lets bit-size registers stand for any type of their size; float registers hold
    their own float type (or its bit-size type); predicates only `.pred`.
    """
    if ptx_type not in TYPE_BITS:
        return False
    if cls.kind == "pred" or ptx_type == "pred":
        return cls.kind == "pred" and ptx_type == "pred"
    if cls.kind == "bits":
        return TYPE_BITS[ptx_type] == cls.bits or (cls.bits == 16 and TYPE_BITS[ptx_type] == 8)
    return ptx_type == cls.name or ptx_type == f"b{cls.bits}"
