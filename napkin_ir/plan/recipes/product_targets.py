"""Which targets and tiles `napkin::matmul` tries for a GEMM of a given shape, best first:
the products recipe's choice as the torch op asks it before any diagram exists. Plain
arithmetic on the sizes, kept apart from the recipe (which reads diagrams through xDSL) so
that `import napkin_ir.torch`, and a call whose kernel the compile cache holds, import no
xDSL."""

from __future__ import annotations

GEMM_TILES = (128, 64, 32, 16)  # napkin-sm80's block rows and columns, largest first: a tile may not exceed its axis


def gemm_candidates(m: int, n: int, k: int, capability: tuple[int, int]) -> list[tuple[str, dict[str, object]]]:
    """The targets and tiles to try for an M x N x K GEMM on a GPU of `capability`, best first:
    napkin-sm90 on Hopper where its tiles fit, then napkin-sm80 with the largest tiles that
    do (four warps on tiles of 32 or more a side, two where the stream tile is 16, else one
    warp on padded stages: what napkin-sm80's copies can share out). The torch op tries them
    in turn (`napkin_ir.torch`)."""
    out: list[tuple[str, dict[str, object]]] = []
    if capability == (9, 0) and min(m, n, k) >= 64:
        out.append(("sm90", {"block": (128 if m >= 128 else 64, 256 if n >= 256 else 128 if n >= 128 else 64, 64)}))
    bm, bn = (next((t for t in GEMM_TILES if t <= x), None) for x in (m, n))
    if bm and bn and k >= 16:
        bk = 32 if k >= 32 else 16
        if min(bm, bn) >= 32:
            out.append(("sm80", {"block": (bm, bn, bk), "warps": (2, 2) if bk == 32 else (2, 1)}))
        else:
            out.append(("sm80", {"block": (bm, bn, bk), "warps": (1, 1), "layout": "pad8"}))
    return out


__all__ = ["GEMM_TILES", "gemm_candidates"]
