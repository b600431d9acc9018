"""The `ptx` ops: one op per PTX instruction, the bottom of napkin's pipeline.

Operands and results are virtual registers (`!ptx.reg<...>`); constants are `ptx.const`
(a `mov` of an immediate, which ptxas folds). Each op knows the PTX line it prints
(`ptx_line`); the printer in `printer.py` names the registers and lays out the module.
Ops that PTX writes in place (the wgmma accumulators) tie their results to operands:
the results print as the operands' registers, so the operands must be dead afterwards.

The MLIR syntax is uniform: `%d = ptx.add %a, %b {ty = "s32"} : (!ptx.reg<b32>,
!ptx.reg<b32>) -> !ptx.reg<b32>`; properties sit in the attribute dictionary.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    UnitAttr,
    i32,
)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    successor_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import IsolatedFromAbove, IsTerminator, NoTerminator, SymbolOpInterface

from napkin_ir.dialects.ptx.attributes import SharedAttr, TmaBoxAttr
from napkin_ir.dialects.ptx.registers import TYPE_BITS, RegType, fits, reg_class_of
from napkin_ir.dialects.utils import require

Namer = Callable[[SSAValue], str]


def _int(v: int) -> IntegerAttr:
    return IntegerAttr(v, i32)


def _props(**kw: object) -> dict[str, Attribute]:
    out: dict[str, Attribute] = {}
    for k, v in kw.items():
        if v is None:
            continue
        if isinstance(v, Attribute):
            out[k] = v
        elif isinstance(v, bool):
            out[k] = _int(int(v))
        elif isinstance(v, int):
            out[k] = _int(v)
        elif isinstance(v, str):
            out[k] = StringAttr(v)
        else:
            raise TypeError(f"property {k}: {v!r}")
    return out


def _s(attr: StringAttr | None, default: str = "") -> str:
    return default if attr is None else attr.data


def _i(attr: IntegerAttr | None, default: int = 0) -> int:
    return default if attr is None else attr.value.data


def _addr(names: Namer, base: SSAValue, offset: int = 0) -> str:
    """`[reg]` or `[reg+imm]`; PTX writes a negative offset as `[reg+-16]`."""
    return f"[{names(base)}+{offset}]" if offset else f"[{names(base)}]"


def _vec(names: Namer, values: Sequence[SSAValue]) -> str:
    return "{" + ", ".join(names(v) for v in values) + "}"




def _need_class(op: IRDLOperation, what: str, v: SSAValue, *classes: str) -> None:
    c = reg_class_of(v)
    require(c is not None and c.name in classes, op, f"{what} must be a {' or '.join('!ptx.reg<' + k + '>' for k in classes)} register, got {v.type}")


def _need_type(op: IRDLOperation, what: str, v: SSAValue, ptx_type: str) -> None:
    c = reg_class_of(v)
    require(c is not None and fits(c, ptx_type), op, f"{what} of type {v.type} cannot carry .{ptx_type}")


class PtxOp(IRDLOperation):
    """Anything the PTX printer prints as instruction lines."""

    def ptx_lines(self, names: Namer) -> list[str]:
        raise NotImplementedError(f"{self.name} has no PTX form")


class InstrOp(PtxOp):
    """An instruction with a flat list of source registers and of destination registers."""

    srcs = var_operand_def(RegType)
    dsts = var_result_def(RegType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$srcs attr-dict `:` functional-type($srcs, $dsts)"


# --------------------------------------------------------------------------------------
# Arithmetic and logic: `opcode{.mods}.type d, a[, b[, c]]`
# --------------------------------------------------------------------------------------


class ArithOp(InstrOp):
    OPCODE: ClassVar[str]
    ARITY: ClassVar[int]
    TYPES: ClassVar[frozenset[str]] = frozenset(TYPE_BITS) - {"pred"}

    ty = prop_def(StringAttr)
    mods = opt_prop_def(StringAttr)

    def __init__(self, ty: str, *srcs: SSAValue, result: Attribute | None = None, mods: str | None = None):
        super().__init__(operands=[list(srcs)], result_types=[[result or srcs[0].type]], properties=_props(ty=ty, mods=mods))

    def verify_(self) -> None:
        ty = self.ty.data
        require(ty in self.TYPES, self, f"type .{ty} is not one of {', '.join(sorted(self.TYPES))}")
        require(len(self.srcs) == self.ARITY, self, f"takes {self.ARITY} source operand(s), got {len(self.srcs)}")
        require(len(self.dsts) == 1, self, f"has one result, got {len(self.dsts)}")
        for n, v in enumerate(self.srcs):
            _need_type(self, f"operand #{n}", v, self.operand_type(n))
        _need_type(self, "the result", self.dsts[0], self.result_type())

    def operand_type(self, n: int) -> str:
        return self.ty.data

    def result_type(self) -> str:
        return self.ty.data

    def ptx_lines(self, names: Namer) -> list[str]:
        mods = "".join("." + m for m in _s(self.mods).split(".") if m)
        ops = ", ".join(names(v) for v in [*self.dsts, *self.srcs])
        return [f"{self.OPCODE}{mods}.{self.ty.data} {ops};"]


def _arith(op_name: str, opcode: str, arity: int, doc: str, types: frozenset[str] | None = None) -> type[ArithOp]:
    attrs: dict[str, object] = {"name": op_name, "OPCODE": opcode, "ARITY": arity, "__doc__": doc,
                                "__annotations__": {"OPCODE": ClassVar[str], "ARITY": ClassVar[int], "TYPES": ClassVar[frozenset[str]]}}
    if types is not None:
        attrs["TYPES"] = types
    return irdl_op_definition(type(op_name.split(".")[1].title().replace("_", "") + "Op", (ArithOp,), attrs))


INT_TYPES = frozenset(f"{k}{n}" for k in "us" for n in (16, 32, 64))
BIT_TYPES = frozenset({"b16", "b32", "b64", "pred"})
FLOAT_TYPES = frozenset({"f16", "f16x2", "bf16", "bf16x2", "f32", "f64"})

AddOp = _arith("ptx.add", "add", 2, "d = a + b (`add{.rn|.sat}.type`).")
SubOp = _arith("ptx.sub", "sub", 2, "d = a - b.")
MinOp = _arith("ptx.min", "min", 2, "d = min(a, b).")
MaxOp = _arith("ptx.max", "max", 2, "d = max(a, b).")
DivOp = _arith("ptx.div", "div", 2, "d = a / b (floats need a rounding mode: mods = \"rn\" or \"approx\").")
RemOp = _arith("ptx.rem", "rem", 2, "d = a % b (integers).", INT_TYPES)
FmaOp = _arith("ptx.fma", "fma", 3, "d = a * b + c, one rounding (`fma.rn.type`).", FLOAT_TYPES)
NegOp = _arith("ptx.neg", "neg", 1, "d = -a.")
AbsOp = _arith("ptx.abs", "abs", 1, "d = |a|.")
RcpOp = _arith("ptx.rcp", "rcp", 1, "d = 1 / a (`rcp.approx.ftz.f32` or `rcp.rn.f32`).", frozenset({"f32", "f64"}))
SqrtOp = _arith("ptx.sqrt", "sqrt", 1, "d = sqrt(a).", frozenset({"f32", "f64"}))
RsqrtOp = _arith("ptx.rsqrt", "rsqrt", 1, "d = 1 / sqrt(a) (approx).", frozenset({"f32", "f64"}))
Ex2Op = _arith("ptx.ex2", "ex2", 1, "d = 2^a (`ex2.approx.ftz.f32`, the SFU).", frozenset({"f32", "f16", "f16x2", "bf16", "bf16x2"}))
Lg2Op = _arith("ptx.lg2", "lg2", 1, "d = log2(a) (`lg2.approx.ftz.f32`).", frozenset({"f32"}))
AndOp = _arith("ptx.and", "and", 2, "bitwise and.", BIT_TYPES)
OrOp = _arith("ptx.or", "or", 2, "bitwise or.", BIT_TYPES)
XorOp = _arith("ptx.xor", "xor", 2, "bitwise exclusive or.", BIT_TYPES)
NotOp = _arith("ptx.not", "not", 1, "bitwise not.", BIT_TYPES)


@irdl_op_definition
class MulOp(ArithOp):
    """d = a * b; integers take `lo`, `hi` or `wide` (wide: the result has twice the bits)."""

    name = "ptx.mul"
    OPCODE: ClassVar[str] = "mul"
    ARITY: ClassVar[int] = 2

    def result_type(self) -> str:
        ty = self.ty.data
        if "wide" in _s(self.mods).split("."):
            return f"{ty[0]}{TYPE_BITS[ty] * 2}"
        return ty


@irdl_op_definition
class MadOp(ArithOp):
    """d = a * b + c; integers take `lo`, `hi` or `wide` (wide: c and d have twice the bits)."""

    name = "ptx.mad"
    OPCODE: ClassVar[str] = "mad"
    ARITY: ClassVar[int] = 3

    def _wide(self) -> str | None:
        ty = self.ty.data
        return f"{ty[0]}{TYPE_BITS[ty] * 2}" if "wide" in _s(self.mods).split(".") else None

    def operand_type(self, n: int) -> str:
        return (self._wide() or self.ty.data) if n == 2 else self.ty.data

    def result_type(self) -> str:
        return self._wide() or self.ty.data


class ShiftOp(ArithOp):
    ARITY: ClassVar[int] = 2
    TYPES: ClassVar[frozenset[str]] = frozenset({"b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64"})

    def operand_type(self, n: int) -> str:
        return "u32" if n == 1 else self.ty.data


@irdl_op_definition
class ShlOp(ShiftOp):
    """d = a << b (b a 32-bit register)."""

    name = "ptx.shl"
    OPCODE: ClassVar[str] = "shl"


@irdl_op_definition
class ShrOp(ShiftOp):
    """d = a >> b, arithmetic for .s types, logical otherwise."""

    name = "ptx.shr"
    OPCODE: ClassVar[str] = "shr"


# --------------------------------------------------------------------------------------
# Moves, constants, conversions, comparisons
# --------------------------------------------------------------------------------------


@irdl_op_definition
class MovOp(InstrOp):
    """Copy a register, or pack/unpack a vector: `mov.b32 %r1, {%rs1, %rs2};`.

    With one source and one result it is a plain copy; several sources packed into one
    result, or one source unpacked into several results, are PTX's `{a, b}` forms.
    """

    name = "ptx.mov"
    ty = prop_def(StringAttr)

    def __init__(self, ty: str, srcs: Sequence[SSAValue], results: Sequence[Attribute]):
        super().__init__(operands=[list(srcs)], result_types=[list(results)], properties=_props(ty=ty))

    def verify_(self) -> None:
        require(len(self.srcs) >= 1 and len(self.dsts) >= 1 and min(len(self.srcs), len(self.dsts)) == 1, self,
              f"copies one register, packs several into one or unpacks one into several; got {len(self.srcs)} -> {len(self.dsts)}")
        ty = self.ty.data
        wide = self.dsts if len(self.srcs) > 1 else self.srcs
        _need_type(self, "the packed register", wide[0], ty)

    def ptx_lines(self, names: Namer) -> list[str]:
        d = names(self.dsts[0]) if len(self.dsts) == 1 else _vec(names, self.dsts)
        s = names(self.srcs[0]) if len(self.srcs) == 1 else _vec(names, self.srcs)
        return [f"mov.{self.ty.data} {d}, {s};"]


def format_immediate(ty: str, value: int | float) -> str:
    """PTX immediates: integers in decimal, floats as exact hex (`0f3F800000`)."""
    if ty == "f32":
        return "0f%08X" % struct.unpack("<I", struct.pack("<f", float(value)))[0]
    if ty == "f64":
        return "0d%016X" % struct.unpack("<Q", struct.pack("<d", float(value)))[0]
    if ty in ("f16", "bf16"):
        raise ValueError(f"no .{ty} immediates in PTX: move the bits as .b16")
    return str(int(value))


@irdl_op_definition
class UnsetOp(InstrOp):
    """Registers declared and never written: the accumulators of a wgmma that ignores its
    input (scale-d false), which need no zeros moved into them. Prints nothing."""

    name = "ptx.unset"

    def __init__(self, count: int, result: Attribute):
        super().__init__(operands=[[]], result_types=[[result] * count])

    def verify_(self) -> None:
        require(len(self.srcs) == 0 and len(self.dsts) >= 1, self, "has no operands and at least one result")

    def ptx_lines(self, names: Namer) -> list[str]:
        return []


@irdl_op_definition
class ConstOp(InstrOp):
    """A constant in a register: `mov.{ty} d, imm;` (ptxas folds it into its uses)."""

    name = "ptx.const"
    ty = prop_def(StringAttr)
    value = prop_def(Attribute)

    def __init__(self, ty: str, value: int | float, result: Attribute):
        v: Attribute = FloatAttr(float(value), 64) if ty in ("f32", "f64") else IntegerAttr(int(value), IntegerType(64))
        super().__init__(operands=[[]], result_types=[[result]], properties={"ty": StringAttr(ty), "value": v})

    @property
    def number(self) -> int | float:
        v = self.value
        assert isinstance(v, FloatAttr | IntegerAttr)
        return v.value.data

    def verify_(self) -> None:
        require(len(self.srcs) == 0 and len(self.dsts) == 1, self, "has no operands and one result")
        require(isinstance(self.value, FloatAttr | IntegerAttr), self, f"value must be an integer or float attribute, got {self.value}")
        ty = self.ty.data
        require(ty in TYPE_BITS and ty not in ("f16", "bf16", "f16x2", "bf16x2", "pred"), self, f"no immediates of type .{ty}")
        _need_type(self, "the result", self.dsts[0], ty)
        if ty[0] in "bus" and isinstance(self.value, IntegerAttr):
            bits, v = TYPE_BITS[ty], self.value.value.data
            lo = -(1 << (bits - 1)) if ty[0] == "s" else 0
            hi = (1 << (bits - 1)) - 1 if ty[0] == "s" else (1 << bits) - 1
            require(lo <= v <= hi, self, f"{v} does not fit in .{ty}")

    def ptx_lines(self, names: Namer) -> list[str]:
        return [f"mov.{self.ty.data} {names(self.dsts[0])}, {format_immediate(self.ty.data, self.number)};"]


SPECIAL_REGISTERS = {
    **{f"{r}.{c}": "b32" for r in ("tid", "ntid", "ctaid", "nctaid", "clusterid", "nclusterid", "cluster_ctaid") for c in "xyz"},
    "laneid": "b32", "warpid": "b32", "nwarpid": "b32", "smid": "b32", "cluster_ctarank": "b32",
    "clock": "b32", "clock64": "b64", "globaltimer": "b64", "dynamic_smem_size": "b32",
}


@irdl_op_definition
class SregOp(InstrOp):
    """Read a special register: `mov.u32 d, %tid.x;`."""

    name = "ptx.sreg"
    reg = prop_def(StringAttr)

    def __init__(self, reg: str):
        cls = SPECIAL_REGISTERS.get(reg, "b32")
        super().__init__(operands=[[]], result_types=[[RegType(cls)]], properties=_props(reg=reg))

    def verify_(self) -> None:
        r = self.reg.data
        require(r in SPECIAL_REGISTERS, self, f"unknown special register %{r}; known: {', '.join('%' + k for k in SPECIAL_REGISTERS)}")
        _need_class(self, "the result", self.dsts[0], SPECIAL_REGISTERS[r])

    def ptx_lines(self, names: Namer) -> list[str]:
        bits = 64 if SPECIAL_REGISTERS[self.reg.data] == "b64" else 32
        return [f"mov.u{bits} {names(self.dsts[0])}, %{self.reg.data};"]


@irdl_op_definition
class AddrOfOp(InstrOp):
    """The address of a kernel parameter or shared variable: `mov.u32 %r1, smem;`.

    Shared variables give a 32-bit shared-window address; parameters (for TMA tensor
    maps passed by value) a 64-bit generic one.
    """

    name = "ptx.addr_of"
    sym = prop_def(StringAttr)

    def __init__(self, sym: str, result: Attribute):
        super().__init__(operands=[[]], result_types=[[result]], properties=_props(sym=sym))

    def verify_(self) -> None:
        _need_class(self, "the result", self.dsts[0], "b32", "b64")

    def ptx_lines(self, names: Namer) -> list[str]:
        bits = reg_class_of(self.dsts[0]).bits  # type: ignore[union-attr]
        return [f"mov.u{bits} {names(self.dsts[0])}, {self.sym.data};"]


CVT_ROUNDINGS = {"rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "rna"}


@irdl_op_definition
class CvtOp(InstrOp):
    """Convert between types: `cvt{.rnd}{.ftz}{.sat}.dty.sty d, a;`.

    Packed pairs take two f32 sources, the first into the upper half:
    `cvt.rn.bf16x2.f32 d, hi, lo;`.
    """

    name = "ptx.cvt"
    dty = prop_def(StringAttr)
    sty = prop_def(StringAttr)
    mods = opt_prop_def(StringAttr)

    def __init__(self, dty: str, sty: str, srcs: Sequence[SSAValue], result: Attribute, mods: str | None = None):
        super().__init__(operands=[list(srcs)], result_types=[[result]], properties=_props(dty=dty, sty=sty, mods=mods))

    def verify_(self) -> None:
        d, s = self.dty.data, self.sty.data
        require(d in TYPE_BITS and s in TYPE_BITS, self, f"unknown types .{d}.{s}")
        packed = d in ("f16x2", "bf16x2")
        require(len(self.srcs) == (2 if packed else 1), self, f"cvt to .{d} takes {2 if packed else 1} source(s), got {len(self.srcs)}")
        for n, v in enumerate(self.srcs):
            _need_type(self, f"operand #{n}", v, s)
        _need_type(self, "the result", self.dsts[0], d)
        mods = [m for m in _s(self.mods).split(".") if m]
        to_float_narrower = d in FLOAT_TYPES and (s not in FLOAT_TYPES or TYPE_BITS[d] < TYPE_BITS[s])
        if to_float_narrower and not packed:
            require(any(m in CVT_ROUNDINGS for m in mods), self, f"cvt .{d}.{s} needs a rounding mode (e.g. mods = \"rn\")")

    def ptx_lines(self, names: Namer) -> list[str]:
        mods = "".join("." + m for m in _s(self.mods).split(".") if m)
        ops = ", ".join(names(v) for v in [*self.dsts, *self.srcs])
        return [f"cvt{mods}.{self.dty.data}.{self.sty.data} {ops};"]


COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"}


@irdl_op_definition
class SetpOp(InstrOp):
    """Compare into a predicate: `setp.cmp.type p, a, b;`."""

    name = "ptx.setp"
    cmp = prop_def(StringAttr)
    ty = prop_def(StringAttr)

    def __init__(self, cmp: str, ty: str, a: SSAValue, b: SSAValue):
        super().__init__(operands=[[a, b]], result_types=[[RegType("pred")]], properties=_props(cmp=cmp, ty=ty))

    def verify_(self) -> None:
        require(self.cmp.data in COMPARISONS, self, f"unknown comparison '{self.cmp.data}'")
        require(len(self.srcs) == 2 and len(self.dsts) == 1, self, "compares two registers into one predicate")
        for n, v in enumerate(self.srcs):
            _need_type(self, f"operand #{n}", v, self.ty.data)
        _need_class(self, "the result", self.dsts[0], "pred")

    def ptx_lines(self, names: Namer) -> list[str]:
        a, b = self.srcs
        return [f"setp.{self.cmp.data}.{self.ty.data} {names(self.dsts[0])}, {names(a)}, {names(b)};"]


@irdl_op_definition
class SelpOp(InstrOp):
    """Select by predicate: `selp.type d, a, b, p;` (a when p)."""

    name = "ptx.selp"
    ty = prop_def(StringAttr)

    def __init__(self, ty: str, a: SSAValue, b: SSAValue, p: SSAValue):
        super().__init__(operands=[[a, b, p]], result_types=[[a.type]], properties=_props(ty=ty))

    def verify_(self) -> None:
        require(len(self.srcs) == 3 and len(self.dsts) == 1, self, "takes a, b and a predicate")
        a, b, p = self.srcs
        _need_type(self, "operand a", a, self.ty.data)
        _need_type(self, "operand b", b, self.ty.data)
        _need_class(self, "the predicate", p, "pred")
        _need_type(self, "the result", self.dsts[0], self.ty.data)

    def ptx_lines(self, names: Namer) -> list[str]:
        a, b, p = self.srcs
        return [f"selp.{self.ty.data} {names(self.dsts[0])}, {names(a)}, {names(b)}, {names(p)};"]


# --------------------------------------------------------------------------------------
# Memory
# --------------------------------------------------------------------------------------

SPACES = {"", "global", "shared", "shared::cta", "shared::cluster", "local", "const", "param"}
CACHE_HINTS = {"", "ca", "cg", "cs", "lu", "cv", "wb", "wt", "nc"}
# memory-model semantics: a strong access other threads synchronise with (a turn counter)
SEMANTICS = {"", "volatile", "relaxed.gpu", "acquire.gpu", "release.gpu", "relaxed.cta", "acquire.cta", "release.cta"}
ATOM_SEMANTICS = SEMANTICS | {"acq_rel.gpu", "acq_rel.cta"}  # a read-modify-write may both acquire and release


class MemOp(PtxOp):
    """Shared checks of ld and st: space, cache hint, vector width, address register."""

    addr = operand_def(RegType)
    guard = opt_operand_def(RegType)  # the access happens only where this predicate holds
    space = prop_def(StringAttr)
    ty = prop_def(StringAttr)
    cache = opt_prop_def(StringAttr)
    offset = opt_prop_def(IntegerAttr)
    sem = opt_prop_def(StringAttr)

    SEMANTICS: ClassVar[set[str]] = SEMANTICS

    def _verify_mem(self, values: Sequence[SSAValue]) -> None:
        sp, ty = self.space.data, self.ty.data
        require(sp in SPACES, self, f"unknown state space '{sp}'")
        require(_s(self.cache) in CACHE_HINTS, self, f"unknown cache hint '{_s(self.cache)}'")
        require(_s(self.sem) in self.SEMANTICS, self, f"unknown memory semantics '{_s(self.sem)}' for {self.name}")
        require(not (_s(self.sem) and _s(self.cache)), self, "a strong access (sem) takes no cache hint")
        require(ty in TYPE_BITS and ty != "pred", self, f"unknown type .{ty}")
        _need_class(self, "the address", self.addr, "b32", "b64")
        if self.guard is not None:
            _need_class(self, "the guard", self.guard, "pred")
        require(len(values) in (1, 2, 4), self, f"moves 1, 2 or 4 values (v2, v4), got {len(values)}")
        require(TYPE_BITS[ty] * len(values) <= 128, self, f"a vector of {len(values)} x .{ty} is wider than 128 bits")
        for n, v in enumerate(values):
            _need_type(self, f"value #{n}", v, ty)

    def _prefix(self, op: str, n_values: int, names: Namer) -> str:
        guard = f"@{names(self.guard)} " if self.guard is not None else ""
        parts = [op, _s(self.sem), self.space.data, _s(self.cache), f"v{n_values}" if n_values > 1 else "", self.ty.data]
        return guard + ".".join(p for p in parts if p)


@irdl_op_definition
class LdOp(MemOp):
    """Load: `[@p] ld{.sem}{.space}{.hint}{.vN}.type d, [addr+offset];`. A guarded load with
    `zero` set gives zeros where its guard fails: each destination is set to 0 first
    (`mov.b32 d, 0;`), so that no value of a register from before (the last trip of a loop,
    which ptxas would otherwise keep alive across the whole loop) can come through."""

    name = "ptx.ld"
    dsts = var_result_def(RegType)
    zero = opt_prop_def(UnitAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = "` ` `[` $addr `]` (`if` $guard^)? attr-dict `:` type($addr) (`if` type($guard)^)? `->` `(` type($dsts) `)`"

    def __init__(self, space: str, ty: str, addr: SSAValue, results: Sequence[Attribute], *, offset: int = 0,
                 cache: str | None = None, guard: SSAValue | None = None, sem: str | None = None, zero: bool = False):
        super().__init__(operands=[addr, [guard] if guard else []], result_types=[list(results)],
                         properties={**_props(space=space, ty=ty, cache=cache, offset=offset or None, sem=sem),
                                     **({"zero": UnitAttr()} if zero else {})})

    def verify_(self) -> None:
        self._verify_mem(self.dsts)
        require(self.zero is None or self.guard is not None, self, "zero (the results where the guard fails) needs a guard")

    def ptx_lines(self, names: Namer) -> list[str]:
        d = names(self.dsts[0]) if len(self.dsts) == 1 else _vec(names, self.dsts)
        zeros = [f"mov.b{r.type.reg_class.bits} {names(r)}, 0;" for r in self.dsts] if self.zero is not None else []
        return [*zeros, f"{self._prefix('ld', len(self.dsts), names)} {d}, {_addr(names, self.addr, _i(self.offset))};"]


@irdl_op_definition
class StOp(MemOp):
    """Store: `[@p] st{.sem}{.space}{.hint}{.vN}.type [addr+offset], a;`."""

    name = "ptx.st"
    values = var_operand_def(RegType)
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = "` ` `[` $addr `]` (`if` $guard^)? `,` `(` $values `)` attr-dict `:` type($addr) (`if` type($guard)^)? `,` `(` type($values) `)`"

    def __init__(self, space: str, ty: str, addr: SSAValue, values: Sequence[SSAValue], *, offset: int = 0,
                 cache: str | None = None, guard: SSAValue | None = None, sem: str | None = None):
        # irdl orders a subclass's own operand fields before the inherited ones
        super().__init__(operands=[list(values), addr, [guard] if guard else []],
                         properties=_props(space=space, ty=ty, cache=cache, offset=offset or None, sem=sem))

    def verify_(self) -> None:
        self._verify_mem(self.values)

    def ptx_lines(self, names: Namer) -> list[str]:
        v = names(self.values[0]) if len(self.values) == 1 else _vec(names, self.values)
        return [f"{self._prefix('st', len(self.values), names)} {_addr(names, self.addr, _i(self.offset))}, {v};"]


@irdl_op_definition
class RedOp(MemOp):
    """Add to memory, atomically, keeping no result: `[@p] red{.space}.add{.vN}.type
    [addr+offset], a;` (a block's part of a sum that several blocks add into one f32
    global). Two or four adjacent f32 values at once (`.v2.f32`, `.v4.f32`) need sm_90 and
    PTX ISA 8.1, which the printer then declares."""

    name = "ptx.red"
    values = var_operand_def(RegType)
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = "` ` `[` $addr `]` (`if` $guard^)? `,` `(` $values `)` attr-dict `:` type($addr) (`if` type($guard)^)? `,` `(` type($values) `)`"

    def __init__(self, space: str, ty: str, addr: SSAValue, value: SSAValue | Sequence[SSAValue], *, offset: int = 0,
                 guard: SSAValue | None = None):
        values = [value] if isinstance(value, SSAValue) else list(value)
        super().__init__(operands=[values, addr, [guard] if guard else []], properties=_props(space=space, ty=ty, offset=offset or None))

    @property
    def vector(self) -> bool:
        """Whether it adds several values at once (sm_90, PTX ISA 8.1)."""
        return len(self.values) > 1

    def verify_(self) -> None:
        self._verify_mem(self.values)
        require(not self.vector or (self.ty.data == "f32" and self.space.data == "global"), self,
                f"adds several values at once as .f32 into global memory only, not .{self.ty.data} into .{self.space.data}")
        require(self.space.data in ("global", "shared", "shared::cta", ""), self, f"adds into global or shared memory, not .{self.space.data}")
        require(self.ty.data in ("f32", "f64", "u32", "s32", "u64"), self, f"adds .f32, .f64, .u32, .s32 or .u64, not .{self.ty.data}")

    def ptx_lines(self, names: Namer) -> list[str]:
        guard = f"@{names(self.guard)} " if self.guard is not None else ""
        space = f".{self.space.data}" if self.space.data else ""
        vec, v = (f".v{len(self.values)}", _vec(names, self.values)) if self.vector else ("", names(self.values[0]))
        return [f"{guard}red{space}.add{vec}.{self.ty.data} {_addr(names, self.addr, _i(self.offset))}, {v};"]


@irdl_op_definition
class AtomOp(MemOp):
    """Add to memory atomically and return the value it held: `[@p] atom{.sem}{.space}.add.type
    d, [addr+offset], a;` (a warp's arrival at a tile's counter: the last of a split sum's
    parts to arrive, seeing the count of those before it, adds them up)."""

    name = "ptx.atom"
    SEMANTICS: ClassVar[set[str]] = ATOM_SEMANTICS
    values = var_operand_def(RegType)
    dsts = var_result_def(RegType)
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = ("` ` `[` $addr `]` (`if` $guard^)? `,` `(` $values `)` attr-dict `:` type($addr) (`if` type($guard)^)? `,` "
                       "`(` type($values) `)` `->` `(` type($dsts) `)`")

    def __init__(self, space: str, ty: str, addr: SSAValue, value: SSAValue, result: Attribute, *, offset: int = 0,
                 guard: SSAValue | None = None, sem: str | None = None):
        super().__init__(operands=[[value], addr, [guard] if guard else []], result_types=[[result]],
                         properties=_props(space=space, ty=ty, offset=offset or None, sem=sem))

    def verify_(self) -> None:
        self._verify_mem(self.values)
        require(len(self.values) == 1 and len(self.dsts) == 1, self, "adds one value and returns the one it replaced")
        require(self.space.data in ("global", "shared", "shared::cta", ""), self, f"adds into global or shared memory, not .{self.space.data}")
        require(self.ty.data in ("u32", "s32", "u64"), self, f"counts in .u32, .s32 or .u64, not .{self.ty.data}")
        _need_type(self, "the result", self.dsts[0], self.ty.data)

    def ptx_lines(self, names: Namer) -> list[str]:
        guard = f"@{names(self.guard)} " if self.guard is not None else ""
        head = ".".join(p for p in ("atom", _s(self.sem), self.space.data, "add", self.ty.data) if p)
        return [f"{guard}{head} {names(self.dsts[0])}, {_addr(names, self.addr, _i(self.offset))}, {names(self.values[0])};"]


@irdl_op_definition
class LdParamOp(InstrOp):
    """Read a kernel parameter: `ld.param.type d, [name];`."""

    name = "ptx.ld_param"
    param = prop_def(StringAttr)
    ty = prop_def(StringAttr)

    def __init__(self, param: str, ty: str, result: Attribute):
        super().__init__(operands=[[]], result_types=[[result]], properties=_props(param=param, ty=ty))

    def verify_(self) -> None:
        require(len(self.dsts) == 1, self, "has one result")
        _need_type(self, "the result", self.dsts[0], self.ty.data)
        kernel = self.parent_op()
        while kernel is not None and not isinstance(kernel, KernelOp):
            kernel = kernel.parent_op()
        if kernel is not None:
            params = dict(kernel.param_list())
            require(self.param.data in params, self, f"kernel @{kernel.sym_name.data} has no parameter '{self.param.data}'; it has {', '.join(params) or 'none'}")

    def ptx_lines(self, names: Namer) -> list[str]:
        return [f"ld.param.{self.ty.data} {names(self.dsts[0])}, [{self.param.data}];"]


@irdl_op_definition
class CvtaOp(InstrOp):
    """Convert an address between generic and a state space: `cvta{.to}.space.u64 d, a;`."""

    name = "ptx.cvta"
    space = prop_def(StringAttr)
    to = opt_prop_def(IntegerAttr)

    def __init__(self, space: str, a: SSAValue, to: bool = True):
        super().__init__(operands=[[a]], result_types=[[a.type]], properties=_props(space=space, to=to))

    def verify_(self) -> None:
        require(self.space.data in ("global", "shared", "local", "const", "param"), self, f"unknown state space '{self.space.data}'")
        require(len(self.srcs) == 1 and len(self.dsts) == 1, self, "converts one address")
        _need_class(self, "the address", self.srcs[0], "b64")
        _need_class(self, "the result", self.dsts[0], "b64")

    def ptx_lines(self, names: Namer) -> list[str]:
        to = ".to" if _i(self.to, 1) else ""
        return [f"cvta{to}.{self.space.data}.u64 {names(self.dsts[0])}, {names(self.srcs[0])};"]


# --------------------------------------------------------------------------------------
# Warps and blocks
# --------------------------------------------------------------------------------------


@irdl_op_definition
class BarSyncOp(InstrOp):
    """Block-wide barrier: `bar.sync id{, threads};`."""

    name = "ptx.bar_sync"
    id = opt_prop_def(IntegerAttr)
    threads = opt_prop_def(IntegerAttr)

    def __init__(self, id: int = 0, threads: int | None = None):
        super().__init__(operands=[[]], result_types=[[]], properties=_props(id=id, threads=threads))

    def verify_(self) -> None:
        require(0 <= _i(self.id) < 16, self, f"barrier id must be in 0..15, got {_i(self.id)}")
        if self.threads is not None:
            require(_i(self.threads) % 32 == 0 and _i(self.threads) > 0, self, f"thread count must be a positive multiple of 32, got {_i(self.threads)}")

    def ptx_lines(self, names: Namer) -> list[str]:
        n = f", {_i(self.threads)}" if self.threads is not None else ""
        return [f"bar.sync {_i(self.id)}{n};"]


@irdl_op_definition
class BarWarpSyncOp(InstrOp):
    """The lanes of `mask` meet: `bar.warp.sync mask;` (their memory accesses before it are
    ordered before theirs after it)."""

    name = "ptx.bar_warp_sync"
    mask = opt_prop_def(IntegerAttr)

    def __init__(self, mask: int = 0xFFFFFFFF):
        super().__init__(operands=[[]], result_types=[[]], properties=_props(mask=IntegerAttr(mask, IntegerType(64))))

    def ptx_lines(self, names: Namer) -> list[str]:
        return ["bar.warp.sync 0x%08x;" % _i(self.mask, 0xFFFFFFFF)]


@irdl_op_definition
class BarNamedOp(InstrOp):
    """A named barrier whose id is a register: `bar.sync %r, threads;` waits until
    `threads` threads have arrived at barrier `%r` (this one among them); `bar.arrive
    %r, threads;` arrives without waiting. Warpgroups take turns through them."""

    name = "ptx.bar_named"
    mode = prop_def(StringAttr)
    threads = prop_def(IntegerAttr)

    def __init__(self, mode: str, id: SSAValue, threads: int):
        super().__init__(operands=[[id]], result_types=[[]], properties=_props(mode=mode, threads=threads))

    def verify_(self) -> None:
        require(self.mode.data in ("sync", "arrive"), self, f"mode must be sync or arrive, got '{self.mode.data}'")
        require(len(self.srcs) == 1 and not self.dsts, self, "takes the barrier's id register alone")
        _need_class(self, "the barrier id", self.srcs[0], "b32")
        require(_i(self.threads) % 32 == 0 and _i(self.threads) > 0, self, f"thread count must be a positive multiple of 32, got {_i(self.threads)}")

    def ptx_lines(self, names: Namer) -> list[str]:
        return [f"bar.{self.mode.data} {names(self.srcs[0])}, {_i(self.threads)};"]


@irdl_op_definition
class ShflSyncOp(InstrOp):
    """Warp shuffle: `shfl.sync.mode.b32 d, a, b, c, mask;`.

    `b` is the lane (idx), offset (up, down) or lane mask (bfly): the property `b`, or a
    second source register. `c` packs the clamp and segment mask (31 for a whole warp
    for bfly/down/idx, 0 for up).
    """

    name = "ptx.shfl_sync"
    mode = prop_def(StringAttr)
    b = opt_prop_def(IntegerAttr)
    c = opt_prop_def(IntegerAttr)
    mask = opt_prop_def(IntegerAttr)

    def __init__(self, mode: str, a: SSAValue, b: int | SSAValue, c: int | None = None, mask: int = 0xFFFFFFFF):
        srcs = [a] if isinstance(b, int) else [a, b]
        c = (0 if mode == "up" else 31) if c is None else c
        super().__init__(operands=[srcs], result_types=[[a.type]],
                         properties=_props(mode=mode, b=b if isinstance(b, int) else None, c=c, mask=IntegerAttr(mask, IntegerType(64))))

    def verify_(self) -> None:
        require(self.mode.data in ("up", "down", "bfly", "idx"), self, f"unknown mode '{self.mode.data}'")
        require(len(self.srcs) in (1, 2) and (len(self.srcs) == 2) != (self.b is not None), self, "b is either the property 'b' or a second source register")
        _need_type(self, "operand a", self.srcs[0], "b32")
        if len(self.srcs) == 2:
            _need_type(self, "operand b", self.srcs[1], "b32")
        _need_type(self, "the result", self.dsts[0], "b32")

    def ptx_lines(self, names: Namer) -> list[str]:
        b = names(self.srcs[1]) if len(self.srcs) == 2 else str(_i(self.b))
        mask = "0x%08x" % _i(self.mask, 0xFFFFFFFF)
        return [f"shfl.sync.{self.mode.data}.b32 {names(self.dsts[0])}, {names(self.srcs[0])}, {b}, {_i(self.c)}, {mask};"]


@irdl_op_definition
class VoteOp(InstrOp):
    """Warp vote: `vote.sync.{all,any,uni}.pred p, q, mask;` or `vote.sync.ballot.b32 r, q, mask;`."""

    name = "ptx.vote"
    mode = prop_def(StringAttr)
    mask = opt_prop_def(IntegerAttr)

    def __init__(self, mode: str, q: SSAValue, mask: int = 0xFFFFFFFF):
        res = RegType("b32") if mode == "ballot" else RegType("pred")
        super().__init__(operands=[[q]], result_types=[[res]], properties=_props(mode=mode, mask=IntegerAttr(mask, IntegerType(64))))

    def verify_(self) -> None:
        require(self.mode.data in ("all", "any", "uni", "ballot"), self, f"unknown mode '{self.mode.data}'")
        require(len(self.srcs) == 1 and len(self.dsts) == 1, self, "votes on one predicate")
        _need_class(self, "the operand", self.srcs[0], "pred")
        _need_class(self, "the result", self.dsts[0], "b32" if self.mode.data == "ballot" else "pred")

    def ptx_lines(self, names: Namer) -> list[str]:
        ty = "b32" if self.mode.data == "ballot" else "pred"
        mask = "0x%08x" % _i(self.mask, 0xFFFFFFFF)
        return [f"vote.sync.{self.mode.data}.{ty} {names(self.dsts[0])}, {names(self.srcs[0])}, {mask};"]


@irdl_op_definition
class ElectSyncOp(InstrOp):
    """Elect one lane of the warp: `elect.sync %r|%p, mask;` (sm_90): the lane id and whether this lane won."""

    name = "ptx.elect_sync"
    mask = opt_prop_def(IntegerAttr)

    def __init__(self, mask: int = 0xFFFFFFFF):
        super().__init__(operands=[[]], result_types=[[RegType("b32"), RegType("pred")]], properties=_props(mask=IntegerAttr(mask, IntegerType(64))))

    def verify_(self) -> None:
        require(len(self.dsts) == 2, self, "has two results: the elected lane and the predicate")
        _need_class(self, "result #0", self.dsts[0], "b32")
        _need_class(self, "result #1", self.dsts[1], "pred")

    def ptx_lines(self, names: Namer) -> list[str]:
        mask = "0x%08x" % _i(self.mask, 0xFFFFFFFF)
        return [f"elect.sync {names(self.dsts[0])}|{names(self.dsts[1])}, {mask};"]


# --------------------------------------------------------------------------------------
# Control flow and kernels
# --------------------------------------------------------------------------------------


@irdl_op_definition
class BraOp(PtxOp):
    """Branch to a block, passing its arguments: `bra $L__BB0_2;`."""

    name = "ptx.bra"
    args = var_operand_def(RegType)
    target = successor_def()
    traits = traits_def(IsTerminator())
    assembly_format = "$target (`(` $args^ `:` type($args) `)`)? attr-dict"

    def __init__(self, target: Block, *args: SSAValue):
        super().__init__(operands=[list(args)], successors=[target])


@irdl_op_definition
class CondBraOp(PtxOp):
    """Branch on a predicate: `@%p1 bra $L__BB0_1;` then `bra $L__BB0_2;`."""

    name = "ptx.cond_bra"
    cond = operand_def(RegType)
    then_args = var_operand_def(RegType)
    else_args = var_operand_def(RegType)
    then_block = successor_def()
    else_block = successor_def()
    traits = traits_def(IsTerminator())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$cond `,` $then_block (`(` $then_args^ `:` type($then_args) `)`)? `,` "
        "$else_block (`(` $else_args^ `:` type($else_args) `)`)? attr-dict `:` type($cond)"
    )

    def __init__(self, cond: SSAValue, then_block: Block, then_args: Sequence[SSAValue], else_block: Block, else_args: Sequence[SSAValue]):
        super().__init__(operands=[cond, list(then_args), list(else_args)], successors=[then_block, else_block])

    def verify_(self) -> None:
        _need_class(self, "the condition", self.cond, "pred")


@irdl_op_definition
class RetOp(PtxOp):
    """Return from the kernel: `ret;`."""

    name = "ptx.ret"
    traits = traits_def(IsTerminator())
    assembly_format = "attr-dict"

    def ptx_lines(self, names: Namer) -> list[str]:
        return ["ret;"]


PARAM_TYPES = {"u32": 4, "s32": 4, "u64": 8, "s64": 8, "f32": 4, "f64": 8, "b32": 4, "b64": 8, "tensormap": 128}


@irdl_op_definition
class KernelOp(IRDLOperation):
    """A kernel entry: `.visible .entry name(.param .u64 a, ...) .maxntid 128, 1, 1 { ... }`.

    `params` names the parameters and `param_types` gives each one's PTX type
    (`u64` for pointers, `u32`, `f32` ..., or `tensormap`: 128 bytes aligned to 64,
    passed by value for TMA). `shared` declares static shared arrays
    (`#ptx.shared<"smem", bytes = 4096, align = 128>`); `dynamic_shared` names the
    dynamic one.

    The `napkin.*` properties are what a launch needs, written by the pipelines for the
    launch contract (`napkin_ir.runtime.contract`): blocks along x, y, z (`napkin.grid`),
    threads (`napkin.block`), dynamic shared bytes (`napkin.smem_bytes`), blocks per
    cluster (`napkin.cluster`), blocks per multiprocessor of a persistent grid
    (`napkin.persistent`), how each TMA tensor map is encoded (`napkin.tma`, of
    `#ptx.tma_box`), and the parameters the kernel adds into, which the launch zeroes
    first (`napkin.zeroed`: f32 outputs of a contraction split over the grid).
    `global_vars` declares zero-initialised `.global` arrays before the entry (the turn
    counters of sums added in a fixed order), in `#ptx.shared`'s terms.
    """

    name = "ptx.kernel"
    sym_name = prop_def(StringAttr)
    params = prop_def(ArrayAttr[StringAttr])
    param_types = prop_def(ArrayAttr[StringAttr])
    shared = opt_prop_def(ArrayAttr[SharedAttr])
    dynamic_shared = opt_prop_def(StringAttr)
    maxntid = opt_prop_def(ArrayAttr[IntegerAttr])
    reqntid = opt_prop_def(ArrayAttr[IntegerAttr])
    minnctapersm = opt_prop_def(IntegerAttr)
    launch_grid = opt_prop_def(ArrayAttr[IntegerAttr], prop_name="napkin.grid")
    launch_block = opt_prop_def(ArrayAttr[IntegerAttr], prop_name="napkin.block")
    smem_bytes = opt_prop_def(IntegerAttr, prop_name="napkin.smem_bytes")
    cluster = opt_prop_def(ArrayAttr[IntegerAttr], prop_name="napkin.cluster")
    persistent = opt_prop_def(IntegerAttr, prop_name="napkin.persistent")
    tma = opt_prop_def(ArrayAttr[TmaBoxAttr], prop_name="napkin.tma")
    zeroed = opt_prop_def(ArrayAttr[StringAttr], prop_name="napkin.zeroed")
    global_vars = opt_prop_def(ArrayAttr[SharedAttr])  # zero-initialised .global arrays at module scope
    body = region_def()
    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict-with-keyword $body"

    def __init__(self, name: str, params: Sequence[tuple[str, str]], body: Region, *, shared: Sequence[tuple[str, int, int]] = (),
                 dynamic_shared: str | None = None, maxntid: Sequence[int] | None = None, reqntid: Sequence[int] | None = None,
                 minnctapersm: int | None = None):
        props: dict[str, Attribute] = {
            "sym_name": StringAttr(name),
            "params": ArrayAttr([StringAttr(p) for p, _ in params]),
            "param_types": ArrayAttr([StringAttr(t) for _, t in params]),
        }
        if shared:
            props["shared"] = ArrayAttr([SharedAttr(n, b, a) for n, b, a in shared])
        if dynamic_shared:
            props["dynamic_shared"] = StringAttr(dynamic_shared)
        for k, v in (("maxntid", maxntid), ("reqntid", reqntid)):
            if v is not None:
                props[k] = ArrayAttr([_int(x) for x in v])
        if minnctapersm is not None:
            props["minnctapersm"] = _int(minnctapersm)
        super().__init__(properties=props, regions=[body])

    def param_list(self) -> list[tuple[str, str]]:
        return [(p.data, t.data) for p, t in zip(self.params.data, self.param_types.data)]

    def shared_list(self) -> list[tuple[str, int, int]]:
        return [(s.sym.data, s.size.data, s.align.data) for s in (self.shared.data if self.shared else [])]

    def global_list(self) -> list[tuple[str, int, int]]:
        return [(s.sym.data, s.size.data, s.align.data) for s in (self.global_vars.data if self.global_vars else [])]

    def verify_(self) -> None:
        require(len(self.params.data) == len(self.param_types.data), self, f"{len(self.params.data)} parameter names but {len(self.param_types.data)} types")
        for p, t in self.param_list():
            require(t in PARAM_TYPES, self, f"parameter '{p}' has unknown type '{t}'; expected one of {', '.join(PARAM_TYPES)}")
        for k in ("maxntid", "reqntid", "napkin.grid", "napkin.block", "napkin.cluster"):
            v = self.properties.get(k)
            if v is not None:
                sizes = [n.value.data for n in v.data]  # type: ignore[attr-defined]
                require(1 <= len(sizes) <= 3 and min(sizes) >= 1, self, f"{k} takes 1 to 3 positive sizes, got {sizes}")
        require(self.smem_bytes is None or self.smem_bytes.value.data >= 0, self, "napkin.smem_bytes is at least 0")
        require(self.persistent is None or self.persistent.value.data >= 1, self, "napkin.persistent (blocks per multiprocessor) is at least 1")
        names = [p.data for p in self.params.data]
        for z in self.zeroed.data if self.zeroed else ():
            require(z.data in names, self, f"napkin.zeroed names '{z.data}', which is not a parameter")
        require(len(self.body.blocks) >= 1, self, "has a body")
        for block in self.body.blocks:
            for op in block.ops:
                require(isinstance(op, PtxOp) or op.name.startswith("ptx."), self, f"op {op.name} is not a ptx op: lower it first")


@irdl_op_definition
class ModuleOp(IRDLOperation):
    """Optional wrapper naming the PTX target of the kernels inside: `ptx.module {target = "sm_90a"}`."""

    name = "ptx.module"
    target = prop_def(StringAttr)
    version = opt_prop_def(StringAttr)
    body = region_def("single_block")
    traits = traits_def(NoTerminator(), IsolatedFromAbove())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict-with-keyword $body"

    def verify_(self) -> None:
        require(self.target.data in ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"), self, f"unknown target '{self.target.data}'")


__all__ = [name for name in dir() if name.endswith("Op") and name not in ("IRDLOperation",)]
