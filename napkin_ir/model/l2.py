"""How much of a kernel's tile traffic reaches DRAM once the L2 cache serves repeats.

The napkin count reads every tile from HBM each time a block asks for it. On the GPU
those requests go through the L2: blocks that run at the same time and read the same
tile (the blocks of one row of a GEMM's grid all read the same A tiles) fetch it from
DRAM once. The estimate: blocks run in waves of `slots` (SMs x blocks per SM) in launch
order; within a wave each distinct tile of a tensor is fetched once; across waves it is
fetched again, unless the whole tensor fits in its share of the L2
(`L2_FIT_FRACTION` of the cache split between the tensors read), in which case it is
fetched once in all. Writes reach DRAM once each.
"""

from __future__ import annotations

import numpy as np

from napkin_ir.model.analysis import Access, KernelCost

# The share of the L2 the model lets resident tensors use: H100's and A100's L2 is two
# partitions, and data resident in the far one still costs crossbar traffic.
L2_FIT_FRACTION = 0.5
_KEY_LIMIT = 1 << 62


def _row_keys(columns: list[np.ndarray]) -> np.ndarray:
    """One int64 per row, equal exactly when the rows are equal."""
    key = np.zeros(len(columns[0]) if columns else 0, np.int64)
    radix = 1
    for col in columns:
        values, codes = np.unique(col, return_inverse=True)
        if radix * len(values) >= _KEY_LIMIT:
            key = np.unique(key, return_inverse=True)[1].astype(np.int64)
            radix = int(key.max()) + 1 if key.size else 1
        key = key * len(values) + codes.reshape(-1)
        radix *= len(values)
    return key


def _distinct_tile_bytes(accesses: list[Access], slots: int) -> float:
    """Bytes of the distinct tiles each wave reads (a tile: an op's tile shape at an offset)."""
    keys, sizes = [], []
    shapes = {t: n for n, t in enumerate(dict.fromkeys(a.tile for a in accesses))}
    for a in accesses:
        live = a.space.full_mask()
        wave = a.space.block_ids()[live] // slots
        offsets = [a.space.full(o)[live] for o in a.offsets]
        shape_id = np.full(wave.shape, shapes[a.tile], np.int64)
        keys.append(np.stack([wave, shape_id, *offsets], axis=1))
        sizes.append(a.space.full(a.per_context_bytes())[live])
    rows = np.concatenate(keys)
    if not rows.size:
        return 0.0
    _, first = np.unique(_row_keys(list(rows.T)), return_index=True)
    return float(np.concatenate(sizes)[first].sum())


def dram_bytes(cost: KernelCost, slots: int, l2_bytes: int) -> dict[str, float]:
    """Per global tensor, the bytes read from or written to DRAM (estimated)."""
    reads = {a.tensor for a in cost.accesses if not a.write}
    share = L2_FIT_FRACTION * l2_bytes / max(len(reads), 1)
    out: dict[str, float] = {}
    for name in cost.globals:
        mine = [a for a in cost.accesses if a.tensor == name]
        if not mine:
            continue
        written = sum(a.bytes for a in mine if a.write)
        read = [a for a in mine if not a.write]
        if not read:
            out[name] = written
        elif cost.globals[name] <= share:
            out[name] = written + min(cost.globals[name], sum(a.bytes for a in read))
        else:
            out[name] = written + _distinct_tile_bytes(read, slots)
    return out
