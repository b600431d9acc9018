"""The GPU end of the pipeline: load the PTX that the `ptx` level prints and launch it.

The compiler stops at PTX text; this package hands it to the CUDA driver (through
cuda-python's `cuda.bindings.driver`), JIT-compiles it for the device, and launches its
kernels on numpy arrays (copied in and back) or device arrays (DeviceArray, torch, cupy,
anything with `__cuda_array_interface__` or DLPack, used in place), with TMA tensor maps
passed by value. Arguments are checked against the kernel's parameter specs before
anything runs; every driver call is checked and fails as `CudaError` naming the CUDA
error. It imports without a GPU or driver; only using it needs one.

    module = load_ptx(ptx_text)
    add = module.kernel("vec_add", [Param.pointer("f32", (n,)), Param.pointer("f32", (n,)),
                                    Param.pointer("f32", (n,), out=True), Param.scalar("u32")])
    add.launch(grid=(n + 255) // 256, block=256, args=[a, b, c, n])
"""

from napkin_ir.runtime.arrays import DTYPES, DeviceArray, normalize_dtype
from napkin_ir.runtime.driver import (
    ArgumentError,
    Context,
    CudaError,
    DriverUnavailableError,
    check,
    get_context,
)
from napkin_ir.runtime.kernels import Kernel, Module, load_cubin, load_ptx
from napkin_ir.runtime.params import BoundArgument, Param, bind_arguments
from napkin_ir.runtime.tensormap import TensorMap, TiledPlan, encode_tiled, plan_tiled, tensor_map_for

__all__ = [
    "DTYPES",
    "ArgumentError",
    "BoundArgument",
    "Context",
    "CudaError",
    "DeviceArray",
    "DriverUnavailableError",
    "Kernel",
    "Module",
    "Param",
    "TensorMap",
    "TiledPlan",
    "bind_arguments",
    "check",
    "encode_tiled",
    "get_context",
    "load_cubin",
    "load_ptx",
    "normalize_dtype",
    "plan_tiled",
    "tensor_map_for",
]
