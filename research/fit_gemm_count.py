#!/usr/bin/env python3
"""Refit napkin-sm90's GEMM count (`plan/recipes/product_targets.py`) to a `--tiles` sweep.

    python3 research/fit_gemm_count.py bench_gemm_tiles.json

`bench_gemm_tiles.json` is what `python3 tools/bench_gemm.py --tiles` writes to $OUT. The
script searches a grid of 64 x 128's and 64 x 64's shares of the SM's rate and the split's
cost (a fixed part, and the parts' f32 tiles at a rate an SM), scoring each by the
geometric mean over the sweep's shapes of best measured / measured at the pick, and keeps
only settings under which no pick at M >= 1000 (Llama-3's projections, the ragged shapes)
moves from today's. It prints the ten best and the picks of the first.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import napkin_ir.plan.recipes.product_targets as pt  # noqa: E402

NK = ((4096, 4096), (4096, 14336), (14336, 4096), (8192, 8192), (8192, 28672), (28672, 8192))
LARGE = [(m, n, k) for m in (1000, 2048, 4096, 5000, 8192, 16384) for n, k in NK] + [(5000, 3000, 2056), (3000, 7000, 1000)]


def score(sweep: list[dict], shares: tuple[float, float], fixed_us: float, rate_gb: float, before: dict,
          show: bool = False) -> tuple[float, float, int, int]:
    """(geometric mean of best/pick, least best/pick, picks within 5%, large picks moved)."""
    pt.SM90_TILES[(64, 128)], pt.SM90_TILES[(64, 64)] = shares
    pt.SPLIT_S, pt.SPLIT_SM_BYTES = fixed_us * 1e-6, rate_gb * 1e9
    logs, least, within = [], 1.0, 0
    for row in sweep:
        (m, n, k), us = row["shape"], row["us"]
        block, parts = pt.sm90_choice(m, n, k, split=True)
        key = f"{block[0]}x{block[1]}/{parts}"
        best = min(us.values())
        ratio = best / us.get(key, 2 * best)  # a pick the sweep did not time counts as half the best
        logs.append(math.log(ratio))
        least, within = min(least, ratio), within + (ratio >= 0.95)
        if show:
            print(f"  {m}x{n}x{k}: pick {key} best {min(us, key=us.get)} -> {ratio:.2f}")
    moved = sum(pt.sm90_choice(*s, split=True) != before[s] for s in LARGE)
    return math.exp(sum(logs) / len(logs)), least, within, moved


def main() -> None:
    sweep = json.loads(Path(sys.argv[1]).read_text())
    before = {s: pt.sm90_choice(*s, split=True) for s in LARGE}
    found = []
    for s128 in (0.56, 0.6, 0.65, 0.7, 0.75, 0.85, 1.0):
        for s64 in (0.31, 0.4, 0.5, 0.6):
            for fixed in (0.0, 1.0, 2.0, 3.0, 4.5, 6.0):
                for rate in (8, 12, 16, 20, 30, 40, 60):
                    geo, least, within, moved = score(sweep, (s128, s64), fixed, rate, before)
                    if not moved:
                        found.append((geo, least, within, s128, s64, fixed, rate))
    found.sort(reverse=True)
    for f in found[:10]:
        print("pick/best geomean %.3f, least %.2f, %d within 5%% | 64x128 %.2f 64x64 %.2f split %.1f us + %d GB/s an SM" % f)
    score(sweep, found[0][3:5], found[0][5], found[0][6], before, show=True)


if __name__ == "__main__":
    main()
