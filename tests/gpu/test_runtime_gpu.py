"""The runtime on a real GPU: hand-written PTX loaded, launched and checked against numpy.

Outputs start poisoned (NaN) so that a kernel that writes nothing cannot pass. The PTX
lives in runtime_kernels.py, where a CPU test checks that ptxas accepts it.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import tempfile
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import napkin_ir.runtime as rt

pytestmark = pytest.mark.gpu


def _load_kernels():
    spec = importlib.util.spec_from_file_location("runtime_kernels", Path(__file__).with_name("runtime_kernels.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


K = _load_kernels()
F32 = rt.Param.pointer("f32")
F32_OUT = rt.Param.pointer("f32", out=True)


@pytest.fixture(scope="module")
def vector():
    return rt.load_ptx(K.VECTOR_PTX, name="vector.ptx")


@pytest.fixture(scope="module")
def vec_add(vector):
    return vector.kernel("vec_add", [F32, F32, F32_OUT, rt.Param.scalar("u32", name="n")])


def _poisoned(*shape):
    return np.full(shape, np.nan, np.float32)


def _random(rng, *shape):
    return rng.standard_normal(shape, dtype=np.float32)


@pytest.mark.sanitize
def test_vec_add_on_numpy_arrays(vec_add):
    rng = np.random.default_rng(1)
    n = 1000  # not a multiple of the block: the tail guard matters
    a, b, c = _random(rng, n), _random(rng, n), _poisoned(n)
    vec_add.launch(grid=(n + 255) // 256, block=256, args=[a, b, c, n])
    np.testing.assert_array_equal(c, a + b)


def test_scalar_n_bounds_the_kernel(vec_add):
    rng = np.random.default_rng(2)
    a, b, c = _random(rng, 1024), _random(rng, 1024), _poisoned(1024)
    vec_add.launch(4, 256, [a, b, c, 700])
    np.testing.assert_array_equal(c[:700], a[:700] + b[:700])
    assert np.isnan(c[700:]).all()


def test_f32_scalar_and_in_out_array(vector):
    axpy = vector.kernel("axpy", [F32, F32_OUT, rt.Param.scalar("f32"), rt.Param.scalar("u32")])
    rng = np.random.default_rng(3)
    x, y = _random(rng, 512), _random(rng, 512)
    expected = np.float32(0.5) * x + y  # 0.5 * x is exact, so fma and numpy agree bit for bit
    axpy.launch(2, 256, [x, y, 0.5, 512])
    np.testing.assert_array_equal(y, expected)


def test_device_arrays_are_used_in_place(vec_add):
    rng = np.random.default_rng(4)
    a, b = _random(rng, 300), _random(rng, 300)
    da, db, dc = rt.DeviceArray.from_numpy(a), rt.DeviceArray.from_numpy(b), rt.DeviceArray.from_numpy(_poisoned(300))
    vec_add.launch(2, 256, [da, db, dc, 300], sync=False)
    vec_add.module.context.synchronize()
    np.testing.assert_array_equal(dc.to_numpy(), a + b)


def test_bfloat16_device_array_round_trip():
    x = np.arange(-8, 8, dtype=np.float32).astype(ml_dtypes.bfloat16).reshape(4, 4)
    d = rt.DeviceArray.from_numpy(x)
    back = d.to_numpy()
    assert back.dtype == x.dtype and (back == x).all()


class _DlpackOnly:
    """Hides __cuda_array_interface__ so that the DLPack path is the one taken."""

    def __init__(self, tensor):
        self.tensor = tensor

    def __dlpack__(self, stream=None):
        return self.tensor.__dlpack__()

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()


def _torch_cuda():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    return torch


def test_torch_tensors_zero_copy(vec_add):
    torch = _torch_cuda()
    n = 2048
    a = torch.randn(n, device="cuda", dtype=torch.float32)
    b = torch.randn(n, device="cuda", dtype=torch.float32)
    c = torch.full((n,), float("nan"), device="cuda", dtype=torch.float32)
    address = c.data_ptr()
    torch.cuda.synchronize()
    vec_add.launch(n // 256, 256, [a, b, c, n])  # __cuda_array_interface__
    assert c.data_ptr() == address
    assert torch.equal(c, a + b)  # the kernel wrote torch's own memory: nothing was copied back
    d = torch.full((n,), float("nan"), device="cuda", dtype=torch.float32)
    vec_add.launch(n // 256, 256, [_DlpackOnly(a), _DlpackOnly(b), _DlpackOnly(d), n])  # DLPack
    assert torch.equal(d, a + b)


def test_torch_misaligned_and_mistyped_tensors_are_refused(vec_add):
    torch = _torch_cuda()
    a = torch.zeros(257, device="cuda", dtype=torch.float32)
    with pytest.raises(rt.ArgumentError, match="aligned to 16 bytes"):
        vec_add.launch(1, 256, [a[1:], a[1:], a[1:], 256])
    h = torch.zeros(256, device="cuda", dtype=torch.float16)
    with pytest.raises(rt.ArgumentError, match="expected a float32 array, found float16"):
        vec_add.launch(1, 256, [h, h, h, 256])


@pytest.mark.sanitize
def test_more_than_48k_of_dynamic_shared_memory():
    kernel = rt.load_ptx(K.SMEM_REVERSE_PTX, name="smem.ptx").kernel("smem_reverse", [F32, F32_OUT])
    blocks, n = 3, K.SMEM_ELEMENTS
    x = np.random.default_rng(5).standard_normal(blocks * n, dtype=np.float32)
    out = _poisoned(blocks * n)
    kernel.launch(blocks, 256, [x, out], smem=n * 4)  # 64 KiB: needs the attribute raised
    np.testing.assert_array_equal(out.reshape(blocks, n), x.reshape(blocks, n)[:, ::-1])


def test_dynamic_shared_memory_beyond_the_device_is_refused():
    kernel = rt.load_ptx(K.SMEM_REVERSE_PTX).kernel("smem_reverse", [F32, F32_OUT])
    limit = kernel.module.context.attribute("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN")
    x = np.zeros(K.SMEM_ELEMENTS, np.float32)
    with pytest.raises(rt.ArgumentError, match=f"opt-in limit of {limit} bytes"):
        kernel.launch(1, 256, [x, x.copy()], smem=limit + 1024)


def test_bad_ptx_reports_the_jit_log():
    with pytest.raises(rt.CudaError) as info:
        rt.load_ptx(K.BAD_PTX, name="broken.ptx")
    assert info.value.name == "CUDA_ERROR_INVALID_PTX"
    assert "error" in info.value.log.lower() and "undeclared_register" in info.value.log
    assert info.value.log in str(info.value)


def _find_ptxas():
    try:
        import nvidia

        for root in nvidia.__path__:
            for sub in ("cu13", "cuda_nvcc"):
                candidate = Path(root) / sub / "bin" / "ptxas"
                if candidate.exists():
                    return str(candidate)
    except ImportError:
        pass
    return shutil.which("ptxas")


def test_load_cubin():
    from cuda.bindings import driver

    ptxas = _find_ptxas()
    if ptxas is None:
        pytest.skip("ptxas not found")
    _, version = driver.cuDriverGetVersion()
    if version < 13000:
        pytest.skip(f"cubins from the CUDA 13 ptxas need a CUDA 13 driver, this one is {version}")
    major, minor = rt.get_context().compute_capability()
    with tempfile.TemporaryDirectory() as tmp:
        src, cubin = Path(tmp) / "vector.ptx", Path(tmp) / "vector.cubin"
        src.write_text(K.VECTOR_PTX)
        subprocess.run([ptxas, f"-arch=sm_{major}{minor}", str(src), "-o", str(cubin)], check=True)
        module = rt.load_cubin(cubin.read_bytes(), name="vector.cubin")
    kernel = module.kernel("vec_add", [F32, F32, F32_OUT, rt.Param.scalar("u32")])
    rng = np.random.default_rng(8)
    a, b, c = _random(rng, 256), _random(rng, 256), _poisoned(256)
    kernel.launch(1, 256, [a, b, c, 256])
    np.testing.assert_array_equal(c, a + b)


def test_missing_kernel_is_named(vector):
    with pytest.raises(rt.CudaError, match=r"kernel 'vec_sub' in module vector.ptx failed: CUDA_ERROR_NOT_FOUND .*the module defines vec_add, axpy"):
        vector.kernel("vec_sub", [])


def test_specs_are_compared_with_the_compiled_kernel(vector, vec_add):
    if vec_add.param_sizes is None:
        pytest.skip("this driver has no cuFuncGetParamInfo")
    assert vec_add.param_sizes == [8, 8, 8, 4]
    with pytest.raises(rt.ArgumentError, match="declares 4 parameters, but 3 parameter specs"):
        vector.kernel("vec_add", [F32, F32, F32_OUT])


def _require_sm90():
    major, minor = rt.get_context().compute_capability()
    if (major, minor) != (9, 0):
        pytest.skip(f"sm_90a code needs a compute capability 9.0 GPU, this one is {major}.{minor}")


def test_cluster_launch(vec_add):
    major, _ = rt.get_context().compute_capability()
    if major < 9:
        pytest.skip("thread block clusters need compute capability 9.0+")
    rng = np.random.default_rng(6)
    a, b, c = _random(rng, 1024), _random(rng, 1024), _poisoned(1024)
    vec_add.launch(4, 256, [a, b, c, 1024], cluster=2)
    np.testing.assert_array_equal(c, a + b)


@pytest.mark.parametrize("shape", [(96, 192), (80, 160)], ids=["whole-tiles", "ragged-edge"])
def test_tma_tile_copy(shape):
    _require_sm90()
    rows, cols = shape
    box_rows, box_cols = K.TMA_BOX_ROWS, K.TMA_BOX_COLS
    tiles_y, tiles_x = -(-rows // box_rows), -(-cols // box_cols)
    matrix = np.random.default_rng(7).standard_normal(shape, dtype=np.float32)
    device_matrix = rt.DeviceArray.from_numpy(matrix)
    if rows % box_rows == 0:
        tmap = rt.tensor_map_for(device_matrix, (box_rows, box_cols), swizzle="none")
    else:
        tmap = rt.encode_tiled(device_matrix, "f32", shape, (cols * 4, 4), (box_rows, box_cols), swizzle="none")
    kernel = rt.load_ptx(K.TMA_TILE_PTX, name="tma.ptx").kernel("tma_tile_copy", [rt.Param.tensor_map(), F32_OUT])
    out = _poisoned(tiles_y, tiles_x, box_rows, box_cols)
    kernel.launch((tiles_x, tiles_y), 256, [tmap, out])
    padded = np.zeros((tiles_y * box_rows, tiles_x * box_cols), np.float32)  # TMA fills out-of-bounds with 0
    padded[:rows, :cols] = matrix
    for ty in range(tiles_y):
        for tx in range(tiles_x):
            expected = padded[ty * box_rows:(ty + 1) * box_rows, tx * box_cols:(tx + 1) * box_cols]
            np.testing.assert_array_equal(out[ty, tx], expected, err_msg=f"tile ({ty}, {tx})")
