#!/usr/bin/env python3
"""The SM clock and board power while one GEMM runs back to back, for napkin's sm_80 and
sm_90a kernels and cuBLAS: whether a kernel is held back by the power limit.

    python3 tools/clock_probe.py [--seconds 3]

Each kernel runs for the given time after a warm-up while a thread samples NVML every 50
ms; prints the median clock, power and TFLOP/s of each.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    import pynvml
    import torch

    from napkin_ir.diagrams import gemm
    from napkin_ir.pipelines import sm80_gemm_pipeline, sm90_gemm_pipeline
    from napkin_ir.runtime.compiled import compile_kernel

    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--size", type=int, default=4096)
    args = ap.parse_args()
    pynvml.nvmlInit()
    dev = pynvml.nvmlDeviceGetHandleByIndex(0)
    m = args.size
    a, b = (torch.randn(m, m, device="cuda").bfloat16() for _ in range(2))
    c = torch.empty(m, m, device="cuda", dtype=torch.bfloat16)
    text = gemm(m, m, m, "bf16")
    runs = {"cuBLAS": lambda: torch.matmul(a, b, out=c)}
    for name, spec in (("napkin sm80 256x128x64", sm80_gemm_pipeline((256, 128, 64), (4, 2), 3)),
                       ("napkin sm90 128x256x64", sm90_gemm_pipeline((128, 256, 64), 4, group=8, persistent=True))):
        kern = compile_kernel(text, spec)
        bound = kern.bind({"a": a, "b": b, "out": c})
        runs[name] = lambda kern=kern, bound=bound: kern(sync=False, bound=bound)
    rows = []
    for name, fn in list(runs.items()) * 2:
        for _ in range(20):
            fn()
        torch.cuda.synchronize()
        samples, stop = [], threading.Event()

        def sample() -> None:
            while not stop.is_set():
                samples.append((pynvml.nvmlDeviceGetClockInfo(dev, pynvml.NVML_CLOCK_SM), pynvml.nvmlDeviceGetPowerUsage(dev) / 1000))
                time.sleep(0.05)

        t = threading.Thread(target=sample)
        t.start()
        start, launches = time.time(), 0
        ev0, ev1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        ev0.record()
        while time.time() - start < args.seconds:
            for _ in range(20):
                fn()
            launches += 20
            torch.cuda.synchronize()
        ev1.record()
        ev1.synchronize()
        stop.set()
        t.join()
        ms = ev0.elapsed_time(ev1) / launches
        rows.append((name, statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples), 2 * m**3 / ms / 1e9))
    print(f"\n{'kernel':<26} {'SM MHz':>7} {'power W':>8} {'TFLOP/s':>8}")
    for name, mhz, watts, tf in rows:
        print(f"{name:<26} {mhz:7.0f} {watts:8.0f} {tf:8.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
