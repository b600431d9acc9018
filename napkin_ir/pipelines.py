"""Named pipelines and the in-process way to run them: text in, PTX (or IR) out.

`napkin-opt -p ...` and Python users share this: `compile_to_ptx(text, "convert-arith-to-ptx")`
parses, verifies, runs the pipeline (xDSL's spec syntax, napkin's and xDSL's passes) and
prints PTX. The whole-way pipelines `napkin-sm80` and `napkin-sm90` join here as the levels
between `ncd` and `ptx` land.
"""

from __future__ import annotations

import io

from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.passes import PassPipeline
from xdsl.universe import Universe

from napkin_ir import registry


def available_passes() -> dict:
    return {**Universe.get_multiverse().all_passes, **registry.napkin_passes()}


def run_pipeline(text: str, pipeline: str = "", *, name: str = "<input>") -> ModuleOp:
    ctx = registry.make_context()
    module = Parser(ctx, text, name).parse_module()
    module.verify()
    PassPipeline.parse_spec(available_passes(), pipeline, lambda *_: None).apply(ctx, module)
    module.verify()
    return module


def compile_to_ptx(text: str, pipeline: str = "", *, arch: str | None = None, name: str = "<input>") -> str:
    from napkin_ir.dialects.ptx.printer import print_ptx

    out = io.StringIO()
    print_ptx(run_pipeline(text, pipeline, name=name), out, arch)
    return out.getvalue()
