"""The `ncd` dialect: neural circuit diagrams, the top of the pipeline.

A value is a tensor whose axes have names (`!ncd.tensor<i=64, d=32 : bf16>`); ops say
only what is computed, never where it lives or in what order. Operands meet by axis
name, not by position: a contraction sums over the axes it lists and keeps the rest,
an elementwise map broadcasts each operand over the axes it lacks. Later levels
(`ncd-relabel`, `ncd-to-hbm`) decide which axes are spread over the grid, streamed or
kept whole.

Every op has a custom syntax; the result type is always written out and the verifier
checks it against what the op computes, naming the axis and the sizes at fault.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    Float32Type,
    FloatAttr,
    IndexType,
    IntAttr,
    StringAttr,
    bf16,
    f16,
    f32,
)
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from napkin_ir.target import DTYPES

ELEMENT_TYPES: dict[str, Attribute] = {"bf16": bf16, "f16": f16, "f32": f32}
_AXIS_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
ELEMENT_BYTES = {name: DTYPES[name].bytes for name in ELEMENT_TYPES}  # bytes of each element type the dialects take


def element_type_name(t: Attribute) -> str:
    for name, et in ELEMENT_TYPES.items():
        if t == et:
            return name
    raise ValueError(f"not an ncd element type: {t}")


# --------------------------------------------------------------------------------------
# The tensor type
# --------------------------------------------------------------------------------------


def same_parameters(self: ParametrizedAttribute, other: object) -> bool:
    """Equality over all parameters. The decorated subclasses of an undecorated base get a
    generated equality that leaves the base's parameters out (so every `!ncd.tensor` would
    equal every other); each such subclass takes this one, and `parameters_hash`."""
    return type(other) is type(self) and other.parameters == self.parameters  # type: ignore[attr-defined]


def parameters_hash(self: ParametrizedAttribute) -> int:
    return hash((type(self), self.parameters))


def axis_names_problem(axes: Sequence[str], values: Sequence[int], what: str) -> str | None:
    """What is wrong with axis names given with one of `what` each (sizes ...), if anything."""
    if len(axes) != len(values):
        return f"{len(axes)} axis names but {len(values)} {what}"
    seen: set[str] = set()
    for a in axes:
        if not _AXIS_NAME.match(a):
            return f"'{a}' is not a valid axis name"
        if a in seen:
            return f"duplicate axis name '{a}'"
        seen.add(a)
    return None


def parse_axis_integers(parser: AttrParser, what: str) -> tuple[list[str], list[int]]:
    """`m=128, k=32`: one or more axis names, each with an integer (`what` it is, for errors:
    "the size of")."""
    axes: list[str] = []
    values: list[int] = []
    while True:
        axes.append(parser.parse_identifier(" (an axis name)"))
        parser.parse_punctuation("=", f" after axis name '{axes[-1]}'")
        values.append(parser.parse_integer(allow_boolean=False, allow_negative=True, context_msg=f" ({what} axis '{axes[-1]}')"))
        if parser.parse_optional_punctuation(",") is None:
            return axes, values


class NamedAxesType(ParametrizedAttribute, TypeAttribute):
    """Base of the types whose shape is a list of named axes with sizes and an element
    type, written `<b=4, h=16, i=4096, d=128 : bf16>` (`!ncd.tensor`, `!hbm.global`)."""

    axes: ArrayAttr[StringAttr]
    sizes: ArrayAttr[IntAttr]
    element_type: Attribute

    def __init__(self, shape: Mapping[str, int] | Iterable[tuple[str, int]], element_type: Attribute):
        items = list(shape.items()) if isinstance(shape, Mapping) else list(shape)
        super().__init__(
            ArrayAttr([StringAttr(a) for a, _ in items]),
            ArrayAttr([IntAttr(s) for _, s in items]),
            element_type,
        )

    # -- queries ------------------------------------------------------------------------
    @property
    def axis_names(self) -> tuple[str, ...]:
        return tuple(a.data for a in self.axes.data)

    @property
    def shape(self) -> dict[str, int]:
        return {a.data: s.data for a, s in zip(self.axes.data, self.sizes.data, strict=True)}

    @property
    def dims(self) -> tuple[int, ...]:
        return tuple(s.data for s in self.sizes.data)

    @property
    def dtype(self) -> str:
        return element_type_name(self.element_type)

    # -- verification -------------------------------------------------------------------
    @staticmethod
    def shape_problem(axes: Sequence[str], sizes: Sequence[int], element_type: Attribute) -> str | None:
        problem = axis_names_problem(axes, sizes, "sizes")
        if problem:
            return problem
        for a, s in zip(axes, sizes):
            if s <= 0:
                return f"axis '{a}' has size {s}; sizes must be positive"
            if s > INT64_MAX:
                return f"axis '{a}' has size {s}, above int64's largest ({INT64_MAX}); sizes are 64-bit"
        if math.prod(sizes) > INT64_MAX:
            return f"the tensor has {math.prod(sizes)} elements, above int64's largest ({INT64_MAX}): no index reaches them all"
        if element_type not in ELEMENT_TYPES.values():
            return f"element type must be one of bf16, f16, f32, got {element_type}"
        return None

    def verify(self) -> None:
        problem = self.shape_problem(self.axis_names, self.dims, self.element_type)
        if problem:
            raise VerifyException(f"!{self.name}: {problem}")

    # -- syntax -------------------------------------------------------------------------
    def print_shape(self, printer: Printer) -> None:
        """`m=128, k=32 : bf16`, the part inside the angle brackets."""
        printer.print_string(", ".join(f"{a}={s}" for a, s in self.shape.items()))
        printer.print_string(" : " if self.axes.data else ": ")
        printer.print_attribute(self.element_type)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            self.print_shape(printer)

    @classmethod
    def parse_shape(cls, parser: AttrParser) -> tuple[ArrayAttr[StringAttr], ArrayAttr[IntAttr], Attribute]:
        """Parse `m=128, k=32 : bf16` (after the `<`), checking it."""
        start = parser.pos
        axes: list[str] = []
        sizes: list[int] = []
        if parser.parse_optional_punctuation(":") is None:
            axes, sizes = parse_axis_integers(parser, "the size of")
            parser.parse_punctuation(":", " before the element type")
        et_pos = parser.pos
        element_type = parser.parse_type()
        if element_type not in ELEMENT_TYPES.values():
            parser.raise_error(f"!{cls.name} element type must be bf16, f16 or f32, got {element_type}", et_pos, parser.pos)
        problem = cls.shape_problem(axes, sizes, element_type)
        if problem:
            parser.raise_error(f"!{cls.name}: {problem}", start, parser.pos)
        return ArrayAttr([StringAttr(a) for a in axes]), ArrayAttr([IntAttr(s) for s in sizes]), element_type

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<", f" to open !{cls.name}")
        shape = cls.parse_shape(parser)
        parser.parse_punctuation(">", f" to close !{cls.name}")
        return shape


@irdl_attr_definition
class TensorType(NamedAxesType):
    """A tensor with named axes, e.g. `!ncd.tensor<b=4, h=16, i=4096, d=128 : bf16>`.

    The order of the axes is the order of the data in memory when the tensor is an
    argument or result of a function (row-major, last axis fastest); inside a diagram
    only the names matter. A tensor with no axes is a scalar: `!ncd.tensor<: f32>`.
    At the `hbm` level and below, a value of this type is a tile.
    """

    name = "ncd.tensor"
    __eq__ = same_parameters
    __hash__ = parameters_hash


def _tensor(v: SSAValue | Attribute, what: str) -> TensorType:
    t = v.type if isinstance(v, SSAValue) else v
    if not isinstance(t, TensorType):
        raise VerifyException(f"{what} must be an !ncd.tensor, got {t}")
    return t


def _fmt_shape(shape: Mapping[str, int]) -> str:
    return "<" + ", ".join(f"{a}={s}" for a, s in shape.items()) + ">"


def _check_result(
    op_name: str, result: TensorType, expected: Mapping[str, int], element_type: Attribute, *, or_f32: bool = False
) -> None:
    """The result must have exactly the expected axes (any order), sizes and element type.

    With `or_f32`, an f32 result is also accepted (a contraction may keep its accumulator).
    """
    got = result.shape
    for a in expected:
        if a not in got:
            raise VerifyException(
                f"{op_name}: result is missing axis '{a}' (size {expected[a]}); "
                f"expected axes {_fmt_shape(expected)}, result has {_fmt_shape(got)}"
            )
    for a, s in got.items():
        if a not in expected:
            raise VerifyException(
                f"{op_name}: result has axis '{a}' that the op does not produce; "
                f"expected axes {_fmt_shape(expected)}, result has {_fmt_shape(got)}"
            )
        if s != expected[a]:
            raise VerifyException(f"{op_name}: axis '{a}' has size {s} in the result but {expected[a]} in the operands")
    if result.element_type != element_type and not (or_f32 and result.element_type == f32):
        allowed = f"{element_type} or f32" if or_f32 and element_type != f32 else f"{element_type}"
        raise VerifyException(f"{op_name}: result element type {result.element_type} should be {allowed}, as the operands")


def _merge_axes(op_name: str, tensors: Sequence[tuple[str, TensorType]]) -> dict[str, int]:
    """Union of the axes of several operands; the same name must have the same size."""
    merged: dict[str, int] = {}
    where: dict[str, str] = {}
    for label, t in tensors:
        for a, s in t.shape.items():
            if a in merged and merged[a] != s:
                raise VerifyException(f"{op_name}: axis '{a}' has size {merged[a]} in {where[a]} but {s} in {label}")
            if a not in merged:
                merged[a], where[a] = s, label
    return merged


# --------------------------------------------------------------------------------------
# Syntax helpers shared by the ops
# --------------------------------------------------------------------------------------


def _parse_axis_list(parser: Parser) -> list[str]:
    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: parser.parse_identifier(" (an axis name)"))


def _print_axis_list(printer: Printer, axes: Sequence[str]) -> None:
    printer.print_string("[" + ", ".join(axes) + "]")


def _str_array(names: Iterable[str]) -> ArrayAttr[StringAttr]:
    return ArrayAttr([StringAttr(n) for n in names])


class NcdOp(IRDLOperation):
    """Shared syntax tail: `attr-dict : operand-types -> result-type`."""

    def _print_tail(self, printer: Printer, operands: Sequence[SSAValue]) -> None:
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_list([o.type for o in operands], printer.print_attribute)
        printer.print_string(" -> ")
        printer.print_attribute(self.results[0].type)

    @staticmethod
    def _parse_tail(parser: Parser, operands: Sequence[Parser.UnresolvedOperand]) -> tuple[list[SSAValue], Attribute, dict[str, Attribute]]:
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":", " before the operand types")
        pos = parser.pos
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        if len(types) != len(operands):
            parser.raise_error(f"expected {len(operands)} operand type(s), got {len(types)}", pos, parser.pos)
        parser.parse_punctuation("->", " before the result type")
        result_type = parser.parse_type()
        return parser.resolve_operands(operands, types, pos), result_type, attrs


def made_of(op: Operation, *kinds: type[NcdOp]) -> bool:
    """Whether every ncd op inside `op` (a module, a function, a kernel) is one of `kinds`:
    `made_of(kernel, ContractOp, MapOp)` for one GEMM and its element-wise epilogue."""
    return all(isinstance(o, kinds) for o in op.walk() if isinstance(o, NcdOp))


def _parse_operands(parser: Parser, n: int | None = None) -> list[Parser.UnresolvedOperand]:
    if n is None:
        return parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_unresolved_operand)
    ops = [parser.parse_unresolved_operand()]
    for _ in range(n - 1):
        parser.parse_punctuation(",")
        ops.append(parser.parse_unresolved_operand())
    return ops


def _parse_float(parser: Parser, what: str) -> float:
    """A float literal, also `inf` and `-inf` (a causal mask's usual fill)."""
    neg = parser.parse_optional_punctuation("-") is not None
    if parser.parse_optional_keyword("inf") is not None:
        return -math.inf if neg else math.inf
    v = parser.parse_number(context_msg=f" ({what})")
    if isinstance(v, bool):
        parser.raise_error(f"expected a number for {what}")
    return -float(v) if neg else float(v)


def format_float(v: float) -> str:
    """Shortest text that parses back to `v`; MLIR float literals need a '.'."""
    if math.isinf(v):
        return "-inf" if v < 0 else "inf"
    text = repr(float(v))
    if "." not in text:
        mantissa, _, exponent = text.partition("e")
        text = f"{mantissa}.0" + (f"e{exponent}" if exponent else "")
    return text


def _check_number(op_name: str, what: str, attr: FloatAttr | None) -> None:
    if attr is not None and math.isnan(attr.value.data):
        raise VerifyException(f"{op_name}: {what} must be a number, got NaN")


def _check_finite(op_name: str, what: str, attr: FloatAttr | None) -> None:
    """A scale must be finite: inf times a score is inf or NaN, never a softmax."""
    _check_number(op_name, what, attr)
    if attr is not None and math.isinf(attr.value.data):
        raise VerifyException(f"{op_name}: {what} must be a finite number, got {attr.value.data}")


INT64_MAX = 2**63 - 1  # sizes and element counts are 64-bit integers in every level below


# --------------------------------------------------------------------------------------
# Ops
# --------------------------------------------------------------------------------------


@irdl_op_definition
class ContractOp(NcdOp):
    """Multiply two tensors and sum over the listed axes, which both must have.

    Axes named in only one operand, and shared axes not listed, are kept (a shared one
    is a batch axis). The result lists the kept axes in any order; the order is the
    result's memory order. Accumulation is in f32; the result has the operands' element
    type (rounded) or f32 (the accumulator kept, as attention keeps its scores).

        %s = ncd.contract %q, %k over [d] : !ncd.tensor<i=64, d=32 : bf16>,
               !ncd.tensor<j=64, d=32 : bf16> -> !ncd.tensor<i=64, j=64 : bf16>
    """

    name = "ncd.contract"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    over = prop_def(ArrayAttr[StringAttr])
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, lhs: SSAValue, rhs: SSAValue, over: Sequence[str], result_type: Attribute):
        super().__init__(operands=[lhs, rhs], properties={"over": _str_array(over)}, result_types=[result_type])

    @property
    def over_axes(self) -> tuple[str, ...]:
        return tuple(a.data for a in self.over.data)

    def expected_shape(self) -> dict[str, int]:
        lt, rt = _tensor(self.lhs, "lhs"), _tensor(self.rhs, "rhs")
        merged = _merge_axes(self.name, [("the lhs", lt), ("the rhs", rt)])
        seen: set[str] = set()
        for a in self.over_axes:
            if a in seen:
                raise VerifyException(f"{self.name}: axis '{a}' is listed twice in 'over'")
            seen.add(a)
            for label, t in (("lhs", lt), ("rhs", rt)):
                if a not in t.shape:
                    raise VerifyException(
                        f"{self.name}: cannot contract over axis '{a}': the {label} {_fmt_shape(t.shape)} has no such axis"
                    )
        return {a: s for a, s in merged.items() if a not in seen}

    def verify_(self) -> None:
        lt, rt = _tensor(self.lhs, "lhs"), _tensor(self.rhs, "rhs")
        if lt.element_type != rt.element_type:
            raise VerifyException(f"{self.name}: operand element types differ ({lt.element_type} and {rt.element_type}); cast one first")
        _check_result(self.name, _tensor(self.result, "result"), self.expected_shape(), lt.element_type, or_f32=True)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list([self.lhs, self.rhs], printer.print_operand)
        printer.print_string(" over ")
        _print_axis_list(printer, self.over_axes)
        self._print_tail(printer, [self.lhs, self.rhs])

    @classmethod
    def parse(cls, parser: Parser) -> ContractOp:
        operands = _parse_operands(parser, 2)
        parser.parse_keyword("over")
        over = _parse_axis_list(parser)
        (lhs, rhs), rt, attrs = cls._parse_tail(parser, operands)
        op = cls(lhs, rhs, over, rt)
        op.attributes.update(attrs)
        return op


MAP_UNARY = ("exp", "exp2", "log2", "neg", "sqrt", "scale", "cast")
MAP_BINARY = ("add", "sub", "mul", "div", "max", "ge")
MAP_FNS = MAP_UNARY + MAP_BINARY


def map_arity(fn: str, constant: bool) -> int:
    """The tensor operands of a map: one for a unary function or a binary one whose second
    operand is the constant `by` (`ncd.map max %h by 0.0`: relu), else two."""
    return 1 if fn in MAP_UNARY or constant else 2


@irdl_op_definition
class MapOp(NcdOp):
    """An elementwise function of one or two tensors, broadcast by axis name.

    Unary: exp, exp2, log2, neg, sqrt, scale (by the constant `by`), cast (to the result's
    element type). Binary: add, sub, mul, div, max, and ge (1.0 where the first operand
    is at least the second, else 0.0: the masks of max's gradient); each operand is
    broadcast over the axes it lacks, so the result has the union of the operands' axes.
    A binary function of one tensor takes the constant `by` as its second operand
    (`max %h by 0.0`: relu; `ge %h by 0.0`: where relu passes its input).

        %e = ncd.map exp %x : !ncd.tensor<i=64, j=64 : f32> -> !ncd.tensor<i=64, j=64 : f32>
        %y = ncd.map sub %x, %m : !ncd.tensor<i=64, j=64 : f32>, !ncd.tensor<i=64 : f32>
               -> !ncd.tensor<i=64, j=64 : f32>
        %z = ncd.map scale %x by 0.125 : !ncd.tensor<i=4 : f32> -> !ncd.tensor<i=4 : f32>
        %r = ncd.map max %x by 0.0 : !ncd.tensor<i=4 : f32> -> !ncd.tensor<i=4 : f32>
    """

    name = "ncd.map"
    inputs = var_operand_def(TensorType)
    fn = prop_def(StringAttr)
    by = opt_prop_def(FloatAttr[Float32Type])
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, fn: str, inputs: Sequence[SSAValue], result_type: Attribute, by: float | None = None):
        props: dict[str, Attribute] = {"fn": StringAttr(fn)}
        if by is not None:
            props["by"] = FloatAttr(by, f32)
        super().__init__(operands=[list(inputs)], properties=props, result_types=[result_type])

    def verify_(self) -> None:
        fn = self.fn.data
        if fn not in MAP_FNS:
            raise VerifyException(f"{self.name}: unknown function '{fn}'; expected one of {', '.join(MAP_FNS)}")
        arity = map_arity(fn, self.by is not None)
        if len(self.inputs) != arity:
            raise VerifyException(f"{self.name} {fn} takes {arity} operand(s)" + (" and 'by'" if self.by is not None else "")
                                  + f", got {len(self.inputs)}")
        if fn == "scale" and self.by is None or fn in MAP_UNARY and fn != "scale" and self.by is not None:
            raise VerifyException(f"{self.name}: 'by' is required for scale" if fn == "scale" else
                                  f"{self.name} {fn}: 'by' is for scale and, in place of a second operand, for {', '.join(MAP_BINARY)}")
        _check_number(self.name, "the constant 'by'", self.by)
        ts = [_tensor(v, f"operand #{i}") for i, v in enumerate(self.inputs)]
        if arity == 2 and ts[0].element_type != ts[1].element_type:
            raise VerifyException(f"{self.name} {fn}: operand element types differ ({ts[0].element_type} and {ts[1].element_type}); cast one first")
        expected = _merge_axes(f"{self.name} {fn}", [(f"operand #{i}", t) for i, t in enumerate(ts)])
        result = _tensor(self.result, "result")
        et = result.element_type if fn == "cast" else ts[0].element_type
        _check_result(f"{self.name} {fn}", result, expected, et)

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.fn.data} ")
        printer.print_list(self.inputs, printer.print_operand)
        if self.by is not None:
            printer.print_string(f" by {format_float(self.by.value.data)}")
        self._print_tail(printer, list(self.inputs))

    @classmethod
    def parse(cls, parser: Parser) -> MapOp:
        pos = parser.pos
        fn = parser.parse_identifier(" (the map function)")
        if fn not in MAP_FNS:
            parser.raise_error(f"unknown ncd.map function '{fn}'; expected one of {', '.join(MAP_FNS)}", pos, parser.pos)
        operands = _parse_operands(parser)
        by = _parse_float(parser, "the scale factor") if parser.parse_optional_keyword("by") else None
        inputs, rt, attrs = cls._parse_tail(parser, operands)
        op = cls(fn, inputs, rt, by)
        op.attributes.update(attrs)
        return op


REDUCE_KINDS = ("sum", "max")


@irdl_op_definition
class ReduceOp(NcdOp):
    """Sum or max along the listed axes, which the result no longer has.

        %m = ncd.reduce max %s along [j] : !ncd.tensor<i=64, j=64 : f32> -> !ncd.tensor<i=64 : f32>
    """

    name = "ncd.reduce"
    input = operand_def(TensorType)
    kind = prop_def(StringAttr)
    along = prop_def(ArrayAttr[StringAttr])
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, kind: str, input: SSAValue, along: Sequence[str], result_type: Attribute):
        super().__init__(operands=[input], properties={"kind": StringAttr(kind), "along": _str_array(along)}, result_types=[result_type])

    @property
    def along_axes(self) -> tuple[str, ...]:
        return tuple(a.data for a in self.along.data)

    def verify_(self) -> None:
        if self.kind.data not in REDUCE_KINDS:
            raise VerifyException(f"{self.name}: unknown reduction '{self.kind.data}'; expected one of {', '.join(REDUCE_KINDS)}")
        t = _tensor(self.input, "input")
        seen: set[str] = set()
        for a in self.along_axes:
            if a in seen:
                raise VerifyException(f"{self.name}: axis '{a}' is listed twice in 'along'")
            seen.add(a)
            if a not in t.shape:
                raise VerifyException(f"{self.name}: cannot reduce along axis '{a}': the input {_fmt_shape(t.shape)} has no such axis")
        expected = {a: s for a, s in t.shape.items() if a not in seen}
        _check_result(f"{self.name} {self.kind.data}", _tensor(self.result, "result"), expected, t.element_type)

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.kind.data} ")
        printer.print_operand(self.input)
        printer.print_string(" along ")
        _print_axis_list(printer, self.along_axes)
        self._print_tail(printer, [self.input])

    @classmethod
    def parse(cls, parser: Parser) -> ReduceOp:
        pos = parser.pos
        kind = parser.parse_identifier(" (sum or max)")
        if kind not in REDUCE_KINDS:
            parser.raise_error(f"unknown ncd.reduce kind '{kind}'; expected one of {', '.join(REDUCE_KINDS)}", pos, parser.pos)
        operands = _parse_operands(parser, 1)
        parser.parse_keyword("along")
        along = _parse_axis_list(parser)
        (inp,), rt, attrs = cls._parse_tail(parser, operands)
        op = cls(kind, inp, along, rt)
        op.attributes.update(attrs)
        return op


@irdl_op_definition
class RenameOp(NcdOp):
    """The same tensor with some of its axes named anew: no data moves, and the axes keep
    their order and sizes. A diagram that multiplies a tensor by itself, or by another
    that shares an axis name it must keep apart (K^T K, K^T V over the keys, both with a
    head dim `d`), names one side's axis anew first.

        %v2 = ncd.rename %v [d -> e] : !ncd.tensor<j=64, d=32 : bf16> -> !ncd.tensor<j=64, e=32 : bf16>
    """

    name = "ncd.rename"
    input = operand_def(TensorType)
    old = prop_def(ArrayAttr[StringAttr])
    new = prop_def(ArrayAttr[StringAttr])
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue, renames: Mapping[str, str], result_type: Attribute | None = None):
        if result_type is None:
            t = _tensor(input, "input")
            result_type = TensorType({renames.get(a, a): s for a, s in t.shape.items()}, t.element_type)
        super().__init__(operands=[input], properties={"old": _str_array(renames), "new": _str_array(renames.values())},
                         result_types=[result_type])

    @property
    def renames(self) -> dict[str, str]:
        return {o.data: n.data for o, n in zip(self.old.data, self.new.data)}

    def verify_(self) -> None:
        t = _tensor(self.input, "input")
        old, new = [a.data for a in self.old.data], [a.data for a in self.new.data]
        if len(old) != len(new) or not old:
            raise VerifyException(f"{self.name}: give one or more renames 'old -> new'")
        problem = axis_names_problem(new, new, "new names")
        if problem:
            raise VerifyException(f"{self.name}: {problem}")
        for a in old:
            if a not in t.shape:
                raise VerifyException(f"{self.name}: cannot rename axis '{a}': the input {_fmt_shape(t.shape)} has no such axis")
        if len(set(old)) != len(old):
            raise VerifyException(f"{self.name}: an axis is renamed twice")
        renames = dict(zip(old, new))
        names = [renames.get(a, a) for a in t.shape]
        if len(set(names)) != len(names):
            clash = next(n for n in names if names.count(n) > 1)
            raise VerifyException(f"{self.name}: axis '{clash}' would name two axes of {_fmt_shape(t.shape)}")
        result = _tensor(self.result, "result")
        expected = {renames.get(a, a): s for a, s in t.shape.items()}
        if list(result.shape.items()) != list(expected.items()) or result.element_type != t.element_type:
            raise VerifyException(f"{self.name}: the result must be {_fmt_shape(expected)} : {t.element_type}, the input's axes "
                                  f"renamed in their order; got {_fmt_shape(result.shape)} : {result.element_type}")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.input)
        printer.print_string(" [" + ", ".join(f"{o} -> {n}" for o, n in self.renames.items()) + "]")
        self._print_tail(printer, [self.input])

    @classmethod
    def parse(cls, parser: Parser) -> RenameOp:
        operands = _parse_operands(parser, 1)

        def pair() -> tuple[str, str]:
            old = parser.parse_identifier(" (the axis renamed)")
            parser.parse_punctuation("->", " between the old and the new axis name")
            return old, parser.parse_identifier(" (the new axis name)")

        pairs = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, pair)
        (inp,), rt, attrs = cls._parse_tail(parser, operands)
        op = cls(inp, dict(pairs), rt)
        if len(dict(pairs)) != len(pairs):
            op.old, op.new = _str_array(o for o, _ in pairs), _str_array(n for _, n in pairs)
        op.attributes.update(attrs)
        return op


class AlongOneAxisOp(NcdOp):
    """Base of the normalisations along a single axis; the result has the input's type."""

    input = operand_def(TensorType)
    axis = prop_def(StringAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def _verify_along(self) -> TensorType:
        t = _tensor(self.input, "input")
        a = self.axis.data
        if a not in t.shape:
            raise VerifyException(f"{self.name}: cannot normalise along axis '{a}': the input {_fmt_shape(t.shape)} has no such axis")
        _check_result(self.name, _tensor(self.result, "result"), t.shape, t.element_type)
        return t

    def verify_(self) -> None:
        self._verify_along()


class ScaledAlongOneAxis:
    """What the ops along one axis with an optional scale share (`ncd.softmax`,
    `ncd.logsumexp`): the constructor, the scale's value, and the syntax
    `%r = ncd.<op> %x along <axis> [scale <c>] : <type> -> <type>`."""

    SCALE_WHAT: ClassVar[str] = "the scale"  # how a parse error names the scale

    def __init__(self, input: SSAValue, axis: str, result_type: Attribute, scale: float | None = None):
        props: dict[str, Attribute] = {"axis": StringAttr(axis)}
        if scale is not None:
            props["scale"] = FloatAttr(scale, f32)
        super().__init__(operands=[input], properties=props, result_types=[result_type])  # type: ignore[call-arg]

    @property
    def scale_value(self) -> float:
        return 1.0 if self.scale is None else self.scale.value.data  # type: ignore[attr-defined]

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.input)  # type: ignore[attr-defined]
        printer.print_string(f" along {self.axis.data}")  # type: ignore[attr-defined]
        if self.scale is not None:  # type: ignore[attr-defined]
            printer.print_string(f" scale {format_float(self.scale.value.data)}")  # type: ignore[attr-defined]
        self._print_tail(printer, [self.input])  # type: ignore[attr-defined]

    @classmethod
    def parse(cls, parser: Parser):
        operands = _parse_operands(parser, 1)
        parser.parse_keyword("along")
        axis = parser.parse_identifier(" (an axis name)")
        scale = _parse_float(parser, cls.SCALE_WHAT) if parser.parse_optional_keyword("scale") else None
        (inp,), rt, attrs = cls._parse_tail(parser, operands)  # type: ignore[attr-defined]
        op = cls(inp, axis, rt, scale)
        op.attributes.update(attrs)  # type: ignore[attr-defined]
        return op


@irdl_op_definition
class SoftmaxOp(ScaledAlongOneAxis, AlongOneAxisOp):
    """Softmax along one axis of `scale * x` (scale defaults to 1), computed in f32.

        %p = ncd.softmax %s along j scale 0.125 : !ncd.tensor<i=64, j=64 : f32>
               -> !ncd.tensor<i=64, j=64 : f32>
    """

    name = "ncd.softmax"
    scale = opt_prop_def(FloatAttr[Float32Type])
    SCALE_WHAT: ClassVar[str] = "the softmax scale"

    def verify_(self) -> None:
        _check_finite(self.name, "the scale", self.scale)
        self._verify_along()




@irdl_op_definition
class L2NormOp(AlongOneAxisOp):
    """Divide by the L2 norm along one axis: x / sqrt(sum_axis x^2), computed in f32.

    Spherical attention puts this in place of softmax on the scores.

        %p = ncd.l2norm %s along j : !ncd.tensor<i=64, j=64 : f32> -> !ncd.tensor<i=64, j=64 : f32>
    """

    name = "ncd.l2norm"

    def __init__(self, input: SSAValue, axis: str, result_type: Attribute):
        super().__init__(operands=[input], properties={"axis": StringAttr(axis)}, result_types=[result_type])

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.input)
        printer.print_string(f" along {self.axis.data}")
        self._print_tail(printer, [self.input])

    @classmethod
    def parse(cls, parser: Parser) -> L2NormOp:
        operands = _parse_operands(parser, 1)
        parser.parse_keyword("along")
        axis = parser.parse_identifier(" (an axis name)")
        (inp,), rt, attrs = cls._parse_tail(parser, operands)
        op = cls(inp, axis, rt)
        op.attributes.update(attrs)
        return op


@irdl_op_definition
class LogSumExpOp(ScaledAlongOneAxis, NcdOp):
    """The log-sum-exp of `scale * x` along one axis (scale defaults to 1), in f32 with
    the natural log: lse = log(sum_axis exp(scale * x)). The result has the input's other
    axes and element type f32; a row of -inf gives -inf.

    It is the row statistic a softmax saves for its gradient (`ncd-grad{residuals=true}`):
    softmax(scale * x) = exp(scale * x - lse), so the backward recomputes the
    probabilities from the scores without reducing along the axis again.

        %lse = ncd.logsumexp %s along j scale 0.125 : !ncd.tensor<i=64, j=64 : bf16>
                 -> !ncd.tensor<i=64 : f32>
    """

    name = "ncd.logsumexp"
    SCALE_WHAT: ClassVar[str] = "the log-sum-exp scale"
    input = operand_def(TensorType)
    axis = prop_def(StringAttr)
    scale = opt_prop_def(FloatAttr[Float32Type])
    result = result_def(TensorType)
    traits = traits_def(Pure())


    def verify_(self) -> None:
        _check_finite(self.name, "the scale", self.scale)
        t = _tensor(self.input, "input")
        a = self.axis.data
        if a not in t.shape:
            raise VerifyException(f"{self.name}: cannot reduce along axis '{a}': the input {_fmt_shape(t.shape)} has no such axis")
        result = _tensor(self.result, "result")
        if result.element_type != f32:
            raise VerifyException(f"{self.name}: the result is a row statistic in f32, got element type {result.element_type}")
        _check_result(self.name, result, {b: s for b, s in t.shape.items() if b != a}, f32)



@irdl_op_definition
class ConstantOp(NcdOp):
    """A tensor whose every element is `value` (the zero cotangent of an argument that no
    result depends on, in `ncd-grad`'s gradients).

        %z = ncd.constant 0.0 : !ncd.tensor<i=64, d=32 : f32>
    """

    name = "ncd.constant"
    value = prop_def(FloatAttr[Float32Type])
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, value: float, result_type: Attribute):
        super().__init__(properties={"value": FloatAttr(value, f32)}, result_types=[result_type])

    def verify_(self) -> None:
        _check_number(self.name, "the value", self.value)
        _tensor(self.result, "result")

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {format_float(self.value.value.data)}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        value = _parse_float(parser, "the constant's value")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":", " before the result type")
        op = cls(value, parser.parse_type())
        op.attributes.update(attrs)
        return op


class FillOutsideOp(NcdOp):
    """Base of the masks: keep the elements where a condition on their positions holds and
    put `fill` in the others; the result has the input's type. On a tile (the hbm level
    and below) `at [...]` gives the positions at which the tile starts along the axes the
    condition reads."""

    input = operand_def(TensorType)
    offsets = var_operand_def(IndexType)  # none, or where a tile starts along the axes compared
    fill = prop_def(FloatAttr[Float32Type])
    result = result_def(TensorType)
    traits = traits_def(Pure())

    @property
    def compared_axes(self) -> tuple[str, ...]:
        """The axes whose positions the condition reads, in the order of `at [...]`."""
        raise NotImplementedError

    def _verify_fill(self, compared: Sequence[tuple[str, str]]) -> TensorType:
        """`compared` names the axes the condition reads: (role, axis) pairs."""
        t = _tensor(self.input, "input")
        for role, a in compared:
            if a not in t.shape:
                raise VerifyException(f"{self.name}: the {role} axis '{a}' is not an axis of the input {_fmt_shape(t.shape)}")
        _check_number(self.name, "the fill value", self.fill)
        if len(self.offsets) not in (0, len(compared)):
            what = "the tile's rows and columns start" if len(compared) == 2 else "the tile starts"
            raise VerifyException(f"{self.name}: takes no offsets or {len(compared)} (where {what}), got {len(self.offsets)}")
        _check_result(self.name, _tensor(self.result, "result"), t.shape, t.element_type)
        return t

    def _print_fill(self, printer: Printer) -> None:
        printer.print_string(f" fill {format_float(self.fill.value.data)}")
        if self.offsets:
            printer.print_string(" at [")
            printer.print_list(self.offsets, printer.print_operand)
            printer.print_string("]")
        self._print_tail(printer, [self.input])

    @staticmethod
    def _parse_fill(parser: Parser) -> tuple[float, list[SSAValue]]:
        parser.parse_keyword("fill")
        fill = _parse_float(parser, "the fill value")
        offsets: list[SSAValue] = []
        if parser.parse_optional_keyword("at") is not None:
            pos = parser.pos
            unresolved = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_unresolved_operand)
            offsets = parser.resolve_operands(unresolved, [IndexType()] * len(unresolved), pos)
        return fill, offsets


MASK_KINDS = ("causal",)


@irdl_op_definition
class MaskOp(FillOutsideOp):
    """Keep the elements where the row index is at least the column index, fill the rest.

    `causal` compares positions along two axes of equal meaning (query `i`, key `j`):
    element (i, j) is kept when i >= j, replaced by `fill` otherwise. On a tile (the hbm
    level and below), `at [%i0, %j0]` says where the tile's rows and columns start.

        %m = ncd.mask causal %s keep i >= j fill -inf : !ncd.tensor<i=64, j=64 : f32>
               -> !ncd.tensor<i=64, j=64 : f32>
    """

    name = "ncd.mask"
    kind = prop_def(StringAttr)
    row = prop_def(StringAttr)
    col = prop_def(StringAttr)

    def __init__(self, input: SSAValue, row: str, col: str, fill: float, result_type: Attribute, kind: str = "causal",
                 offsets: Sequence[SSAValue] = ()):
        super().__init__(
            operands=[input, list(offsets)],
            properties={"kind": StringAttr(kind), "row": StringAttr(row), "col": StringAttr(col), "fill": FloatAttr(fill, f32)},
            result_types=[result_type],
        )

    @property
    def compared_axes(self) -> tuple[str, ...]:
        return (self.row.data, self.col.data)

    def verify_(self) -> None:
        if self.kind.data not in MASK_KINDS:
            raise VerifyException(f"{self.name}: unknown mask '{self.kind.data}'; expected one of {', '.join(MASK_KINDS)}")
        if self.row.data == self.col.data:
            raise VerifyException(f"{self.name}: the row and column axes must differ, both are '{self.row.data}'")
        self._verify_fill([("row", self.row.data), ("column", self.col.data)])

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.kind.data} ")
        printer.print_operand(self.input)
        printer.print_string(f" keep {self.row.data} >= {self.col.data}")
        self._print_fill(printer)

    @classmethod
    def parse(cls, parser: Parser) -> MaskOp:
        pos = parser.pos
        kind = parser.parse_identifier(" (the mask kind)")
        if kind not in MASK_KINDS:
            parser.raise_error(f"unknown ncd.mask kind '{kind}'; expected one of {', '.join(MASK_KINDS)}", pos, parser.pos)
        operands = _parse_operands(parser, 1)
        parser.parse_keyword("keep")
        row = parser.parse_identifier(" (the row axis)")
        parser.parse_punctuation(">", " (the mask keeps row >= column)")
        parser.parse_punctuation("=", " (the mask keeps row >= column)")
        col = parser.parse_identifier(" (the column axis)")
        fill, offsets = cls._parse_fill(parser)
        (inp,), rt, attrs = cls._parse_tail(parser, operands)
        op = cls(inp, row, col, fill, rt, kind, offsets)
        op.attributes.update(attrs)
        return op


@irdl_op_definition
class MaskBoundOp(FillOutsideOp):
    """Keep the elements whose position along one axis is below `bound`, fill the rest.

    A tile that overhangs the end of an axis holds positions past it (`hbm.load` reads
    them as zero); before a reduction along a streamed axis, `ncd-to-hbm` fills them with
    what the reduction ignores (-inf before a softmax or a max, 0 before a sum). On a
    tile, `at [%j0]` says where the tile starts along the axis.

        %t = ncd.mask_bound %s keep j < 200 fill -inf at [%j0] : !ncd.tensor<i=64, j=64 : f32>
               -> !ncd.tensor<i=64, j=64 : f32>
    """

    name = "ncd.mask_bound"
    axis = prop_def(StringAttr)
    bound = prop_def(IntAttr)

    def __init__(self, input: SSAValue, axis: str, bound: int, fill: float, result_type: Attribute, offsets: Sequence[SSAValue] = ()):
        super().__init__(
            operands=[input, list(offsets)],
            properties={"axis": StringAttr(axis), "bound": IntAttr(bound), "fill": FloatAttr(fill, f32)},
            result_types=[result_type],
        )

    @property
    def compared_axes(self) -> tuple[str, ...]:
        return (self.axis.data,)

    def verify_(self) -> None:
        if self.bound.data < 0:
            raise VerifyException(f"{self.name}: the bound must not be negative, got {self.bound.data}")
        self._verify_fill([("bounded", self.axis.data)])

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.input)
        printer.print_string(f" keep {self.axis.data} < {self.bound.data}")
        self._print_fill(printer)

    @classmethod
    def parse(cls, parser: Parser) -> MaskBoundOp:
        operands = _parse_operands(parser, 1)
        parser.parse_keyword("keep")
        axis = parser.parse_identifier(" (the bounded axis)")
        parser.parse_punctuation("<", " (the mask keeps axis < bound)")
        bound = parser.parse_integer(allow_boolean=False, allow_negative=True, context_msg=" (the bound)")
        fill, offsets = cls._parse_fill(parser)
        (inp,), rt, attrs = cls._parse_tail(parser, operands)
        op = cls(inp, axis, bound, fill, rt, offsets)
        op.attributes.update(attrs)
        return op


NCD = Dialect("ncd", [ContractOp, MapOp, ReduceOp, RenameOp, SoftmaxOp, L2NormOp, LogSumExpOp, ConstantOp, MaskOp, MaskBoundOp], [TensorType])

__all__ = [
    "ELEMENT_TYPES",
    "NCD",
    "ConstantOp",
    "ContractOp",
    "FillOutsideOp",
    "L2NormOp",
    "LogSumExpOp",
    "MapOp",
    "MaskBoundOp",
    "MaskOp",
    "NamedAxesType",
    "ReduceOp",
    "RenameOp",
    "SoftmaxOp",
    "TensorType",
    "element_type_name",
    "format_float",
]
