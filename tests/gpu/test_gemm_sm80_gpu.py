"""The GEMM diagram compiled through every level (ncd, hbm, smem, reg, ptx) and run on the GPU.

Fresh random inputs, a NaN-poisoned output, a float64 reference; square, rectangular
and ragged shapes (M and N not multiples of the block tile, K not a multiple of the
stream tile), bf16 and f16.
"""

import io

import numpy as np
import pytest

from napkin_ir import reference
from napkin_ir.diagrams import gemm
from napkin_ir.dialects.ptx.printer import print_ptx
from napkin_ir.pipelines import launch_config, run_pipeline, sm80_gemm_pipeline

pytestmark = pytest.mark.gpu



def compile_gemm(m, n, k, t, **options):
    module = run_pipeline(gemm(m, n, k, t), sm80_gemm_pipeline(**options))
    out = io.StringIO()
    print_ptx(module, out)
    return out.getvalue(), launch_config(module)


@pytest.mark.parametrize("t", ["bf16", "f16"])
@pytest.mark.parametrize("shape", [(128, 128, 64), (512, 384, 256), (1000, 744, 520), (130, 136, 48), (2048, 1024, 1024)])
def test_gemm_sm80_matches_float64(shape, t):
    torch = pytest.importorskip("torch")
    from napkin_ir.runtime import Param, load_ptx

    m, n, k = shape
    ptx, cfg = compile_gemm(m, n, k, t)
    dt = torch.bfloat16 if t == "bf16" else torch.float16
    a = torch.randn(m, k, device="cuda").to(dt)
    b = torch.randn(k, n, device="cuda").to(dt)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=dt)
    kernel = load_ptx(ptx).kernel(cfg["name"], [Param.pointer(t, (m, k)), Param.pointer(t, (k, n)), Param.pointer(t, (m, n), out=True)])
    kernel.launch(grid=cfg["grid"], block=cfg["block"], smem=cfg["smem"], args=[a, b, c])
    out = c.float().cpu().numpy()
    assert not np.isnan(out).any()
    ref = reference.matmul(a.float().cpu().numpy(), b.float().cpu().numpy())
    assert reference.relative_error(out, ref) <= (1e-2 if t == "bf16" else 2e-3)
