"""Passes made of passes, and the loop that runs them.

A `PipelinePass` (`napkin-sm80`, `napkin-sm90`) is replaced, when its turn comes, by the
passes it chooses for the module as it is then, so that callbacks
(`--print-between-passes`, `--time-passes`) see every level. This module knows no pass
by name: the planner builds pass instances and runs them here without the registry,
and `napkin_ir.passmanager` (which parses specs through the registry) builds on it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

Callback = Callable[[ModulePass | None, ModuleOp, ModulePass | None], None]


class PipelinePass(ModulePass):
    """A pass made of passes chosen for the module it meets (`passes`). Run alone, it
    applies them in turn; `run_passes` splices them into the pipeline it runs."""

    def passes(self, module: ModuleOp) -> Sequence[ModulePass]:
        raise NotImplementedError

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        run_passes(ctx, op, [self])


def run_passes(ctx: Context, module: ModuleOp, passes: Sequence[ModulePass], callback: Callback | None = None) -> None:
    """Apply `passes` in order, each `PipelinePass` replaced by the passes it chooses when
    its turn comes; `callback(previous, module, next)` runs between passes, as in
    xDSL's `PassPipeline`."""
    queue = list(passes)
    if callback is not None:
        callback(None, module, queue[0] if queue else None)
    while queue:
        p = queue.pop(0)
        if isinstance(p, PipelinePass):
            queue[0:0] = list(p.passes(module))
            continue
        p.apply(ctx, module)
        if callback is not None:
            callback(p, module, queue[0] if queue else None)


def spec(passes: Sequence[ModulePass]) -> str:
    """The pipeline spec that names `passes` with their options (xDSL's syntax)."""
    return ",".join(str(p.pipeline_pass_spec()) for p in passes)
