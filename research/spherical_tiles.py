#!/usr/bin/env python3
"""Spherical attention's tiles at one head dim: napkin-sm90 configurations timed in the
same rounds as napkin's default softmax kernel (16k tokens, hidden 2048, bf16).

    python3 research/spherical_tiles.py [--seqs 4096,16384] [--dim 128] [--set tiles|pipeline|q-registers]

Each configuration is (query rows, keys a tile, stages, overlap, ping-pong, blocks a
multiprocessor, persistent, store, Q in registers), as tools/bench_attention.py's
SM90_CONFIGS; the softmax's are timed in the same rounds, and each row gives its ratio to
napkin's default softmax. research/benchmarks.md (session 31) has what it measured."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from bench_attention import napkin_sm90_kernel, rel_err, spherical_ref, timed  # noqa: E402

CONFIGS = [
    "default",
    (128, 128, 3, True, True, 1, True, "direct"),  # three stages, stored from registers
    (192, 64, 3, True, True, 1, False, "auto"),  # three consumer warpgroups
    (192, 64, 4, True, True, 1, True, "auto"),
    (192, 80, 2, True, True, 1, False, "auto"),
    (192, 96, 2, False, True, 1, False, "auto"),  # no overlap: 96 and 128 keys fit 160 registers a thread
    (192, 96, 3, False, True, 1, True, "auto"),
    (192, 128, 2, False, True, 1, False, "auto"),
    (128, 128, 2, True, True, 1, True, "tma", True),  # Q in registers
    (128, 128, 3, True, True, 1, True, "direct", True),
    (128, 128, 2, True, False, 1, True, "tma", True),
    (128, 128, 2, True, True, 1, False, "tma", True),
]
PIPELINE = [  # the default's tiles, its pipeline varied: the store, stages, overlap, ping-pong
    "default",
    (128, 128, 2, True, True, 1, True, "direct"),
    (128, 128, 3, True, True, 1, True, "direct"),
    (128, 128, 2, True, False, 1, True, "tma"),
    (128, 128, 2, False, True, 1, True, "tma"),
    (128, 128, 2, False, False, 1, True, "tma"),
    (128, 64, 4, True, True, 1, True, "tma"),
]
Q_REGISTERS = [  # Q in registers (a persistent block releases it after its loads) against the default
    "default",
    (128, 128, 2, True, True, 1, True, "tma", True),
    (128, 128, 2, True, False, 1, True, "tma", True),
]
SOFTMAX = [
    "default",
    (128, 128, 2, True, True, 1, False, "tma", True),
    (128, 128, 2, True, True, 1, True, "tma", True),
]


def main() -> int:
    import torch
    import torch.nn.functional as F

    ap = argparse.ArgumentParser()
    ap.add_argument("--seqs", default="4096,16384")
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--set", choices=["tiles", "pipeline", "q-registers"], default="tiles",
                    help="tiles: other tiles and Q in registers; pipeline: the default's tiles, its pipeline varied; "
                         "q-registers: the default against Q in registers")
    args = ap.parse_args()
    spherical = {"tiles": CONFIGS, "pipeline": PIPELINE, "q-registers": Q_REGISTERS}[args.set]
    d, lines = args.dim, []
    for n in (int(x) for x in args.seqs.split(",")):
        b, h = 16384 // n, 2048 // d
        g = torch.Generator(device="cuda").manual_seed(n + d)
        q, k, v = (torch.randn(b, h, n, d, device="cuda", generator=g).to(torch.bfloat16) for _ in range(3))
        o = torch.empty_like(q)
        fns = {}
        for kind, ref in (("softmax", F.scaled_dot_product_attention(q, k, v)), ("spherical", spherical_ref(torch, q, k, v))):
            for config in (SOFTMAX if kind == "softmax" else spherical):
                launch = napkin_sm90_kernel(kind, b, h, n, d, "bf16", config)
                if launch is None:
                    continue
                o.fill_(float("nan"))
                launch(q, k, v, o, sync=True)
                err = rel_err(torch, o, ref)
                label = f"{kind} {config}"
                print(f"  N={n} {label}: err {err:.1e}", flush=True)
                if err < 2e-2:
                    fns[label] = lambda launch=launch: launch(q, k, v, o)
        ms = timed(torch, fns)
        flop = 4.0 * b * h * n * n * d
        base = flop / ms["softmax default"] / 1e9
        for label, x in ms.items():
            tf = flop / x / 1e9
            lines.append(f"{n:>6} {d:>4} {label:<60} {tf:6.0f} {tf / base:6.3f}")
    print(f"\n{torch.cuda.get_device_name()}: TFLOP/s, and over napkin's default softmax")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
