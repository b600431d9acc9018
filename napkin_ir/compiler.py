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

from napkin_ir.errors import BadArgument, UserError

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

    Every failure is a `napkin_ir.NapkinError` naming its cause: `InvalidIR` for text that
    does not parse or verify, `PipelineError` for a spec, `CompileError` where a pass or the
    PTX printer refuses the diagram, `SizeError`, `SystemFault`, and `InternalError` for
    napkin-ir's own faults (the original exception is its `__cause__`).
    """
    from napkin_ir.errors import as_napkin_error

    text = _diagram_text(diagram)
    _check_compile_arguments(target, pipeline, device, cache)
    try:
        return _compile(text, target, pipeline, device, cache, options)
    except (KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except BaseException as e:  # noqa: BLE001 - xDSL's ArgSpecParseError is no Exception: every failure leaves as a NapkinError
        error = as_napkin_error(e, pipeline=pipeline)
        if error is e:
            raise
        raise error from e


def _diagram_text(diagram: Any) -> str:
    if isinstance(diagram, str):
        if not diagram.strip():
            raise BadArgument("compile: diagram is empty; pass the diagram's text (napkin_ir.gemm(...)) or a parsed module")
        return diagram
    from xdsl.dialects.builtin import ModuleOp  # only here: text needs no xDSL until the cache misses

    if isinstance(diagram, ModuleOp):
        return str(diagram)
    raise BadArgument(f"compile: diagram must be the diagram's text or a parsed module (napkin_ir.parse), "
                    f"found {type(diagram).__name__}")


def _check_compile_arguments(target: Any, pipeline: Any, device: Any, cache: Any) -> None:
    if not isinstance(target, str):
        raise BadArgument(f"compile: target must be 'sm80', 'sm90' or 'auto', found {type(target).__name__} {target!r}")
    if pipeline is not None and (not isinstance(pipeline, str) or not pipeline.strip()):
        raise BadArgument(f"compile: pipeline must be a pipeline spec (text), found {pipeline!r}")
    if isinstance(device, bool) or not isinstance(device, int) or device < 0:
        raise BadArgument(f"compile: device must be a CUDA device number (0, 1, ...), found {device!r}")


def _compile(text: str, target: str, pipeline: str | None, device: int, cache: Any, options: dict[str, Any]) -> Any:
    from napkin_ir.cache import CompileCache, default_cache

    if pipeline is not None:
        if options or target != "auto":
            raise UserError("compile: give either pipeline= or a target with options, not both")
        spec, arch = pipeline, ""
    else:
        chosen = auto_target(text, device) if target == "auto" else target.removeprefix("napkin-")
        spec, arch = pipeline_spec(chosen, options), ARCHS.get(chosen, "")
    if cache is False:
        from napkin_ir.build import compile_kernel

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
