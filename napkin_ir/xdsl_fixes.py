"""Fixes to the xDSL release napkin-ir pins (0.74), applied when `napkin_ir` is imported.

Each fix names what is wrong in xDSL, and is kept as small as the fault: it replaces one
attribute and leaves the accepted language as xDSL has it, and the diagnostics too but
where the fault is the diagnostic. Every
napkin tool parses through xDSL's `Parser`, so the fixes must be in place before any text
is parsed; `napkin_ir/__init__.py` applies them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from xdsl.ir import Attribute, Operation
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


def apply() -> None:
    MLIRLexer._unescaped_characters_regex = _STRING_LITERAL
    OpDef.verify = _verify  # type: ignore[method-assign]
    FormatProgram.resolve_constraint_variables = _resolve_constraint_variables  # type: ignore[method-assign]
