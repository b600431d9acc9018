"""Products over the rows of A (A stored [k, m], contracted axis outermost: C = A^T B), as a
gradient's dB = A^T dC is: napkin-sm80 loads A's fragments with `ldmatrix.trans`, napkin-sm90
reads A M-major from its swizzled panels (`imm-trans-a`). The sm_80 PTX runs in the
warp-level emulator against float64 on ragged shapes; the sm_90a PTX assembles without
spills."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from napkin_ir import reference
from napkin_ir.compiler import pipeline_spec
from napkin_ir.interpreters.ptx import HALF, run_kernel
from napkin_ir.model.ptxas import find_ptxas
from napkin_ir.passmanager import compile_to_ptx, run_pipeline


def diagram(m: int, n: int, k: int, dtype: str = "bf16", b_nk: bool = False) -> str:
    a = f"!ncd.tensor<k={k}, m={m} : {dtype}>"
    b = f"!ncd.tensor<n={n}, k={k} : {dtype}>" if b_nk else f"!ncd.tensor<k={k}, n={n} : {dtype}>"
    c = f"!ncd.tensor<m={m}, n={n} : {dtype}>"
    return (f"func.func @matmul_at(%a: {a}, %b: {b}) -> {c} {{\n  %c = ncd.contract %a, %b over [k] : {a}, {b} -> {c}\n"
            f"  func.return %c : {c}\n}}\n")


@pytest.mark.parametrize("shape,options", [
    ((128, 128, 64), {}),
    ((200, 136, 96), {}),
    ((72, 80, 48), {"block": (64, 64, 16), "warps": (2, 2)}),
    ((256, 128, 128), {"block": (128, 128, 64), "warps": (2, 2), "stages": 2}),
    ((136, 72, 80), {"block": (64, 64, 32), "warps": (2, 1), "layout": "pad8"}),
], ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else ",".join(f"{a}={b}" for a, b in v.items()) or "default")
def test_a_transposed_keeps_the_numbers_on_sm80(shape, options):
    m, n, k = shape
    module = run_pipeline(diagram(m, n, k), pipeline_spec("sm80", options))
    rng = np.random.default_rng(3)
    half = HALF["bf16"]
    a, b = rng.standard_normal((k, m)).astype(half), rng.standard_normal((k, n)).astype(half)
    out = np.full((m, n), 0xFFFF, np.uint16).view(half)  # poisoned: NaN
    conflicts = run_kernel(module, [a, b, out], lazy=True, reverse=True)
    assert np.isfinite(out.astype(np.float64)).all(), "some output was not written"
    assert reference.relative_error(out, reference.matmul(a.T, b)) <= reference.TOLERANCE["bf16"]
    assert conflicts["ldmatrix"] == 0


@pytest.mark.parametrize("b_nk", [False, True])
@pytest.mark.parametrize("options", [{}, {"block": (128, 128, 64)}, {"block": (64, 256, 64)}, {"persistent": False, "store": "direct"}],
                         ids=lambda o: ",".join(f"{a}={b}" for a, b in o.items()) or "default")
def test_a_transposed_assembles_for_sm90(tmp_path, options, b_nk):
    ptxas = find_ptxas()
    assert ptxas is not None, "ptxas (the test extra's nvidia-cuda-nvcc) is needed"
    ptx = compile_to_ptx(diagram(1024, 512, 256, b_nk=b_nk), pipeline_spec("sm90", options))
    assert "wgmma.mma_async" in ptx
    path = tmp_path / "at.ptx"
    path.write_text(ptx)
    report = subprocess.run([ptxas, "-v", "-arch=sm_90a", str(path), "-o", str(tmp_path / "at.cubin")], capture_output=True, text=True)
    assert report.returncode == 0, report.stderr
    assert "0 bytes spill stores, 0 bytes spill loads" in report.stderr
