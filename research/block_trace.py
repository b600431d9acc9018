#!/usr/bin/env python3
"""When each block of a napkin kernel ran, and on which SM: the schedule the L2 replay models.

    python3 research/block_trace.py [--gemm-shape M,N,K] [--attention-shape B,H,N,D] [--only gemm|attention]
    python3 research/block_trace.py --replay block_trace.npz [--hw h200]     (CPU: the model's cache on them)

For each of validate_model's configurations (or those named with `--config LABEL`, repeatable),
the kernel's PTX gets one more parameter, a buffer of four u64 per block, and its thread
(0, 0, 0) writes there %globaltimer when the block starts and when it reaches `ret`, and
%smid. The kernel is launched twice on random inputs (the second launch is recorded; its
output is checked against torch). Writes every configuration's (start, end, SM) arrays to
$OUT/block_trace.npz (keys: "<family>|<label>|<shape>"), and prints per configuration how far
apart the blocks of each wave start, as a share of a block's duration.

The timer costs each kernel three registers and two stores per block; the schedule it
measures is that of the instrumented kernel.

`--replay` runs on the CPU: for each recorded configuration, the L2 replay of the napkin
model (`napkin_ir.model.l2`) over the measured schedule instead of its own, next to the
modelled one and Nsight Compute's DRAM bytes where `validate_model.recorded` has them,
which tells the cache's error from the schedule's.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "research"))  # validate_model

import validate_model as vm  # the configurations and shapes

TRACE_PARAM = "napkin_block_trace"
_START = """\t.reg .b64 %ntk<6>;
\t.reg .b32 %ntw<8>;
\t.reg .pred %ntp;
\tld.param.u64 %ntk0, [{param}];
\tcvta.to.global.u64 %ntk0, %ntk0;
\tmov.u32 %ntw0, %tid.x;
\tmov.u32 %ntw1, %tid.y;
\tor.b32 %ntw0, %ntw0, %ntw1;
\tmov.u32 %ntw1, %tid.z;
\tor.b32 %ntw0, %ntw0, %ntw1;
\tsetp.ne.u32 %ntp, %ntw0, 0;
\tmov.u32 %ntw2, %ctaid.x;
\tmov.u32 %ntw3, %ctaid.y;
\tmov.u32 %ntw4, %ctaid.z;
\tmov.u32 %ntw5, %nctaid.x;
\tmov.u32 %ntw6, %nctaid.y;
\tmad.lo.u32 %ntw3, %ntw4, %ntw6, %ntw3;
\tmad.lo.u32 %ntw2, %ntw3, %ntw5, %ntw2;
\tmul.wide.u32 %ntk1, %ntw2, 32;
\tadd.s64 %ntk1, %ntk0, %ntk1;
\tmov.u64 %ntk2, %globaltimer;
\tmov.u32 %ntw7, %smid;
\tcvt.u64.u32 %ntk3, %ntw7;
\t@!%ntp st.global.u64 [%ntk1], %ntk2;
\t@!%ntp st.global.u64 [%ntk1+16], %ntk3;
"""
_END = "\tmov.u64 %ntk4, %globaltimer;\n\t@!%ntp st.global.u64 [%ntk1+8], %ntk4;\n"


def instrument(ptx: str, name: str) -> str:
    """The PTX with the block timer added to entry `name` (one parameter more, last)."""
    entry = re.search(rf"\.entry {re.escape(name)}\((.*?)\)", ptx, re.S)
    if entry is None:
        raise ValueError(f"no .entry {name} in the PTX")
    params = entry.group(1).rstrip()
    ptx = ptx[:entry.start(1)] + params + f",\n\t.param .u64 {TRACE_PARAM}\n" + ptx[entry.end(1):]
    body = ptx.index("{", entry.start())
    # after the body's register declarations
    decl_end = body + 1
    for m in re.finditer(r"\n\t\.reg [^\n]*;", ptx[body:]):
        if m.start() + body != decl_end:
            break
        decl_end = body + m.end()
    ptx = ptx[:decl_end] + "\n" + _START.format(param=TRACE_PARAM) + ptx[decl_end:]
    head, tail = ptx[:decl_end], ptx[decl_end:]
    tail = re.sub(r"(?m)^(\t(?:@!?%\w+ )?ret;)", lambda m: _END + m.group(1), tail)
    return head + tail


def trace_gemm(torch, label: str, spec: str, shape: tuple[int, int, int]) -> np.ndarray:
    from napkin_ir.diagrams import gemm
    from napkin_ir.runtime import Param, load_ptx
    from napkin_ir.build import compile_kernel

    m, n, k = shape
    kern = compile_kernel(gemm(m, n, k, "bf16"), spec)
    if kern.persistent:
        raise ValueError(f"{label}: a persistent kernel's blocks are not tiles")
    a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    b = torch.randn(k, n, device="cuda").to(torch.bfloat16)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    args = kern.bind({"a": a, "b": b, "out": c})
    specs = [Param.tensor_map() if t == "tensormap" else Param.scalar("u64") for _, t in kern.params] + [Param.scalar("u64")]
    timed = load_ptx(instrument(kern.ptx, kern.name)).kernel(kern.name, specs)
    blocks = int(np.prod(kern.grid))
    trace = torch.zeros(blocks, 4, dtype=torch.int64, device="cuda")
    for _ in range(2):
        c.fill_(float("nan"))
        timed.launch(grid=kern.grid, block=kern.block, smem=kern.smem, args=args + [trace.data_ptr()], cluster=kern.cluster)
    ref = (a.double() @ b.double())
    err = ((c.double() - ref).norm() / ref.norm()).item()
    if not err < 1e-2:
        raise ValueError(f"{label}: the instrumented kernel's output is off (relative error {err:.2e})")
    return trace.cpu().numpy()


def trace_attention(torch, config: dict, shape: tuple[int, int, int, int]) -> np.ndarray:
    from napkin_ir.attention_diagrams import attention_diagram
    from napkin_ir.compiler import compile_attention
    from napkin_ir.runtime import Param, load_ptx

    b, h, n, d = shape
    ptx, cfg = compile_attention(attention_diagram("softmax", b, h, n, d, "bf16"), **config)
    q, k, v = (torch.randn(b, h, n, d, device="cuda").to(torch.bfloat16) for _ in range(3))
    o = torch.empty_like(q)
    specs = [Param.pointer("bf16", (b, h, n, d))] * 3 + [Param.pointer("bf16", (b, h, n, d), out=True), Param.scalar("u64")]
    timed = load_ptx(instrument(ptx, cfg["name"])).kernel(cfg["name"], specs)
    grid = list(cfg["grid"]) + [1] * (3 - len(cfg["grid"]))
    trace = torch.zeros(int(np.prod(grid)), 4, dtype=torch.int64, device="cuda")
    for _ in range(2):
        o.fill_(float("nan"))
        timed.launch(grid=cfg["grid"], block=cfg["block"], smem=cfg["smem"], args=[q, k, v, o, trace.data_ptr()])
    ref = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double())
    err = ((o.double() - ref).norm() / ref.norm()).item()
    if not err < 2e-2:
        raise ValueError(f"attention {config}: the instrumented kernel's output is off (relative error {err:.2e})")
    return trace.cpu().numpy()


GAP_BINS = (0, 0.05, 0.2, 0.35, 0.65, 0.8, 0.95, 1.05, np.inf)  # consecutive starts on an SM, in blocks


def sm_gaps(trace: np.ndarray) -> np.ndarray:
    """The gaps between consecutive block starts on each SM, as shares of the median block's
    duration: about 1/k with k blocks an SM staggered (napkin_ir.model.l2.block_schedule),
    about 1 with one block an SM."""
    start, end, sm = trace[:, 0].astype(np.float64), trace[:, 1].astype(np.float64), trace[:, 2]
    dur = float(np.median(end - start))
    gaps = [np.diff(np.sort(start[sm == q])) for q in np.unique(sm)]
    return np.concatenate(gaps) / dur if gaps else np.zeros(0)


def describe(trace: np.ndarray) -> str:
    """How the blocks ran: their duration; the blocks an SM started with (k); how far apart
    in start the SMs' blocks of a middle group of one block an SM are; and the histogram of
    consecutive starts on one SM (`sm_gaps`, bins `GAP_BINS`)."""
    start, end, sm = trace[:, 0].astype(np.float64), trace[:, 1].astype(np.float64), trace[:, 2]
    t0, dur = start.min(), end - start
    sms = len(np.unique(sm))
    k = int(np.bincount(sm[start <= t0 + 0.01 * np.median(dur)].astype(np.int64)).max())
    order = np.argsort(start, kind="stable")
    mid = len(order) // sms // 2
    group = start[order[mid * sms:(mid + 1) * sms]]
    span = (group.max() - group.min()) / np.median(dur) if len(group) > 1 else 0.0
    gaps = np.histogram(sm_gaps(trace), bins=GAP_BINS)[0]
    return (f"{len(start)} blocks on {sms} SMs, {k} an SM at first, {(end.max() - t0) / 1e3:.1f} us; a block "
            f"{np.median(dur) / 1e3:.1f} us (p10 {np.percentile(dur, 10) / 1e3:.1f}, p90 {np.percentile(dur, 90) / 1e3:.1f}); "
            f"group {mid} of one block an SM starts over {span:.2f} of a block; starts on one SM apart by "
            f"{'/'.join(f'{b:g}' for b in GAP_BINS[1:-1])} blocks: {gaps.tolist()}")


def replay(path: Path, hw_key: str) -> int:
    from napkin_ir.attention_diagrams import attention_diagram
    from napkin_ir.plan.recipes.attention import sm80_attention_passes
    from napkin_ir.diagrams import gemm
    from napkin_ir.model.hardware import hardware
    from napkin_ir.model.l2 import dram_estimate
    from napkin_ir.passmanager import run_pipeline

    hw = hardware(hw_key)
    traces = np.load(path)
    specs = {(f"gemm {f}", label): spec for f, label, spec in vm.gemm_configs()}
    configs = dict(vm.attention_configs())
    lines = [f"DRAM MB: ncu, the model's schedule, the measured one ({hw.name} L2)",
             f"{'family':<10} {'configuration':<22} {'shape':<18} {'ncu':>8} {'model':>8} {'error':>7} {'measured':>8} {'error':>7}"]
    for key in traces.files:
        family, label, shape_text = key.split("|")
        shape = tuple(int(x) for x in shape_text.split("x"))
        if family == "attention":
            text = attention_diagram("softmax", *shape, "bf16")
            spec = sm80_attention_passes(run_pipeline(text), **configs[label])
        else:
            text, spec = gemm(*shape, "bf16"), specs[(family, label)].rsplit(",reg-to-ptx", 1)[0]
        cost, pred = vm.predict(text, spec, hw, None)
        modelled = sum(pred.dram.values())
        measured = sum(dram_estimate(cost, 1, hw.l2_bytes, ran=traces[key][:, :3], partition=hw.l2_partition).moved.values())
        got = vm.recorded(hw.key, shape).get((family, label))
        ncu = (got[0] + got[1]) * 1e6 if got else float("nan")
        lines.append(f"{family:<10} {label:<22} {shape_text:<18} {ncu / 1e6:8.1f} {modelled / 1e6:8.1f} {modelled / ncu - 1:+7.1%} "
                     f"{measured / 1e6:8.1f} {measured / ncu - 1:+7.1%}")
        print(lines[-1], flush=True)
    print("\n" + "\n".join(lines))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gemm-shape", type=lambda t: vm.parse_shape(t, 3), default=vm.DEFAULT_GEMM_SHAPE)
    ap.add_argument("--attention-shape", type=lambda t: vm.parse_shape(t, 4), default=vm.DEFAULT_ATTENTION_SHAPE)
    ap.add_argument("--only", choices=["gemm", "attention"])
    ap.add_argument("--config", action="append", help="a configuration's label (as validate_model prints it); repeatable")
    ap.add_argument("--replay", type=Path, help="a block_trace.npz to replay through the model's L2 (no GPU)")
    ap.add_argument("--hw", default="h200")
    args = ap.parse_args()
    if args.replay:
        return replay(args.replay, args.hw)

    import torch

    out = Path(os.environ.get("OUT") or ".")
    path = out / "block_trace.npz"
    saved = dict(np.load(path)) if path.exists() else {}
    wanted = set(args.config or [])
    gshape, ashape = args.gemm_shape, args.attention_shape
    if args.only != "attention":
        for family, label, spec in vm.gemm_configs():
            if wanted and label not in wanted:
                continue
            key = f"gemm {family}|{label}|{vm.shape_text(gshape)}"
            try:
                saved[key] = trace_gemm(torch, label, spec, gshape)
            except ValueError as e:
                print(f"{key}: {e}", flush=True)
                continue
            print(f"{key}: {describe(saved[key])}", flush=True)
    if args.only != "gemm":
        for label, config in vm.attention_configs():
            if wanted and label not in wanted:
                continue
            key = f"attention|{label}|{vm.shape_text(ashape)}"
            try:
                saved[key] = trace_attention(torch, config, ashape)
            except ValueError as e:
                print(f"{key}: {e}", flush=True)
                continue
            print(f"{key}: {describe(saved[key])}", flush=True)
    np.savez_compressed(path, **saved)
    return 0


if __name__ == "__main__":
    sys.exit(main())
