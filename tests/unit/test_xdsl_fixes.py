"""napkin's fixes to xDSL: each keeps what xDSL accepts and removes only the fault."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.utils.mlir_lexer import MLIRLexer

import napkin_ir  # noqa: F401 - importing napkin_ir applies the fixes
from napkin_ir import xdsl_fixes

# xDSL 0.74's own pattern, exponential on a string literal the line does not close
XDSL_STRING_LITERAL = re.compile(r'"(?:[^"\\\n\v\f]+|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')


def test_the_lexer_uses_the_fixed_string_literal_pattern():
    assert MLIRLexer._unescaped_characters_regex is xdsl_fixes._STRING_LITERAL


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet='"\\\n\v\f\rant0F9g x', max_size=14))
def test_string_literals_match_as_xdsl_matches_them(text):
    """Short enough for xDSL's pattern to answer: the same match, or none, at every start."""
    for start in range(len(text) + 1):
        old, new = XDSL_STRING_LITERAL.match(text, start), xdsl_fixes._STRING_LITERAL.match(text, start)
        assert (old and old.span()) == (new and new.span())


def test_an_unclosed_string_literal_fails_in_one_pass():
    line = '"' + "b=2, h=4, i=256, d=64 : bf16>, " * 1000 + "\n}"
    t = time.perf_counter()
    assert xdsl_fixes._STRING_LITERAL.match(line) is None
    assert time.perf_counter() - t < 0.1


KERNEL_WITH_STRING_GRID = """\
"hbm.kernel"() <{sym_name = "k", grid = ["m:8"], num_outputs = 1 : i32}> ({
^bb0(%a: !hbm.global<m=16 : f32>, %out: !hbm.global<m=16 : f32>, %m0: index):
  "hbm.return"() : () -> ()
}) : () -> ()
"""


@pytest.mark.parametrize("text", [KERNEL_WITH_STRING_GRID, KERNEL_WITH_STRING_GRID.replace('"hbm.kernel"() <{', "hbm.kernel attributes {")
                                  .replace("}> ({", "} {").replace('"hbm.return"() : () -> ()', "hbm.return").replace("}) : () -> ()", "}")])
def test_a_property_of_the_wrong_type_is_named_with_its_op(text):
    """Verified (generic form) or checked while the custom syntax is parsed: the same words."""
    from xdsl.utils.exceptions import VerifyException

    from napkin_ir.compiler import parse

    with pytest.raises(VerifyException, match=r"^hbm.kernel: property 'grid': \[\"m:8\"\] should be of base attribute hbm.labels\n?"):
        parse(text).verify()
