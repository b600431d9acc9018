"""Fixes to the xDSL release napkin-ir pins (0.74), applied when this module is imported:
by `napkin_ir` at once where xDSL was imported first, else the moment xDSL is imported.

Each fix names what is wrong in xDSL, and is kept as small as the fault: it replaces one
attribute and leaves the accepted language as xDSL has it, and the diagnostics too but
where the fault is the diagnostic. Every
napkin tool parses through xDSL's `Parser`, so the fixes must be in place before any text
is parsed; `napkin_ir/__init__.py` sees to it (`import napkin_ir` itself imports no xDSL).
"""

from __future__ import annotations

import io
import re
import warnings
import weakref
from collections.abc import Mapping

from xdsl.ir import Attribute, Operation
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.universe import Universe
from xdsl.utils.lexer import Span
from xdsl.irdl import OpDef
from xdsl.irdl.declarative_assembly_format import FormatProgram, ParsingState
from xdsl.irdl.constraints import VerificationContext
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.mlir_lexer import MLIRLexer

# xDSL 0.74 lexes a string literal with `"(?:[^"\\\n\v\f]+|\\(?:...))*"`: a run of plain
# characters inside a repeated group. When the literal is not closed before the end of the
# line (a stray `"` typed into a type or an op name), the regex engine tries every way of
# cutting the rest of the line into runs before it gives up, 2**n ways for n characters:
# 20 characters take 30 ms, 30 characters half a minute, a line of an attention example
# longer than anyone waits. The possessive forms (`++`, `*+`, Python 3.11) never give back
# what a run has taken, so a failing match costs one pass over the line. They accept the
# same strings: a run stops only at a character no run may hold, and a closing `"` can
# never be found by giving back plain characters or a whole escape.
_STRING_LITERAL = re.compile(r'"(?:[^"\\\n\v\f]++|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')



# xDSL 0.74 reports a property or attribute of the wrong type by the value alone
# (`["m:8"] should be of base attribute hbm.labels`), naming neither the op nor the field
# that holds it, both when it parses an op's custom syntax and when it verifies an op.
# When either fails, this looks for the property or attribute whose own constraint fails
# and names the op and the field; anything else is reported as xDSL reports it.
_OP_DEF_VERIFY = OpDef.verify
_RESOLVE_CONSTRAINTS = FormatProgram.resolve_constraint_variables


def _naming_the_field(op_def: OpDef, properties: Mapping[str, Attribute], attributes: Mapping[str, Attribute],
                      error: VerifyException) -> VerifyException:
    for kind, defs, values in (("property", op_def.properties, properties), ("attribute", op_def.attributes, attributes)):
        for name, field in defs.items():
            if name not in values:
                continue
            try:
                field.constr.verify(values[name], VerificationContext())
            except VerifyException:
                return VerifyException(f"{op_def.name}: {kind} '{name}': {error}")
    return error


def _verify(self: OpDef, op: Operation) -> None:
    try:
        _OP_DEF_VERIFY(self, op)
    except VerifyException as e:
        raise _naming_the_field(self, op.properties, op.attributes, e) from None


def _resolve_constraint_variables(self: FormatProgram, state: ParsingState, op_def: OpDef) -> None:
    try:
        _RESOLVE_CONSTRAINTS(self, state, op_def)
    except VerifyException as e:
        raise _naming_the_field(op_def, state.properties, state.attributes, e) from None


# xDSL 0.74 keeps no source position for the ops it parses, and a verifier error prints the
# whole module in generic form with a caret under the op. The parser here remembers where
# each op began (beside the IR, which stays as it was), and an op's `emit_error` names the
# op on the exception it raises, so that a diagnostic can say `file:line:col`, the reason,
# and the op alone in its custom form (`failing_op_text`).
_PARSE_OPERATION = Parser.parse_operation
_EMIT_ERROR = Operation.emit_error
_SOURCE: weakref.WeakKeyDictionary[Operation, Span] = weakref.WeakKeyDictionary()


def _parse_operation(self: Parser, *args, **kwargs) -> Operation:
    start = self._current_token.span
    op = _PARSE_OPERATION(self, *args, **kwargs)
    _SOURCE.setdefault(op, start)
    return op


def _emit_error(self: Operation, message: str, underlying_error: Exception):
    if getattr(underlying_error, "napkin_op", None) is None:
        try:
            underlying_error.napkin_op = self  # type: ignore[attr-defined]
        except AttributeError:  # an exception type with __slots__
            pass
    return _EMIT_ERROR(self, message, underlying_error)


def source_location(op: Operation) -> str | None:
    """`file:line:col` where the parser met `op`, or None for an op a pass made."""
    span = _SOURCE.get(op)
    return None if span is None else str(span.get_location())


def op_text(op: Operation, width: int = 400) -> str:
    """`op` in its custom form, on one line: a region's body elided as `{...}`."""
    out = io.StringIO()
    Printer(stream=out).print_op(op)
    first = out.getvalue().splitlines()[0] if out.getvalue() else op.name
    if op.regions and any(r.blocks for r in op.regions):
        first = first.rstrip() + (" ...}" if first.rstrip().endswith("{") else " ...")
    return first if len(first) <= width else first[: width - 3] + "..."


def failing_op_text(e: BaseException) -> str:
    """A verifier's (or pass's) error as a diagnostic: the failing op's source location,
    the reason, then the op in custom form; the reason alone where no op is known."""
    op = getattr(e, "napkin_op", None)
    reason = str(e).strip()
    if op is None:
        return reason
    where = source_location(op)
    try:
        shown = op_text(op)
    except Exception:  # noqa: BLE001 - an op too broken to print is still reported by its reason
        shown = op.name
    return f"{where + ': ' if where else ''}{reason}\n  {shown}"


# xDSL 0.74 loads every `xdsl.universe` entry point at once, so one plugin that fails to
# import (or is not a Universe, or defines a name another already has) stops every tool
# that asks for the multiverse, napkin's included. This loads each on its own and skips
# the broken ones with a warning naming the plugin and why, once a process.
_WARNED: set[str] = set()


class PluginWarning(UserWarning):
    """An `xdsl.universe` plugin that could not be loaded and was skipped."""


def _skip(name: str, value: str, why: str) -> None:
    if name not in _WARNED:
        _WARNED.add(name)
        warnings.warn(f"the xdsl.universe plugin {name!r} ({value}) is skipped: {why}", PluginWarning, stacklevel=3)


def _get_multiverse() -> Universe:
    from importlib.metadata import entry_points

    dialects: dict = {}
    passes: dict = {}
    targets: dict = {}
    for plugin in sorted(entry_points(group="xdsl.universe"), key=lambda p: p.name):
        try:
            universe = plugin.load()
        except Exception as e:  # noqa: BLE001 - anything a plugin's import raises
            _skip(plugin.name, plugin.value, f"{type(e).__name__}: {e}")
            continue
        if not isinstance(universe, Universe):
            _skip(plugin.name, plugin.value, f"it names a {type(universe).__name__}, not an xdsl.universe.Universe")
            continue
        clashes = [f"{kind} {n!r}" for kind, mine, theirs in (("dialect", universe.all_dialects, dialects),
                                                              ("pass", universe.all_passes, passes),
                                                              ("target", universe.all_targets, targets))
                   for n in mine if n in theirs]
        if clashes:
            _skip(plugin.name, plugin.value, f"it defines {', '.join(clashes)}, which an earlier plugin defines")
            continue
        dialects.update(universe.all_dialects)
        passes.update(universe.all_passes)
        targets.update(universe.all_targets)
    return Universe(all_dialects=dialects, all_passes=passes, all_targets=targets)


def apply() -> None:
    MLIRLexer._unescaped_characters_regex = _STRING_LITERAL
    OpDef.verify = _verify  # type: ignore[method-assign]
    FormatProgram.resolve_constraint_variables = _resolve_constraint_variables  # type: ignore[method-assign]
    Parser.parse_operation = _parse_operation  # type: ignore[method-assign]
    Operation.emit_error = _emit_error  # type: ignore[method-assign]
    Universe.get_multiverse = staticmethod(_get_multiverse)  # type: ignore[method-assign]


apply()  # on import: `napkin_ir` imports this module when xDSL is first imported (or at once if it was)
