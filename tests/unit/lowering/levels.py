"""What the level tests share: a kernel plan's levels (or a named pipeline's), each run on
the CPU interpreter, against what the diagram computes; a kernel's PTX in the warp-level
emulator; and the inputs the attention gradient's kernels read (the forward's output and
statistic, and D, as the diagram computes them)."""

from __future__ import annotations

import numpy as np

from napkin_ir import reference
from napkin_ir.attention_diagrams import NAMES, RESIDUAL_GRADIENT, ROW_VALUES, attention_diagram, gradient_passes
from napkin_ir.interpreters.ptx import HALF, run_kernel
from napkin_ir.interpreters.run import find_entry
from napkin_ir.passes.composite import spec
from napkin_ir.passmanager import run_pipeline
from napkin_ir.pipelines import NapkinSm80Pass, NapkinSm90Pass
from napkin_ir.registry import make_context

PIPELINES = {"napkin-sm80": NapkinSm80Pass(), "napkin-sm90": NapkinSm90Pass()}


def every_level_keeps(module, kernel_plan, inputs, want, levels=("hbm", "smem", "reg")) -> None:
    """Each of `levels` of `kernel_plan` on `module`, run on `inputs`, gives every output of
    `want` (all written, within bf16's bound)."""
    for level in levels:
        got = find_entry(run_pipeline(str(module), spec(kernel_plan.passes(level)))).run(inputs)
        for n, (g, w) in enumerate(zip(got, want)):
            assert not np.isnan(g).any(), f"{level}: some of output {n} was not written"
            assert reference.relative_error(g, w) <= reference.TOLERANCE["bf16"], (level, n)


def pipeline_levels(text: str, pipeline: str) -> dict[str, str]:
    """The pass list the named pipeline runs on `text`, cut after each level's lowering (the
    reg level after the passes on it, before reg-to-ptx)."""
    from xdsl.parser import Parser

    passes = list(PIPELINES[pipeline].passes(Parser(make_context(), text).parse_module()))
    names = [p.name for p in passes]
    return {level: spec(passes[: names.index(last) + 1] if last else passes[:-1])
            for level, last in (("hbm", "ncd-to-hbm"), ("smem", "hbm-to-smem"), ("reg", None))}


def every_pipeline_level_keeps(text: str, pipeline: str, seed: int) -> dict[str, np.ndarray]:
    """Each level of the named pipeline on `text`, run on random inputs (`seed`), gives the
    diagram's result (all written, within bf16's bound); the results by level."""
    diagram = find_entry(run_pipeline(text))
    inputs = diagram.random_inputs(seed)
    want = diagram.run(inputs)[0]
    got = {}
    for level, passes in pipeline_levels(text, pipeline).items():
        got[level] = find_entry(run_pipeline(text, passes)).run(inputs)[0]
        assert np.isfinite(got[level]).all(), f"{level}: some output was not written"
        assert reference.relative_error(got[level], want) <= reference.TOLERANCE["bf16"], level
    return got


def emulated(module, inputs: list[np.ndarray], out_shape: tuple[int, ...], dtype: str = "bf16") -> np.ndarray:
    """The output of `module`'s PTX in the warp-level emulator (copies landing as late as
    allowed, warps in reverse order), poisoned first: every element written."""
    half = HALF[dtype]
    out = np.full(out_shape, 0xFFFF, np.uint16).view(half)
    run_kernel(module, [*inputs, out], lazy=True, reverse=True)
    assert np.isfinite(out.astype(np.float64)).all(), "some output was not written"
    return out


def gradient_inputs(kind: str, n: int, nk: int, d: int, seed: int) -> tuple[str, dict[str, np.ndarray]]:
    """Attention's diagram (`kind`, one batch entry, two heads, `n` queries, `nk` keys, head
    dim `d`) and the values its gradient's kernels read, by name: Q, K, V and dO (random,
    bf16-exact), the forward's output and row statistic (`lse`, or spherical attention's
    `norm`), and the row kernel's values (`ROW_VALUES`: D, and a softmax's `lse_log2`)."""
    text = attention_diagram(kind, 1, 2, n, d, n_keys=nk)
    rng = np.random.default_rng(seed)
    half = HALF["bf16"]
    q, d_o = (rng.standard_normal((1, 2, n, d)).astype(half).astype(np.float32) for _ in range(2))
    k, v = (rng.standard_normal((1, 2, nk, d)).astype(half).astype(np.float32) for _ in range(2))
    o, stat = find_entry(run_pipeline(text, RESIDUAL_GRADIENT), NAMES[kind]).run([q, k, v])
    values = {"q": q, "k": k, "v": v, "d_o": d_o, "o": o, "lse" if kind != "spherical" else "norm": stat}
    rows = find_entry(run_pipeline(text, gradient_passes(kind, "delta")))
    return text, values | dict(zip(ROW_VALUES[kind], rows.run([values[name] for name in rows.input_names]), strict=True))
