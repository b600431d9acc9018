"""Global tensors on the CPU and the tiles the interpreters read from them.

The hbm, smem and reg interpreters all copy tiles out of (and, for hbm.store, into) a
kernel's global tensors; this module holds what they share, below all three, so that no
level's interpreter imports another's for it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from napkin_ir.dialects import hbm


class GlobalTensor:
    """A global tensor's storage (float32, values already rounded to its element type)."""

    def __init__(self, t: hbm.GlobalType, data: np.ndarray):
        self.type = t
        self.data = data


def overlap(g: GlobalTensor, offsets: Sequence[int], tile_dims: Sequence[int]):
    """The slices of the global and of the tile where they overlap."""
    src, dst = [], []
    for o, n, size in zip(offsets, tile_dims, g.data.shape):
        lo, hi = max(o, 0), min(o + n, size)
        hi = max(hi, lo)
        src.append(slice(lo, hi))
        dst.append(slice(lo - o, hi - o))
    return tuple(src), tuple(dst)


def read_tile(g: GlobalTensor, offsets: Sequence[int], dims: Sequence[int]) -> np.ndarray:
    """The tile of `g` at `offsets`; elements past the edge are zero."""
    tile = np.zeros(dims, np.float32)
    src, dst = overlap(g, offsets, dims)
    tile[dst] = g.data[src]
    return tile
