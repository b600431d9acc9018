"""`kernel(bound=...)`, the cheapest launch, without a GPU: the driver's cuLaunchKernel is
a recording stand-in for the direct (ctypes) launch, cuda-bindings' a recording stub.

A bound call hands the driver what `bind` packed (the function, grid, block, shared
memory, the `void*[]` of parameters, each pointing at its 8-byte address) and the stream,
and refuses a bound set that another kernel made, or that names another device.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import pytest

from napkin_ir.build import compile_kernel
from napkin_ir.diagrams import gemm
from napkin_ir.runtime import kernels
from napkin_ir.runtime.compiled import BoundArguments, CompiledKernel
from napkin_ir.runtime.driver import ArgumentError

real = pytest.importorskip("cuda.bindings.driver")

M, N, K = 128, 256, 64
FUNCTION = 0x7F00_0000_1000  # the CUfunction's address the stand-in kernel has


class Dlpack:
    """Device memory as DLPack presents it (a numpy capsule, never dereferenced)."""

    def __init__(self, *shape: int, device_id: int = 0):
        self.array, self.device_id = np.zeros(shape, np.float16), device_id

    def __dlpack__(self, stream: Any = None) -> Any:
        return self.array.__dlpack__()

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, self.device_id)


class Stub:
    """cuda-bindings with cuLaunchKernel recorded; enums and types are the real ones."""

    def __init__(self) -> None:
        self.launches: list[tuple] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(real, name)

    def cuLaunchKernel(self, *args: Any) -> tuple[Any, ...]:
        self.launches.append(args)
        return (real.CUresult.CUDA_SUCCESS,)


class Context:
    ordinal = 0

    def activate(self) -> None:
        pass


class Kernel:
    name, handle = "matmul", FUNCTION

    def __init__(self) -> None:
        self.module = type("Module", (), {"context": Context()})()

    def _allow_dynamic_smem(self, smem: int) -> None:
        pass


@pytest.fixture(scope="module")
def gemm_kernel() -> CompiledKernel:
    return compile_kernel(gemm(M, N, K, "f16"), 'napkin-sm80{block="128,128,32"}')


class Calls(list):
    fn: Any


@pytest.fixture
def direct(monkeypatch) -> Calls:
    """The direct launch's calls; it returns what `direct.fn.code` says (0: success)."""
    calls = Calls()

    def cu_launch_kernel(*args: Any) -> int:
        calls.append(args)
        return cu_launch_kernel.code

    cu_launch_kernel.code = 0
    calls.fn = cu_launch_kernel
    monkeypatch.setattr(kernels, "_direct", [cu_launch_kernel])
    return calls


@pytest.fixture
def stub(monkeypatch) -> Stub:
    s = Stub()
    monkeypatch.setattr(kernels, "cuda", lambda: s)
    monkeypatch.setattr(kernels, "_streams", {})
    return s


def fresh(kernel: CompiledKernel) -> CompiledKernel:
    k = CompiledKernel(kernel.ptx, kernel.contract)
    k._kernels[0] = Kernel()  # type: ignore[assignment]
    return k


def arrays() -> dict[str, Dlpack]:
    return {"a": Dlpack(M, K), "b": Dlpack(K, N), "out": Dlpack(M, N)}


def value(pointer: Any) -> int | None:
    return None if pointer is None else pointer.value


def test_a_bound_call_hands_the_driver_what_bind_packed(gemm_kernel, direct, stub):
    kernel = fresh(gemm_kernel)
    bound = kernel.bind(arrays())
    assert isinstance(bound, BoundArguments) and bound.kernel is kernel and bound.device == 0
    launcher = kernel.launcher(0)
    for stream, expected in ((None, None), (0, None), (0x5555, 0x5555), (0x5555, 0x5555), (7, 7)):
        direct.clear()
        kernel(bound=bound, stream=stream)
        (args,) = direct
        assert value(args[0]) == FUNCTION
        assert args[1:8] == (*launcher.grid, *launcher.block, launcher.smem)
        assert all(type(a) is int for a in args[1:8])  # passed as C ints, no argtypes
        assert value(args[8]) == expected and args[10] is None
        # kernelParams: one void* per parameter, each at the 8 bytes of its device address
        entries = (ctypes.c_void_p * len(bound)).from_address(args[9].value)
        assert [ctypes.c_uint64.from_address(e).value for e in entries] == list(bound)
    assert stub.launches == []  # cuda-bindings' launch never used


def test_bound_arguments_keep_their_arrays_alive(gemm_kernel, direct, stub):
    """The bound set holds the arrays it was made from: a caller that drops its tensors
    after `bind` does not leave the launch pointing at freed memory."""
    import gc
    import weakref

    kernel = fresh(gemm_kernel)
    given = arrays()
    refs = [weakref.ref(a) for a in given.values()]
    bound = kernel.bind(given)
    del given
    gc.collect()
    assert all(r() is not None for r in refs)
    del bound
    gc.collect()
    assert all(r() is None for r in refs)


def test_a_bound_call_on_a_stream_object_goes_through_cuda_bindings(gemm_kernel, direct, stub):
    kernel = fresh(gemm_kernel)
    bound = kernel.bind(arrays())
    kernel(bound=bound, stream=type("Stream", (), {"cuda_stream": 0x77})())
    (args,) = stub.launches
    assert direct == [] and int(args[0]) == FUNCTION and int(args[8]) == 0x77 and args[9] == ctypes.addressof(bound.params.array)


def test_without_the_direct_launch_cuda_bindings_launches(gemm_kernel, stub, monkeypatch):
    monkeypatch.setattr(kernels, "_direct", [None])  # NAPKIN_DIRECT_LAUNCH=0, or no libcuda through ctypes
    kernel = fresh(gemm_kernel)
    bound = kernel.bind(arrays())
    assert bound.direct is None
    kernel(bound=bound, stream=9)
    kernel(a=arrays()["a"], b=arrays()["b"], out=arrays()["out"], stream=9)
    assert len(stub.launches) == 2 and int(stub.launches[0][8]) == 9


def test_a_refused_direct_launch_is_a_cuda_error(gemm_kernel, direct, stub):
    from napkin_ir.runtime.driver import CudaError

    kernel = fresh(gemm_kernel)
    bound = kernel.bind(arrays())
    direct.fn.code = int(real.CUresult.CUDA_ERROR_INVALID_VALUE)
    with pytest.raises(CudaError, match=r"launching kernel 'matmul' .* CUDA_ERROR_INVALID_VALUE"):
        kernel(bound=bound, stream=5)


def test_a_bound_set_of_another_kernel_or_device_is_refused(gemm_kernel, direct, stub):
    kernel, other = fresh(gemm_kernel), fresh(gemm_kernel)
    bound = kernel.bind(arrays())
    with pytest.raises(ArgumentError, match=r"bound= holds arguments that 'matmul' \(another CompiledKernel of the "
                                            r"same name\) bound; .* call matmul.bind"):
        other(bound=bound)
    with pytest.raises(ArgumentError, match=r"bound on CUDA device 0, but device=1 was asked for"):
        kernel(bound=bound, device=1)
    with pytest.raises(ArgumentError, match=r"give either bound= or the arrays \(a\), not both"):
        kernel(bound=bound, a=arrays()["a"])
    assert direct == []
    kernel(bound=bound, device=0)
    assert len(direct) == 1


def test_launch_dimensions_past_a_c_int_go_through_cuda_bindings():
    assert kernels._direct_launcher(lambda *a: 0, FUNCTION, (2**31, 1, 1, 128, 1, 1, 0)) is None
    assert kernels._direct_launcher(lambda *a: 0, FUNCTION, (2**31 - 1, 1, 1, 128, 1, 1, 0)) is not None


def test_stream_pointers_are_made_once():
    assert kernels.stream_pointer(None) is None and kernels.stream_pointer(0) is None
    p = kernels.stream_pointer(0x1234)
    assert p.value == 0x1234 and kernels.stream_pointer(0x1234) is p


def test_an_accumulated_output_is_zeroed_on_the_stream_before_each_launch(direct, stub, monkeypatch):
    """A split GEMM adds each block's part into its f32 output: every launch, bound or not,
    first zeroes it on the launch's stream (cuMemsetD32Async, which a graph captures),
    then launches through cuda-bindings (the direct launch has no memset)."""
    order: list[tuple] = []
    monkeypatch.setattr(stub, "cuMemsetD32Async", lambda *a: order.append(("memset", *a)) or (real.CUresult.CUDA_SUCCESS,),
                        raising=False)
    monkeypatch.setattr(stub, "cuLaunchKernel", lambda *a: order.append(("launch",)) or (real.CUresult.CUDA_SUCCESS,))
    split = compile_kernel(gemm(M, N, 256, "f16", out_dtype="f32"), 'napkin-sm80{block="128,128,32" split=4}')
    assert split.contract.param("out").role == "accumulate"
    kernel = fresh(split)
    out = Dlpack(M, N)
    out.array = np.zeros((M, N), np.float32)
    given = {"a": Dlpack(M, 256), "b": Dlpack(256, N), "out": out}
    bound = kernel.bind(given)
    kernel(bound=bound, stream=0x5555)
    kernel(stream=0x5555, **given)
    assert direct == []
    assert [o[0] for o in order] == ["memset", "launch", "memset", "launch"]
    memset = order[0]
    assert memset[1] == bound[2] and memset[2:4] == (0, M * N) and int(memset[4]) == 0x5555


def test_a_cluster_launches_through_the_drivers_launch_kernel_ex(stub, monkeypatch):
    """A kernel launched in clusters goes to the driver's cuLaunchKernelEx through ctypes:
    the config (grid, block, shared memory, stream) and its one attribute (the cluster's
    dimensions) laid out as the driver's structs, one config per stream, made once."""
    calls: list[tuple] = []

    def cu_launch_kernel_ex(config: Any, function: Any, params: Any, extra: Any) -> int:
        c = config.contents
        attribute = c.attrs[0]
        calls.append(((c.gridDimX, c.gridDimY, c.gridDimZ), (c.blockDimX, c.blockDimY, c.blockDimZ), c.sharedMemBytes,
                      c.hStream, c.numAttrs, attribute.id, tuple(attribute.value[:3]), function.value, params.value, extra,
                      ctypes.addressof(c)))
        return 0

    monkeypatch.setattr(kernels, "_direct_ex", [cu_launch_kernel_ex])
    launcher = kernels.Launcher(Kernel(), (1, 64, 2), 384, 140416, cluster=(1, 1, 2))  # type: ignore[arg-type]
    params = launcher.params_for((0x1000, 0x2000, 0x3000))
    launcher.launch_params(params, 0x77)
    launcher.launch_params(params, 0x77)
    launcher.launch_params(params, None)
    assert stub.launches == []  # nothing through cuda-bindings
    first, again, default = calls
    assert first[:10] == ((1, 64, 2), (384, 1, 1), 140416, 0x77, 1, kernels.CLUSTER_DIMENSION, (1, 1, 2), FUNCTION,
                          params.pointer.value, None)
    assert again[10] == first[10] and default[3] is None and default[10] != first[10]
    assert ctypes.sizeof(kernels._LaunchAttribute) == 72 and ctypes.sizeof(kernels._LaunchConfig) == 56
    assert (kernels._LaunchConfig.hStream.offset, kernels._LaunchConfig.attrs.offset, kernels._LaunchConfig.numAttrs.offset) == (32, 40, 48)


def test_a_refused_cluster_launch_is_a_cuda_error(stub, monkeypatch):
    monkeypatch.setattr(kernels, "_direct_ex", [lambda *a: int(real.CUresult.CUDA_ERROR_INVALID_CLUSTER_SIZE)])
    launcher = kernels.Launcher(Kernel(), (1, 64, 2), 384, 140416, cluster=(1, 1, 2))  # type: ignore[arg-type]
    with pytest.raises(Exception, match="CUDA_ERROR_INVALID_CLUSTER_SIZE"):
        launcher.launch_params(launcher.params_for((0x1000, 0x2000, 0x3000)), 0x77)
