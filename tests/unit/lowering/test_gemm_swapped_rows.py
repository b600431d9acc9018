"""A GEMM C[m, n] = A B computed with wgmma's rows over n (smem-to-reg{rows="n"}): B [k, n]
is wgmma's A, read M-major from its swizzled panels, and A's m-tile wgmma's N, any multiple
of 8 (152, 104, 80, 160). The output leaves through 128-byte panels of C with
stmatrix.trans (store=tma) or value by value (store=direct). The numbers survive the reg
level on the CPU interpreter against float64; the sm_90a PTX assembles without spills."""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

from napkin_ir import reference
from napkin_ir.diagrams import gemm
from napkin_ir.interpreters.ptx import HALF
from napkin_ir.interpreters.run import find_entry
from napkin_ir.model.ptxas import find_ptxas
from napkin_ir.passmanager import compile_to_ptx, run_pipeline


def _spec(bm: int, bn: int, store: str, to_ptx: bool = False) -> str:
    spec = (f'ncd-relabel{{grid="m:{bm},n:{bn}" stream="k:64"}},ncd-to-hbm,hbm-launch,hbm-to-smem{{stages=3 copy="tma" '
            f'store="{store}"}},smem-to-reg{{mma="wgmma" rows="n"}}')
    return spec + (',reg-hoist-loads,reg-reload-loads,reg-to-ptx{arch="sm_90a"}' if to_ptx else "")


@pytest.mark.parametrize("store", ["tma", "direct"])
@pytest.mark.parametrize("m, n, k, bm, bn", [(300, 256, 256, 152, 128), (100, 192, 200, 104, 64), (77, 128, 64, 80, 128),
                                             (500, 384, 128, 160, 192)])
def test_the_swapped_product_keeps_the_numbers(m, n, k, bm, bn, store):
    text = gemm(m, n, k, "bf16")
    rng = np.random.default_rng(m + n + k)
    a, b = (rng.standard_normal(s).astype(HALF["bf16"]) for s in ((m, k), (k, n)))
    want = reference.matmul(a.astype(np.float64), b.astype(np.float64))
    got = find_entry(run_pipeline(text, _spec(bm, bn, store))).run([a, b])[0]
    assert got.shape == (m, n) and not np.isnan(got.astype(np.float64)).any()
    assert reference.relative_error(got, want) <= reference.TOLERANCE["bf16"]


@pytest.mark.parametrize("bm, tiles", [(152, (9, 1)), (160, (10, 0)), (144, (9, 0))])
def test_the_swapped_product_stores_with_stmatrix_trans(tmp_path, bm, tiles):
    ptxas = find_ptxas()
    assert ptxas is not None, "ptxas (the test extra's nvidia-cuda-nvcc) is needed"
    ptx = compile_to_ptx(gemm(5000, 3000, 2056, "bf16"), _spec(bm, 128, "tma", to_ptx=True))
    assert f"wgmma.mma_async.sync.aligned.m64n{bm}k16" in ptx
    x4, x2 = tiles  # a panel of 64 of n a warpgroup: the m-tile's 8-row matrices four (two) at a time
    assert ptx.count("stmatrix.sync.aligned.m8n8.x4.trans") == 2 * x4 and ptx.count("stmatrix.sync.aligned.m8n8.x2.trans") == 2 * x2
    path = tmp_path / "s.ptx"
    path.write_text(ptx)
    report = subprocess.run([ptxas, "-v", "-arch=sm_90a", str(path), "-o", str(tmp_path / "s.cubin")], capture_output=True, text=True)
    assert report.returncode == 0, report.stderr
    assert re.search(r"\b0 bytes spill stores", report.stderr), report.stderr
