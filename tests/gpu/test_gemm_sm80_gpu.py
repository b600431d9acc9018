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
from napkin_ir.passmanager import run_pipeline
from napkin_ir.pipelines import launch_config, sm80_gemm_pipeline

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


def _run_bf16(torch, m, n, k, **config) -> dict:
    """Compile with `config`, run on fresh random bf16 inputs into a NaN-poisoned output,
    check every element written and the product within 1e-2 of float64; the launch config."""
    from napkin_ir.runtime import Param, load_ptx

    ptx, cfg = compile_gemm(m, n, k, "bf16", **config)
    a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    b = torch.randn(k, n, device="cuda").to(torch.bfloat16)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    kernel = load_ptx(ptx).kernel(cfg["name"], [Param.pointer("bf16", (m, k)), Param.pointer("bf16", (k, n)), Param.pointer("bf16", (m, n), out=True)])
    kernel.launch(grid=cfg["grid"], block=cfg["block"], smem=cfg["smem"], args=[a, b, c])
    out = c.double()
    assert not out.isnan().any(), "some output was not written"
    ref = a.double() @ b.double()
    assert ((out - ref).norm() / ref.norm()).item() <= 1e-2
    return cfg


SWEEP = [(s, s, s) for s in (128, 256, 512, 1024, 2048, 4096, 8192)] + [(8192, 8192, 2048), (16384, 4096, 4096), (4096, 1024, 8192),
                                                                           (1000, 3000, 520), (4000, 8000, 136)]


@pytest.mark.parametrize("config", [{}, {"block": (256, 128, 64), "warps": (4, 2), "stages": 3},
                                    {"block": (128, 256, 32), "warps": (2, 4), "stages": 4}, {"group": 16},
                                    {"block": (64, 64, 32), "warps": (2, 2), "stages": 4, "group": 3}],
                         ids=["default", "256x128x64", "128x256x32", "grouped16", "64x64x32-grouped3"])
@pytest.mark.parametrize("shape", SWEEP, ids=[f"{m}x{n}x{k}" for m, n, k in SWEEP])
def test_gemm_sm80_sweep(shape, config):
    """Square 128 .. 8192, rectangular and ragged (tiles longer than their axes among them),
    the default and the fastest configurations,
    plain and grouped launches (bands of 16 and of 3 block rows), bf16: against a float64
    product on the GPU, fresh inputs and a poisoned output each time."""
    torch = pytest.importorskip("torch")
    m, n, k = shape
    _run_bf16(torch, m, n, k, **config)  # a tile longer than its axis too: its copies zero-fill past the edge


@pytest.mark.sanitize
@pytest.mark.parametrize("shape,group", [((300, 264, 120), 3), ((520, 200, 72), 2)])
def test_gemm_sm80_grouped_small(shape, group):
    """A grouped launch small enough for compute-sanitizer: ragged edges, and a last band of
    block rows shorter than the others (5 rows of 64 in bands of 3; 9 in bands of 2)."""
    torch = pytest.importorskip("torch")
    cfg = _run_bf16(torch, *shape, block=(64, 64, 32), warps=(2, 2), stages=3, group=group)
    assert len(cfg["grid"]) == 1
