"""napkin-ir: neural circuit diagrams lowered to PTX, one memory level at a time."""

from napkin_ir import xdsl_fixes

xdsl_fixes.apply()
