"""Attributes of `ptx.kernel`: what its PTX declares besides instructions, and what its
launch needs, each typed and checked where it is built or parsed rather than spelled as
a string for the printer or the runtime to split.

- `#ptx.shared<"smem", bytes = 4096, align = 128>`: a static shared array, printed as
  `.shared .align 128 .b8 smem[4096];`.
- `#ptx.tma_box<"a", box = 128x64, swizzle = "128B">`: the box (outermost dimension
  first) and swizzle that the tensor map passed for the kernel's argument `a` must be
  encoded with; the runtime's launch contract reads it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

from xdsl.dialects.builtin import ArrayAttr, IntAttr, StringAttr
from xdsl.ir import Attribute, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

T = TypeVar("T")
_PTX_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*$")
SWIZZLES = ("none", "32B", "64B", "128B")  # as cuTensorMapEncodeTiled names them, without the prefix


def _keyword(parser: AttrParser, key: str, parse: Callable[[], T]) -> T:
    """`, key = value`, the value read by `parse`."""
    parser.parse_punctuation(",")
    parser.parse_keyword(key)
    parser.parse_punctuation("=")
    return parse()


def _keyword_int(parser: AttrParser, key: str) -> int:
    return _keyword(parser, key, lambda: parser.parse_integer(allow_boolean=False, allow_negative=True, context_msg=f" ({key})"))


def _close(cls: type[ParametrizedAttribute], parser: AttrParser, start: int, problem: str | None) -> None:
    """Refuse what was read from `start` on if it has a problem, else read the `>`."""
    if problem:
        parser.raise_error(f"#{cls.name}: {problem}", start, parser.pos)
    parser.parse_punctuation(">", f" to close #{cls.name}")


class _CheckedAttr(ParametrizedAttribute):
    """Base of the attributes below: `problem` of its own parameters fails verification."""

    def problem_of_parameters(self) -> str | None:
        raise NotImplementedError

    def verify(self) -> None:
        problem = self.problem_of_parameters()
        if problem:
            raise VerifyException(f"#{self.name}: {problem}")


@irdl_attr_definition
class SharedAttr(_CheckedAttr):
    """A static shared-memory array of a kernel: `#ptx.shared<"smem", bytes = 4096, align = 128>`."""

    name = "ptx.shared"
    sym: StringAttr
    size: IntAttr
    align: IntAttr

    def __init__(self, sym: str, size: int, align: int):
        super().__init__(StringAttr(sym), IntAttr(size), IntAttr(align))

    @staticmethod
    def problem(sym: str, size: int, align: int) -> str | None:
        if not _PTX_NAME.match(sym):
            return f"'{sym}' is not a PTX name"
        if size <= 0:
            return f"'{sym}' has {size} bytes; a shared array has at least 1"
        if align <= 0 or align & (align - 1):
            return f"'{sym}' is aligned to {align}; the alignment is a power of two"
        return None

    def problem_of_parameters(self) -> str | None:
        return self.problem(self.sym.data, self.size.data, self.align.data)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_string_literal(self.sym.data)
        printer.print_string(f", bytes = {self.size.data}, align = {self.align.data}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<", f" to open #{cls.name}")
        start = parser.pos
        sym = parser.parse_str_literal(" (the shared array's name)")
        size, align = _keyword_int(parser, "bytes"), _keyword_int(parser, "align")
        _close(cls, parser, start, cls.problem(sym, size, align))
        return StringAttr(sym), IntAttr(size), IntAttr(align)


@irdl_attr_definition
class TmaBoxAttr(_CheckedAttr):
    """How the tensor map of one kernel argument is encoded:
    `#ptx.tma_box<"a", box = 128x64, swizzle = "128B">` (the box outermost first)."""

    name = "ptx.tma_box"
    arg: StringAttr
    box: ArrayAttr[IntAttr]
    swizzle: StringAttr

    def __init__(self, arg: str, box: Sequence[int], swizzle: str):
        super().__init__(StringAttr(arg), ArrayAttr([IntAttr(n) for n in box]), StringAttr(swizzle))

    @property
    def dims(self) -> tuple[int, ...]:
        return tuple(n.data for n in self.box.data)

    @staticmethod
    def problem(arg: str, box: Sequence[int], swizzle: str) -> str | None:
        if not 1 <= len(box) <= 5 or min(box) <= 0:
            return f"the box of '{arg}' is {'x'.join(map(str, box)) or 'empty'}; a box has 1 to 5 positive dimensions"
        if swizzle not in SWIZZLES:
            return f"'{arg}' has swizzle \"{swizzle}\"; expected one of {', '.join(SWIZZLES)}"
        return None

    def problem_of_parameters(self) -> str | None:
        return self.problem(self.arg.data, self.dims, self.swizzle.data)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_string_literal(self.arg.data)
        printer.print_string(f", box = {'x'.join(map(str, self.dims))}, swizzle = ")
        printer.print_string_literal(self.swizzle.data)
        printer.print_string(">")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<", f" to open #{cls.name}")
        start = parser.pos
        arg = parser.parse_str_literal(" (the argument's name)")
        box = _keyword(parser, "box", parser.parse_dimension_list)
        swizzle = _keyword(parser, "swizzle", lambda: parser.parse_str_literal(f" (one of {', '.join(SWIZZLES)})"))
        _close(cls, parser, start, cls.problem(arg, box, swizzle))
        return StringAttr(arg), ArrayAttr([IntAttr(n) for n in box]), StringAttr(swizzle)


__all__ = ["SWIZZLES", "SharedAttr", "TmaBoxAttr"]
