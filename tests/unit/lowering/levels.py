"""What the attention gradient's level tests share: a kernel plan's levels, each run on
the CPU interpreter, against what the diagram computes, and the inputs the gradient's
kernels read (the forward's output and statistic, and D, as the diagram computes them)."""

from __future__ import annotations

import numpy as np

from napkin_ir import reference
from napkin_ir.attention_diagrams import NAMES, RESIDUAL_GRADIENT, ROW_VALUES, attention_diagram, gradient_passes
from napkin_ir.interpreters.ptx import HALF
from napkin_ir.interpreters.run import find_entry
from napkin_ir.passes.composite import spec
from napkin_ir.passmanager import run_pipeline


def every_level_keeps(module, kernel_plan, inputs, want, levels=("hbm", "smem", "reg")) -> None:
    """Each of `levels` of `kernel_plan` on `module`, run on `inputs`, gives every output of
    `want` (all written, within bf16's bound)."""
    for level in levels:
        got = find_entry(run_pipeline(str(module), spec(kernel_plan.passes(level)))).run(inputs)
        for n, (g, w) in enumerate(zip(got, want)):
            assert not np.isnan(g).any(), f"{level}: some of output {n} was not written"
            assert reference.relative_error(g, w) <= reference.TOLERANCE["bf16"], (level, n)


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
