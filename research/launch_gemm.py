#!/usr/bin/env python3
"""Compile one GEMM configuration and launch it once on random inputs: a target for
Nsight Compute and compute-sanitizer.

    ncu --clock-control none --set full -o report python3 research/launch_gemm.py --path sm80 --block 256,128,64 --warps 4,2 --stages 3
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def ints(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split(","))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--path", choices=["sm80", "sm90"], default="sm80")
    ap.add_argument("--shape", type=ints, default=(4096, 4096, 4096), help="M,N,K")
    ap.add_argument("--dtype", choices=["bf16", "f16"], default="bf16")
    ap.add_argument("--block", type=ints, default=(256, 128, 64))
    ap.add_argument("--warps", type=ints, default=(4, 2), help="sm80: warps along M,N")
    ap.add_argument("--stages", type=int, default=3)
    ap.add_argument("--layout", default="auto", help="sm80: the stages' layout (auto, swizzle, pad8)")
    ap.add_argument("--launches", type=int, default=1)
    args = ap.parse_args()

    import torch

    from napkin_ir.diagrams import gemm
    from napkin_ir.pipelines import sm80_gemm_pipeline, sm90_gemm_pipeline
    from napkin_ir.build import compile_kernel

    m, n, k = args.shape
    spec = (sm80_gemm_pipeline(args.block, args.warps, args.stages, layout=args.layout) if args.path == "sm80"
            else sm90_gemm_pipeline(args.block, args.stages))
    kern = compile_kernel(gemm(m, n, k, args.dtype), spec)
    dt = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    a, b = torch.randn(m, k, device="cuda").to(dt), torch.randn(k, n, device="cuda").to(dt)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=dt)
    for _ in range(args.launches):
        kern(a=a, b=b, out=c)
    torch.cuda.synchronize()
    ref = a.double() @ b.double()
    err = ((c.double() - ref).norm() / ref.norm()).item()
    print(f"{args.path} {args.block} {m}x{n}x{k} {args.dtype}: rel. error {err:.1e}")
    return 0 if err < 1e-2 else 1


if __name__ == "__main__":
    sys.exit(main())
