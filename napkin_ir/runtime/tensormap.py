"""TMA tensor maps: checked wrappers around cuTensorMapEncodeTiled.

Dimensions are given in numpy order, outermost first (shape (rows, cols), strides in
bytes as `ndarray.strides` gives them, box (box_rows, box_cols)); the driver wants them
innermost first and without the innermost stride, so `plan_tiled` reverses them. In the
kernel the coordinates of `cp.async.bulk.tensor` are innermost first too: {col, row}.
`plan_tiled` is pure, so every rule it enforces can be tested without a GPU; only
`encode_tiled` (and `TiledEncoder`, which re-encodes one plan at new addresses) calls the
driver. The result is a `TensorMap`, passed by value as a 128-byte kernel parameter
(`Param.tensor_map()`).
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from napkin_ir.runtime.arrays import TENSOR_MAP_BYTES, DeviceView, device_view, dtype_name, normalize_dtype
from napkin_ir.runtime.driver import ArgumentError, check, cuda, get_context

# TMA has no signed 8-bit type; int8 is copied bit for bit as UINT8 (OOB fill is zero for both).
TMA_DTYPES = {"float16": "FLOAT16", "bfloat16": "BFLOAT16", "float32": "FLOAT32", "float64": "FLOAT64",
              "int32": "INT32", "uint32": "UINT32", "int64": "INT64", "uint8": "UINT8", "int8": "UINT8"}
SWIZZLE_BYTES = {"none": None, "32B": 32, "64B": 64, "128B": 128}
L2_PROMOTIONS = {"none": "NONE", "64B": "L2_64B", "128B": "L2_128B", "256B": "L2_256B"}
OOB_FILLS = {"none": "NONE", "nan": "NAN_REQUEST_ZERO_FMA"}
MAX_RANK = 5
MAX_BOX = 256
MAX_ELEMENT_STRIDE = 8


@dataclass(frozen=True)
class TiledPlan:
    """cuTensorMapEncodeTiled's arguments after checking, in the driver's order (innermost first)."""

    data_type: str  # CU_TENSOR_MAP_DATA_TYPE_<data_type>
    address: int
    global_dim: tuple[int, ...]
    global_strides: tuple[int, ...]  # bytes, for dimensions 1..rank-1
    box_dim: tuple[int, ...]
    element_strides: tuple[int, ...]
    swizzle: str
    l2_promotion: str
    oob_fill: str

    @property
    def rank(self) -> int:
        return len(self.global_dim)


def _ints(values: Any, what: str) -> tuple[int, ...]:
    if isinstance(values, int) or not isinstance(values, Sequence):
        raise ArgumentError(f"{what}: expected a sequence of ints, found {values!r}")
    for k, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise ArgumentError(f"{what}[{k}]: expected an int, found {v!r}")
    return tuple(int(v) for v in values)


def _choice(value: str, options: dict[str, Any], what: str) -> None:
    if value not in options:
        raise ArgumentError(f"{what}: expected one of {', '.join(map(repr, options))}, found {value!r}")


def plan_tiled(address: int, dtype: Any, global_shape: Sequence[int], global_strides_bytes: Sequence[int] | None,
               box_shape: Sequence[int], *, swizzle: str = "none", element_strides: Sequence[int] | None = None,
               l2_promotion: str = "none", oob_fill: str = "none") -> TiledPlan:
    """Check a tiled tensor map's description (numpy order) and put it in the driver's order."""
    dt = normalize_dtype(dtype)
    item = dt.itemsize
    shape = _ints(global_shape, "global_shape")
    rank = len(shape)
    if not 1 <= rank <= MAX_RANK:
        raise ArgumentError(f"global_shape: TMA tensors have 1 to {MAX_RANK} dimensions, found {rank}")
    for k, d in enumerate(shape):
        if not 1 <= d <= 2**32:
            raise ArgumentError(f"global_shape[{k}]: expected 1..2**32 elements, found {d}")
    strides = _check_strides(global_strides_bytes, shape, item)
    box = _check_box(box_shape, rank, item, swizzle)
    steps = _check_element_strides(element_strides, rank)
    _choice(l2_promotion, L2_PROMOTIONS, "l2_promotion")
    _choice(oob_fill, OOB_FILLS, "oob_fill")
    if oob_fill == "nan" and dt.kind not in "fV":  # bfloat16 is kind 'V' to numpy
        raise ArgumentError(f"oob_fill='nan' needs a floating-point dtype, found {dtype_name(dt)}")
    if isinstance(address, bool) or not isinstance(address, int) or address <= 0:
        raise ArgumentError(f"global address: expected a non-null device pointer, found {address!r}")
    if address % 16:
        raise ArgumentError(f"global address 0x{address:x} is not 16-byte aligned ({address % 16} bytes past), "
                            "as TMA requires")
    return TiledPlan(TMA_DTYPES[dtype_name(dt)], address, shape[::-1], strides[-2::-1] if rank > 1 else (),
                     box[::-1], steps[::-1], swizzle, l2_promotion, oob_fill)


def _check_strides(strides_bytes: Sequence[int] | None, shape: tuple[int, ...], item: int) -> tuple[int, ...]:
    if strides_bytes is None:
        return tuple(item * math.prod(shape[k + 1:]) for k in range(len(shape)))
    strides = _ints(strides_bytes, "global_strides_bytes")
    if len(strides) != len(shape):
        raise ArgumentError(f"global_strides_bytes: expected {len(shape)} strides (numpy order, in bytes, one per "
                            f"dimension of global_shape), found {len(strides)}")
    if strides[-1] != item:
        raise ArgumentError(f"global_strides_bytes[{len(strides) - 1}] (the innermost dimension) must be the element "
                            f"size, {item} bytes: TMA reads the innermost dimension contiguously; found {strides[-1]}")
    for k, s in enumerate(strides[:-1]):
        if s <= 0 or s % 16:
            raise ArgumentError(f"global_strides_bytes[{k}]: TMA strides must be positive multiples of 16 bytes, "
                                f"found {s}")
        if s >= 2**40:
            raise ArgumentError(f"global_strides_bytes[{k}]: TMA strides must be below 2**40 bytes, found {s}")
    return strides


def _check_box(box_shape: Sequence[int], rank: int, item: int, swizzle: str) -> tuple[int, ...]:
    box = _ints(box_shape, "box_shape")
    if len(box) != rank:
        raise ArgumentError(f"box_shape: expected {rank} dimensions like global_shape, found {len(box)}")
    for k, b in enumerate(box):
        if not 1 <= b <= MAX_BOX:
            raise ArgumentError(f"box_shape[{k}]: TMA boxes are 1..{MAX_BOX} elements per dimension, found {b}")
    inner = box[-1] * item
    if inner % 16:
        raise ArgumentError(f"box_shape[{rank - 1}] (the innermost dimension) spans {inner} bytes; "
                            "TMA needs a multiple of 16 bytes")
    _choice(swizzle, SWIZZLE_BYTES, "swizzle")
    span = SWIZZLE_BYTES[swizzle]
    if span is not None and inner > span:
        raise ArgumentError(f"box_shape[{rank - 1}] (the innermost dimension) spans {inner} bytes, more than the "
                            f"{span}-byte span of swizzle {swizzle!r}")
    return box


def _check_element_strides(element_strides: Sequence[int] | None, rank: int) -> tuple[int, ...]:
    if element_strides is None:
        return (1,) * rank
    steps = _ints(element_strides, "element_strides")
    if len(steps) != rank:
        raise ArgumentError(f"element_strides: expected {rank} entries, found {len(steps)}")
    for k, e in enumerate(steps):
        if not 1 <= e <= MAX_ELEMENT_STRIDE:
            raise ArgumentError(f"element_strides[{k}]: expected 1..{MAX_ELEMENT_STRIDE}, found {e}")
    return steps


class TensorMap:
    """An encoded CUtensorMap: 128 opaque bytes, plus what it was made from.

    It holds a reference to the array it describes, which must stay allocated while
    kernels use the map.
    """

    def __init__(self, data: bytes, plan: TiledPlan, *, device: int | None = None, owner: Any = None) -> None:
        if len(data) != TENSOR_MAP_BYTES:
            raise ArgumentError(f"TensorMap: expected {TENSOR_MAP_BYTES} bytes, found {len(data)}")
        self.data, self.plan, self.device, self.owner = bytes(data), plan, device, owner

    def __repr__(self) -> str:
        p = self.plan
        return (f"TensorMap({p.data_type}, shape {list(p.global_dim[::-1])}, box {list(p.box_dim[::-1])}, "
                f"swizzle {p.swizzle}, at 0x{p.address:x})")


def _address_of(base: Any) -> tuple[int, Any]:
    if isinstance(base, int) and not isinstance(base, bool):
        return base, None
    view = device_view(base, "tensor map base")
    if not isinstance(view, DeviceView):
        raise ArgumentError("tensor map base: expected a device pointer (int) or a device array, found "
                            f"{type(base).__name__}; copy host arrays to the device first (DeviceArray.from_numpy)")
    return view.pointer, view.owner


def encode_tiled(base: Any, dtype: Any, global_shape: Sequence[int], global_strides_bytes: Sequence[int] | None,
                 box_shape: Sequence[int], *, swizzle: str = "none", element_strides: Sequence[int] | None = None,
                 l2_promotion: str = "none", oob_fill: str = "none", device: int = 0) -> TensorMap:
    """Encode a tiled TMA tensor map over `base` (a device pointer or device array).

    All shapes are in numpy order (outermost first); `global_strides_bytes` has one entry
    per dimension, like `ndarray.strides`, or is None for a C-contiguous tensor. Interleave
    is always none; `oob_fill` "none" fills out-of-bounds elements with zeros.
    """
    address, owner = _address_of(base)
    plan = plan_tiled(address, dtype, global_shape, global_strides_bytes, box_shape, swizzle=swizzle,
                      element_strides=element_strides, l2_promotion=l2_promotion, oob_fill=oob_fill)
    return TensorMap(_encode(plan, device), plan, device=device, owner=owner)


def tensor_map_for(array: Any, box_shape: Sequence[int], **options: Any) -> TensorMap:
    """A tensor map over a whole device array, its dtype, shape and strides read from it."""
    view = device_view(array, "tensor_map_for")
    if not isinstance(view, DeviceView):
        raise ArgumentError(f"tensor_map_for: expected a device array, found {type(array).__name__}; "
                            "copy host arrays to the device first (DeviceArray.from_numpy)")
    strides = view.strides
    if strides is None:
        strides = tuple(view.dtype.itemsize * math.prod(view.shape[k + 1:]) for k in range(len(view.shape)))
    device = options.pop("device", view.device if view.device is not None else 0)
    plan = plan_tiled(view.pointer, view.dtype, view.shape, strides, box_shape, **options)
    return TensorMap(_encode(plan, device), plan, device=device, owner=view.owner)


class TiledEncoder:
    """cuTensorMapEncodeTiled's arguments for one plan, converted once, so that a map over
    the same shape at another address costs one driver call (`encode(address)`): what a
    launch does when an argument's pointer changes. Encoding is host-side only (no stream
    work), so it may run while a CUDA graph is being captured."""

    def __init__(self, plan: TiledPlan, device: int = 0) -> None:
        get_context(device)  # initialises the driver, or says why it cannot
        drv = cuda()
        u64, u32 = drv.cuuint64_t, drv.cuuint32_t
        self.plan = plan
        self._encode = drv.cuTensorMapEncodeTiled
        self._head = (getattr(drv.CUtensorMapDataType, f"CU_TENSOR_MAP_DATA_TYPE_{plan.data_type}"), plan.rank)
        self._tail = (
            [u64(d) for d in plan.global_dim],
            [u64(s) for s in plan.global_strides],
            [u32(b) for b in plan.box_dim],
            [u32(e) for e in plan.element_strides],
            drv.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
            getattr(drv.CUtensorMapSwizzle, f"CU_TENSOR_MAP_SWIZZLE_{plan.swizzle.upper()}"),
            getattr(drv.CUtensorMapL2promotion, f"CU_TENSOR_MAP_L2_PROMOTION_{L2_PROMOTIONS[plan.l2_promotion]}"),
            getattr(drv.CUtensorMapFloatOOBfill, f"CU_TENSOR_MAP_FLOAT_OOB_FILL_{OOB_FILLS[plan.oob_fill]}"),
        )

    def encode(self, address: int) -> bytes:
        """The 128 bytes of the plan's map over `address` (16-byte aligned, checked by the caller)."""
        result = self._encode(*self._head, address, *self._tail)
        if int(result[0]) != 0:
            plan = self.plan
            check(result, f"encoding a {plan.data_type} tensor map of shape {list(plan.global_dim[::-1])}, "
                          f"box {list(plan.box_dim[::-1])} at 0x{address:x}")
        return ctypes.string_at(result[1].getPtr(), TENSOR_MAP_BYTES)


def _encode(plan: TiledPlan, device: int) -> bytes:
    return TiledEncoder(plan, device).encode(plan.address)
