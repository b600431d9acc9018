"""The ptx dialect's instruction families, compiled by napkin and run on the GPU.

Each kernel in tests/gpu/kernels (and the lowering tests' kernels) is compiled from
its MLIR, loaded through napkin_ir.runtime, fed fresh random inputs with a NaN-poisoned
output, and compared with a float64 reference.
"""

from pathlib import Path

import numpy as np
import pytest

from napkin_ir.passmanager import compile_to_ptx

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
    k = _module("tests/gpu/kernels/warp_reduce.mlir").kernel("warp_reduce", [Param.pointer("u32", (35,), out=True), Param.pointer("f32", (32,))])
    out = np.full(35, 0xDEADBEEF, np.uint32)
    k.launch(grid=1, block=32, args=[out, x])
    # f32 sums of 32 terms: the error scales with sum |x|, not with the (possibly tiny) total
    np.testing.assert_allclose(out[:32].view(np.float32), np.float64(x).sum(), rtol=1e-5, atol=4e-6 * np.abs(x).sum())
    assert int(out[32]) == sum(1 << i for i in range(32) if x[i] > 0)
    assert int(out[33]) == 1
    assert out[34:35].view(np.float32)[0] == x.max()  # the row max is exact


def _torch_bf16(torch, a):
    return torch.tensor(a.astype(np.float32), device="cuda").to(torch.bfloat16).contiguous()


def _need_sm90():
    from napkin_ir.runtime import get_context

    if get_context().compute_capability() < (9, 0):
        pytest.skip("TMA and wgmma need sm_90")


@pytest.mark.parametrize("n", [8, 128, 256])
def test_tma_mbarrier_wgmma(n):
    torch = pytest.importorskip("torch")
    from napkin_ir.runtime import Param, load_ptx, tensor_map_for

    _need_sm90()
    from kernel_text import tma_wgmma_kernel

    rng = np.random.default_rng()
    a, b = _bf16(rng, (64, 16)), _bf16(rng, (16, n))
    k = load_ptx(compile_to_ptx(tma_wgmma_kernel(n), "convert-arith-to-ptx")).kernel(
        f"tma_wgmma_n{n}", [Param.pointer("f32", (64, n), out=True), Param.tensor_map(), Param.tensor_map()])
    out = np.full((64, n), np.nan, np.float32)
    # boxes 8 wide in K: each 8 x 8 core matrix lands as 128 contiguous bytes
    k.launch(grid=1, block=128, args=[out, tensor_map_for(_torch_bf16(torch, a), (64, 8)), tensor_map_for(_torch_bf16(torch, b.T), (n, 8))])
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert not np.isnan(out).any()
    assert _rel(out, ref) < 1e-5


def test_vectorised_copy():
    from napkin_ir.runtime import Param

    rng = np.random.default_rng()
    n16 = int(rng.integers(1000, 5000))
    src = rng.integers(0, 2**32, size=(n16 + 3) * 4, dtype=np.uint64).astype(np.uint32)
    dst = np.full_like(src, 0xDEADBEEF)
    k = _module("tests/gpu/kernels/copies.mlir").kernel(
        "copy_v4", [Param.pointer("u32", (src.size,), out=True), Param.pointer("u32", (src.size,)), Param.scalar("u32")])
    k.launch(grid=(n16 + 255) // 256, block=256, args=[dst, src, n16])
    np.testing.assert_array_equal(dst[: 4 * n16], src[: 4 * n16])
    assert (dst[4 * n16:] == 0xDEADBEEF).all()  # nothing written past n16 chunks


def test_cp_async_through_shared_memory():
    from napkin_ir.runtime import Param

    rng = np.random.default_rng()
    blocks = int(rng.integers(2, 40))
    src = rng.integers(0, 2**32, size=blocks * 1024, dtype=np.uint64).astype(np.uint32)
    dst = np.full_like(src, 0xDEADBEEF)
    k = _module("tests/gpu/kernels/copies.mlir").kernel(
        "cp_async_roundtrip", [Param.pointer("u32", (src.size,), out=True), Param.pointer("u32", (src.size,))])
    k.launch(grid=blocks, block=128, args=[dst, src])
    np.testing.assert_array_equal(dst, src)


def swizzle_128b(tile: np.ndarray) -> np.ndarray:
    """The shared-memory image TMA writes for a box with 128-byte rows under the 128B swizzle:
    16-byte chunk c of row r lands at chunk c ^ (r % 8) of that row."""
    rows = tile.view(np.uint8).reshape(tile.shape[0], 8, 16)
    out = np.empty_like(rows)
    for r in range(rows.shape[0]):
        for c in range(8):
            out[r, c ^ (r % 8)] = rows[r, c]
    return out.reshape(-1)


def test_tma_128b_swizzle_load_and_store():
    torch = pytest.importorskip("torch")
    from napkin_ir.runtime import Param, tensor_map_for

    _need_sm90()
    rng = np.random.default_rng()
    gy, gx = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    a = _bf16(rng, (32 * gy, 64 * gx))
    a_dev = _torch_bf16(torch, a)
    out_dev = torch.full_like(a_dev, float("nan"))
    raw = np.zeros(gy * gx * 4096, np.uint8)
    k = _module("tests/gpu/kernels/tma_swizzle.mlir").kernel(
        "tma_swizzle", [Param.pointer("u8", (raw.size,), out=True), Param.tensor_map(), Param.tensor_map()])
    maps = [tensor_map_for(t, (32, 64), swizzle="128B") for t in (a_dev, out_dev)]
    k.launch(grid=(gx, gy), block=128, args=[raw, *maps])
    bits = a.view(np.uint16)
    for y in range(gy):
        for x in range(gx):
            tile = np.ascontiguousarray(bits[32 * y : 32 * y + 32, 64 * x : 64 * x + 64])
            got = raw[(y * gx + x) * 4096 : (y * gx + x + 1) * 4096]
            np.testing.assert_array_equal(got, swizzle_128b(tile), err_msg=f"block ({x}, {y})")
    back = out_dev.view(torch.int16).cpu().numpy().view(np.uint16)
    np.testing.assert_array_equal(back, bits)  # the TMA store undoes the swizzle
