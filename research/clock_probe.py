#!/usr/bin/env python3
"""The SM clock and board power while one GEMM runs back to back, for napkin's sm_80 and
sm_90a kernels and cuBLAS: whether a kernel is held back by the power limit.

    python3 research/clock_probe.py [--seconds 3] [--size 4096 | --shape M,N,K] [--sm80 BM,BN,BK/WM,WN/STAGES ...]
    python3 research/clock_probe.py --attention 16384 [--dim 128] [--causal]

`--attention N` does the same for attention at sequence N (16k tokens, hidden 2048, bf16):
napkin-sm90's softmax and spherical kernels, torch SDPA's cuDNN backend, and FA4's forward
where it is installed (`../shared/tools/fa4-peer`); with `--causal`, the causal softmax of
each and no spherical kernel.

`--sm80` replaces the sm_80 configuration (256x128x64, warps 4x2, 3 stages) with the ones
given, to compare their clocks and power side by side.

Each kernel runs for the given time after a warm-up (twice, in turn) while NVML is sampled
every 50 ms (bench_gemm's `time_sustained`); prints the median clock, power and TFLOP/s.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))  # bench_gemm

from bench_gemm import time_sustained  # back to back for seconds, with NVML's clock and power


def main() -> int:
    import torch

    from napkin_ir.diagrams import gemm
    from napkin_ir.pipelines import sm80_gemm_pipeline, sm90_gemm_pipeline
    from napkin_ir.build import compile_kernel

    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--size", type=int, default=4096, help="M = N = K")
    ap.add_argument("--shape", type=lambda t: tuple(int(x) for x in t.split(",")), help="M,N,K (instead of --size)")
    ap.add_argument("--sm80", nargs="+", default=["256,128,64/4,2/3"], help="BM,BN,BK/WM,WN/STAGES")
    ap.add_argument("--attention", type=int, help="attention at this sequence length instead of a GEMM")
    ap.add_argument("--dim", type=int, default=128, help="attention's head dim")
    ap.add_argument("--causal", action="store_true", help="attention under a causal mask")
    args = ap.parse_args()
    if args.attention:
        return attention(torch, args.attention, args.dim, args.seconds, args.causal)
    m, n, k = args.shape or (args.size,) * 3
    a, b = torch.randn(m, k, device="cuda").bfloat16(), torch.randn(k, n, device="cuda").bfloat16()
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    text = gemm(m, n, k, "bf16")
    runs = {"cuBLAS": lambda: torch.matmul(a, b, out=c)}
    configs = []
    for cfg in args.sm80:
        block, warps, stages = cfg.split("/")
        bl, wp = tuple(int(x) for x in block.split(",")), tuple(int(x) for x in warps.split(","))
        configs.append((f"napkin sm80 {'x'.join(map(str, bl))} s{stages}", sm80_gemm_pipeline(bl, wp, int(stages))))
    configs.append(("napkin sm90 128x256x64", sm90_gemm_pipeline((128, 256, 64), 4, group=8, persistent=True)))
    for name, spec in configs:
        kern = compile_kernel(text, spec)
        bound = kern.bind({"a": a, "b": b, "out": c})
        runs[name] = lambda kern=kern, bound=bound: kern(sync=False, bound=bound)
    print(f"\nGEMM {m}x{n}x{k}\n{'kernel':<26} {'SM MHz':>7} {'power W':>8} {'TFLOP/s':>8}")
    for name, fn in list(runs.items()) * 2:
        ms, mhz, watts = time_sustained(torch, fn, args.seconds)
        print(f"{name:<26} {mhz:7.0f} {watts:8.0f} {2 * m * n * k / ms / 1e9:8.0f}", flush=True)
    return 0


def attention(torch, n: int, d: int, seconds: float, causal: bool = False) -> int:
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from bench_attention import HIDDEN, TOKENS, fa4_launch, napkin_sm90_kernel

    b, h = TOKENS // n, HIDDEN // d
    q, k, v = (torch.randn(b, h, n, d, device="cuda").bfloat16() for _ in range(3))
    o = torch.empty_like(q)
    runs = {f"napkin sm90 {kind}": (lambda f=napkin_sm90_kernel(kind, b, h, n, d, "bf16", "default"): f(q, k, v, o))
            for kind in (("causal",) if causal else ("softmax", "spherical"))}

    def cudnn():
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    runs[f"cuDNN {'causal' if causal else 'softmax'}"] = cudnn
    fa4 = fa4_launch(torch, q, k, v, causal)
    if fa4 is not None:
        runs[f"FA4 {'causal' if causal else 'softmax'}"] = fa4
    flop = 4.0 * b * h * n * n * d / (2 if causal else 1)
    print(f"\nattention N={n} d={d}{' causal' if causal else ''}\n{'kernel':<26} {'SM MHz':>7} {'power W':>8} {'TFLOP/s':>8}")
    for name, fn in list(runs.items()) * 2:
        ms, mhz, watts = time_sustained(torch, fn, seconds)
        print(f"{name:<26} {mhz:7.0f} {watts:8.0f} {flop / ms / 1e9:8.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
