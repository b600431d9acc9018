"""`ncd-drop-unit-scale`: `ncd.map scale %x by 1.0` is `%x`; the pass removes it.

A small pass at the diagram level, written as napkin's own are (a frozen dataclass whose
fields are its options, one rewrite pattern), to show the shape of an out-of-package pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern

from napkin_ir.dialects import ncd


class DropUnitScale(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ncd.MapOp, rewriter: PatternRewriter) -> None:
        if op.fn.data != "scale" or op.by is None or op.by.value.data != 1.0:
            return
        (x,) = op.inputs
        if x.type != op.results[0].type:
            return
        rewriter.replace(op, [], [x])


@dataclass(frozen=True)
class DropUnitScalePass(ModulePass):
    name = "ncd-drop-unit-scale"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        PatternRewriteWalker(DropUnitScale()).rewrite_module(op)
