"""Attention's forward that also writes the log-sum-exp of each row (f32 [b, h, i],
natural log: what the gradient recomputes the probabilities from) keeps its numbers at
every level of both pipelines on the CPU: softmax and causal attention, head dims 64 and
128, a ragged sequence (200 = 128 + 72) and grouped-query heads, against the diagram
evaluated in float64; the sm_80 PTX in the warp-level emulator too, and ptxas takes every
kernel's PTX."""

from __future__ import annotations

import numpy as np
import pytest

from napkin_ir import reference, reference_eval
from napkin_ir.attention_diagrams import attention_diagram, gqa_attention_diagram
from napkin_ir.interpreters.ptx import HALF, run_kernel
from napkin_ir.interpreters.run import find_entry, find_function
from napkin_ir.model.ptxas import find_ptxas, ptxas_resources
from napkin_ir.passmanager import compile_to_ptx, run_pipeline, spec
from napkin_ir.plan.recipes.attention import sm80_passes, sm90_passes

LSE_TOLERANCE = 1e-4  # |lse - float64| where the row's sum is ~ its length: ex2, lg2 approximate


def _text(kind: str, n: int, d: int, gqa: bool) -> str:
    if gqa:
        return gqa_attention_diagram(kind, 1, 2, 2, n, d, lse=True)
    return attention_diagram(kind, 1, 2, n, d, lse=True)


def _want(text: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    return reference_eval.evaluate(find_function(run_pipeline(text)), [x.astype(np.float64) for x in inputs])


def _check(got: list[np.ndarray], want: list[np.ndarray]) -> None:
    out, lse = got
    assert lse.dtype == np.float32 and lse.shape == want[1].shape
    assert np.isfinite(lse).all(), "a row's log-sum-exp was not written, or is not finite"
    assert reference.relative_error(out, want[0]) <= reference.TOLERANCE["bf16"]
    assert np.abs(lse - want[1]).max() <= LSE_TOLERANCE


CASES = [(kind, n, d, gqa) for kind in ("softmax", "causal") for d in (64, 128) for n, gqa in ((200, False), (130, True))]


@pytest.mark.parametrize("pipeline", ["sm80", "sm90"])
@pytest.mark.parametrize("kind,n,d,gqa", CASES)
def test_every_level_keeps_the_log_sum_exp(pipeline, kind, n, d, gqa):
    text = _text(kind, n, d, gqa)
    module = run_pipeline(text)
    passes = (sm80_passes if pipeline == "sm80" else sm90_passes)(module)[:-1]  # all but reg-to-ptx
    inputs = find_entry(module).random_inputs(n + d)
    want = _want(text, inputs)
    _check(find_entry(module).run(inputs), want)  # the diagram's interpreter
    smem = next(k for k, p in enumerate(passes) if p.name == "hbm-to-smem") + 1
    for upto in (2, smem, len(passes)):  # the hbm, smem and reg levels
        _check(find_entry(run_pipeline(text, spec(passes[:upto]))).run(inputs), want)


@pytest.mark.parametrize("kind,n,d", [("softmax", 200, 64), ("causal", 200, 128), ("causal", 77, 64)])
def test_sm80_ptx_emulated_keeps_the_log_sum_exp(kind, n, d):
    """The sm_80 PTX, run warp by warp on the CPU (copies landing as late as allowed, warps
    in reverse), writes every row's log-sum-exp and nothing past the end of a poisoned
    output (the emulator refuses accesses outside a tensor)."""
    text = attention_diagram(kind, 1, 2, n, d, lse=True)
    module = run_pipeline(text, spec(sm80_passes(run_pipeline(text))))
    rng = np.random.default_rng(n + d)
    q, k, v = (rng.standard_normal((1, 2, n, d)).astype(HALF["bf16"]) for _ in range(3))
    out = np.full((1, 2, n, d), 0xFFFF, np.uint16).view(HALF["bf16"])
    lse = np.full((1, 2, n), np.nan, np.float32)
    run_kernel(module, [q, k, v, out, lse], lazy=True, reverse=True)
    _check([out.astype(np.float64), lse], _want(text, [q, k, v]))


@pytest.mark.skipif(find_ptxas() is None, reason="ptxas not installed")
@pytest.mark.parametrize("pipeline", ["sm80", "sm90"])
@pytest.mark.parametrize("kind,n,d,gqa", CASES)
def test_ptx_assembles_without_spills(pipeline, kind, n, d, gqa):
    text = _text(kind, n, d, gqa)
    ptx = compile_to_ptx(text, f"napkin-{pipeline}")
    arch = "sm_80" if pipeline == "sm80" else "sm_90a"
    assert "lg2.approx.ftz.f32" in ptx
    (res,) = ptxas_resources(ptx, arch).values()
    assert not res.spills and res.stack_bytes == 0, res


@pytest.mark.parametrize("pipeline", ["napkin-sm80", "napkin-sm90"])
def test_spherical_attention_returns_its_norm(pipeline):
    """Spherical attention's row statistic is the norm its gradient divides by: the
    forward writes it beside the output, every level matching the diagram."""
    text = attention_diagram("spherical", 1, 2, 72, 64, lse=True)
    diagram = find_entry(run_pipeline(text))
    inputs = diagram.random_inputs(3)
    want = diagram.run(inputs)
    np.testing.assert_allclose(want[1], np.sqrt((np.einsum("bhid,bhjd->bhij", inputs[0], inputs[1]) ** 2).sum(-1)), rtol=1e-4)
    passes = (sm80_passes if pipeline == "napkin-sm80" else sm90_passes)(run_pipeline(text))[:-1]  # all but reg-to-ptx
    got = find_entry(run_pipeline(text, spec(passes))).run(inputs)  # the register level
    assert reference.relative_error(got[0], want[0]) <= reference.TOLERANCE["bf16"]
    assert reference.relative_error(got[1], want[1]) <= 1e-4
    if pipeline == "napkin-sm80":  # its PTX in the warp-level emulator
        module = run_pipeline(text, pipeline)
        half = HALF["bf16"]
        out = np.full(want[0].shape, 0xFFFF, np.uint16).view(half)
        norm = np.full(want[1].shape, np.nan, np.float32)
        run_kernel(module, [x.astype(half) for x in inputs] + [out, norm], lazy=True, reverse=True)
        assert reference.relative_error(out, want[0]) <= reference.TOLERANCE["bf16"]
        assert reference.relative_error(norm, want[1]) <= 1e-4
