"""napkin's pass manager: parse a pipeline spec through the registry and run it.

`run_pipeline` parses text, verifies it and runs a spec, whose named pipelines
(`PipelinePass`, `napkin_ir.passes.composite`) choose their passes late. This is the front
door's module: it depends on the registry, and nothing the registry loads depends on it.
"""

from __future__ import annotations

import io

from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.passes import PassPipeline
from xdsl.universe import Universe
from xdsl.utils.exceptions import ArgSpecParseError

from napkin_ir import registry
from napkin_ir.errors import PipelineError
from napkin_ir.passes.composite import Callback, PipelinePass, run_passes, spec

__all__ = ["Callback", "PipelinePass", "available_passes", "compile_to_ptx", "parse_pipeline", "run_passes", "run_pipeline", "spec"]


def available_passes() -> dict:
    return {**Universe.get_multiverse().all_passes, **registry.napkin_passes()}


def parse_pipeline(pipeline: str, callback: Callback | None = None) -> PassPipeline:
    """A pipeline spec as pass instances; an unknown pass or option is the user's error."""
    try:
        return PassPipeline.parse_spec(available_passes(), pipeline, callback)
    except (ValueError, ArgSpecParseError) as e:  # xDSL's words for a spec it cannot read (the second no Exception)
        raise PipelineError(f"in the pipeline '{pipeline}': {e}") from None


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
