"""Which targets and tiles `napkin::matmul` tries for a GEMM of a given shape, best first:
the products recipe's choice as the torch op asks it before any diagram exists. Plain
arithmetic on the sizes, kept apart from the recipe (which reads diagrams through xDSL) so
that `import napkin_ir.torch`, and a call whose kernel the compile cache holds, import no
xDSL."""

from __future__ import annotations

GEMM_TILES = (128, 64, 32, 16)  # napkin-sm80's block rows and columns, largest first: a tile may not exceed its axis


MULTIPROCESSORS = 132  # an H100 SXM's; a split aims to fill about this many blocks
MAX_SPLIT = 16
# the shortest part of the contraction a block takes: shorter parts measured slower than no
# split (the zeroing, the f32 output's rounding and the atomic adds cost more than the
# blocks gained; research/benchmarks.md, "GEMMs at decode sizes")
MIN_PART = 4096


def split_for(m: int, n: int, k: int, block: tuple[int, int, int], multiprocessors: int = MULTIPROCESSORS) -> int:
    """How many blocks should share each output tile's contraction (1: none): where the
    tiles fill less than half the machine (a decode-sized M, a small output) and the
    contraction is long, enough parts to fill it, each at least `MIN_PART` long."""
    tiles = -(-m // block[0]) * -(-n // block[1])
    if 2 * tiles > multiprocessors:
        return 1
    return max(1, min(MAX_SPLIT, k // MIN_PART, multiprocessors // tiles))


# napkin::matmul computes a decode-sized product transposed (C^T = B^T A^T, `transposed_for`)
TRANSPOSED_M = 64  # up to this many rows of A (at 100 and 128 rows the plain kernel measured faster)
TRANSPOSED_ROWS = 128  # B's columns a block: two consumer warpgroups of 64
MAX_TRANSPOSED_SPLIT = 4
MIN_TRANSPOSED_PART = 1024


def transposed_for(m: int, n: int, k: int, capability: tuple[int, int]) -> dict[str, object] | None:
    """napkin-sm90's options for an M x N x K GEMM computed transposed, C^T[N, M8] =
    B^T A^T with A padded to M8 rows (M rounded up to 8, the tensor cores' least N), or
    None where it does not apply: on Hopper, M up to TRANSPOSED_M, N and K long enough for
    a block's tiles. B's columns fill wgmma's 64-row tiles, where M rows would fill a few
    of them; the contraction is split (up to 4 parts of 1024 or more) until the blocks
    fill the machine. Under CUDA graphs (H100, 2026-11-27, research/benchmarks.md): 0.74-1.01x
    cuBLAS at M 1 to 64, where the plain kernels measured 0.28-0.91x."""
    if capability != (9, 0) or m > TRANSPOSED_M or n < TRANSPOSED_ROWS or k < 64 or n % 8 or k % 8:
        return None
    tiles = -(-n // TRANSPOSED_ROWS)
    parts = max(1, min(MAX_TRANSPOSED_SPLIT, MULTIPROCESSORS // tiles, k // MIN_TRANSPOSED_PART))
    return {"block": (TRANSPOSED_ROWS, -(-m // 8) * 8, 64), **({"split": parts} if parts > 1 else {})}


def gemm_candidates(m: int, n: int, k: int, capability: tuple[int, int], *, split: bool = False,
                    deterministic: bool = False) -> list[tuple[str, dict[str, object]]]:
    """The targets and tiles to try for an M x N x K GEMM on a GPU of `capability`, best first:
    napkin-sm90 on Hopper where its tiles fit, then napkin-sm80 with the largest tiles that
    do (four warps on tiles of 32 or more a side, two where the stream tile is 16, else one
    warp on padded stages: what napkin-sm80's copies can share out; an axis shorter than 16
    takes a tile of 16, zero-filled past its end). The torch op tries them in turn
    (`napkin_ir.torch`). With `split`, a shape whose tiles fill less than half the machine
    first tries its contraction split over the grid (`split_for`; the output then f32, to
    be rounded after), its parts added in a fixed order where `deterministic`."""
    out: list[tuple[str, dict[str, object]]] = []

    def add(target: str, options: dict[str, object]) -> None:
        parts = split_for(m, n, k, options["block"]) if split else 1  # type: ignore[arg-type]
        if parts > 1:
            out.append((target, {**options, "split": parts, **({"deterministic": True} if deterministic else {})}))
        out.append((target, options))

    if capability == (9, 0) and min(m, n, k) >= 64:
        add("sm90", {"block": (128 if m >= 128 else 64, 256 if n >= 256 else 128 if n >= 128 else 64, 64)})
    bm, bn = (next((t for t in GEMM_TILES if t <= x), GEMM_TILES[-1]) for x in (m, n))
    if k >= 16:
        bk = 32 if k >= 32 else 16
        if min(bm, bn) >= 32:
            add("sm80", {"block": (bm, bn, bk), "warps": (2, 2) if bk == 32 else (2, 1)})
        else:
            add("sm80", {"block": (bm, bn, bk), "warps": (1, 1), "layout": "pad8"})
    return out


__all__ = ["GEMM_TILES", "MAX_SPLIT", "MIN_PART", "MULTIPROCESSORS", "gemm_candidates", "split_for", "transposed_for"]
