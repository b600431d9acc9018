#!/usr/bin/env python3
"""Time napkin's PyTorch ops from the first call to the cached one.

    python3 tools/bench_torch_ops.py

For `napkin::attention` (bf16, 1 x 8 x 1024 x 64) and `napkin::matmul` (bf16, 1024^3): the
first call in a process with an empty compile cache (the diagram built, compiled, loaded
and launched), the first call of a second process that finds the PTX in the on-disk cache,
and the steady-state cost of a call (the mean over 200 calls, synchronised once at the
end) against torch's own call on the same tensors (`scaled_dot_product_attention`,
`torch.matmul`), on tensors small enough that the launch dominates. Prints a table last.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import sys, time, torch
import torch.nn.functional as F
sys.path.insert(0, sys.argv[1])
t0 = time.perf_counter()
import napkin_ir.torch as nt
imported = time.perf_counter() - t0
q, k, v = (torch.randn(1, 8, 1024, 64, device="cuda", dtype=torch.bfloat16) for _ in range(3))
a, b = (torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16) for _ in range(2))
torch.cuda.synchronize()
def first(fn):
    t = time.perf_counter(); fn(); torch.cuda.synchronize(); return (time.perf_counter() - t) * 1e3
def per_call(fn, n=200):
    for _ in range(20): fn()
    torch.cuda.synchronize(); t = time.perf_counter()
    for _ in range(n): fn()
    torch.cuda.synchronize(); return (time.perf_counter() - t) / n * 1e6
att = lambda: nt.attention(q, k, v, "softmax")
mm = lambda: nt.matmul(a, b)
rows = [("attention", first(att), per_call(att), per_call(lambda: F.scaled_dot_product_attention(q, k, v))),
        ("matmul", first(mm), per_call(mm), per_call(lambda: torch.matmul(a, b)))]
for name, f, ours, theirs in rows:
    print(f"ROW {name} {f:.1f} {ours:.1f} {theirs:.1f}")
print(f"IMPORT {imported * 1e3:.1f}")
"""


def main() -> int:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NAPKIN_CACHE_DIR": cache}
        runs = []
        for _ in range(2):  # a cold cache, then a second process that reads it from disk
            out = subprocess.run([sys.executable, "-c", CHILD, str(ROOT)], env=env, capture_output=True, text=True)
            if out.returncode:
                print(out.stdout, out.stderr)
                return out.returncode
            runs.append({line.split()[1]: line.split()[2:] for line in out.stdout.splitlines() if line.startswith("ROW")})
    import torch

    lines = [f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}", "",
             "op         first call, cold cache (ms)  first call, disk cache (ms)  per call, napkin (us)  per call, torch (us)"]
    for name in runs[0]:
        cold, warm = runs[0][name], runs[1][name]
        lines.append(f"{name:<10} {float(cold[0]):>28.1f} {float(warm[0]):>28.1f} {float(warm[1]):>22.1f} {float(warm[2]):>21.1f}")
    text = "\n".join(lines)
    print(text)
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "bench_torch_ops.txt").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
