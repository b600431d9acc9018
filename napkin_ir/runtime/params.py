"""Kernel parameter specs and argument checking.

`bind_arguments` is pure: it checks a launch's arguments against the kernel's parameter
specs and describes each one (a host array to stage, a device pointer, a scalar, a tensor
map) without calling the driver, so every refusal happens before anything runs and can be
tested without a GPU. Device arrays are read through `arrays.device_view`; `kernels.py`
launches what this module bound.
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from napkin_ir.runtime.arrays import TENSOR_MAP_BYTES, device_view, dtype_name, format_shape, normalize_dtype
from napkin_ir.runtime.driver import ArgumentError
from napkin_ir.runtime.tensormap import TensorMap

# --- parameter specs --------------------------------------------------------------------

SCALAR_TYPES: dict[str, type[ctypes._SimpleCData]] = {
    "u32": ctypes.c_uint32, "s32": ctypes.c_int32, "u64": ctypes.c_uint64, "s64": ctypes.c_int64,
    "f32": ctypes.c_float, "f64": ctypes.c_double,
}
_INT_RANGES = {"u32": (0, 2**32 - 1), "s32": (-(2**31), 2**31 - 1), "u64": (0, 2**64 - 1), "s64": (-(2**63), 2**63 - 1)}


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
    if not isinstance(value, TensorMap):
        raise ArgumentError(f"{where}: expected a TensorMap (from encode_tiled or tensor_map_for), "
                            f"found {type(value).__name__}")
    if device is not None and value.device is not None and value.device != device:
        raise ArgumentError(f"{where}: the tensor map describes memory on device {value.device}, "
                            f"the kernel runs on device {device}")
    return BoundArgument(k, p, blob=value.data, owner=value)
