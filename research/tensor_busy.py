#!/usr/bin/env python3
"""How busy napkin-sm90's attention keeps the tensor cores, counted in cycles: each kernel
launched under Nsight Compute (`ncu`), which fixes the SM clock, so softmax and spherical
attention compare cycle for cycle, free of the power limit's clock.

    python3 research/tensor_busy.py [--seqs 1024,4096,16384] [--dim 128] [--kinds softmax,spherical]

Per kernel (16k tokens, hidden 2048, bf16, napkin-sm90's default configuration):
  - the elapsed cycles of the launch and the share of them the SMs were active (a block
    resident), which the last partial wave of tiles lowers;
  - the tensor pipe's busy share of the active cycles and of the elapsed ones;
and per sequence the spherical kernel's speed over the softmax's in cycles. A kernel whose
tensor pipe is busy nearly every active cycle can gain only the rest (and the tail); the
clock it runs at outside the profiler is `clock_probe.py --attention`'s question.

`--child KIND N D` is the launch ncu profiles (the third of three, after two warm ones)."""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))  # bench_attention's setting and launcher

from bench_attention import HIDDEN, TOKENS, napkin_sm90_kernel  # noqa: E402

import ncu_raw  # noqa: E402 (research/)
METRICS = {
    "elapsed": "sm__cycles_elapsed.avg",
    "active": "sm__cycles_active.avg",
    "tensor_active": "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
    "tensor_elapsed": "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "ghz": "smsp__cycles_elapsed.avg.per_second",
}


def child(kind: str, n: int, d: int) -> None:
    import torch

    b, h = TOKENS // n, HIDDEN // d
    q, k, v = (torch.randn(b, h, n, d, device="cuda").to(torch.bfloat16) for _ in range(3))
    o = torch.empty_like(q)
    launch = napkin_sm90_kernel(kind, b, h, n, d, "bf16", "default")
    for _ in range(3):
        launch(q, k, v, o, sync=True)


def profile(kind: str, n: int, d: int) -> dict[str, float]:
    """The metrics of the profiled launch, from ncu's raw CSV."""
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "ncu.csv"
        cmd = ["ncu", "--csv", "--page", "raw", "--log-file", str(log), "--metrics", ",".join(METRICS.values()),
               "-k", "regex:attention", "--launch-skip", "2", "--launch-count", "1",
               sys.executable, __file__, "--child", kind, str(n), str(d)]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0 or not log.exists():
            raise SystemExit(f"ncu failed ({run.returncode}):\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}")
        return read_metrics(log.read_text())


def read_metrics(text: str) -> dict[str, float]:
    """METRICS' values from ncu's raw CSV of one launch (the last profiled)."""
    rows = ncu_raw.launches(text)
    if not rows:
        raise SystemExit(f"ncu profiled no launch:\n{text[-2000:]}")
    out = {}
    for key, metric in METRICS.items():
        if metric not in rows[-1]:
            raise SystemExit(f"ncu gave no {metric}; columns: {list(rows[-1])}")
        out[key] = ncu_raw.number(rows[-1][metric])
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seqs", default="1024,4096,16384")
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--kinds", default="softmax,spherical")
    ap.add_argument("--child", nargs=3, metavar=("KIND", "N", "D"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]), int(args.child[2]))
        return 0
    kinds = args.kinds.split(",")
    lines = [f"{'seq':>6} {'d':>4} {'kind':<10} {'GHz':>5} {'Mcycles':>8} {'SM active':>9} {'tensor/active':>13} "
             f"{'tensor/elapsed':>14} {'speed over ' + kinds[0]:>20}"]
    for n in (int(x) for x in args.seqs.split(",")):
        first = None
        for kind in kinds:
            m = profile(kind, n, args.dim)
            first = first or m["elapsed"]
            lines.append(f"{n:>6} {args.dim:>4} {kind:<10} {m['ghz'] / 1e9:5.2f} {m['elapsed'] / 1e6:8.3f} "
                         f"{100 * m['active'] / m['elapsed']:8.1f}% {m['tensor_active']:12.1f}% "
                         f"{m['tensor_elapsed']:13.1f}% {first / m['elapsed']:20.3f}")
            print(lines[-1], flush=True)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
