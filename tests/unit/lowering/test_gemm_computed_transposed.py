"""A GEMM computed transposed, C^T[n, m] = B^T A^T (`gemm(transposed=True)`), as
`napkin::matmul` computes a decode-sized M on Hopper: B's columns are the rows of
napkin-sm90's 64-row wgmma tiles, read M-major from B [k, n]'s swizzled panels, and A's few
rows the tensor cores' N (any multiple of 8). The numbers survive the hbm, smem and reg
levels on the CPU interpreter, split or not, against float64; the sm_90a PTX assembles
without spills."""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

from napkin_ir import reference
from napkin_ir.diagrams import gemm
from napkin_ir.errors import BadArgument
from napkin_ir.interpreters.ptx import HALF
from napkin_ir.interpreters.run import find_entry
from napkin_ir.model.ptxas import find_ptxas
from napkin_ir.passmanager import compile_to_ptx, run_pipeline
from napkin_ir.pipelines import NapkinSm90Pass, spec


@pytest.mark.parametrize("m, n, k, block, split", [
    (8, 256, 192, "128,8,64", 1),
    (24, 128, 320, "64,24,64", 1),
    (16, 192, 512, "64,16,64", 4),
    (40, 128, 200, "128,40,64", 2),
])
def test_each_level_keeps_the_transposed_product(m, n, k, block, split):
    text = gemm(m, n, k, "bf16", "matmul_t", transposed=True, out_dtype="f32" if split > 1 else None)
    plan = NapkinSm90Pass(block=block, split=split).plan(run_pipeline(text))
    rng = np.random.default_rng(m + n + k)
    a, b = (rng.standard_normal(s).astype(HALF["bf16"]) for s in ((m, k), (k, n)))
    want = reference.matmul(b.astype(np.float64).T, a.astype(np.float64).T)  # C^T [n, m]
    for level in ("hbm", "smem", "reg"):
        got = find_entry(run_pipeline(text, spec(plan.passes(level)))).run([a, b])[0]
        assert got.shape == (n, m) and not np.isnan(got.astype(np.float64)).any(), level
        assert reference.relative_error(got, want) <= (1e-5 if split > 1 else reference.TOLERANCE["bf16"]), level


@pytest.mark.parametrize("m, block, split", [(8, "128,8,64", 1), (16, "128,16,64", 4), (64, "128,64,64", 2), (128, "128,128,64", 1)])
def test_the_transposed_product_assembles_for_sm90(tmp_path, m, block, split):
    ptxas = find_ptxas()
    assert ptxas is not None, "ptxas (the test extra's nvidia-cuda-nvcc) is needed"
    text = gemm(m, 4096, 4096, "bf16", "matmul_t", transposed=True, out_dtype="f32" if split > 1 else None)
    ptx = compile_to_ptx(text, spec(NapkinSm90Pass(block=block, split=split).plan(run_pipeline(text)).passes()))
    assert f"wgmma.mma_async.sync.aligned.m64n{m}k16" in ptx
    assert ("red.global.add" in ptx) == (split > 1)  # a pair at once on sm_90 (.v2.f32)
    path = tmp_path / "t.ptx"
    path.write_text(ptx)
    report = subprocess.run([ptxas, "-v", "-arch=sm_90a", str(path), "-o", str(tmp_path / "t.cubin")], capture_output=True, text=True)
    assert report.returncode == 0, report.stderr
    assert re.search(r"\b0 bytes spill stores", report.stderr), report.stderr


def test_a_transposed_gemm_takes_no_epilogue():
    with pytest.raises(BadArgument, match="transposed=True writes C\\^T"):
        gemm(16, 128, 64, transposed=True, bias="n")
