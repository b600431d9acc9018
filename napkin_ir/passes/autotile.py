"""`ncd-autotile`: let the napkin model say where each axis of a diagram lives.

    ncd-autotile{hw=h200}

lowers each candidate labelling (block tiles, stream tile, warps, stages) as far as the
passes go, predicts its time on `hw` (h100, h200, a100) with the napkin model
(`napkin_ir.plan.autotile`), and labels the diagram as the fastest one would be, as
`ncd-relabel` does: `ncd.grid` and `ncd.stream` on each function, and what it chose and
why as `ncd.autotile` (also said on stderr). The search takes a few seconds.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from napkin_ir.errors import UserError
from napkin_ir.passes.relabel import label


@dataclass(frozen=True)
class NcdAutotilePass(ModulePass):
    name = "ncd-autotile"
    hw: str = "h100"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        from napkin_ir.plan.autotile import autotile

        try:
            result = autotile(op.clone(), self.hw)
        except UserError as e:
            raise PassFailedException(f"ncd-autotile: the model cannot choose the labels: {e}") from None
        print(f"ncd-autotile: {result.reason}", file=sys.stderr)
        for f in op.walk():
            if isinstance(f, func.FuncOp) and f.body.blocks:
                f.attributes["ncd.autotile"] = builtin.StringAttr(result.reason)
        label(op, dict(result.config.grid), dict(result.config.stream))
