"""The runtime without a GPU: imports, argument checks, tensor map checks, and the launch
path driven through a fake driver that executes kernels in Python on fake device memory.

The fake stands in for `cuda.bindings.driver` (its enums and types are the real ones), so
these tests pin down what the runtime hands the driver: the kernelParams pointer array,
JIT log buffers, the dynamic shared memory attribute, tensor map argument order and types.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import napkin_ir.runtime as rt
from napkin_ir.runtime import driver as drvmod
from napkin_ir.runtime.arrays import dlpack_view
from napkin_ir.runtime.kernels import KernelParams, check_launch, check_param_sizes, launch_dims, needs_smem_optin

ROOT = Path(__file__).resolve().parents[3]
real = pytest.importorskip("cuda.bindings.driver")
CUresult = real.CUresult


def _kernels_module() -> types.ModuleType:
    path = ROOT / "tests" / "gpu" / "runtime_kernels.py"
    spec = importlib.util.spec_from_file_location("runtime_kernels", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


KERNELS = _kernels_module()


# --- fakes ------------------------------------------------------------------------------

class FakeCai:
    """A device array as torch or cupy present it: only __cuda_array_interface__."""

    def __init__(self, ptr: int, shape: tuple[int, ...], typestr: str = "<f4", strides: Any = None, readonly: bool = False):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (ptr, readonly),
                                         "strides": strides, "version": 3}


class FakeDlpack:
    """A DLPack producer claiming device memory; the capsule is numpy's (never dereferenced)."""

    def __init__(self, array: np.ndarray, device_type: int = 2, device_id: int = 0):
        self.array, self.device = array, (device_type, device_id)

    def __dlpack__(self, stream: Any = None) -> Any:
        return self.array.__dlpack__()

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.device


class FakeTensorMapResult:
    def __init__(self, payload: bytes):
        self.buffer = (ctypes.c_ubyte * 128).from_buffer_copy(payload)

    def getPtr(self) -> int:
        return ctypes.addressof(self.buffer)


def _u64(raw: bytes) -> int:
    return int.from_bytes(raw[:8], "little")


class FakeDriver:
    """Enough of cuda.bindings.driver to load, look up and launch, on fake device memory."""

    BASE = 0x7000_0000_0000
    OPTIN = 232448  # an H100's MAX_SHARED_MEMORY_PER_BLOCK_OPTIN

    def __init__(self) -> None:
        self.memory: dict[int, bytearray] = {}
        self.next_address = self.BASE
        self.calls: list[tuple[str, Any]] = []
        self.sync_result = CUresult.CUDA_SUCCESS
        self.pointer_device = 0
        self.kernels = {"vec_add": [8, 8, 8, 4], "axpy": [8, 8, 4, 4], "smem_reverse": [8, 8], "tma_probe": [128, 8]}
        self.tensor_map_payload = bytes(range(128))
        self.seen_tensor_map: bytes | None = None

    def __getattr__(self, name: str) -> Any:  # enums and handle types are the real ones
        return getattr(real, name)

    def _ok(self, *values: Any) -> tuple[Any, ...]:
        return (CUresult.CUDA_SUCCESS, *values)

    # device memory
    def _find(self, address: int, n: int) -> tuple[bytearray, int]:
        for base, block in self.memory.items():
            if base <= address and address + n <= base + len(block):
                return block, address - base
        raise AssertionError(f"fake device access outside allocations: 0x{address:x} + {n}")

    def read(self, address: int, n: int) -> bytes:
        block, off = self._find(address, n)
        return bytes(block[off:off + n])

    def write(self, address: int, data: bytes) -> None:
        block, off = self._find(address, len(data))
        block[off:off + len(data)] = data

    def cuInit(self, flags: int) -> tuple[Any, ...]:
        return self._ok()

    def cuGetErrorName(self, code: Any) -> tuple[Any, ...]:
        return self._ok(code.name.encode())

    def cuGetErrorString(self, code: Any) -> tuple[Any, ...]:
        return self._ok(b"fake description")

    def cuDeviceGet(self, ordinal: int) -> tuple[Any, ...]:
        return self._ok(real.CUdevice(ordinal))

    def cuDevicePrimaryCtxRetain(self, dev: Any) -> tuple[Any, ...]:
        return self._ok(real.CUcontext(0x1234))

    def cuCtxSetCurrent(self, ctx: Any) -> tuple[Any, ...]:
        return self._ok()

    def cuDeviceGetAttribute(self, attr: Any, dev: Any) -> tuple[Any, ...]:
        a = real.CUdevice_attribute
        values = {a.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: self.OPTIN,
                  a.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: 9, a.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: 0}
        return self._ok(values[attr])

    def cuMemAlloc(self, n: int) -> tuple[Any, ...]:
        address = self.next_address
        self.memory[address] = bytearray(b"\xa5" * n)
        self.next_address += (n + 255) // 256 * 256 + 256
        self.calls.append(("cuMemAlloc", n))
        return self._ok(real.CUdeviceptr(address))

    def cuMemFree(self, address: Any) -> tuple[Any, ...]:
        del self.memory[int(address)]
        self.calls.append(("cuMemFree", int(address)))
        return self._ok()

    def cuMemcpyHtoD(self, dst: int, src: int, n: int) -> tuple[Any, ...]:
        self.write(int(dst), ctypes.string_at(src, n))
        return self._ok()

    def cuMemcpyHtoDAsync(self, dst: int, src: int, n: int, stream: Any) -> tuple[Any, ...]:
        self.calls.append(("cuMemcpyHtoDAsync", n))
        return self.cuMemcpyHtoD(dst, src, n)

    def cuMemcpyDtoH(self, dst: int, src: int, n: int) -> tuple[Any, ...]:
        ctypes.memmove(dst, self.read(int(src), n), n)
        return self._ok()

    def cuMemcpyDtoHAsync(self, dst: int, src: int, n: int, stream: Any) -> tuple[Any, ...]:
        self.calls.append(("cuMemcpyDtoHAsync", n))
        return self.cuMemcpyDtoH(dst, src, n)

    def cuPointerGetAttribute(self, attr: Any, ptr: int) -> tuple[Any, ...]:
        return self._ok(self.pointer_device)

    # modules and kernels
    def cuModuleLoadDataEx(self, image: bytes, n: int, options: list[Any], values: list[Any]) -> tuple[Any, ...]:
        assert image.endswith(b"\0") and n == len(options) == len(values)
        self.calls.append(("cuModuleLoadDataEx", image))
        if b"%undeclared_register" in image:
            log = values[options.index(real.CUjit_option.CU_JIT_ERROR_LOG_BUFFER)]
            size = values[options.index(real.CUjit_option.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)]
            assert isinstance(log, bytearray) and size == len(log)
            text = b"ptxas application ptx input, line 12; error   : Unknown symbol '%undeclared_register'\0"
            log[:len(text)] = text
            return (CUresult.CUDA_ERROR_INVALID_PTX, None)
        return self._ok(real.CUmodule(0x99))

    def cuModuleGetFunction(self, module: Any, name: bytes) -> tuple[Any, ...]:
        if name.decode() not in self.kernels:
            return (CUresult.CUDA_ERROR_NOT_FOUND, None)
        return self._ok(name.decode())

    def cuFuncGetParamInfo(self, func: str, index: int) -> tuple[Any, ...]:
        sizes = self.kernels[func]
        if index >= len(sizes):
            return (CUresult.CUDA_ERROR_INVALID_VALUE, 0, 0)
        return self._ok(sum(sizes[:index]), sizes[index])

    def cuFuncGetAttribute(self, attr: Any, func: str) -> tuple[Any, ...]:
        assert attr == real.CUfunction_attribute.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
        return self._ok(0)

    def cuFuncSetAttribute(self, func: str, attr: Any, value: int) -> tuple[Any, ...]:
        self.calls.append(("cuFuncSetAttribute", (func, attr, value)))
        return self._ok()

    def cuStreamSynchronize(self, stream: Any) -> tuple[Any, ...]:
        self.calls.append(("cuStreamSynchronize", int(stream)))
        return (self.sync_result,)

    def _params(self, func: str, address: int) -> list[bytes]:
        sizes = self.kernels[func]
        pointers = (ctypes.c_void_p * len(sizes)).from_address(address)
        return [ctypes.string_at(pointers[k], size) for k, size in enumerate(sizes)]

    def cuLaunchKernel(self, func: str, gx: int, gy: int, gz: int, bx: int, by: int, bz: int, smem: int,
                       stream: Any, params: int, extra: int) -> tuple[Any, ...]:
        assert isinstance(params, int) and extra == 0
        self.calls.append(("cuLaunchKernel", (func, (gx, gy, gz), (bx, by, bz), smem)))
        self._run(func, self._params(func, params))
        return self._ok()

    def cuLaunchKernelEx(self, config: Any, func: str, params: int, extra: int) -> tuple[Any, ...]:
        c = config.attrs[0].value.clusterDim
        self.calls.append(("cuLaunchKernelEx", (func, config.numAttrs, (c.x, c.y, c.z), config.gridDimX)))
        self._run(func, self._params(func, params))
        return self._ok()

    def _run(self, func: str, raw: list[bytes]) -> None:
        if func == "vec_add":
            a, b, c, n = _u64(raw[0]), _u64(raw[1]), _u64(raw[2]), int.from_bytes(raw[3], "little")
            x = np.frombuffer(self.read(a, 4 * n), np.float32)
            y = np.frombuffer(self.read(b, 4 * n), np.float32)
            self.write(c, (x + y).tobytes())
        elif func == "axpy":
            x_ptr, y_ptr = _u64(raw[0]), _u64(raw[1])
            alpha = np.frombuffer(raw[2], np.float32)[0]
            n = int.from_bytes(raw[3], "little")
            x = np.frombuffer(self.read(x_ptr, 4 * n), np.float32)
            y = np.frombuffer(self.read(y_ptr, 4 * n), np.float32)
            self.write(y_ptr, (alpha * x + y).astype(np.float32).tobytes())
        elif func == "tma_probe":
            self.seen_tensor_map = raw[0]

    def cuTensorMapEncodeTiled(self, dtype: Any, rank: Any, address: int, dims: list[Any], strides: list[Any],
                               box: list[Any], steps: list[Any], interleave: Any, swizzle: Any, l2: Any,
                               oob: Any) -> tuple[Any, ...]:
        assert all(isinstance(d, real.cuuint64_t) for d in dims + strides)
        assert all(isinstance(b, real.cuuint32_t) for b in box + steps)
        self.calls.append(("cuTensorMapEncodeTiled", (dtype, int(rank), address, [int(d) for d in dims],
                                                      [int(s) for s in strides], [int(b) for b in box],
                                                      [int(e) for e in steps], interleave, swizzle, l2, oob)))
        return self._ok(FakeTensorMapResult(self.tensor_map_payload))

    def names(self) -> list[str]:
        return [name for name, _ in self.calls]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeDriver:
    driver = FakeDriver()
    monkeypatch.setattr(drvmod, "_cuda_module", driver)
    monkeypatch.setattr(drvmod, "_initialized", False)
    monkeypatch.setattr(drvmod, "_contexts", {})
    return driver


def _vec_add_params(n: int | None = None) -> list[rt.Param]:
    shape = (n,) if n is not None else (None,)
    return [rt.Param.pointer("f32", shape, name="a"), rt.Param.pointer("f32", shape, name="b"),
            rt.Param.pointer("f32", shape, out=True, name="c"), rt.Param.scalar("u32", name="n")]


# --- imports and the missing driver -----------------------------------------------------

def _python(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)


def test_import_does_not_touch_cuda_bindings():
    proc = _python("import sys, napkin_ir.runtime; print('cuda.bindings.driver' in sys.modules)")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


def test_the_launch_contract_imports_no_launch_machinery():
    """The runtime's names load on first use: the launch contract (what the compile cache
    reads a kernel's entry with) needs neither numpy nor the launch modules."""
    proc = _python("import sys, napkin_ir.runtime.contract, napkin_ir.runtime as rt; print(sorted(m for m in ('numpy', "
                   "'ml_dtypes', 'napkin_ir.runtime.arrays', 'napkin_ir.runtime.kernels') if m in sys.modules), "
                   "rt.Param.__module__, 'load_ptx' in dir(rt))")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["[]", "napkin_ir.runtime.params", "True"]


def test_import_without_cuda_bindings_and_a_clear_error_on_use():
    code = (
        "import sys\n"
        "sys.modules['cuda.bindings'] = None\n"  # makes `from cuda.bindings import driver` fail
        "import napkin_ir.runtime as rt\n"
        "try:\n"
        "    rt.load_ptx('.version 8.0')\n"
        "except rt.CudaError as e:\n"
        "    print(type(e).__name__, '|', e)\n"
    )
    proc = _python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("DriverUnavailableError |")
    assert "cuda-bindings" in proc.stdout


def test_missing_driver_library_is_a_cuda_error_naming_the_driver(monkeypatch):
    class NoLibcuda(FakeDriver):
        def cuInit(self, flags):
            raise OSError("libcuda.so.1: cannot open shared object file")

    monkeypatch.setattr(drvmod, "_cuda_module", NoLibcuda())
    monkeypatch.setattr(drvmod, "_initialized", False)
    monkeypatch.setattr(drvmod, "_contexts", {})
    with pytest.raises(rt.CudaError) as info:
        rt.load_ptx(KERNELS.VECTOR_PTX)
    assert isinstance(info.value, rt.DriverUnavailableError)
    assert "NVIDIA driver" in str(info.value) and "libcuda" in str(info.value)


def _driver_loads() -> bool:
    try:
        real.cuInit(0)
        return True
    except Exception:
        return False


@pytest.mark.skipif(_driver_loads(), reason="this machine has an NVIDIA driver")
def test_the_real_missing_driver_here(monkeypatch):
    monkeypatch.setattr(drvmod, "_initialized", False)
    monkeypatch.setattr(drvmod, "_contexts", {})
    for call in (lambda: rt.load_ptx(KERNELS.VECTOR_PTX), lambda: rt.DeviceArray((4,), "f32"), rt.get_context):
        with pytest.raises(rt.DriverUnavailableError, match="driver"):
            call()


def test_context_reads_device_attributes(fake):
    ctx = rt.get_context()
    assert ctx.compute_capability() == (9, 0)
    assert ctx.attribute("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN") == FakeDriver.OPTIN
    assert rt.get_context() is ctx


def test_check_names_the_cuda_error_and_the_operation(fake):
    assert rt.check((CUresult.CUDA_SUCCESS,), "nothing") is None
    assert rt.check((CUresult.CUDA_SUCCESS, 5), "one") == 5
    assert rt.check((CUresult.CUDA_SUCCESS, 1, 2), "two") == (1, 2)
    with pytest.raises(rt.CudaError) as info:
        rt.check((CUresult.CUDA_ERROR_INVALID_VALUE, None), "setting things up")
    assert info.value.name == "CUDA_ERROR_INVALID_VALUE" and info.value.code == 1
    assert str(info.value).startswith("setting things up failed: CUDA_ERROR_INVALID_VALUE")


def test_check_without_a_driver_falls_back_to_the_enum_name(monkeypatch):
    class Silent(FakeDriver):
        def cuGetErrorName(self, code):
            raise OSError("no libcuda")

    monkeypatch.setattr(drvmod, "_cuda_module", Silent())
    with pytest.raises(rt.CudaError, match="^launching failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES$"):
        rt.check((CUresult.CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,), "launching")


# --- parameter specs and argument binding -----------------------------------------------

def test_param_specs():
    assert rt.Param.pointer("bf16").dtype == np.dtype(ml_dtypes.bfloat16)
    assert rt.Param.pointer(np.int8).dtype == np.dtype(np.int8)
    assert [p.size for p in (rt.Param.pointer("f32"), rt.Param.scalar("u32"), rt.Param.scalar("f64"),
                             rt.Param.tensor_map())] == [8, 4, 8, 128]
    with pytest.raises(rt.ArgumentError, match="unsupported dtype complex64"):
        rt.Param.pointer(np.complex64)
    with pytest.raises(rt.ArgumentError, match="power of two"):
        rt.Param.pointer("f32", align=12)
    with pytest.raises(rt.ArgumentError, match="unknown type 'u16'"):
        rt.Param.scalar("u16")


def test_bind_describes_each_kind():
    a = np.ones(8, np.float32)
    dev = FakeCai(0x1000, (8,))
    bound = rt.bind_arguments(_vec_add_params(8), [a, dev, a, 7], kernel="vec_add")
    assert bound[0].host is a and bound[0].pointer is None
    assert bound[1].pointer == 0x1000 and bound[1].owner is dev
    assert isinstance(bound[3].scalar, ctypes.c_uint32) and bound[3].scalar.value == 7
    assert bytes(bound[1].storage()) == (0x1000).to_bytes(8, "little")
    assert bytes(bound[0].storage(0x2000)) == (0x2000).to_bytes(8, "little")


def test_bind_refuses_the_wrong_number_of_arguments():
    with pytest.raises(rt.ArgumentError, match=r"kernel 'vec_add' takes 4 arguments \(a, b, c, n\), found 3"):
        rt.bind_arguments(_vec_add_params(), [np.ones(4, np.float32)] * 3, kernel="vec_add")
    with pytest.raises(rt.ArgumentError, match="must be a list or tuple"):
        rt.bind_arguments(_vec_add_params(), np.ones(4, np.float32), kernel="vec_add")


def test_bind_refuses_the_wrong_dtype():
    a = np.ones(4, np.float32)
    with pytest.raises(rt.ArgumentError, match=r"argument 1 \('b'\): expected a float32 array, found float64"):
        rt.bind_arguments(_vec_add_params(), [a, np.ones(4), a, 4], kernel="vec_add")
    with pytest.raises(rt.ArgumentError, match=r"argument 0 \('a'\): expected a float32 array, found float16"):
        rt.bind_arguments(_vec_add_params(), [FakeCai(0x1000, (4,), "<f2"), a, a, 4], kernel="vec_add")


def test_bind_refuses_the_wrong_shape_and_accepts_wildcards():
    a = np.ones(4, np.float32)
    with pytest.raises(rt.ArgumentError, match=r"argument 2 \('c'\): expected shape \[4\], found \[5\]"):
        rt.bind_arguments(_vec_add_params(4), [a, a, np.ones(5, np.float32), 4], kernel="vec_add")
    with pytest.raises(rt.ArgumentError, match=r"expected shape \[\?, 8\], found \[4\]"):
        rt.bind_arguments([rt.Param.pointer("f32", (None, 8))], [a])
    assert len(rt.bind_arguments([rt.Param.pointer("f32", (None, 8))], [np.ones((3, 8), np.float32)])) == 1


def test_bind_refuses_non_contiguous_arrays():
    m = np.ones((4, 8), np.float32)
    with pytest.raises(rt.ArgumentError, match=r"argument 0: expected a C-contiguous array, found strides \(32, 8\)"):
        rt.bind_arguments([rt.Param.pointer("f32")], [m[:, ::2]])
    strided = FakeCai(0x1000, (4, 4), strides=(64, 4))
    with pytest.raises(rt.ArgumentError, match=r"expected a C-contiguous array, found strides \(64, 4\)"):
        rt.bind_arguments([rt.Param.pointer("f32")], [strided])
    # unit dimensions may carry any stride; explicit C strides are contiguous
    assert rt.bind_arguments([rt.Param.pointer("f32")], [FakeCai(0x1000, (4, 1), strides=(4, 99))])[0].pointer == 0x1000
    assert rt.bind_arguments([rt.Param.pointer("f32")], [FakeCai(0x1000, (2, 4), strides=(16, 4))])[0].pointer == 0x1000


def test_bind_refuses_misaligned_device_pointers():
    with pytest.raises(rt.ArgumentError,
                       match=r"argument 0 \('a'\): expected a device pointer aligned to 16 bytes, found 0x1004 "
                             r"\(4 bytes past a 16-byte boundary\)"):
        rt.bind_arguments([rt.Param.pointer("f32", name="a")], [FakeCai(0x1004, (4,))])
    assert rt.bind_arguments([rt.Param.pointer("f32", align=4)], [FakeCai(0x1004, (4,))])[0].pointer == 0x1004


def test_bind_refuses_read_only_outputs():
    frozen = np.ones(4, np.float32)
    frozen.flags.writeable = False
    out = rt.Param.pointer("f32", out=True)
    with pytest.raises(rt.ArgumentError, match="numpy array is read-only"):
        rt.bind_arguments([out], [frozen])
    with pytest.raises(rt.ArgumentError, match="marks it read-only"):
        rt.bind_arguments([out], [FakeCai(0x1000, (4,), readonly=True)])
    assert rt.bind_arguments([rt.Param.pointer("f32")], [frozen])[0].host is frozen


def test_bind_refuses_arrays_of_another_device_or_kind():
    a = np.ones(4, np.float32)
    with pytest.raises(rt.ArgumentError, match="lives on CUDA device 1, the kernel runs on device 0"):
        rt.bind_arguments([rt.Param.pointer("f32")], [FakeDlpack(a, 2, 1)], device=0)
    with pytest.raises(rt.ArgumentError, match="lives in ROCm memory"):
        rt.bind_arguments([rt.Param.pointer("f32")], [FakeDlpack(a, 10, 0)], device=0)
    with pytest.raises(rt.ArgumentError, match="expected a numpy array or a device array .* found list"):
        rt.bind_arguments([rt.Param.pointer("f32")], [[1.0, 2.0]])
    # host DLPack producers (torch CPU tensors) are host arrays: staged like numpy
    assert rt.bind_arguments([rt.Param.pointer("f32")], [FakeDlpack(a, 1, 0)])[0].host is not None


def test_dlpack_view_reads_the_capsule():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    view = dlpack_view(a, "x")
    assert view.pointer == a.ctypes.data and view.shape == (3, 4) and view.dtype == np.float32
    assert view.contiguous
    t = a.T
    view = dlpack_view(t, "x")
    assert view.strides == t.strides and not view.contiguous


def test_bind_checks_scalars():
    p = [rt.Param.scalar("u32", name="n")]
    with pytest.raises(rt.ArgumentError, match=r"argument 0 \('n'\): -1 does not fit in u32"):
        rt.bind_arguments(p, [-1])
    with pytest.raises(rt.ArgumentError, match="expected an int for u32, found float"):
        rt.bind_arguments(p, [3.0])
    with pytest.raises(rt.ArgumentError, match="found a bool"):
        rt.bind_arguments(p, [True])
    with pytest.raises(rt.ArgumentError, match="overflows f32"):
        rt.bind_arguments([rt.Param.scalar("f32")], [1e39])
    assert rt.bind_arguments([rt.Param.scalar("s64")], [np.int64(-5)])[0].scalar.value == -5
    assert rt.bind_arguments([rt.Param.scalar("f32")], [2])[0].scalar.value == 2.0


def test_bind_checks_tensor_maps():
    with pytest.raises(rt.ArgumentError, match=r"expected a TensorMap \(from encode_tiled or tensor_map_for\), found ndarray"):
        rt.bind_arguments([rt.Param.tensor_map()], [np.ones(4, np.float32)])
    plan = rt.plan_tiled(0x1000, "f32", (64, 64), None, (32, 32))
    tmap = rt.TensorMap(bytes(128), plan, device=1)
    with pytest.raises(rt.ArgumentError, match="memory on device 1, the kernel runs on device 0"):
        rt.bind_arguments([rt.Param.tensor_map()], [tmap], device=0)
    assert rt.bind_arguments([rt.Param.tensor_map()], [tmap], device=1)[0].blob == bytes(128)
    with pytest.raises(rt.ArgumentError, match="expected 128 bytes, found 64"):
        rt.TensorMap(bytes(64), plan)


# --- launch configuration and kernel parameters -----------------------------------------

def test_launch_dims_and_limits():
    assert launch_dims(7, "grid") == (7, 1, 1)
    assert launch_dims((2, 3), "grid") == (2, 3, 1)
    assert launch_dims(np.int64(5), "grid") == (5, 1, 1) and type(launch_dims((np.int32(2),), "grid")[0]) is int
    with pytest.raises(rt.ArgumentError, match=r"grid\[0\]: expected a positive int, found 2.0"):
        launch_dims(2.0, "grid")
    with pytest.raises(rt.ArgumentError, match="expected 1 to 3 dimensions, found 4"):
        launch_dims((1, 1, 1, 1), "grid")
    with pytest.raises(rt.ArgumentError, match=r"block\[1\]: expected a positive int, found 0"):
        launch_dims((32, 0), "block")
    with pytest.raises(rt.ArgumentError, match="2048 threads per block, at most 1024"):
        check_launch((1, 1, 1), (1024, 2, 1), None)
    with pytest.raises(rt.ArgumentError, match="not a whole number of clusters"):
        check_launch((3, 1, 1), (128, 1, 1), (2, 1, 1))
    check_launch((4, 1, 1), (1024, 1, 1), (2, 1, 1))


def test_dynamic_shared_memory_decision():
    assert not needs_smem_optin(48 * 1024, 0, 232448, "k")
    assert needs_smem_optin(64 * 1024, 0, 232448, "k")
    with pytest.raises(rt.ArgumentError, match=r"232448 bytes .*plus 1024 static.* opt-in limit of 232448"):
        needs_smem_optin(232448, 1024, 232448, "k")


def test_param_sizes_against_the_compiled_kernel():
    params = _vec_add_params()
    check_param_sizes(params, [8, 8, 8, 4], "vec_add")
    with pytest.raises(rt.ArgumentError, match="declares 3 parameters, but 4 parameter specs"):
        check_param_sizes(params, [8, 8, 8], "vec_add")
    with pytest.raises(rt.ArgumentError, match=r"parameter 3 \('n'\): the spec \(scalar u32\) is 4 bytes, the kernel's parameter is 8"):
        check_param_sizes(params, [8, 8, 8, 8], "vec_add")


def test_kernel_params_point_at_each_value():
    blob = bytes(range(128))
    packed = KernelParams([ctypes.c_uint64(0xDEADBEEF00), ctypes.c_uint32(7), ctypes.c_float(1.5), blob])
    pointers = (ctypes.c_void_p * 4).from_address(packed.address)
    assert ctypes.string_at(pointers[0], 8) == (0xDEADBEEF00).to_bytes(8, "little")
    assert ctypes.string_at(pointers[1], 4) == (7).to_bytes(4, "little")
    assert ctypes.string_at(pointers[2], 4) == np.float32(1.5).tobytes()
    assert ctypes.string_at(pointers[3], 128) == blob
    assert pointers[3] % 64 == 0


# --- tensor map checks ------------------------------------------------------------------

def test_plan_tiled_reverses_to_the_driver_order():
    plan = rt.plan_tiled(0x10000, "bf16", (96, 200), (512, 2), (32, 64), swizzle="128B")
    assert plan.data_type == "BFLOAT16" and plan.rank == 2
    assert plan.global_dim == (200, 96) and plan.global_strides == (512,)
    assert plan.box_dim == (64, 32) and plan.element_strides == (1, 1)
    plan3 = rt.plan_tiled(0x10000, "f32", (4, 8, 16), None, (1, 8, 16))
    assert plan3.global_dim == (16, 8, 4) and plan3.global_strides == (64, 512)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"global_shape": (2,) * 6, "box_shape": (1,) * 6}, "1 to 5 dimensions, found 6"),
    ({"global_shape": (), "box_shape": ()}, "1 to 5 dimensions, found 0"),
    ({"address": 0x10008}, r"global address 0x10008 is not 16-byte aligned"),
    ({"address": 0}, "non-null device pointer"),
    ({"global_strides_bytes": (260, 4)}, r"global_strides_bytes\[0\]: TMA strides must be positive multiples of 16 bytes, found 260"),
    ({"global_strides_bytes": (256, 8)}, r"innermost dimension\) must be the element size, 4 bytes"),
    ({"global_strides_bytes": (256,)}, "expected 2 strides"),
    ({"box_shape": (0, 32)}, r"box_shape\[0\]: TMA boxes are 1..256 elements per dimension, found 0"),
    ({"box_shape": (257, 32)}, r"box_shape\[0\]: .* found 257"),
    ({"box_shape": (32, 2)}, r"spans 8 bytes; TMA needs a multiple of 16"),
    ({"box_shape": (32,)}, "expected 2 dimensions like global_shape"),
    ({"swizzle": "128B", "box_shape": (32, 64)}, r"spans 256 bytes, more than the 128-byte span of swizzle '128B'"),
    ({"swizzle": "32B", "box_shape": (32, 16)}, r"spans 64 bytes, more than the 32-byte span"),
    ({"swizzle": "256B"}, "swizzle: expected one of"),
    ({"element_strides": (1, 9)}, r"element_strides\[1\]: expected 1..8, found 9"),
    ({"dtype": "s32", "oob_fill": "nan"}, "oob_fill='nan' needs a floating-point dtype, found int32"),
    ({"l2_promotion": "512B"}, "l2_promotion: expected one of"),
    ({"global_shape": (64, 0)}, r"global_shape\[1\]: expected 1..2\*\*32 elements, found 0"),
    ({"dtype": np.complex64}, "unsupported dtype complex64"),
])
def test_plan_tiled_refuses(kwargs, message):
    args = {"address": 0x10000, "dtype": "f32", "global_shape": (64, 64), "global_strides_bytes": None,
            "box_shape": (32, 32)}
    options = {k: kwargs.pop(k) for k in ("swizzle", "element_strides", "l2_promotion", "oob_fill") if k in kwargs}
    args.update(kwargs)
    with pytest.raises(rt.ArgumentError, match=message):
        rt.plan_tiled(args["address"], args["dtype"], args["global_shape"], args["global_strides_bytes"],
                      args["box_shape"], **options)


def test_plan_tiled_accepts_swizzle_at_its_span():
    assert rt.plan_tiled(0x10000, "bf16", (64, 64), None, (8, 64), swizzle="128B").box_dim == (64, 8)
    assert rt.plan_tiled(0x10000, "f32", (64, 64), None, (8, 8), swizzle="32B").swizzle == "32B"


def test_tensor_maps_need_device_memory():
    with pytest.raises(rt.ArgumentError, match="expected a device array, found ndarray"):
        rt.tensor_map_for(np.ones((64, 64), np.float32), (32, 32))
    with pytest.raises(rt.ArgumentError, match="tensor map base: expected a device pointer"):
        rt.encode_tiled(np.ones((64, 64), np.float32), "f32", (64, 64), None, (32, 32))


# --- the launch path, through the fake driver -------------------------------------------

def test_launch_with_numpy_copies_in_runs_and_copies_back(fake):
    module = rt.load_ptx(KERNELS.VECTOR_PTX, name="vector")
    kernel = module.kernel("vec_add", _vec_add_params(1000))
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(1000, dtype=np.float32), rng.standard_normal(1000, dtype=np.float32)
    c = np.full(1000, np.nan, np.float32)
    kernel.launch(grid=4, block=256, args=[a, b, c, 900])
    np.testing.assert_array_equal(c[:900], a[:900] + b[:900])
    assert np.isnan(c[900:]).all()  # copied in (NaN) and back: untouched past n
    names = fake.names()
    launch = names.index("cuLaunchKernel")
    assert names.count("cuMemcpyHtoDAsync") == 3 and names.count("cuMemcpyDtoHAsync") == 1
    assert "cuStreamSynchronize" in names[launch:]
    assert names.index("cuMemcpyDtoHAsync") > names.index("cuStreamSynchronize")
    assert fake.memory == {}  # staging buffers freed
    assert fake.calls[launch][1] == ("vec_add", (4, 1, 1), (256, 1, 1), 0)


def test_launch_with_device_arrays_and_a_float_scalar(fake):
    module = rt.load_ptx(KERNELS.VECTOR_PTX)
    axpy = module.kernel("axpy", [rt.Param.pointer("f32"), rt.Param.pointer("f32", out=True),
                                  rt.Param.scalar("f32"), rt.Param.scalar("u32")])
    x, y = np.arange(64, dtype=np.float32), np.ones(64, np.float32)
    dx, dy = rt.DeviceArray.from_numpy(x), rt.DeviceArray.from_numpy(y)
    before = fake.names().count("cuMemAlloc")
    axpy.launch(1, 64, [dx, dy, 0.5, 64])
    assert fake.names().count("cuMemAlloc") == before  # used in place, nothing staged
    np.testing.assert_array_equal(dy.to_numpy(), 0.5 * x + y)
    dx.free()
    dy.free()
    assert fake.memory == {}


def test_sync_launch_surfaces_kernel_errors_and_still_frees(fake):
    kernel = rt.load_ptx(KERNELS.VECTOR_PTX).kernel("vec_add", _vec_add_params())
    fake.sync_result = CUresult.CUDA_ERROR_ILLEGAL_ADDRESS
    a = np.ones(8, np.float32)
    with pytest.raises(rt.CudaError, match=r"running kernel 'vec_add' .*CUDA_ERROR_ILLEGAL_ADDRESS"):
        kernel.launch(1, 8, [a, a, a.copy(), 8])
    assert fake.memory == {}


def test_async_launch_on_device_memory_does_not_synchronise(fake):
    kernel = rt.load_ptx(KERNELS.VECTOR_PTX).kernel("vec_add", _vec_add_params())
    arrays = [rt.DeviceArray.from_numpy(np.ones(8, np.float32)) for _ in range(3)]
    kernel.launch(1, 8, [*arrays, 8], sync=False, stream=7)
    assert "cuLaunchKernel" in fake.names() and "cuStreamSynchronize" not in fake.names()
    np.testing.assert_array_equal(arrays[2].to_numpy(), np.full(8, 2, np.float32))


def test_large_dynamic_shared_memory_raises_the_attribute_first(fake):
    kernel = rt.load_ptx(KERNELS.SMEM_REVERSE_PTX).kernel("smem_reverse", [rt.Param.pointer("f32"), rt.Param.pointer("f32", out=True)])
    a = np.ones(16384, np.float32)
    kernel.launch(1, 256, [a, a.copy()], smem=64 * 1024)
    names = fake.names()
    assert names.index("cuFuncSetAttribute") < names.index("cuLaunchKernel")
    func, attr, value = fake.calls[names.index("cuFuncSetAttribute")][1]
    assert attr == real.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES and value == 65536
    kernel.launch(1, 256, [a, a.copy()], smem=64 * 1024)
    assert fake.names().count("cuFuncSetAttribute") == 1  # raised once per kernel
    launches = fake.names().count("cuLaunchKernel")
    with pytest.raises(rt.ArgumentError, match="exceed this device's opt-in limit of 232448"):
        kernel.launch(1, 256, [a, a.copy()], smem=256 * 1024)
    assert fake.names().count("cuLaunchKernel") == launches


def test_small_dynamic_shared_memory_leaves_the_attribute(fake):
    kernel = rt.load_ptx(KERNELS.SMEM_REVERSE_PTX).kernel("smem_reverse", [rt.Param.pointer("f32"), rt.Param.pointer("f32", out=True)])
    a = np.ones(16, np.float32)
    kernel.launch(1, 32, [a, a.copy()], smem=48 * 1024)
    assert "cuFuncSetAttribute" not in fake.names()


def test_bad_ptx_error_carries_the_jit_log(fake):
    with pytest.raises(rt.CudaError) as info:
        rt.load_ptx(KERNELS.BAD_PTX, name="broken.ptx")
    assert info.value.name == "CUDA_ERROR_INVALID_PTX"
    assert "Unknown symbol '%undeclared_register'" in info.value.log
    assert "loading module broken.ptx failed" in str(info.value) and info.value.log in str(info.value)


def test_ptx_is_sent_nul_terminated_and_cubins_as_given(fake):
    rt.load_ptx(KERNELS.VECTOR_PTX)
    image = fake.calls[-1][1]
    assert image == KERNELS.VECTOR_PTX.encode() + b"\0"
    with pytest.raises(rt.ArgumentError, match="expected the cubin as bytes"):
        rt.load_cubin("not bytes")  # type: ignore[arg-type]


def test_missing_kernel_names_the_kernel_and_the_module(fake):
    module = rt.load_ptx(KERNELS.VECTOR_PTX, name="vector.ptx")
    with pytest.raises(rt.CudaError, match=r"^looking up kernel 'vec_sub' in module vector.ptx failed: CUDA_ERROR_NOT_FOUND "
                                           r"\(fake description; the module defines vec_add, axpy\)$"):
        module.kernel("vec_sub", [])


def test_kernel_lookup_compares_specs_with_the_kernel(fake):
    module = rt.load_ptx(KERNELS.VECTOR_PTX)
    with pytest.raises(rt.ArgumentError, match="declares 4 parameters, but 3 parameter specs"):
        module.kernel("vec_add", _vec_add_params()[:3])


def test_arrays_on_another_device_are_refused_before_launch(fake):
    kernel = rt.load_ptx(KERNELS.VECTOR_PTX).kernel("vec_add", _vec_add_params())
    fake.pointer_device = 1
    with pytest.raises(rt.ArgumentError, match="lives on device 1, the kernel runs on device 0"):
        kernel.launch(1, 4, [FakeCai(0x1000, (4,))] * 3 + [4])
    assert "cuLaunchKernel" not in fake.names()


def test_cluster_launch_uses_launch_kernel_ex(fake):
    kernel = rt.load_ptx(KERNELS.VECTOR_PTX).kernel("vec_add", _vec_add_params())
    a = np.ones(8, np.float32)
    c = np.zeros(8, np.float32)
    kernel.launch((2, 1), 4, [a, a, c, 8], cluster=(2, 1, 1))
    assert fake.calls[fake.names().index("cuLaunchKernelEx")][1] == ("vec_add", 1, (2, 1, 1), 2)
    np.testing.assert_array_equal(c, 2 * a)


def test_tensor_map_encoding_and_passing_by_value(fake):
    matrix = rt.DeviceArray((96, 200), "bf16")
    tmap = rt.tensor_map_for(matrix, (32, 64), swizzle="128B")
    call = fake.calls[fake.names().index("cuTensorMapEncodeTiled")][1]
    dtype, rank, address, dims, strides, box, steps, interleave, swizzle, l2, oob = call
    assert dtype == real.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 and rank == 2
    assert address == matrix.ptr and dims == [200, 96] and strides == [400] and box == [64, 32] and steps == [1, 1]
    assert interleave == real.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE
    assert swizzle == real.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B
    assert l2 == real.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE
    assert oob == real.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE
    assert tmap.data == fake.tensor_map_payload and tmap.owner is matrix
    kernel = rt.load_ptx(KERNELS.TMA_TILE_PTX).kernel("tma_probe", [rt.Param.tensor_map(), rt.Param.pointer("f32", out=True)])
    kernel.launch(1, 256, [tmap, rt.DeviceArray((4,), "f32")])
    assert fake.seen_tensor_map == fake.tensor_map_payload


def test_encode_tiled_with_explicit_strides(fake):
    base = rt.DeviceArray((80, 160), "f32")
    rt.encode_tiled(base, "f32", (80, 160), (640, 4), (32, 64), l2_promotion="128B", oob_fill="nan")
    _, rank, address, dims, strides, box, _, _, _, l2, oob = fake.calls[-1][1]
    assert (rank, address, dims, strides, box) == (2, base.ptr, [160, 80], [640], [64, 32])
    assert l2 == real.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_128B
    assert oob == real.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA


def test_device_array_round_trip_and_interface(fake):
    x = np.arange(6, dtype=ml_dtypes.bfloat16).reshape(2, 3)
    d = rt.DeviceArray.from_numpy(x)
    assert d.to_numpy().dtype == x.dtype and (d.to_numpy() == x).all()
    assert d.__cuda_array_interface__["data"] == (d.ptr, False) and d.__cuda_array_interface__["shape"] == (2, 3)
    with pytest.raises(rt.ArgumentError, match=r"expected bfloat16\[2, 3\], found float32\[2, 3\]"):
        d.copy_from(np.zeros((2, 3), np.float32))
    bound = rt.bind_arguments([rt.Param.pointer("bf16", (2, 3))], [d])  # the dtype survives (no '<V2')
    assert bound[0].pointer == d.ptr


# --- the GPU tests' PTX assembles -------------------------------------------------------

def _find_ptxas() -> str | None:
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


def _ptxas(source: str, arch: str) -> subprocess.CompletedProcess[str]:
    ptxas = _find_ptxas()
    if ptxas is None:
        pytest.skip("ptxas not found (install the test extra)")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kernel.ptx"
        path.write_text(source)
        return subprocess.run([ptxas, f"-arch={arch}", str(path), "-o", os.devnull], capture_output=True, text=True)


@pytest.mark.parametrize("name", sorted(KERNELS.GOOD_PTX))
def test_gpu_test_ptx_assembles(name):
    source, arch = KERNELS.GOOD_PTX[name]
    proc = _ptxas(source, arch)
    assert proc.returncode == 0, proc.stderr


def test_bad_ptx_is_refused_by_ptxas():
    proc = _ptxas(KERNELS.BAD_PTX, "sm_80")
    assert proc.returncode != 0 and "undeclared_register" in proc.stderr
