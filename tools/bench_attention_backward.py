#!/usr/bin/env python3
"""Time napkin's attention backward against torch's SDPA backends, side by side.

    python3 tools/bench_attention_backward.py [--seqs 1024,4096] [--dims 64,128] [--dtype bf16|f16] [--fused]
                                              [--group R] [--spherical] [--step] [--sustained SECONDS]

The FlashAttention-3 paper's setting: batch x sequence = 16k tokens, hidden 2048 (32 heads
of 64 or 16 heads of 128), causal and not. napkin's backward is
`torch.ops.napkin.attention_backward` (D = rowsum(dO * O), then the dQ, dK and dV kernels
`ncd-grad` derives, on the saved output and log-sum-exp of napkin's forward); each SDPA
backend's is `torch.autograd.grad` through its saved graph. napkin's is checked against
float64 first (on two heads of the timed inputs), then all are timed in the same interleaved rounds
(`bench_gemm.time_interleaved`); times are medians. FLOPs are 2.5x the forward's 4 B H N^2 D
(halved when causal), as FlashAttention counts them. FlashAttention-4 (`fa4`, the
flash-attn-4 package's CuTe DSL kernels) is timed too where it is installed
(`../shared/tools/fa4-peer`). `--group R` gives K and V one head for R query heads
(grouped-query attention: SDPA with `enable_gqa`, FA4 with fewer K and V heads).
`--spherical` adds a row of spherical attention's backward at each shape, which no peer
has, with its ratio to napkin's own softmax backward there (TFLOP/s counted as the
softmax's, though spherical attention over this many keys runs as a program of products
of the head dim, `attention_program`), and its time against its own tiled kernels
(`REASSOCIATE` off) in the same rounds. `--step` times a training
step's attention instead: the forward and the backward through autograd, each call
(napkin's `napkin_ir.torch.attention`, SDPA's backends, FA4's `flash_attn_func`), FLOPs
3.5x the forward's. `--plans` times instead, kernels alone, each configuration the model's
search weighs (`attention_configs`) of each of the backward's kernels at each shape,
beside the default plan, and reports the model's pick (`autotile_attention`) against the
fastest. With `--sustained SECONDS`, napkin's, cuDNN's and FA4's each also run back to back
for that long, twice in turn (`bench_gemm.time_alternating`: each at the clock its own power
draw sustains at the board's limit, as in a training loop), a row of those beneath each
shape's. The table is printed last and written to $OUT/bench_attention_backward.txt.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from bench_gemm import report, time_alternating, time_interleaved  # CUDA events, batches of each kernel in turn; the table out


PEERS = ("napkin", "cudnn", "flash", "efficient", "fa4")


def fa4_func():
    """FlashAttention-4's `flash_attn_func` where it is installed (`../shared/tools/fa4-peer`), else None."""
    try:
        from flash_attn.cute.interface import flash_attn_func
    except Exception:  # noqa: BLE001 (not installed, or its CUDA libraries missing here)
        return None
    return flash_attn_func


def fa4_backward(torch, fa4, q, k, v, g, causal: bool, step: bool = False):
    """A launch of FlashAttention-4's backward on [B, H, N, D] `q`, `k`, `v` and the output's
    cotangent `g` (copied once to its [B, N, H, D]): `torch.autograd.grad` through its saved
    graph, or with `step` its forward and backward; None where it refuses the shape."""
    q4, k4, v4 = (x.transpose(1, 2).contiguous().requires_grad_() for x in (q, k, v))
    g4 = g.transpose(1, 2).contiguous()
    try:
        o4 = fa4(q4, k4, v4, causal=causal)
        o4 = o4[0] if isinstance(o4, tuple) else o4
        torch.autograd.grad(o4, (q4, k4, v4), g4, retain_graph=True)
    except Exception as e:  # noqa: BLE001 (a head dim or GPU it has no kernel for)
        print(f"  fa4: n/a ({str(e).splitlines()[0][:80] if str(e) else type(e).__name__})", flush=True)
        return None
    if step:
        def step4():
            o = fa4(q4, k4, v4, causal=causal)
            return torch.autograd.grad(o[0] if isinstance(o, tuple) else o, (q4, k4, v4), g4)
        return step4
    return lambda: torch.autograd.grad(o4, (q4, k4, v4), g4, retain_graph=True)


def with_parts(nt, fused: bool, d: int, call):
    """`call` with dQ, dK and dV from one kernel at head dim `d` (`fused`, whatever the
    keys and the mask), or dQ from its own kernel beside dK and dV's."""
    saved = nt.FUSED_DQ_DIMS, nt.FUSED_DQ_MIN_KEYS, nt.FUSED_DQ_MASKED_MIN_KEYS
    nt.FUSED_DQ_DIMS, nt.FUSED_DQ_MIN_KEYS, nt.FUSED_DQ_MASKED_MIN_KEYS = ((d,), 0, 0) if fused else ((), 0, 0)
    try:
        return call()
    finally:
        nt.FUSED_DQ_DIMS, nt.FUSED_DQ_MIN_KEYS, nt.FUSED_DQ_MASKED_MIN_KEYS = saved


def _tiled(nt, call):
    """`call` as a function that runs it with `nt.REASSOCIATE` off: spherical attention's
    tiled kernels, not its program of products."""
    def run():
        nt.REASSOCIATE = False
        try:
            return call()
        finally:
            nt.REASSOCIATE = True
    return run


def _rel(x, y) -> float:
    return float((x.double() - y).norm() / y.norm())


def check(torch, q, k, v, g, grads, kind: str) -> float:
    """The worst relative error of napkin's dq, dk, dv at the first batch entry's first
    key/value head (and its group's query heads) against float64 (attention is independent
    per batch entry and head)."""
    n, d = q.shape[2], q.shape[3]
    r = q.shape[1] // k.shape[1]
    q64 = q[:1, :r].double().requires_grad_()
    k64, v64 = (x[:1, :1].double().requires_grad_() for x in (k, v))
    s = q64 @ k64.transpose(-1, -2)
    if kind == "spherical":
        p = s / s.norm(dim=-1, keepdim=True)
    else:
        s = s / d ** 0.5
        if kind == "causal":
            s = s.masked_fill(~torch.ones(n, n, dtype=torch.bool, device=q.device).tril(), float("-inf"))
        p = torch.softmax(s, -1)
    (p @ v64).backward(g[:1, :r].double())
    return max(_rel(a[:1, :w], b.grad) for a, b, w in zip(grads, (q64, k64, v64), (r, 1, 1)))


def plan_rows(torch, nt, d: int, n: int, kind: str) -> list[str]:
    """Rows of `--plans` at head dim `d`, `n` tokens a sequence (16k in all, hidden 2048),
    `kind`: for each kernel of the backward (D's aside), every configuration of the
    model's search that compiles (those whose PTX is the same timed once, under the first
    label), the default plan and the model's pick for this GPU (what `autotile=true`
    compiles: the search's tiles, launched persistent where the default would be), each
    checked against the default's outputs, then all timed kernels alone in the same rounds."""
    import napkin_ir
    from napkin_ir.attention_diagrams import gradient_passes
    from napkin_ir.passes.composite import spec
    from napkin_ir.passmanager import run_pipeline
    from napkin_ir.plan.recipes.attention import AttentionSpace, attention_configs, autotile_attention, persistent_pays

    b, h = max(1, 16384 // n), 2048 // d
    hw = "h200" if "H200" in torch.cuda.get_device_name() else "h100"
    q, k, v, g = (torch.randn(b, h, n, d, device="cuda").to(torch.bfloat16) for _ in range(4))
    out, lse = torch.ops.napkin.attention_lse(q, k, v, kind, None)
    delta = (g.float() * out.float()).sum(-1)
    given = {"q": q, "k": k, "v": v, "d_o": g, "lse": lse, "norm": lse, "delta": delta, "lse_log2": lse * math.log2(math.e)}
    rows = []
    for part in nt.backward_parts(d, (9, 0), kind == "causal", n)[1:]:
        module = run_pipeline(nt.attention_text(kind, b, h, h, n, n, d, "bf16"), gradient_passes(kind, part))
        text = str(module)
        pick = autotile_attention(module, hw, space=AttentionSpace(persistent=persistent_pays(module))).config.describe()
        kernels: dict[str, object] = {"default": napkin_ir.compile(text, "sm90"), "pick": napkin_ir.compile(text, "sm90", autotile=True, hw=hw)}
        for cfg in attention_configs(module):
            try:
                kernels[cfg.describe()] = napkin_ir.compile(text, pipeline=spec(cfg.passes(module)))
            except napkin_ir.NapkinError as e:
                print(f"  {part} {cfg.describe()}: not compiled ({str(e).splitlines()[0][:80]})", flush=True)
        same: dict[str, list[str]] = {}  # the first label of each distinct kernel: its labels
        for label, kern in kernels.items():
            first = next((x for x in same if kernels[x].ptx == kern.ptx), label)  # type: ignore[attr-defined]
            same.setdefault(first, []).append(label)
        fns, want = {}, None
        for label in same:
            kern = kernels[label]
            outs = {p.arg: torch.empty(p.shape, device="cuda", dtype=torch.float32 if p.role == "accumulate" else torch.bfloat16)
                    for p in kern.contract.params if p.role in ("out", "accumulate")}  # type: ignore[attr-defined]
            bound = kern.bind({**{p.arg: given[p.arg].view(p.shape) for p in kern.contract.params if p.arg not in outs},  # type: ignore[attr-defined]
                               **outs})
            kern(bound=bound, sync=True)  # type: ignore[operator]
            got = [x.float() for x in outs.values()]
            want = want or got
            err = max(_rel(x, y) for x, y in zip(got, want))
            if not err <= 1e-2:
                print(f"  {part} {label}: {err:.1e} from the default's outputs: not timed", flush=True)
                continue
            fns[label] = lambda kern=kern, bound=bound: kern(bound=bound)  # type: ignore[operator]
        labels = list(fns)
        med = dict(zip(labels, (statistics.median(r) * 1e3 for r in time_interleaved(torch, [fns[x] for x in labels],
                                                                                      rounds=9, settle_s=0.03))))
        best = min(med, key=med.__getitem__)
        picked = next((x for x, group in same.items() if "pick" in group), None)
        at_pick = med.get(picked, float("nan"))
        rows.append(f"{f'b{b} h{h} n{n} d{d} {kind}':<28}{part:>5}{med['default']:>10.0f}{at_pick:>10.0f}{med[best]:>10.0f}"
                    f"{med[best] / at_pick:>10.2f}   pick: {pick}; best: {'; '.join(same[best])}")
        print(rows[-1], flush=True)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seqs", default="1024,4096", help="sequence lengths (batch x sequence = 16k tokens)")
    ap.add_argument("--dims", default="64,128", help="head dims (hidden 2048)")
    ap.add_argument("--dtype", choices=["bf16", "f16"], default="bf16")
    ap.add_argument("--group", type=int, default=1, help="query heads per key/value head (grouped-query attention)")
    ap.add_argument("--spherical", action="store_true", help="also time spherical attention's backward (napkin only)")
    ap.add_argument("--step", action="store_true", help="time the forward and the backward together (a training step's attention)")
    ap.add_argument("--plans", action="store_true", help="time every configuration of the model's search of each kernel, "
                    "kernels alone, and the model's pick against the fastest")
    ap.add_argument("--fused", action="store_true", help="also time dQ, dK and dV from one kernel and dQ apart, at every shape "
                    "(the default picks one: napkin_ir.torch.backward_parts)")
    ap.add_argument("--sustained", type=float, default=0.0, metavar="SECONDS",
                    help="also run napkin's, cuDNN's and FA4's back to back for SECONDS each, twice in turn, a row of those "
                         "(TFLOP/s, SM clock, board power) beneath each shape's")
    args = ap.parse_args()
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    import napkin_ir.torch as nt

    dt = {"bf16": torch.bfloat16, "f16": torch.float16}[args.dtype]
    fa4 = fa4_func()
    name = torch.cuda.get_device_name()
    lines = [f"device: {name}  torch {torch.__version__}  {date.today().isoformat()}",
             f"command: python3 tools/bench_attention_backward.py --seqs {args.seqs} --dims {args.dims} --dtype {args.dtype}"
             + (" --fused" if args.fused else "") + (f" --group {args.group}" if args.group > 1 else "")
             + (" --spherical" if args.spherical else "") + (" --step" if args.step else "")
             + (f" --sustained {args.sustained:g}" if args.sustained else ""), "",
             f"{'shape':<28}{'napkin err':>11}" + "".join(f"{x:>12}" for x in PEERS)
             + f"{'vs cudnn':>10}{'vs flash':>10}{'vs fa4':>10}",
             "TFLOP/s of the forward and the backward (3.5x the forward's FLOPs)" if args.step else "TFLOP/s of the backward (2.5x the forward's FLOPs)"
             + ("" if fa4 else "; fa4: not installed (../shared/tools/fa4-peer)")]
    if args.plans:
        lines[-2:] = [f"{'shape':<28}{'part':>5}{'default':>10}{'pick':>10}{'best':>10}{'best/pick':>10}",
                      "us, kernels alone (the backward's kernels but D's)"]
        lines[1] += " --plans"
        for d in map(int, args.dims.split(",")):
            for n in map(int, args.seqs.split(",")):
                for kind in ("softmax", "causal"):
                    lines += plan_rows(torch, nt, d, n, kind)
        report(lines, "bench_attention_backward.txt")
        return 0
    backends = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION}
    for d in map(int, args.dims.split(",")):
        h = 2048 // d
        for n in map(int, args.seqs.split(",")):
            b = max(1, 16384 // n)
            hk = h // args.group
            heads = f"h{h}" if hk == h else f"h{h}/{hk}"  # query heads / key and value heads
            softmax_tf = 0.0
            for kind in ("softmax", "causal", *(("spherical",) if args.spherical and not args.step else ())):
                causal = kind == "causal"
                q, g = (torch.randn(b, h, n, d, device="cuda").to(dt) for _ in range(2))
                k, v = (torch.randn(b, hk, n, d, device="cuda").to(dt) for _ in range(2))
                # the forward's output and row statistic (spherical attention's: the rows' norms)
                out, lse = torch.ops.napkin.attention_lse(q, k, v, kind, None)
                err = check(torch, q, k, v, g, torch.ops.napkin.attention_backward(q, k, v, out, lse, g, None, kind, None), kind)
                fns = {"napkin": lambda: torch.ops.napkin.attention_backward(q, k, v, out, lse, g, None, kind, None)}
                if kind == "spherical":  # no peer has it: against napkin's own softmax backward at this shape
                    # and its own tiled kernels (`REASSOCIATE` off: no program of products), in the same rounds
                    tiled = _tiled(nt, lambda: torch.ops.napkin.attention_backward(q, k, v, out, lse, g, None, kind, None))
                    err_tiled = check(torch, q, k, v, g, tiled(), kind)
                    t, t_tiled = (statistics.median(r) for r in time_interleaved(torch, [fns["napkin"], tiled], rounds=9,
                                                                                 settle_s=0.05))
                    tf_s = 2.5 * 4 * b * h * n * n * d / (t * 1e-3) / 1e12
                    row = f"{f'b{b} {heads} n{n} d{d} spherical':<28}{err:>11.1e}{tf_s:>12.0f}" \
                        + f"   {tf_s / softmax_tf:.2f}x napkin's softmax backward; {t * 1e3:.0f} us against its tiled " \
                        + f"kernels' {t_tiled * 1e3:.0f} us (err {err_tiled:.1e}), {t_tiled / t:.1f}x"
                    print(row, flush=True)
                    lines.append(row)
                    continue
                if args.step:  # the forward too, through autograd, as a model's training step runs it
                    qs, ks, vs = (x.detach().clone().requires_grad_() for x in (q, k, v))
                    fns = {"napkin": lambda qs=qs, ks=ks, vs=vs: torch.autograd.grad(nt.attention(qs, ks, vs, kind), (qs, ks, vs), g)}
                if args.fused and not args.step and d in (64, 128) and torch.cuda.get_device_capability() == (9, 0):
                    for label, fused in (("fused", True), ("apart", False)):
                        fns[label] = lambda fused=fused: with_parts(nt, fused, d, lambda: torch.ops.napkin.attention_backward(
                            q, k, v, out, lse, g, None, kind, None))
                for label, backend in backends.items():
                    qs, ks, vs = (x.detach().clone().requires_grad_() for x in (q, k, v))
                    gqa = {"enable_gqa": True} if hk < h else {}
                    try:
                        with sdpa_kernel(backend):
                            o = F.scaled_dot_product_attention(qs, ks, vs, is_causal=causal, **gqa)
                        torch.autograd.grad(o, (qs, ks, vs), g, retain_graph=True)
                    except RuntimeError as e:
                        print(f"  {label}: n/a ({str(e).splitlines()[0][:80]})", flush=True)
                        continue
                    if args.step:
                        def step(backend=backend, qs=qs, ks=ks, vs=vs, gqa=gqa):
                            with sdpa_kernel(backend):
                                o = F.scaled_dot_product_attention(qs, ks, vs, is_causal=causal, **gqa)
                            return torch.autograd.grad(o, (qs, ks, vs), g)
                        fns[label] = step
                        continue
                    fns[label] = (lambda o=o, qs=qs, ks=ks, vs=vs: torch.autograd.grad(o, (qs, ks, vs), g, retain_graph=True))
                if fa4 is not None and (fn := fa4_backward(torch, fa4, q, k, v, g, causal, args.step)) is not None:
                    fns["fa4"] = fn
                labels = list(fns)
                rounds = time_interleaved(torch, [fns[x] for x in labels], rounds=9, settle_s=0.05)
                ms = {x: statistics.median(r) for x, r in zip(labels, rounds)}
                flop = (3.5 if args.step else 2.5) * 4 * b * h * n * n * d / (2 if causal else 1)
                tf = {x: flop / (t * 1e-3) / 1e12 for x, t in ms.items()}
                cells = "".join(f"{tf[x]:>12.0f}" if x in tf else f"{'n/a':>12}" for x in PEERS)
                ratio = lambda peer: f"{tf['napkin'] / tf[peer]:>10.2f}" if peer in tf else f"{'n/a':>10}"  # noqa: E731
                if kind == "softmax":
                    softmax_tf = tf["napkin"]
                row = f"{f'b{b} {heads} n{n} d{d}' + (' causal' if causal else ''):<28}{err:>11.1e}{cells}{ratio('cudnn')}{ratio('flash')}{ratio('fa4')}"
                if "fused" in tf:
                    row += f"   one kernel {tf['fused']:.0f}, dQ apart {tf['apart']:.0f} ({tf['fused'] / tf['apart']:.2f}x)"
                print(row, flush=True)
                lines.append(row)
                if args.sustained:
                    runs = time_alternating(torch, {x: fns[x] for x in ("napkin", "cudnn", "fa4") if x in fns}, args.sustained)
                    tfs = {x: flop / (r[0] * 1e-3) / 1e12 for x, r in runs.items()}
                    row = f"{'  sustained':<28}{'':>11}" + "".join(f"{tfs[x]:>12.0f}" if x in tfs else f"{'':>12}" for x in PEERS) \
                        + "".join(f"{tfs['napkin'] / tfs[x]:>10.2f}" if x in tfs else f"{'':>10}" for x in ("cudnn", "flash", "fa4")) \
                        + "   " + ", ".join(f"{x} {r[1]:.0f} MHz {r[2]:.0f} W" for x, r in runs.items())
                    print(row, flush=True)
                    lines.append(row)
    report(lines, "bench_attention_backward.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
