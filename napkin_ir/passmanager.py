"""napkin's pass manager: run a pipeline whose named pipelines choose their passes late.

`run_passes` applies pass instances in order; a `PipelinePass` (`napkin-sm80`,
`napkin-sm90`) is replaced, when its turn comes, by the passes it chooses for the module
as it is then, so that callbacks (`--print-between-passes`, `--time-passes`) see every
level. `run_pipeline` parses text, verifies it and runs a spec. This module depends on the
registry alone: the model and the pipelines both use it without depending on each other.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.passes import ModulePass, PassPipeline
from xdsl.universe import Universe

from napkin_ir import registry
from napkin_ir.errors import UserError

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


def available_passes() -> dict:
    return {**Universe.get_multiverse().all_passes, **registry.napkin_passes()}


def parse_pipeline(pipeline: str, callback: Callback | None = None) -> PassPipeline:
    """A pipeline spec as pass instances; an unknown pass or option is the user's error."""
    try:
        return PassPipeline.parse_spec(available_passes(), pipeline, callback)
    except ValueError as e:  # xDSL's word for a spec it cannot read
        raise UserError(f"in the pipeline '{pipeline}': {e}") from None


def run_pipeline(text: str, pipeline: str = "", *, name: str = "<input>") -> ModuleOp:
    ctx = registry.make_context()
    module = Parser(ctx, text, name).parse_module()
    module.verify()
    run_passes(ctx, module, parse_pipeline(pipeline).passes)
    module.verify()
    return module


def compile_to_ptx(text: str, pipeline: str = "", *, arch: str | None = None, name: str = "<input>") -> str:
    from napkin_ir.dialects.ptx.printer import print_ptx

    out = io.StringIO()
    print_ptx(run_pipeline(text, pipeline, name=name), out, arch)
    return out.getvalue()
