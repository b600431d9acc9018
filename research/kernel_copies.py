"""Copies of a kernel's PTX, saved beside it and timed against it: the shared half of
`backward_subtraction.py`, `forward_subtraction.py` and `q_room_release.py`. A directory holds `TAG_NAME.ptx`
and `.json` (a `CompiledKernel`), `TAG_base` the kernel as compiled; a copy whose PTX is
the kernel's own is not saved."""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def save(out: Path, tag: str, kernel: Any, copies: dict[str, Any], describe: Callable[[str], str] = lambda ptx: "") -> None:
    """Each of `copies` that differs from the kernel, as `out/TAG_NAME`: a copy given as PTX
    (name -> PTX; "base" is `kernel`'s) with the kernel's launch contract, one given as a
    compiled kernel (another plan: its own grid, block and parameters) with its own."""
    from napkin_ir.runtime.compiled import CompiledKernel

    out.mkdir(parents=True, exist_ok=True)
    for name, copy in copies.items():
        ptx, contract = (copy, kernel.contract) if isinstance(copy, str) else (copy.ptx, copy.contract)
        if name == "base" or ptx != kernel.ptx:
            CompiledKernel(ptx, contract).save(str(out / f"{tag}_{name}"))
            print(f"{tag}_{name}: {ptx.count(chr(10))} lines{describe(ptx)}")


def time(out: Path, tags, launches: Callable[[list, int], list[Callable[[], None]]], per_batch: int) -> None:
    """Per tag with a base in `out`, its kernels interleaved on the GPU (`launches(kernels,
    stream)`: one launch each, on inputs they share), the base first: each one's median time
    and the base's over it."""
    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
    from bench_gemm import time_interleaved

    from napkin_ir.runtime.compiled import CompiledKernel

    stream = torch.cuda.current_stream().cuda_stream
    torch.manual_seed(0)
    for tag in tags:
        if not (out / f"{tag}_base.ptx").exists():
            continue
        names = sorted({p.stem.split("_", 1)[1] for p in out.glob(f"{tag}_*.ptx")}, key=lambda n: n != "base")
        kernels = [CompiledKernel.load(str(out / f"{tag}_{n}")) for n in names]
        r = time_interleaved(torch, launches(kernels, stream), rounds=9, per_batch=per_batch, warm_s=1.5, settle_s=0.03)
        base = statistics.median(r[0])
        for n, x in zip(names, r):
            print(f"{tag} {n:10s} {statistics.median(x) * 1e3:8.1f} us  base/this {base / statistics.median(x):.4f}", flush=True)


def forward_launches(kernels: list, stream: int) -> list[Callable[[], None]]:
    """`time`'s launches of attention forwards: shared random Q, K and V, each kernel into an
    output of its own."""
    import torch

    shape = kernels[0].contract.param("q").shape
    q, k, v = (torch.randn(*shape, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    outs = [torch.empty_like(q) for _ in kernels]
    return [lambda kern=kern, o=o: kern(q=q, k=k, v=v, out=o, stream=stream) for kern, o in zip(kernels, outs)]


def compiled_changed(text: str, level: str, change: Callable[[Any], str], **options) -> Any:
    """The kernel `napkin_ir.compile(text, target="sm90", **options)` makes, its module at
    `level` (smem, reg) handed to `change`, which returns the text to lower on from there."""
    from napkin_ir.build import compile_kernel
    from napkin_ir.passmanager import run_pipeline, spec
    from napkin_ir.plan.planner import plan_kernel
    from napkin_ir.plan.request import request
    from napkin_ir.target import SM90

    plan = plan_kernel(run_pipeline(text), SM90, request("napkin-sm90", dict(options), {k: None for k in options}))
    changed = change(run_pipeline(text, spec(plan.passes(level))))
    return compile_kernel(changed, spec(plan.passes("ptx")[len(plan.passes(level)):]))


def main(doc: str, make: Callable[[Path], None], tags, launches: Callable[[list, int], list[Callable[[], None]]],
         per_batch: int) -> None:
    """`SCRIPT make DIR` (here: the copies) or `SCRIPT time DIR` (on the GPU: `time`)."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("mode", choices=["make", "time"])
    ap.add_argument("dir", type=Path)
    a = ap.parse_args()
    make(a.dir) if a.mode == "make" else time(a.dir, tags, launches, per_batch=per_batch)
