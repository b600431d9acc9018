"""Tensors with named axes as the interpreters hold them, and the rounding of element types.

Values are computed in float32 (accumulation included) and rounded to the element
type of each op's result, so a bf16 diagram run on the CPU sees the same rounding
points that the kernels have.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from napkin_ir.target import DTYPES

STORAGE_DTYPES: dict[str, np.dtype] = {d.name: d.numpy for d in DTYPES.values()}


def round_to(dtype: str, x: np.ndarray) -> np.ndarray:
    """Round float values to `dtype` (bf16, f16, f32) and return them as float32."""
    x = np.asarray(x, dtype=np.float32)
    if dtype == "f32":
        return x
    return x.astype(STORAGE_DTYPES[dtype]).astype(np.float32)


@dataclass(frozen=True)
class NamedArray:
    """A float32 array whose axes have names, in memory order."""

    axes: tuple[str, ...]
    data: np.ndarray

    def __post_init__(self):
        if self.data.ndim != len(self.axes):
            raise ValueError(f"{len(self.axes)} axis names for an array of rank {self.data.ndim}")

    @property
    def shape(self) -> dict[str, int]:
        return dict(zip(self.axes, self.data.shape))

    def aligned(self, axes: Sequence[str]) -> np.ndarray:
        """The data transposed to `axes` order, with size-1 axes where this array lacks one
        (ready to broadcast against an array laid out as `axes`)."""
        missing = [a for a in self.axes if a not in axes]
        if missing:
            raise ValueError(f"axes {missing} are not among {list(axes)}")
        order = [self.axes.index(a) for a in axes if a in self.axes]
        d = np.transpose(self.data, order)
        return d.reshape([self.shape[a] if a in self.axes else 1 for a in axes])
