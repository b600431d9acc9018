#!/usr/bin/env python3
"""Time napkin-sm90's GEMMs with fused epilogues against its plain GEMM, in the same run.

    python3 tools/bench_epilogue.py [--shapes 4096,8192]

For each square shape (bf16): the plain GEMM, C = exp(0.5 A B), C = relu(A B) (written
`ncd.map max %c by 0.0`), C = A B + bias and C = relu(A B + bias) (an f32 bias[n] added
to every row, which each tile's consumers read from global memory), each compiled with
napkin-sm90's defaults, checked against torch on random inputs, then timed with their batches interleaved (same
clocks, same heat; CUDA events, median of the rounds) beside cuBLAS's plain GEMM. The
table (TFLOP/s, and each epilogue's time over the plain GEMM's) is printed last and
written to $OUT/bench_epilogue.txt.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from bench_gemm import report, time_interleaved  # CUDA events, batches interleaved round by round; the table out


def diagram(kind: str, n: int) -> str:
    a, b, c = (f"!ncd.tensor<m={n}, k={n} : bf16>", f"!ncd.tensor<k={n}, n={n} : bf16>", f"!ncd.tensor<m={n}, n={n} : f32>")
    out, vec = f"!ncd.tensor<m={n}, n={n} : bf16>", f"!ncd.tensor<n={n} : f32>"
    add = f"%y = ncd.map add %c, %bias : {c}, {vec} -> {c}"
    body = {
        "plain": [],
        "exp": [f"%s = ncd.map scale %c by 0.5 : {c} -> {c}", f"%e = ncd.map exp %s : {c} -> {c}"],
        "relu": [f"%e = ncd.map max %c by 0.0 : {c} -> {c}"],
        "bias": [add.replace("%y", "%e")],
        "bias_relu": [add, f"%e = ncd.map max %y by 0.0 : {c} -> {c}"],
    }[kind]
    last = "%e" if body else "%c"
    args = f"%a: {a}, %b: {b}" + (f", %bias: {vec}" if kind.startswith("bias") else "")
    lines = [f"func.func @gemm_{kind}({args}) -> {out} {{", f"  %c = ncd.contract %a, %b over [k] : {a}, {b} -> {c}",
             *(f"  {x}" for x in body), f"  %o = ncd.map cast {last} : {c} -> {out}", f"  func.return %o : {out}", "}"]
    return "\n".join(lines) + "\n"


def reference(torch, kind: str, a, b, bias):
    c = a.float() @ b.float()
    return {"plain": c, "exp": torch.exp(0.5 * c), "relu": torch.relu(c), "bias": c + bias, "bias_relu": torch.relu(c + bias)}[kind]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="4096,8192", help="square GEMM sizes, e.g. 4096,8192")
    args = ap.parse_args()
    import torch

    import napkin_ir

    kinds = ["plain", "exp", "relu", "bias", "bias_relu"]
    print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}", flush=True)
    rows = []
    for n in (int(x) for x in args.shapes.split(",")):
        g = torch.Generator(device="cuda").manual_seed(n)
        # small inputs keep exp(0.5 A B) finite in bf16
        a = (torch.randn(n, n, device="cuda", generator=g) / n ** 0.5).to(torch.bfloat16)
        b = torch.randn(n, n, device="cuda", generator=g).to(torch.bfloat16)
        bias = torch.randn(n, device="cuda", generator=g)
        launches = []
        for kind in kinds:
            kernel = napkin_ir.compile(diagram(kind, n), target="sm90", cache=False)
            out = torch.full((n, n), float("nan"), device="cuda", dtype=torch.bfloat16)
            bound = kernel.bind({"a": a, "b": b, "out": out, **({"bias": bias} if kind.startswith("bias") else {})})
            kernel(bound=bound, sync=True)
            want = reference(torch, kind, a, b, bias)
            err = ((out.float() - want).norm() / want.norm()).item()
            print(f"  {n}^3 {kind}: relative error {err:.1e}", flush=True)
            if not err < 2e-2:
                raise SystemExit(f"{kind} at {n}^3 is wrong: relative error {err:.2e}")
            launches.append(lambda kernel=kernel, bound=bound: kernel(bound=bound))
        c = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
        launches.append(lambda: torch.matmul(a, b, out=c))
        times = [statistics.median(t) for t in time_interleaved(torch, launches, rounds=20)]
        flop = 2.0 * n ** 3
        rows.append((n, [flop / t / 1e9 for t in times], [t / times[0] for t in times[:len(kinds)]]))
    lines = ["napkin-sm90 GEMM with fused epilogues, bf16, TFLOP/s (2 n^3), interleaved in one run",
             f"{'n':>6} " + " ".join(f"{k:>9}" for k in kinds) + f" {'cuBLAS':>7} " + " ".join(f"{k + '/plain':>15}" for k in kinds[1:])]
    for n, tf, rel in rows:
        lines.append(f"{n:>6} " + " ".join(f"{x:9.0f}" for x in tf[:-1]) + f" {tf[-1]:7.0f} " + " ".join(f"{r:15.3f}" for r in rel[1:]))
    report(lines, "bench_epilogue.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
