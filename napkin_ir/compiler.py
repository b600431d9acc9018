"""napkin-ir from Python: parse a diagram, compile it for a target, get a kernel to call.

    import napkin_ir
    kernel = napkin_ir.compile(napkin_ir.gemm(4096, 4096, 4096), target="sm90", block=(128, 256, 64))
    kernel(a=a, b=b, out=c, stream=torch.cuda.current_stream())

`compile` turns a target and options into the named pipeline's spec (`napkin-sm90{block=
"128,256,64"}`), or takes any pipeline spec as `pipeline=`, and compiles through the
compile cache (`napkin_ir.cache`): the same diagram, pipeline and target compile once per
machine. `target="auto"` picks by the GPU here: `sm90` (TMA and wgmma) on a Hopper GPU,
`sm80` otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from napkin_ir.errors import UserError

TARGETS = {"sm80": "napkin-sm80", "sm90": "napkin-sm90"}
ARCHS = {"sm80": "sm_80", "sm90": "sm_90a"}


def parse(text: str) -> Any:
    """The module `text` holds, parsed and verified (napkin's and xDSL's dialects)."""
    from napkin_ir.passmanager import run_pipeline

    return run_pipeline(text)


def is_attention(text: str) -> bool:
    from napkin_ir.plan.diagram import attention_axes

    return attention_axes(parse(text)) is not None


def auto_target(text: str, device: int = 0) -> str:
    """`sm90` on a Hopper GPU, `sm80` on the others; an error without a GPU."""
    from napkin_ir.runtime.driver import CudaError, get_context

    try:
        capability = get_context(device).compute_capability()
    except CudaError as e:
        raise UserError(f"target='auto' picks by the GPU here, and none can be used ({str(e).splitlines()[0]}); "
                        "name the target: target='sm80' or target='sm90'") from None
    if capability < (8, 0):
        raise UserError(f"the GPU here is sm_{capability[0]}{capability[1]}; napkin-ir's kernels need sm_80 or newer")
    return "sm90" if capability == (9, 0) else "sm80"


def option_text(value: Any) -> str:
    """An option's value in xDSL's pipeline syntax: `true`, `3`, `"128,256,64"`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Sequence) and not isinstance(value, str):
        value = ",".join(str(v) for v in value)
    text = str(value)
    if '"' in text:
        raise UserError(f"an option's value may not hold a double quote: {text!r}")
    return f'"{text}"'


def pipeline_spec(target: str, options: dict[str, Any]) -> str:
    """`napkin-sm80` or `napkin-sm90` with `options`: `napkin-sm90{block="128,256,64" stages=4}`."""
    if target not in TARGETS:
        raise UserError(f"unknown target {target!r}; expected {', '.join(map(repr, TARGETS))} or 'auto'")
    given = " ".join(f"{k}={option_text(v)}" for k, v in options.items() if v is not None)
    return f"{TARGETS[target]}{{{given}}}" if given else TARGETS[target]


def compile(diagram: Any, target: str = "auto", *, pipeline: str | None = None, device: int = 0, cache: Any = True,
            **options: Any) -> Any:
    """Compile `diagram` (text, or a parsed module) and return its `CompiledKernel`.

    `target` is `sm80`, `sm90` or `auto` (by the GPU `device`); `options` are the named
    pipeline's (`block=(128, 256, 64)`, `stages=4`, `warps=(2, 2)`, `group=8`,
    `persistent=False`, `cluster=2`, `autotile=True`, `hw="h200"` ...: `napkin-opt -p
    napkin-sm90{...}` takes the same). `pipeline` is a whole pipeline spec instead, ending
    in PTX. `cache` is True (the process's `default_cache()`), False (always compile), or a
    `CompileCache`.
    """
    from napkin_ir.cache import CompileCache, default_cache
    from napkin_ir.build import compile_kernel

    text = diagram if isinstance(diagram, str) else str(diagram)
    if pipeline is not None:
        if options or target != "auto":
            raise UserError("compile: give either pipeline= or a target with options, not both")
        spec, arch = pipeline, ""
    else:
        chosen = auto_target(text, device) if target == "auto" else target.removeprefix("napkin-")
        spec, arch = pipeline_spec(chosen, options), ARCHS.get(chosen, "")
    if cache is False:
        return compile_kernel(text, spec)
    store = default_cache() if cache is True else cache
    if not isinstance(store, CompileCache):
        raise UserError(f"compile: cache must be True, False or a CompileCache, found {type(cache).__name__}")
    return store.get(text, spec, arch)


def compile_attention(text: str, **config: Any) -> tuple[str, dict]:
    """sm_80 PTX for an attention diagram and what its launch needs (`pipelines.launch_config`),
    with `recipes.attention.sm80_plan`'s tiles (`config`), shrunk to fit short sequences."""
    import io

    from napkin_ir.dialects.ptx.printer import print_ptx
    from napkin_ir.passmanager import run_passes, run_pipeline
    from napkin_ir.pipelines import launch_config
    from napkin_ir.plan.recipes.attention import sm80_plan
    from napkin_ir.registry import make_context

    module = run_pipeline(text)
    run_passes(make_context(), module, sm80_plan(module, **config).passes())
    module.verify()
    out = io.StringIO()
    print_ptx(module, out)
    return out.getvalue(), launch_config(module)


__all__ = ["compile_attention", "ARCHS", "TARGETS", "auto_target", "compile", "is_attention", "option_text", "parse", "pipeline_spec"]
