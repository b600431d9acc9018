"""Element types, views of device memory, and device arrays.

Device memory comes as the runtime's own `DeviceArray`, a torch tensor, or any object
exposing `__cuda_array_interface__` (cupy, numba) or DLPack; `device_view` reads what each
says of its memory (pointer, shape, dtype, strides, device) without copying it. Torch
tensors are read directly (`data_ptr()`, `stride()`, `device`), never through DLPack,
which refuses tensors that require grad (every `nn.Parameter`) and costs a capsule a call. Tensor
maps (`tensormap.py`) and argument binding (`params.py`) build on these views.
"""

from __future__ import annotations

import ctypes
import dataclasses
import math
import sys
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

from napkin_ir.runtime.driver import ArgumentError, Context, check, cuda, get_context

# --- dtypes -----------------------------------------------------------------------------

DTYPES: dict[str, np.dtype] = {
    "float16": np.dtype(np.float16),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "float32": np.dtype(np.float32),
    "float64": np.dtype(np.float64),
    "int32": np.dtype(np.int32),
    "uint32": np.dtype(np.uint32),
    "int64": np.dtype(np.int64),
    "uint8": np.dtype(np.uint8),
    "int8": np.dtype(np.int8),
}
_ALIASES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64", "s32": "int32",
            "i32": "int32", "u32": "uint32", "s64": "int64", "i64": "int64", "u8": "uint8", "s8": "int8", "i8": "int8"}


def normalize_dtype(dtype: Any) -> np.dtype:
    """A supported numpy dtype from a dtype, a numpy name or a PTX-style short name ("bf16")."""
    if isinstance(dtype, str) and dtype in _ALIASES:
        dtype = _ALIASES[dtype]
    if isinstance(dtype, str) and dtype in DTYPES:
        return DTYPES[dtype]
    try:
        found = np.dtype(dtype)
    except TypeError as exc:
        raise ArgumentError(f"unknown dtype {dtype!r}; supported: {', '.join(DTYPES)}") from exc
    for supported in DTYPES.values():
        if found == supported:
            return supported
    raise ArgumentError(f"unsupported dtype {dtype_name(found)}; supported: {', '.join(DTYPES)}")


def dtype_name(dtype: np.dtype) -> str:
    for name, supported in DTYPES.items():
        if dtype == supported:
            return name
    return str(dtype)


# --- sizes and shapes -------------------------------------------------------------------

TENSOR_MAP_BYTES = 128  # a CUtensorMap, passed by value


def format_shape(shape: Sequence[int | None]) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


# --- views of device memory -------------------------------------------------------------

@dataclass(frozen=True)
class DeviceView:
    """What an argument says about its memory: where it is, its layout, who keeps it alive."""

    pointer: int
    shape: tuple[int, ...]
    dtype: np.dtype
    strides: tuple[int, ...] | None  # bytes; None: C-contiguous
    device: int | None  # ordinal where the producer says so (DLPack), else None
    readonly: bool
    owner: Any
    source: str  # "DeviceArray", "torch", "__cuda_array_interface__" or "DLPack"

    @property
    def contiguous(self) -> bool:
        return self.strides is None or is_c_contiguous(self.shape, self.strides, self.dtype.itemsize)


def is_c_contiguous(shape: Sequence[int], strides: Sequence[int], itemsize: int) -> bool:
    if any(d == 0 for d in shape):
        return True
    expected = itemsize
    for d, s in zip(reversed(shape), reversed(strides)):
        if d != 1 and s != expected:
            return False
        expected *= d
    return True


def _cuda_array_interface(obj: Any) -> dict[str, Any] | None:
    try:
        cai = obj.__cuda_array_interface__
    except Exception:  # e.g. torch raises TypeError for bfloat16: DLPack may still work
        return None
    return cai if isinstance(cai, dict) else None


def _view_from_cai(obj: Any, cai: dict[str, Any], where: str) -> DeviceView | None:
    shape = tuple(int(d) for d in cai["shape"])
    try:
        dtype = np.dtype(cai["typestr"])
    except TypeError as exc:
        raise ArgumentError(f"{where}: unreadable __cuda_array_interface__ typestr {cai['typestr']!r}") from exc
    if dtype.kind == "V" and hasattr(obj, "__dlpack__"):
        return None  # an opaque 2-byte type (bfloat16): DLPack says what it is
    if cai.get("mask") is not None:
        raise ArgumentError(f"{where}: masked arrays (__cuda_array_interface__ 'mask') are not supported")
    pointer, readonly = cai["data"]
    strides = cai.get("strides")
    return DeviceView(int(pointer or 0), shape, dtype, None if strides is None else tuple(int(s) for s in strides),
                      None, bool(readonly), obj, "__cuda_array_interface__")


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]


_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13
_DL_DEVICE_NAMES = {1: "CPU", 2: "CUDA", 3: "CUDA pinned host", 4: "OpenCL", 7: "Vulkan", 8: "Metal",
                    10: "ROCm", 11: "ROCm pinned host", 13: "CUDA managed", 14: "oneAPI"}
_DL_DTYPES = {(0, 8): "int8", (0, 32): "int32", (0, 64): "int64", (1, 8): "uint8", (1, 32): "uint32",
              (2, 16): "float16", (2, 32): "float32", (2, 64): "float64", (4, 16): "bfloat16"}
_DL_READ_ONLY = 1


def _capsule_tensor(capsule: Any, where: str) -> tuple[_DLTensor, bool]:
    api = ctypes.pythonapi
    api.PyCapsule_IsValid.restype, api.PyCapsule_IsValid.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    if api.PyCapsule_IsValid(capsule, b"dltensor"):
        managed = _DLManagedTensor.from_address(api.PyCapsule_GetPointer(capsule, b"dltensor"))
        return managed.dl_tensor, False
    if api.PyCapsule_IsValid(capsule, b"dltensor_versioned"):
        versioned = _DLManagedTensorVersioned.from_address(api.PyCapsule_GetPointer(capsule, b"dltensor_versioned"))
        return versioned.dl_tensor, bool(versioned.flags & _DL_READ_ONLY)
    raise ArgumentError(f"{where}: __dlpack__() did not return a DLPack capsule")


def dlpack_view(obj: Any, where: str) -> DeviceView:
    """Read a DLPack producer's tensor without consuming it; the capsule keeps it alive."""
    capsule = obj.__dlpack__()
    tensor, readonly = _capsule_tensor(capsule, where)
    code = (tensor.dtype.code, tensor.dtype.bits)
    if tensor.dtype.lanes != 1 or code not in _DL_DTYPES:
        raise ArgumentError(f"{where}: unsupported DLPack dtype (code {code[0]}, {code[1]} bits, "
                            f"{tensor.dtype.lanes} lanes); supported: {', '.join(DTYPES)}")
    dtype = DTYPES[_DL_DTYPES[code]]
    shape = tuple(int(tensor.shape[k]) for k in range(tensor.ndim))
    strides = None
    if tensor.strides:
        strides = tuple(int(tensor.strides[k]) * dtype.itemsize for k in range(tensor.ndim))
    pointer = int(tensor.data or 0) + int(tensor.byte_offset)
    return DeviceView(pointer, shape, dtype, strides, int(tensor.device.device_id), readonly, (obj, capsule), "DLPack")


def torch_tensor_type() -> type | None:
    """`torch.Tensor` where torch is imported already (the runtime never imports it)."""
    torch = sys.modules.get("torch")
    return getattr(torch, "Tensor", None)


_TORCH_DTYPES: dict[Any, np.dtype] = {}


def torch_dtype(dtype: Any, where: str) -> np.dtype:
    """The numpy dtype of a torch dtype (torch.bfloat16 -> ml_dtypes.bfloat16)."""
    found = _TORCH_DTYPES.get(dtype)
    if found is None:
        name = str(dtype).removeprefix("torch.")
        if name not in DTYPES:
            raise ArgumentError(f"{where}: a torch tensor of {dtype}; supported: {', '.join(DTYPES)}")
        found = _TORCH_DTYPES[dtype] = DTYPES[name]
    return found


def torch_view(t: Any, where: str) -> DeviceView | np.ndarray:
    """A torch tensor's memory: a DeviceView of a CUDA tensor read through `data_ptr()` (so
    `nn.Parameter` and tensors that require grad pass, also outside `no_grad`), a numpy
    view sharing a CPU tensor's memory (bf16 through an int16 view), or an ArgumentError
    for other devices (meta, mps ...)."""
    device = t.device
    if device.type == "cpu":
        host = t.detach()
        if host.dtype == sys.modules["torch"].bfloat16:
            return host.view(sys.modules["torch"].int16).numpy().view(DTYPES["bfloat16"])
        torch_dtype(host.dtype, where)
        return host.numpy()
    if device.type != "cuda":
        raise ArgumentError(f"{where}: a torch tensor on {device}; expected a CUDA tensor (or a host array)")
    dtype = torch_dtype(t.dtype, where)
    item = dtype.itemsize
    return DeviceView(t.data_ptr(), tuple(t.shape), dtype, tuple(s * item for s in t.stride()), device.index,
                      False, t, "torch")


def device_view(obj: Any, where: str = "argument") -> DeviceView | np.ndarray | None:
    """How `obj` reaches device memory; a numpy array for host arrays (DLPack producers, CPU
    torch tensors); None if neither."""
    if isinstance(obj, DeviceArray):
        return DeviceView(obj.ptr, obj.shape, obj.dtype, None, obj.device, False, obj, "DeviceArray")
    tensor = torch_tensor_type()
    if tensor is not None and isinstance(obj, tensor):
        return torch_view(obj, where)
    cai = _cuda_array_interface(obj)
    if cai is not None:
        view = _view_from_cai(obj, cai, where)
        if view is not None:
            return view
    if not hasattr(obj, "__dlpack__"):
        return None
    kind, ordinal = _dlpack_device(obj)
    if kind == _DL_CPU:
        return np.from_dlpack(obj)
    if kind not in (_DL_CUDA, _DL_CUDA_MANAGED):
        name = _DL_DEVICE_NAMES.get(kind, f"device type {kind}")
        raise ArgumentError(f"{where}: the array lives in {name} memory; expected CUDA device memory or a host array")
    view = dlpack_view(obj, where)
    return view if ordinal is None else dataclasses.replace(view, device=ordinal)


def _dlpack_device(obj: Any) -> tuple[int | None, int | None]:
    try:
        kind, ordinal = obj.__dlpack_device__()
        return int(kind), int(ordinal)
    except Exception:
        return None, None


# --- device arrays ----------------------------------------------------------------------

def _free_device(pointer: int, context: Context) -> None:
    try:
        context.activate()
        cuda().cuMemFree(pointer)
    except Exception:  # at interpreter exit the driver may already be gone
        pass


class DeviceArray:
    """A C-contiguous array in device memory, freed when garbage-collected (or by `free`).

    It exposes `__cuda_array_interface__`, so torch and cupy can read it too (bfloat16
    shows there as an opaque 2-byte type).
    """

    def __init__(self, shape: int | Sequence[int], dtype: Any, *, device: int = 0) -> None:
        self.shape = (int(shape),) if isinstance(shape, int) else tuple(int(d) for d in shape)
        if any(d < 0 for d in self.shape):
            raise ArgumentError(f"DeviceArray: negative extent in shape {self.shape}")
        self.dtype = normalize_dtype(dtype)
        self.device = device
        self.nbytes = math.prod(self.shape) * self.dtype.itemsize
        self._context = get_context(device)
        self.ptr = int(check(cuda().cuMemAlloc(max(self.nbytes, 1)), f"allocating a {self.nbytes}-byte device array"))
        self._finalizer = weakref.finalize(self, _free_device, self.ptr, self._context)

    @classmethod
    def from_numpy(cls, array: np.ndarray, *, device: int = 0) -> DeviceArray:
        out = cls(array.shape, array.dtype, device=device)
        out.copy_from(array)
        return out

    def copy_from(self, array: np.ndarray) -> None:
        """Copy a host array of the same shape and dtype in."""
        source = np.ascontiguousarray(array)
        if source.dtype != self.dtype or source.shape != self.shape:
            raise ArgumentError(f"DeviceArray.copy_from: expected {dtype_name(self.dtype)}{format_shape(self.shape)}, "
                                f"found {dtype_name(source.dtype)}{format_shape(source.shape)}")
        if self.nbytes:
            self._context.activate()
            check(cuda().cuMemcpyHtoD(self.ptr, source.ctypes.data, self.nbytes), "copying an array to the device")

    def to_numpy(self) -> np.ndarray:
        """A host copy (waits for work on the legacy default stream first)."""
        out = np.empty(self.shape, self.dtype)
        if self.nbytes:
            self._context.activate()
            check(cuda().cuMemcpyDtoH(out.ctypes.data, self.ptr, self.nbytes), "copying an array to the host")
        return out

    def free(self) -> None:
        self._finalizer()

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False), "strides": None,
                "version": 3, "stream": None}

    def __repr__(self) -> str:
        return f"DeviceArray({dtype_name(self.dtype)}{format_shape(self.shape)}, device {self.device}, 0x{self.ptr:x})"
