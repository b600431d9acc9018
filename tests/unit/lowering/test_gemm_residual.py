"""A GEMM with a residual (`gemm(residual=True)`: A B + r, r of the output's shape, a
residual connection's) keeps its numbers at every level, on both pipelines.

The residual is a tile loaded once beside the stream: cp.async on napkin-sm80; on
napkin-sm90 the producer copies it by TMA into a one-stage buffer before the stream and the
consumers read it where the add needs it, past the stream loop (`hbm-to-smem`), its bytes
counted in the shared memory the stages may take (`products.resident_elements`). The hbm,
smem and reg levels run by the CPU interpreters give the diagram's numbers on ragged,
even and few-row shapes; the sm_80 PTX in the warp-level emulator matches float64; the
sm_90a PTX of a large GEMM fits and assembles without spills."""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

import napkin_ir
from napkin_ir import reference
from napkin_ir.diagrams import gemm
from napkin_ir.interpreters.ptx import HALF
from napkin_ir.model.ptxas import find_ptxas
from napkin_ir.passmanager import run_pipeline
from napkin_ir.plan.diagram import product_shape
from napkin_ir.plan.recipes.products import resident_elements
from tests.unit.lowering.levels import emulated, every_pipeline_level_keeps

SHAPES = [(200, 136, 104), (256, 256, 128), (8, 256, 128)]


@pytest.mark.parametrize("pipeline", ["napkin-sm80", "napkin-sm90"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_every_level_gives_the_diagrams_numbers(pipeline, shape):
    every_pipeline_level_keeps(gemm(*shape, name="gemm_residual", residual=True), pipeline, sum(shape))


@pytest.mark.parametrize("m, n, k", [(200, 136, 104), (8, 72, 40)])
def test_sm80_ptx_matches_float64(m, n, k):
    module = run_pipeline(gemm(m, n, k, residual=True), "napkin-sm80")
    rng = np.random.default_rng(m + n + k)
    half = HALF["bf16"]
    a, b, r = (rng.standard_normal(s).astype(half) for s in ((m, k), (k, n), (m, n)))
    out = emulated(module, [a, b, r], (m, n))
    want = reference.matmul(a, b) + r.astype(np.float64)
    assert reference.relative_error(out, want) <= reference.TOLERANCE["bf16"]


def test_the_residual_tile_is_counted_beside_the_stages(tmp_path):
    """At 4096^3 the 128 x 256 tile's 4 stages (192 KB) and its residual's 64 KB were over a
    block's shared memory: the residual's bytes are kept, so fewer stages fit; a bias takes
    none (it goes to registers). The PTX assembles without spills."""
    text = gemm(4096, 4096, 4096, residual=True)
    module = run_pipeline(text)
    assert resident_elements(module, product_shape(module, "napkin-sm90"), (128, 256, 64)) == 128 * 256
    biased = run_pipeline(gemm(4096, 4096, 4096, bias="n"))
    assert resident_elements(biased, product_shape(biased, "napkin-sm90"), (128, 256, 64)) == 0
    kernel = napkin_ir.compile(text, target="sm90", cache=False)
    assert kernel.arg_names() == ["a", "b", "res", "out"]
    assert 128 * 256 * 2 < kernel.contract.smem_bytes <= 232448
    ptxas = find_ptxas()
    assert ptxas is not None, "ptxas (the test extra's nvidia-cuda-nvcc) is needed"
    path = tmp_path / "r.ptx"
    path.write_text(kernel.ptx)
    report = subprocess.run([ptxas, "-v", "-arch=sm_90a", str(path), "-o", str(tmp_path / "r.cubin")], capture_output=True, text=True)
    assert report.returncode == 0, report.stderr
    assert re.search(r"\b0 bytes spill stores", report.stderr), report.stderr


@pytest.mark.parametrize("pipeline", ["napkin-sm80", "napkin-sm90"])
def test_an_f32_output_takes_its_residual_in_16_bits(pipeline):
    """`gemm(out_dtype="f32", residual=True)`: r is the inputs' bf16, cast to f32 where it
    meets the sums (a tile read into registers beside the accumulators is widened from 16
    bits), and every level gives the diagram's numbers."""
    text = gemm(200, 136, 104, out_dtype="f32", residual=True)
    assert "%res: !ncd.tensor<m=200, n=136 : bf16>" in text
    every_pipeline_level_keeps(text, pipeline, 11)


@pytest.mark.parametrize("target", ["sm80", "sm90"])
def test_an_f32_tile_added_as_it_is_is_refused_with_the_reason(target):
    """A residual given in f32 and added as it is has no form in registers: the error says
    so and what to give instead (it had said only that the add's operand was no tile
    computed in registers)."""
    t = "!ncd.tensor<m=200, n=136 : f32>"
    text = (f"func.func @g(%a: !ncd.tensor<m=200, k=104 : bf16>, %b: !ncd.tensor<k=104, n=136 : bf16>, %r: {t}) -> {t} {{\n"
            f"  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=200, k=104 : bf16>, !ncd.tensor<k=104, n=136 : bf16> -> {t}\n"
            f"  %y = ncd.map add %c, %r : {t}, {t} -> {t}\n  func.return %y : {t}\n}}\n")
    with pytest.raises(napkin_ir.NapkinError, match="reads a tile staged in shared memory as it is .* give the tensor in 16 bits"):
        napkin_ir.compile(text, target=target, cache=False)
