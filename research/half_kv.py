#!/usr/bin/env python3
"""What halving the K/V traffic from L2 could buy napkin-sm90's attention: the bound on a
two-block cluster that multicasts each K/V tile (each block would load half of it).

    python3 research/half_kv.py [--seqs 1024,4096,16384] [--dim 128]

`halve_kv(ptx, kernel)` rewrites a kernel's PTX so that every fill of a K or V stage loads
only its first 128-byte panel and its full barrier expects that many bytes: the loop, the
barriers and the products are unchanged, only half of K and V crosses from L2 (the numbers
it computes are wrong, so it is a timing probe only). Softmax and spherical attention, each
as compiled and halved, are timed in the same rounds (16k tokens, hidden 2048, bf16). A
real multicast also pays the cluster's barriers and still writes both blocks' shared
memory, so its gain is at most the halved kernel's."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))  # bench_attention's setting and timer

from bench_attention import HIDDEN, TOKENS, timed  # noqa: E402

LOAD = re.compile(r"cp\.async\.bulk\.tensor\.\dd\.shared::cluster\.global\S* \[[^]]+\], \[(%rd\d+), \{")


def halve_kv(ptx: str, kernel: str) -> tuple[str, int]:
    """The PTX with each K/V fill cut to its first panel, and how many loads it dropped."""
    maps = {}
    for name in ("k", "v"):
        m = re.search(rf"mov\.u64 (%rd\d+), {kernel}_{name};\s*cvta\.param\.u64 (%rd\d+), \1;", ptx)
        if m is None:
            raise ValueError(f"no tensor map {kernel}_{name} in the PTX")
        maps[m.group(2)] = name
    lines, out, dropped = ptx.split("\n"), [], 0
    i = 0
    while i < len(lines):
        line = lines[i]
        if "mbarrier.arrive.expect_tx" not in line:
            out.append(line)
            i += 1
            continue
        end = i + 1  # the fill: up to the next expect_tx or branch
        while end < len(lines) and "expect_tx" not in lines[end] and "bra" not in lines[end]:
            end += 1
        fill = lines[i:end]
        loads = [LOAD.search(x) for x in fill]
        targets = {m.group(1) for m in loads if m}
        if len([m for m in loads if m]) != 2 or not targets <= set(maps):
            out.extend(fill)
            i = end
            continue
        count = line.rsplit(",", 1)[1].strip().rstrip(";")
        for back in range(len(out) - 1, -1, -1):  # the byte count's move, just above
            m = re.match(rf"\s*mov\.u32 {re.escape(count)}, (\d+);", out[back])
            if m:
                out[back] = f"\tmov.u32 {count}, {int(m.group(1)) // 2};"
                break
        else:
            raise ValueError(f"no byte count for {line.strip()}")
        second = [n for n, m in enumerate(loads) if m][1]
        out.extend(x for n, x in enumerate(fill) if n != second)
        dropped += 1
        i = end
    return "\n".join(out), dropped


def main() -> int:
    import torch

    import napkin_ir
    from napkin_ir.attention_diagrams import attention_diagram
    from napkin_ir.runtime.compiled import CompiledKernel

    ap = argparse.ArgumentParser()
    ap.add_argument("--seqs", default="1024,4096,16384")
    ap.add_argument("--dim", type=int, default=128)
    args = ap.parse_args()
    d, lines = args.dim, []
    for n in (int(x) for x in args.seqs.split(",")):
        b, h = TOKENS // n, HIDDEN // d
        q, k, v = (torch.randn(b, h, n, d, device="cuda").to(torch.bfloat16) for _ in range(3))
        o = torch.empty_like(q)
        fns = {}
        for kind in ("softmax", "spherical"):
            kern = napkin_ir.compile(attention_diagram(kind, b, h, n, d, "bf16"), target="sm90", cache=False)
            half, dropped = halve_kv(kern.ptx, kern.name)
            if not dropped:
                raise SystemExit(f"{kind}: no K/V fill to halve")
            for label, kk in ((kind, kern), (f"{kind} half K/V", CompiledKernel(half, kern.contract))):
                bound = kk.bind({"q": q, "k": k, "v": v, "out": o})
                kk(bound=bound, sync=True)
                fns[label] = lambda kk=kk, bound=bound: kk(bound=bound)
        ms = timed(torch, fns)
        tf = {label: 4.0 * b * h * n * n * d / x / 1e9 for label, x in ms.items()}
        lines.append(f"{n:>6} {d:>4} " + " ".join(f"{tf[x]:>16.0f}" for x in fns)
                     + f" {tf['spherical'] / tf['softmax']:>8.3f} {tf['spherical half K/V'] / tf['softmax half K/V']:>8.3f}")
        print(lines[-1], flush=True)
    print(f"\n{torch.cuda.get_device_name()}: TFLOP/s; spherical over softmax as compiled, and both halved")
    print(f"{'seq':>6} {'d':>4} " + " ".join(f"{x:>16}" for x in fns) + f" {'ratio':>8} {'halved':>8}")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
