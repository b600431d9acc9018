"""Fixes to the xDSL release napkin-ir pins (0.74), applied when `napkin_ir` is imported.

Each fix names what is wrong in xDSL, and is kept as small as the fault: it replaces one
attribute and leaves the accepted language and the diagnostics as xDSL has them. Every
napkin tool parses through xDSL's `Parser`, so the fixes must be in place before any text
is parsed; `napkin_ir/__init__.py` applies them.
"""

from __future__ import annotations

import re

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


def apply() -> None:
    MLIRLexer._unescaped_characters_regex = _STRING_LITERAL
