"""A warm compile cache in a fresh process: the first call loads the cubin ptxas made once
(no JIT of the PTX), runs right, and `napkin_ir.compile` from the warm cache is quick.

Each measurement is a fresh Python process on one cache folder (`NAPKIN_CACHE_DIR`), with
the driver's own JIT cache off (`CUDA_CACHE_DISABLE=1`) so that a PTX load really compiles:

- cold: compiles the diagram, assembles the cubin, loads it;
- warm: reads the entry and its cubin, loads the cubin (the test's claim);
- warm, PTX: the same entry with `CompileCache(cubin=False)`: the driver JIT-compiles.

`compile` is timed after CUDA itself is up (cuda-bindings imported, cuInit, the primary
context: what any first launch pays, and not the cache's); `first launch` is the module
load, the argument checks and the launch, synchronised. Run with `-s` to see the table:

    python -m pytest -q -s tests/gpu/test_cache_gpu.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.gpu

N = 1024

CHILD = r"""
import json, sys, time
import torch
start = time.perf_counter()
import napkin_ir
imported = time.perf_counter()
from napkin_ir.cache import CompileCache, default_cache
from napkin_ir.runtime import kernels
from napkin_ir.runtime.driver import get_context

get_context(0)  # CUDA itself: cuda-bindings, cuInit, the primary context
n = int(sys.argv[3])
a = torch.randn(n, n, device="cuda").to(torch.bfloat16)
b = torch.randn(n, n, device="cuda").to(torch.bfloat16)
c = torch.full((n, n), float("nan"), device="cuda", dtype=torch.bfloat16)
torch.cuda.synchronize()
images = []
real = kernels._load_image
def recorded(image, *args, **kwargs):
    images.append("cubin" if bytes(image[:4]) == b"\x7fELF" else "ptx")
    return real(image, *args, **kwargs)
kernels._load_image = recorded
cache = CompileCache(cubin=False) if sys.argv[2] == "ptx" else default_cache()
t0 = time.perf_counter()
kernel = napkin_ir.compile(napkin_ir.gemm(n, n, n), sys.argv[1], cache=cache)
t1 = time.perf_counter()
kernel(a=a, b=b, out=c, sync=True)
t2 = time.perf_counter()
kernel(a=a, b=b, out=c, sync=True)
t3 = time.perf_counter()
ref = a.double() @ b.double()
print(json.dumps({"import": imported - start, "compile": t1 - t0, "first": t2 - t1, "second": t3 - t2, "loaded": images,
                  "stats": dict(cache.stats), "cubin": kernel.cubin is not None, "nan": bool(c.isnan().any().item()),
                  "error": ((c.double() - ref).norm() / ref.norm()).item(), "target": kernel.contract.target}))
"""


def _child(folder, target: str, mode: str) -> dict:
    env = {**os.environ, "NAPKIN_CACHE_DIR": str(folder), "CUDA_CACHE_DISABLE": "1"}
    run = subprocess.run([sys.executable, "-c", CHILD, target, mode, str(N)], env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-4000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("target", ["sm80", "auto"])
def test_a_warm_cache_loads_the_cubin_in_a_fresh_process(tmp_path, target):
    pytest.importorskip("torch")
    from napkin_ir.cache import find_ptxas

    if find_ptxas() is None:
        pytest.skip("no ptxas here (pip install nvidia-cuda-nvcc): kernels load from PTX")
    cold = _child(tmp_path, target, "cubin")
    warm = [_child(tmp_path, target, "cubin") for _ in range(3)]
    ptx = _child(tmp_path, target, "ptx")
    rows = [("cold", cold), *((f"warm {i + 1}", w) for i, w in enumerate(warm)), ("warm, PTX (JIT)", ptx)]
    print(f"\n{N}^3 bf16 GEMM, target={target} ({cold['target']}), fresh process each (ms):")
    print(f"  {'':16} {'import':>8} {'compile':>8} {'1st launch':>10} {'2nd launch':>10}  loaded  stats")
    for name, r in rows:
        print(f"  {name:16} {1e3 * r['import']:8.1f} {1e3 * r['compile']:8.1f} {1e3 * r['first']:10.1f} "
              f"{1e3 * r['second']:10.2f}  {'+'.join(r['loaded']):6}  {r['stats']}")
    for name, r in rows:
        assert not r["nan"] and r["error"] <= 1e-2, (name, r)
    assert cold["stats"] == {"compiled": 1, "assembled": 1} and cold["loaded"] == ["cubin"]
    for w in warm:
        assert w["stats"] == {"disk": 1} and w["cubin"] and w["loaded"] == ["cubin"], w
    assert ptx["loaded"] == ["ptx"] and not ptx["cubin"]
    assert min(w["compile"] for w in warm) <= 0.05, "napkin_ir.compile from a warm cache took over 50 ms"
