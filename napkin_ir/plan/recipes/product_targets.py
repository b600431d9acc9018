"""Which targets and tiles `napkin::matmul` tries for a GEMM of a given shape, best first:
the products recipe's choice as the torch op asks it before any diagram exists. Plain
arithmetic on the sizes, kept apart from the recipe (which reads diagrams through xDSL) so
that `import napkin_ir.torch`, and a call whose kernel the compile cache holds, import no
xDSL."""

from __future__ import annotations

GEMM_TILES = (128, 64, 32, 16)  # napkin-sm80's block rows and columns, largest first: a tile may not exceed its axis


MULTIPROCESSORS = 132  # an H100 SXM's; a split aims to fill about this many blocks
MAX_SPLIT = 16
# napkin-sm80's shortest part of the contraction a block takes: shorter parts measured slower
# than no split when a split's f32 output was zeroed and rounded by calls of their own and its
# parts added atomically (research/benchmarks.md, "GEMMs at decode sizes"); not measured
# since the last part rounds in the kernel
MIN_PART = 4096


def split_for(m: int, n: int, k: int, block: tuple[int, int, int], multiprocessors: int = MULTIPROCESSORS) -> int:
    """How many blocks should share each output tile's contraction (1: none): where the
    tiles fill less than half the machine (a decode-sized M, a small output) and the
    contraction is long, enough parts to fill it, each at least `MIN_PART` long."""
    tiles = -(-m // block[0]) * -(-n // block[1])
    if 2 * tiles > multiprocessors:
        return 1
    return max(1, min(MAX_SPLIT, k // MIN_PART, multiprocessors // tiles))


# napkin-sm90's GEMM: each block tile (rows, columns) with the share of SM90_RATE its stream
# steps sustain where they are not waiting on loads (for the 64-row tiles, one consumer
# warpgroup waiting on each step, this stands for a step's latency). The constants below
# are fitted to `bench_gemm.py --tiles` (H200, 2026-11-27: 51 shapes at M 64 to 8192, unsplit
# and split; research/benchmarks.md, "GEMM tiles by waves"): the pick (`sm90_choice`) is
# within 5% of the best measured at 46 of them, and at least 0.80x of it at all. 256 x 128,
# 192 x 192 and 128 x 64 tiles compile too but were never the fastest, and are not offered.
# 64 x 128's share refitted, with the split's cost, once small tiles took 8 stages (34 shapes
# at M 1 to 256, `bench_gemm.py --tiles --m 1,16,64,128,256`, H200, 2026-11-27: the pick
# within 5% of the best at 28 of them, at least 0.84x of it at all; no pick at M >= 1000 moved).
# 64 x 64's share refitted once a decode's copies of A brought its rows only, with the DRAM
# rate a few blocks draw (SM90_SM_DRAM_BYTES): the same 34 shapes (H200, 2026-11-29), the
# pick within 5% of the best at 32 (25 before) on the run it was fitted to and on the next
# (research/bench_gemm_tiles_2026-11-29b.json), at least 0.85x and 0.87x of it; no pick at
# M >= 1000 moved; on the 22 shapes of 64 rows or more of the earlier run, 19 (17 before).
SM90_TILES = {(128, 256): 1.0, (128, 192): 0.98, (192, 128): 0.91, (128, 128): 0.93, (64, 256): 1.0, (64, 128): 0.65,
              (64, 64): 0.4}
SM90_LEAST = (min(t[0] for t in SM90_TILES), min(t[1] for t in SM90_TILES))  # the only tile that runs past a short axis
# Swapped tiles: the product computed with wgmma's rows over the output's columns (two
# consumer warpgroups of 64 of them) and its rows wgmma's N, any multiple of 8, so that a
# ragged M makes whole waves (5000 rows in 232-row tiles by 3000 in 128: 528 blocks, 4.0
# waves on 132 SMs, where 128 x 256 make 3.64); the output leaves through stmatrix.trans and
# TMA stores. Their share as 128 x 256's: kernels alone in CUDA graphs (H200, 2026-11-29,
# cuBLAS in the same rounds) 152 x 128 swapped 842 us at 5000x4096x14336 (1056 blocks, 8.0
# waves) against 905 in 128 x 256 (4.85), 256 x 128 swapped 1643 at 8192^3 against 1655.
SM90_SWAPPED_COLS = 128
SM90_SWAPPED_ROWS = tuple(range(136, 257, 8))  # 128 rows is the plain 128 x 128 tile
SM90_SWAPPED_SHARE = 1.0
# Under 128 rows, M rounded up to 8 in one swapped tile, against two row tiles of 64 (the
# second mostly padding): by 64 columns (one consumer warpgroup, its share fitted) or 128.
# Kernels alone in CUDA graphs (H200, 2026-11-29, M 72, 100, 120 by 4096x4096, 4096x1000,
# 14336x4096 and 8192x8192): the pick within 5% of the best measured plan at 11 of the 12
# (at least 0.94x), where without these tiles it was at 7 (at least 0.55x: 72x4096x4096 in
# 64 x 64 tiles 19.3 us, 72 x 64 swapped 10.7, cuBLAS 9.4).
SM90_SWAPPED_NARROW = 64
SM90_SWAPPED_NARROW_SHARE = 0.7
SM90_STREAM = 64  # the stream tile: a 128-byte swizzled panel of 16-bit elements
SM90_RATE = 5.85e12  # tensor FLOP/s an SM sustains on 128 x 256 tiles (bf16, under the power limit)
SM90_SM_BYTES = 109e9  # bytes/s one SM's TMA loads sustain from the L2
SM90_L2_BYTES = 11.0e12  # bytes/s of loads all SMs together sustain from the L2
SM90_HBM_BYTES = 4.3e12  # bytes/s from DRAM (the H200's; each operand and the output once)
SM90_SM_DRAM_BYTES = 65e9  # bytes/s one SM's loads draw from DRAM
SM90_TILE_S = (0.53e-6, 2.89e-6)  # what a block tile costs beyond its stream: a part, and a part per 128 x 256 elements (the epilogue)
# a split's cost: each part writes its tile's f32 sums, and the last of a tile's parts to finish
# reads them all back, adds them and rounds (`reg-to-ptx`, one launch): a fixed part (its
# fences, its count of arrivals) and its bytes at SPLIT_SM_BYTES an SM (fitted with 64 x 128's
# share above; the rate is low because it also stands for the parts finishing apart)
SPLIT_S = 4.5e-6
SPLIT_SM_BYTES = 20e9
SPLITS = (2, 3, 4)  # 6 and 8 parts measured 1.5-3x slower than 4: the last part's reads spill registers
# a split in this many parts runs as clusters of its parts, summed in shared memory (`split=2
# cluster=2`): kernels alone in CUDA graphs (H200, 2026-11-29, cuBLAS beside), us, global scratch
# -> cluster: 64x4096x4096 (64 x 64) 9.9 -> 8.2 (cuBLAS 8.8), 16x4096x4096 8.3 -> 7.3, 1x8192x8192
# (64 x 128) 34.3 -> 33.4, 64x8192x8192 39.6 -> 34.6, 256x4096x4096 (128 x 128) 21.5 -> 17.5,
# 256x4096x14336 56.3 -> 52.8, 1000x4096x4096 (128 x 128) 82.1 -> 71.3; all 10 shapes of one row
# tile won or tied. Tiles of 64 rows over several row tiles lost: 128x4096x14336 (64 x 128) 36.4
# -> 41.3, 256x4096x14336 65.1 -> 80.4, 128x8192x8192 50.8 -> 53.2 (one of 5 won), so they keep the
# global scratch (`split_cluster`). In four parts, clusters of four ran 5-18% slower (fewer of
# them fit the GPCs at once).
SPLIT_CLUSTER_PARTS = 2


def split_cluster(m: int, block: tuple[int, ...], parts: int) -> bool:
    """Whether a split of an M-row GEMM in `block` tiles and `parts` parts runs as clusters
    of its parts (their sums added in shared memory) rather than through the module's
    global scratch: in SPLIT_CLUSTER_PARTS parts, where the tile's rows take M in one row
    tile or are 128 or more (what was measured faster, above)."""
    return parts == SPLIT_CLUSTER_PARTS and (m <= block[0] or block[0] >= 128)
MIN_SPLIT_PART = 512


def sm90_swaps(tile: tuple[int, ...]) -> bool:
    """Whether napkin-sm90 computes a GEMM in block tiles `tile` (rows, columns[, stream])
    swapped (wgmma's rows over the output's columns): its rows are not a multiple of 64, or
    it is one of the model's swapped tiles (`SM90_SWAPPED_ROWS` x `SM90_SWAPPED_COLS`) and
    not one of SM90_TILES."""
    return tile[0] % 64 != 0 or (tuple(tile[:2]) not in SM90_TILES and tile[1] == SM90_SWAPPED_COLS and tile[0] in SM90_SWAPPED_ROWS)


def _swapped_share(tile: tuple[int, int]) -> float:
    return SM90_SWAPPED_NARROW_SHARE if tile[1] == SM90_SWAPPED_NARROW else SM90_SWAPPED_SHARE


def sm90_time(m: int, n: int, k: int, tile: tuple[int, int], parts: int = 1, multiprocessors: int = MULTIPROCESSORS,
              cluster: int = 1) -> float:
    """The napkin model's seconds for napkin-sm90's GEMM of 16-bit operands with block tiles
    `tile`, its contraction split in `parts`: the longest of
    - the waves: the busiest SM's blocks (ceil(blocks / SMs): a partial last wave costs a
      whole one, padding past the edges is counted), each its stream tiles at the slower of
      the tile's products (SM90_TILES x SM90_RATE) and its loads (SM90_SM_BYTES), plus
      SM90_TILE_S (its fill and its epilogue, which grows with its area);
    - every block's loads at the L2's rate, and each operand and the output once at DRAM's
      (SM90_HBM_BYTES, or SM90_SM_DRAM_BYTES an SM where fewer blocks than SMs draw it);
    plus, split, the parts' f32 sums written and read back by the last (SPLIT_S, SPLIT_SM_BYTES).
    A swapped tile (`sm90_swaps`) sustains SM90_SWAPPED_SHARE (SM90_SWAPPED_NARROW_SHARE by
    SM90_SWAPPED_NARROW columns); in clusters of `cluster`
    blocks B's tiles reach the L2 once for them all (TMA multicast)."""
    (bm, bn), elem = tile, 2
    share = _swapped_share(tile) if sm90_swaps(tile) else SM90_TILES[tile]
    blocks = -(-m // bm) * -(-n // bn) * parts
    stream_tiles = -(-k // SM90_STREAM)
    steps = -(-stream_tiles // parts)
    product = 2 * bm * bn * SM90_STREAM / (SM90_RATE * share)
    a_rows = min(bm, -(-m // 8) * 8)  # a decode's copies of A bring its rows only
    loads = (a_rows + bn) * SM90_STREAM * elem
    overhead = SM90_TILE_S[0] + SM90_TILE_S[1] * bm * bn / (128 * 256)
    waves = -(-blocks // multiprocessors) * (steps * max(product, loads / SM90_SM_BYTES) + overhead)
    dram = min(SM90_HBM_BYTES, min(blocks, multiprocessors) * SM90_SM_DRAM_BYTES)
    l2 = l2_bytes(m, n, k, tile, parts, cluster) / SM90_L2_BYTES
    seconds = max(waves, l2, elem * (m * k + k * n + m * n) / dram)
    if parts > 1:
        seconds += SPLIT_S + 4 * bm * bn * (parts + 1) / SPLIT_SM_BYTES
    return seconds


def l2_bytes(m: int, n: int, k: int, tile: tuple[int, int], parts: int = 1, cluster: int = 1) -> float:
    """The bytes napkin-sm90's GEMM blocks load from the L2 in tiles `tile` (A's rows only
    past a short M; B's once a cluster)."""
    (bm, bn), elem = tile, 2
    stream_tiles = -(-k // SM90_STREAM)
    blocks, steps = -(-m // bm) * -(-n // bn) * parts, -(-stream_tiles // parts)
    return blocks * steps * (min(bm, -(-m // 8) * 8) + bn / cluster) * SM90_STREAM * elem


def split_parts(tiles: int, k: int, multiprocessors: int = MULTIPROCESSORS) -> list[int]:
    """The splits of SPLITS worth counting for `tiles` output tiles of a contraction of `k`:
    where unsplit they leave SMs idle, whose blocks fill at most two waves, each part
    MIN_SPLIT_PART long or more."""
    if tiles >= multiprocessors:
        return []
    return [p for p in SPLITS if tiles * p <= 2 * multiprocessors and k // p >= MIN_SPLIT_PART]


def sm90_plans(m: int, n: int, k: int, split: bool = False, multiprocessors: int = MULTIPROCESSORS,
               swapped: bool = True) -> list[tuple[float, tuple[int, int], int]]:
    """(`sm90_time`, tile, parts) of napkin-sm90's GEMM plans for an M x N x K product,
    fastest first; of plans the model times alike (bound by DRAM at a small M), the one that
    loads fewer bytes from the L2 (`l2_bytes`: 72x14336x4096 in 72 x 128 swapped tiles 30.8
    us against 33.5 in 64 x 256, both 112 blocks, H200, 2026-11-29), then the earlier tile of
    SM90_TILES, then the swapped tiles: each tile
    no longer than its axes (on an axis shorter than any, SM90_LEAST's: 64 rows for a
    decode's few, its loads reading zeros past the end), unsplit and, with `split`, in each
    of `split_parts`; with `swapped`, the swapped tiles too (`swapped_tiles`, unsplit)."""
    out = []
    for rank, tile in enumerate(SM90_TILES):
        if (tile[0] > m and tile[0] > SM90_LEAST[0]) or (tile[1] > n and tile[1] > SM90_LEAST[1]):
            continue
        tiles = -(-m // tile[0]) * -(-n // tile[1])
        parts = [1] + (split_parts(tiles, k, multiprocessors) if split else [])
        out += [(sm90_time(m, n, k, tile, p, multiprocessors), l2_bytes(m, n, k, tile, p), rank, tile, p) for p in parts]
    out += [(sm90_time(m, n, k, tile, 1, multiprocessors), l2_bytes(m, n, k, tile), len(SM90_TILES) + rank, tile, 1)
            for rank, tile in enumerate(swapped_tiles(m, n) if swapped else [])]
    return [(t, tile, p) for t, _, _, tile, p in sorted(out)]


def swapped_tiles(m: int, n: int) -> list[tuple[int, int]]:
    """The swapped tiles (`SM90_SWAPPED_ROWS` x `SM90_SWAPPED_COLS`) no longer than M
    (rounded up to 8) and N that take fewer row tiles than 128 rows do (else they only pad
    more: 256x8192x8192 in 136 x 128 swapped, 2 x 64 tiles, 3% slower than in 128 x 128, H200,
    2026-11-29), smallest first; for M between 64 and 128 (not 128), M rounded up to 8 by
    SM90_SWAPPED_NARROW and SM90_SWAPPED_COLS columns (no longer than N)."""
    rows = -(-m // 8) * 8
    narrow = [(rows, c) for c in (SM90_SWAPPED_NARROW, SM90_SWAPPED_COLS) if 64 < rows < 128 and c <= n]
    if n < SM90_SWAPPED_COLS:
        return narrow
    return narrow + [(r, SM90_SWAPPED_COLS) for r in SM90_SWAPPED_ROWS if r <= rows and -(-m // r) < -(-m // 128)]


def sm90_choice(m: int, n: int, k: int, split: bool = False, multiprocessors: int = MULTIPROCESSORS,
                swapped: bool = True) -> tuple[tuple[int, int, int], int]:
    """napkin-sm90's (block, parts) for an M x N x K GEMM: the fastest plan of `sm90_plans`
    (unsplit, without `split`; swapped where `sm90_swaps` says so)."""
    _, tile, parts = sm90_plans(m, n, k, split, multiprocessors, swapped)[0]
    return (*tile, SM90_STREAM), parts


def sm90_block(m: int, n: int, k: int, multiprocessors: int = MULTIPROCESSORS, swapped: bool = True) -> tuple[int, int, int]:
    """napkin-sm90's block tile for an M x N x K GEMM, unsplit (`sm90_choice`)."""
    return sm90_choice(m, n, k, multiprocessors=multiprocessors, swapped=swapped)[0]


# A short contraction over many tiles is bound by the L2 (3000x7000x1000: 84% of its
# throughput in 128 x 256 tiles, H200, 2026-11-28): blocks in clusters of two, B's panels
# multicast to both, persistent, move a third fewer bytes, as cuBLAS's 2x1 clusters do:
# 0.86x and 0.88x cuBLAS at 3000x7000x1000 and 5000x3000x2056 in 128 x 256 tiles, where the
# plain grid is 0.80x and 0.77x; from K = 4096 no faster than it (research/benchmarks.md).
# In the swapped tile the model counts fewest (whole waves: 256 x 128 and 232 x 128 there,
# 660 and 528 blocks), 0.98x and 0.99x (H200, 2026-11-29, kernels alone in CUDA graphs).
CLUSTER_TILE = (128, 256, SM90_STREAM)
CLUSTER_MAX_K = 2560
CLUSTER_MIN_SIDE = 2048


def cluster_for(m: int, n: int, k: int, multiprocessors: int = MULTIPROCESSORS, swapped: bool = True) -> dict[str, object] | None:
    """napkin-sm90's options for a GEMM computed in persistent clusters of two blocks, or
    None: M and N at least CLUSTER_MIN_SIDE, K at most CLUSTER_MAX_K; the tile the model
    counts fastest (`sm90_time`, B's loads shared) of CLUSTER_TILE and the swapped tiles
    whose count of row tiles is even (the pairs of a cluster) and which make two waves or
    more (the two measured had 3.6 to 5.1; one wave was not measured); without `swapped`,
    CLUSTER_TILE alone."""
    if k > CLUSTER_MAX_K or min(m, n) < CLUSTER_MIN_SIDE:
        return None
    fits = [t for t in [CLUSTER_TILE[:2], *(swapped_tiles(m, n) if swapped else [])]
            if -(-m // t[0]) % 2 == 0 and -(-m // t[0]) * -(-n // t[1]) >= 2 * multiprocessors]
    if not fits:
        return None
    best = min(fits, key=lambda t: sm90_time(m, n, k, t, 1, multiprocessors, cluster=2))  # ties to the earlier
    return {"block": (*best, SM90_STREAM), "cluster": 2, **({"swap": True} if sm90_swaps(best) else {})}


def gemm_candidates(m: int, n: int, k: int, capability: tuple[int, int], *, split: bool = False) -> list[tuple[str, dict[str, object]]]:
    """The targets and tiles to try for an M x N x K GEMM on a GPU of `capability`, best first:
    napkin-sm90 on Hopper, then napkin-sm80 with the largest tiles that fit (four warps on
    tiles of 32 or more a side, two where the stream tile is 16, else one warp on padded
    stages: what napkin-sm80's copies can share out; an axis shorter than 16 takes a tile of
    16, zero-filled past its end, a contraction shorter than napkin-sm90's stream tile one
    tile read past its end too). Rows shorter than 16 bytes are each target's to refuse,
    by name. The torch op tries them in turn
    (`napkin_ir.torch`). On Hopper a short contraction over many tiles tries persistent
    clusters of two first (`cluster_for`). napkin-sm90's tile is the model's (`sm90_plans`; a
    swapped one followed by the best unswapped, for diagrams it cannot take); with `split`, a
    contraction split over the grid where the model puts that first (napkin-sm80: where the
    tiles fill less than half the machine, `split_for`), tried before the same tile unsplit:
    the 16-bit output's parts summed and rounded in the kernel, in a fixed order (on Hopper,
    two parts first as a cluster where `split_cluster` says so)."""
    out: list[tuple[str, dict[str, object]]] = []

    def add(target: str, options: dict[str, object]) -> None:
        parts = split_for(m, n, k, options["block"]) if split else 1  # type: ignore[arg-type]
        if parts > 1:
            out.append((target, {**options, "split": parts}))
        out.append((target, options))

    if capability == (9, 0):  # a contraction shorter than the stream tile: its TMA loads read zeros past the end
        clustered = cluster_for(m, n, k)
        if clustered:
            out.append(("sm90", clustered))
            plain_cluster = cluster_for(m, n, k, swapped=False) if clustered.get("swap") else None
            if plain_cluster:  # for the diagrams a swapped plan cannot take
                out.append(("sm90", plain_cluster))
        block, parts = sm90_choice(m, n, k, split)
        if split_cluster(m, block, parts):  # the parts summed in a cluster's shared memory
            out.append(("sm90", {"block": block, "split": parts, "cluster": parts}))
        if parts > 1:
            out.append(("sm90", {"block": block, "split": parts}))
            block = sm90_block(m, n, k)  # the unsplit fallback
        out.append(("sm90", {"block": block, **({"swap": True} if sm90_swaps(block) else {})}))
        if sm90_swaps(block):  # where the diagram cannot be swapped (a gradient's operand stored [k, m] or [n, k])
            out.append(("sm90", {"block": sm90_block(m, n, k, swapped=False)}))
    bm, bn = (next((t for t in GEMM_TILES if t <= x), GEMM_TILES[-1]) for x in (m, n))
    bk = 32 if k >= 32 else 16  # shorter than 16: one stream tile, its copies zero-filled past the end
    if min(bm, bn) >= 32:
        add("sm80", {"block": (bm, bn, bk), "warps": (2, 2) if bk == 32 else (2, 1)})
    else:
        add("sm80", {"block": (bm, bn, bk), "warps": (1, 1), "layout": "pad8"})
    return out


__all__ = ["CLUSTER_MAX_K", "CLUSTER_MIN_SIDE", "CLUSTER_TILE", "GEMM_TILES", "cluster_for", "MAX_SPLIT", "MIN_PART", "MULTIPROCESSORS", "SM90_TILES", "SPLIT_CLUSTER_PARTS", "split_cluster", "gemm_candidates", "sm90_block", "sm90_choice", "sm90_plans",
           "l2_bytes", "sm90_swaps", "sm90_time", "split_for", "split_parts", "swapped_tiles"]
