"""Copies of a kernel's PTX, saved beside it and timed against it: the shared half of
`backward_subtraction.py` and `forward_subtraction.py`. A directory holds `TAG_NAME.ptx`
and `.json` (a `CompiledKernel`), `TAG_base` the kernel as compiled; a copy whose PTX is
the kernel's own is not saved."""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def save(out: Path, tag: str, kernel: Any, copies: dict[str, str], describe: Callable[[str], str] = lambda ptx: "") -> None:
    """Each of `copies` (name -> PTX; "base" is `kernel`'s) that differs from the kernel, with
    the kernel's launch contract, as `out/TAG_NAME`."""
    from napkin_ir.runtime.compiled import CompiledKernel

    out.mkdir(parents=True, exist_ok=True)
    for name, ptx in copies.items():
        if name == "base" or ptx != kernel.ptx:
            CompiledKernel(ptx, kernel.contract).save(str(out / f"{tag}_{name}"))
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
