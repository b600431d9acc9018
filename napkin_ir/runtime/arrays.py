"""Kernel parameter specs, argument checking, and device arrays.

`bind_arguments` is pure: it checks a launch's arguments against the kernel's parameter
specs and describes each one (a host array to stage, a device pointer, a scalar, a tensor
map) without calling the driver, so every refusal happens before anything runs and can be
tested without a GPU. Device memory comes as the runtime's own `DeviceArray`, or any
object exposing `__cuda_array_interface__` (torch, cupy, numba) or DLPack; those are used
in place, never copied.
"""

from __future__ import annotations

import ctypes
import dataclasses
import math
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


# --- parameter specs --------------------------------------------------------------------

SCALAR_TYPES: dict[str, type[ctypes._SimpleCData]] = {
    "u32": ctypes.c_uint32, "s32": ctypes.c_int32, "u64": ctypes.c_uint64, "s64": ctypes.c_int64,
    "f32": ctypes.c_float, "f64": ctypes.c_double,
}
_INT_RANGES = {"u32": (0, 2**32 - 1), "s32": (-(2**31), 2**31 - 1), "u64": (0, 2**64 - 1), "s64": (-(2**63), 2**63 - 1)}
TENSOR_MAP_BYTES = 128


@dataclass(frozen=True)
class Param:
    """One kernel parameter: a pointer to an array, a scalar, or a TMA tensor map (by value).

    Build them with `Param.pointer`, `Param.scalar` and `Param.tensor_map`, in the order of
    the kernel's `.param` list.
    """

    kind: str
    dtype: np.dtype | None = None
    shape: tuple[int | None, ...] | None = None
    out: bool = False
    align: int = 16
    scalar_type: str | None = None
    name: str | None = None

    @staticmethod
    def pointer(dtype: Any, shape: int | Sequence[int | None] | None = None, *, out: bool = False,
                align: int = 16, name: str | None = None) -> Param:
        """A `.u64` pointer to a C-contiguous array of `dtype`.

        `shape` is checked when given (None entries match any extent). `out` marks arrays
        the kernel writes: numpy arguments are copied back after the launch (they are
        always copied in, so `out` arrays are in-out). `align` is the byte alignment the
        kernel relies on (vector loads, TMA).
        """
        if isinstance(align, bool) or not isinstance(align, int) or align < 1 or align & (align - 1):
            raise ArgumentError(f"Param.pointer: align must be a power of two, found {align!r}")
        if shape is not None:
            shape = (shape,) if isinstance(shape, int) else tuple(shape)
            for d in shape:
                if d is not None and (isinstance(d, bool) or not isinstance(d, int) or d < 0):
                    raise ArgumentError(f"Param.pointer: shape entries must be ints >= 0 or None, found {d!r}")
        return Param("pointer", normalize_dtype(dtype), shape, out, align, None, name)

    @staticmethod
    def scalar(type: str, *, name: str | None = None) -> Param:
        """A scalar passed by value: "u32", "s32", "u64", "s64", "f32" or "f64"."""
        if type not in SCALAR_TYPES:
            raise ArgumentError(f"Param.scalar: unknown type {type!r}; expected one of {', '.join(SCALAR_TYPES)}")
        return Param("scalar", scalar_type=type, name=name)

    @staticmethod
    def tensor_map(*, name: str | None = None) -> Param:
        """A CUtensorMap passed by value (`.param .align 64 .b8 p[128]`), from `encode_tiled`."""
        return Param("tensor_map", name=name)

    @property
    def size(self) -> int:
        """Bytes this parameter occupies in the kernel's parameter space."""
        if self.kind == "pointer":
            return 8
        if self.kind == "tensor_map":
            return TENSOR_MAP_BYTES
        return ctypes.sizeof(SCALAR_TYPES[self.scalar_type or ""])

    @property
    def label(self) -> str:
        return f" ({self.name!r})" if self.name else ""

    def describe(self) -> str:
        if self.kind == "pointer":
            assert self.dtype is not None
            shape = "" if self.shape is None else format_shape(self.shape)
            return f"{'out ' if self.out else ''}pointer to {dtype_name(self.dtype)}{shape}"
        if self.kind == "tensor_map":
            return "tensor map"
        return f"scalar {self.scalar_type}"


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
    source: str  # "DeviceArray", "__cuda_array_interface__" or "DLPack"

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


def device_view(obj: Any, where: str = "argument") -> DeviceView | np.ndarray | None:
    """How `obj` reaches device memory; a numpy array for host DLPack producers; None if neither."""
    if isinstance(obj, DeviceArray):
        return DeviceView(obj.ptr, obj.shape, obj.dtype, None, obj.device, False, obj, "DeviceArray")
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


# --- binding ----------------------------------------------------------------------------

@dataclass(frozen=True)
class BoundArgument:
    """One checked argument, described for the launch: exactly one of the payloads is set."""

    index: int
    param: Param
    host: np.ndarray | None = None  # staged through a temporary device buffer
    pointer: int | None = None  # device memory used in place
    scalar: ctypes._SimpleCData | None = None
    blob: bytes | None = None  # by-value bytes (tensor maps)
    owner: Any = None  # keeps device memory alive until the launch is done

    def storage(self, staged_pointer: int | None = None) -> bytes | ctypes._SimpleCData:
        """The bytes the kernel parameter is copied from."""
        if self.host is not None:
            if staged_pointer is None:
                raise ValueError(f"argument {self.index}: a host array needs its staged device pointer")
            return ctypes.c_uint64(staged_pointer)
        if self.pointer is not None:
            return ctypes.c_uint64(self.pointer)
        if self.scalar is not None:
            return self.scalar
        assert self.blob is not None
        return self.blob


def bind_arguments(params: Sequence[Param], args: Sequence[Any], *, kernel: str = "kernel",
                   device: int | None = None) -> list[BoundArgument]:
    """Check `args` against `params` and describe them; raises ArgumentError, never calls CUDA.

    `device` is the ordinal the kernel runs on, to refuse arrays that say they live elsewhere.
    """
    if isinstance(args, (np.ndarray, str, bytes)) or not isinstance(args, Sequence):
        raise ArgumentError(f"kernel {kernel!r}: arguments must be a list or tuple, found {type(args).__name__}")
    if len(args) != len(params):
        names = ", ".join(p.name or f"#{k}" for k, p in enumerate(params))
        raise ArgumentError(f"kernel {kernel!r} takes {len(params)} arguments ({names}), found {len(args)}")
    bound = []
    for k, (p, value) in enumerate(zip(params, args)):
        where = f"kernel {kernel!r}, argument {k}{p.label}"
        if p.kind == "pointer":
            bound.append(_bind_pointer(k, p, value, where, device))
        elif p.kind == "scalar":
            bound.append(BoundArgument(k, p, scalar=_bind_scalar(p, value, where)))
        else:
            bound.append(_bind_tensor_map(k, p, value, where, device))
    return bound


def _check_layout(p: Param, dtype: np.dtype, shape: tuple[int, ...], contiguous: bool, strides: Any, where: str) -> None:
    assert p.dtype is not None
    if dtype != p.dtype:
        raise ArgumentError(f"{where}: expected a {dtype_name(p.dtype)} array, found {dtype_name(dtype)}")
    if p.shape is not None:
        fits = len(shape) == len(p.shape) and all(e is None or e == d for e, d in zip(p.shape, shape))
        if not fits:
            raise ArgumentError(f"{where}: expected shape {format_shape(p.shape)}, found {format_shape(shape)}")
    if not contiguous:
        raise ArgumentError(f"{where}: expected a C-contiguous array, found strides {tuple(strides)} (bytes) "
                            f"for shape {format_shape(shape)}; make a contiguous copy first")


def _bind_pointer(k: int, p: Param, value: Any, where: str, device: int | None) -> BoundArgument:
    if isinstance(value, np.ndarray):
        return _bind_host(k, p, value, where)
    view = device_view(value, where)
    if view is None:
        raise ArgumentError(f"{where}: expected a numpy array or a device array (DeviceArray, __cuda_array_interface__ "
                            f"or DLPack) of {dtype_name(p.dtype)}, found {type(value).__name__}")  # type: ignore[arg-type]
    if isinstance(view, np.ndarray):
        return _bind_host(k, p, view, where)
    _check_layout(p, view.dtype, view.shape, view.contiguous, view.strides, where)
    if p.out and view.readonly:
        raise ArgumentError(f"{where}: the kernel writes this array but its {view.source} producer marks it read-only")
    if device is not None and view.device is not None and view.device != device:
        raise ArgumentError(f"{where}: the array lives on CUDA device {view.device}, the kernel runs on device {device}")
    if view.pointer % p.align:
        raise ArgumentError(f"{where}: expected a device pointer aligned to {p.align} bytes, found 0x{view.pointer:x} "
                            f"({view.pointer % p.align} bytes past a {p.align}-byte boundary)")
    return BoundArgument(k, p, pointer=view.pointer, owner=view.owner)


def _bind_host(k: int, p: Param, array: np.ndarray, where: str) -> BoundArgument:
    _check_layout(p, array.dtype, array.shape, array.flags.c_contiguous, array.strides, where)
    if p.out and not array.flags.writeable:
        raise ArgumentError(f"{where}: the kernel writes this array but the numpy array is read-only")
    return BoundArgument(k, p, host=array)


def _bind_scalar(p: Param, value: Any, where: str) -> ctypes._SimpleCData:
    t = p.scalar_type or ""
    ctype = SCALAR_TYPES[t]
    if isinstance(value, (bool, np.bool_)):
        raise ArgumentError(f"{where}: expected a {t} scalar, found a bool")
    if t in _INT_RANGES:
        if not isinstance(value, (int, np.integer)):
            raise ArgumentError(f"{where}: expected an int for {t}, found {type(value).__name__}")
        low, high = _INT_RANGES[t]
        if not low <= int(value) <= high:
            raise ArgumentError(f"{where}: {int(value)} does not fit in {t} ({low}..{high})")
        return ctype(int(value))
    if not isinstance(value, (int, float, np.integer, np.floating)):
        raise ArgumentError(f"{where}: expected a number for {t}, found {type(value).__name__}")
    number = float(value)
    if t == "f32" and math.isfinite(number) and abs(number) > float(np.finfo(np.float32).max):
        raise ArgumentError(f"{where}: {number!r} overflows f32")
    return ctype(number)


def _bind_tensor_map(k: int, p: Param, value: Any, where: str, device: int | None) -> BoundArgument:
    from napkin_ir.runtime.tensormap import TensorMap

    if not isinstance(value, TensorMap):
        raise ArgumentError(f"{where}: expected a TensorMap (from encode_tiled or tensor_map_for), "
                            f"found {type(value).__name__}")
    if device is not None and value.device is not None and value.device != device:
        raise ArgumentError(f"{where}: the tensor map describes memory on device {value.device}, "
                            f"the kernel runs on device {device}")
    return BoundArgument(k, p, blob=value.data, owner=value)


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
