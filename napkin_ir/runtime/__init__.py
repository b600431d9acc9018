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

from __future__ import annotations

import importlib
from typing import Any

# public name -> the module that defines it, imported on first use: the launch contract
# (`runtime.contract`, what a cached kernel is read with) needs neither numpy's bfloat16
# (ml_dtypes) nor the launch machinery
_NAMES = {
    "DTYPES": "arrays", "DeviceArray": "arrays", "normalize_dtype": "arrays",
    "ArgumentError": "driver", "Context": "driver", "CudaError": "driver", "DriverUnavailableError": "driver",
    "check": "driver", "get_context": "driver",
    "Kernel": "kernels", "Module": "kernels", "load_cubin": "kernels", "load_ptx": "kernels",
    "BoundArgument": "params", "Param": "params", "bind_arguments": "params",
    "TensorMap": "tensormap", "TiledPlan": "tensormap", "encode_tiled": "tensormap", "plan_tiled": "tensormap",
    "tensor_map_for": "tensormap",
}

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


def __getattr__(name: str) -> Any:
    if name in _NAMES:
        value = getattr(importlib.import_module(f"napkin_ir.runtime.{_NAMES[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'napkin_ir.runtime' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
