"""The ptx dialect's instruction families, compiled by napkin and run on the GPU.

Each kernel in tests/gpu/kernels (and the lowering tests' kernels) is compiled from
its MLIR, loaded through napkin_ir.runtime, fed fresh random inputs with a NaN-poisoned
output, and compared with a float64 reference.
"""

from pathlib import Path

import numpy as np
import pytest

from napkin_ir.pipelines import compile_to_ptx

pytestmark = [pytest.mark.gpu, pytest.mark.sanitize]
ROOT = Path(__file__).resolve().parents[2]


def _module(path: str, pipeline: str = "convert-arith-to-ptx"):
    from napkin_ir.runtime import load_ptx

    return load_ptx(compile_to_ptx((ROOT / path).read_text(), pipeline, name=path), name=path)


def _bf16(rng, shape):
    import ml_dtypes

    return rng.standard_normal(shape, dtype=np.float32).astype(ml_dtypes.bfloat16)


def _rel(out, ref):
    return float(np.linalg.norm(out.astype(np.float64) - ref) / np.linalg.norm(ref))


def test_scalar_arith_and_loops():
    from napkin_ir.runtime import Param

    rng = np.random.default_rng()
    k = _module("tests/filecheck/lowering/arith_to_ptx.mlir").kernel(
        "sum_kernel", [Param.pointer("f32", (128,), out=True), Param.scalar("u32"), Param.scalar("f32")])
    n, scale = int(rng.integers(1, 200)), float(rng.standard_normal())
    out = np.full(128, np.nan, np.float32)
    k.launch(grid=1, block=128, args=[out, n, scale])
    expected = np.where(np.arange(128) % 2 == 0, sum(np.float32(j) * np.float32(scale) for j in range(n)), -1.0)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5 * n)


def test_branch_arguments_swap():
    from napkin_ir.runtime import Param

    k = _module("tests/filecheck/ptx/control_flow.mlir", "").kernel("swap_loop", [Param.pointer("f32", (1,), out=True), Param.scalar("u32")])
    for n in (1, 2, 3, 8, 11):
        out = np.full(1, np.nan, np.float32)
        k.launch(grid=1, block=1, args=[out, n])
        assert out[0] == (1.5 if n % 2 else -2.0), n


def test_cp_async_ldmatrix_mma_sync():
    from napkin_ir.runtime import Param

    rng = np.random.default_rng()
    a, b = _bf16(rng, (16, 16)), _bf16(rng, (16, 8))
    bt = np.zeros((16, 16), a.dtype)
    bt[:8] = b.T
    k = _module("tests/gpu/kernels/mma_sync.mlir").kernel(
        "mma_m16n8k16", [Param.pointer("f32", (16, 8), out=True), Param.pointer("bf16", (16, 16)), Param.pointer("bf16", (16, 16))])
    out = np.full((16, 8), np.nan, np.float32)
    k.launch(grid=1, block=32, args=[out, a, bt])
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert not np.isnan(out).any()
    assert _rel(out, ref) < 1e-5  # exact bf16 products, f32 sums


def test_shuffles_and_votes():
    from napkin_ir.runtime import Param

    rng = np.random.default_rng()
    x = rng.standard_normal(32, dtype=np.float32)
    k = _module("tests/gpu/kernels/warp_reduce.mlir").kernel("warp_reduce", [Param.pointer("u32", (34,), out=True), Param.pointer("f32", (32,))])
    out = np.full(34, 0xDEADBEEF, np.uint32)
    k.launch(grid=1, block=32, args=[out, x])
    # f32 sums of 32 terms: the error scales with sum |x|, not with the (possibly tiny) total
    np.testing.assert_allclose(out[:32].view(np.float32), np.float64(x).sum(), rtol=1e-5, atol=4e-6 * np.abs(x).sum())
    assert int(out[32]) == sum(1 << i for i in range(32) if x[i] > 0)
    assert int(out[33]) == 1


def test_tma_mbarrier_wgmma():
    torch = pytest.importorskip("torch")
    from napkin_ir.runtime import Param, get_context, tensor_map_for

    if get_context().compute_capability() < (9, 0):
        pytest.skip("TMA and wgmma need sm_90")
    rng = np.random.default_rng()
    a, b = _bf16(rng, (64, 16)), _bf16(rng, (16, 8))
    a_dev = torch.tensor(a.astype(np.float32), device="cuda").to(torch.bfloat16).contiguous()
    bt_dev = torch.tensor(b.T.astype(np.float32), device="cuda").to(torch.bfloat16).contiguous()
    k = _module("tests/gpu/kernels/tma_wgmma.mlir").kernel(
        "tma_wgmma", [Param.pointer("f32", (64, 8), out=True), Param.tensor_map(), Param.tensor_map()])
    out = np.full((64, 8), np.nan, np.float32)
    k.launch(grid=1, block=128, args=[out, tensor_map_for(a_dev, (64, 8)), tensor_map_for(bt_dev, (8, 8))])
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert not np.isnan(out).any()
    assert _rel(out, ref) < 1e-5
