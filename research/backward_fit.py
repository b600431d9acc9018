"""How the attention backward's time splits into a cost a tile and a cost that does not
grow with the tiles, napkin's beside FA4's: the op's backward under a causal mask over 16k
tokens in all (batch x sequence), at several sequence lengths.

Every length has the same tokens, so the kernels around the main one (D, dQ's zeroing and
its finish; FA4's pre- and postprocess) cost the same at each, and so does the grid: b x h
x n / 128 key blocks, 2048 at h16. Only the tiles a block streams (64 queries against its
128 keys, those the mask leaves) grow with the length. A least-squares line T = A + p x
tiles then gives p, what a tile costs, and A, what stays: the other kernels and each
block's start and end (its K and V, its first queries, dK's and dV's stores, the last dQ
adds). Session 70 found napkin's main kernel 1.5% behind FA4's over 4k under a mask and
level over 16k; this says which of the two costs holds the difference.

    python3 research/backward_fit.py [--seqs 2048,4096,8192,16384] [--d 128]   # on the GPU, FA4 installed
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from bench_attention import HIDDEN, TOKENS  # noqa: E402 (FlashAttention-3's setting)

KEYS, QUERIES = 128, 64


def tiles(b: int, h: int, n: int, keys: int = KEYS, queries: int = QUERIES) -> int:
    """The (key block, query tile) pairs a causal backward visits: key block j streams the
    query tiles from the one holding its first key to the end."""
    blocks, per = n // keys, n // queries
    return b * h * sum(per - j * keys // queries for j in range(blocks))


def fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """(A, p) of the least-squares line y = A + p x."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    p = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - p * mx, p


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seqs", default="2048,4096,8192,16384")
    ap.add_argument("--d", type=int, default=128)
    a = ap.parse_args()
    import torch

    import napkin_ir.torch  # noqa: F401 (the ops)
    from bench_attention_backward import fa4_backward, fa4_func
    from bench_gemm import time_interleaved

    fa4 = fa4_func()
    h = HIDDEN // a.d
    rows = []
    for n in map(int, a.seqs.split(",")):
        b = TOKENS // n
        q, k, v, g = (torch.randn(b, h, n, a.d, device="cuda", dtype=torch.bfloat16) for _ in range(4))
        out, lse = torch.ops.napkin.attention_lse(q, k, v, "causal", None)
        fns = [lambda: torch.ops.napkin.attention_backward(q, k, v, out, lse, g, None, "causal", None)]
        if fa4 is not None and (fn := fa4_backward(torch, fa4, q, k, v, g, True)) is not None:
            fns.append(fn)
        ms = [statistics.median(r) for r in time_interleaved(torch, fns, rounds=9, settle_s=0.05)]
        rows.append((n, b, tiles(b, h, n), [x * 1e3 for x in ms]))
        print(f"n{n} b{b} h{h}: {rows[-1][2]} tiles, napkin {rows[-1][3][0]:.0f} us"
              + (f", FA4 {rows[-1][3][1]:.0f} us" if fa4 else ""), flush=True)
    print(f"\nthe op's backward under a causal mask, d={a.d}, {TOKENS} tokens, h{h}; T = A + p x tiles")
    print(f"{'':8}{'A (us)':>10}{'p (ns a tile)':>16}")
    for i, who in enumerate(["napkin", "FA4"][: len(rows[0][3])]):
        big_a, p = fit([r[2] for r in rows], [r[3][i] for r in rows])
        print(f"{who:8}{big_a:10.1f}{p * 1e3:16.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
