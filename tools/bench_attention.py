#!/usr/bin/env python3
"""Time napkin's attention kernels against torch's scaled_dot_product_attention.

    python3 tools/bench_attention.py [--quick] [--dtype bf16|f16] [--path sm80|sm90] [--sustained SECONDS]

`--path sm80` times napkin-sm80's kernels (cp.async, mma.sync), `sm90` napkin-sm90's (TMA,
wgmma, a producer warpgroup); its configuration `default` is napkin-sm90 as a user runs it
(its own tiles, store and persistence for the shape), `persistent` and `plain` the same
with the grid persistent or not, `auto` napkin-sm90{autotile=true} for the GPU at hand
(the napkin model's choice). `--path sm90 --groups 4,8` times
grouped-query attention instead (r query heads sharing each key/value head) against SDPA's
`enable_gqa`.

The FlashAttention-3 paper's setting: batch x sequence = 16k tokens, hidden 2048 (32 heads
of 64 or 16 heads of 128), sequence 1k, 4k and 16k, causal and not. For each shape, in
the same run: napkin's kernel in a few tile configurations (each checked against torch
first; the fastest correct one is reported), and torch's SDPA with each backend it offers
(`torch.nn.attention.sdpa_kernel`: FLASH_ATTENTION, CUDNN_ATTENTION, EFFICIENT_ATTENTION).
FlashAttention-4 (`fa4`: the flash-attn-4 package's CuTe DSL kernels, on inputs laid out
[batch, tokens, heads, head dim]) is timed too where it is installed (`../shared/tools/fa4-peer`).
Spherical attention (no softmax: the scores over their L2 norm) is timed against napkin's
own softmax kernel at the same shapes. FLOPs are 4 B H N^2 D, halved when causal. Every
kernel of a shape (napkin's configurations, SDPA's backends; for spherical attention, with
the fastest softmax) is timed in the same rounds, each round a batch of launches of each
in an order of its own, each batch after 50 ms of untimed launches of its own kernel (so
that the clock is the one that kernel sustains, not its predecessor's), after a second of
warm-up (`bench_gemm.time_interleaved`): the ratios compare kernels that saw the same
heat. Times are the medians over the rounds. With `--sustained SECONDS`, napkin's fastest
kernel, cuDNN's and FA4's then each run back to back for that long, twice in turn. The H200
runs these kernels at its power limit, so each then runs at the clock its own draw
sustains, as in a training loop. An interleaved batch runs milliseconds after another
kernel's, and the power controller's lag leaves those timings a percent or two apart from
call to call (the configuration `control`, the default compiled again and timed beside
it, shows how far apart one call puts two copies of one kernel: 0.2-1.7% a row over head
dims 64-256 at 4k and 16k, H200 2026-12-01). The tables are printed last and written to $OUT/bench_attention.txt.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from bench_gemm import report, time_alternating, time_interleaved  # CUDA events, batches of each kernel in turn; the table out

TOKENS, HIDDEN = 16 * 1024, 2048
SEQS = [1024, 4096, 16384]
HEAD_DIMS = [64, 128]
CONFIGS = [  # query rows per block, keys per tile, warps, stages, Q's fragments kept in registers, blocks an SM
    (128, 64, 8, 3, True, 1),
    (128, 64, 8, 2, True, 1),
    (128, 64, 8, 3, True, 2),
    (128, 64, 8, 3, False, 1),
    (128, 64, 4, 2, False, 1),
    (128, 32, 4, 3, False, 1),
    (64, 64, 4, 3, True, 1),
    (64, 64, 4, 2, True, 1),
    (128, 128, 8, 2, False, 1),
]
SM90_CONFIGS = [  # query rows per block, keys per tile (0: 128, 64 at head dims over 128), stages (0: the pipeline's default), overlap, pingpong,
    # blocks a multiprocessor, persistent, how the output leaves, Q in registers (left out: shared memory, as before it was an option)
    (128, 0, 0, True, True),
    (128, 0, 0, True, False),
    (128, 0, 2, False, False),
    (128, 64, 0, True, True),
    (128, 128, 3, True, True),
    (192, 64, 0, True, True),  # three consumer warpgroups
    (64, 64, 0, True, True, 2),  # two blocks of one consumer warpgroup a multiprocessor
    (64, 128, 0, True, True, 2),
    "auto",  # napkin-sm90{autotile=true}: the napkin model's choice for this GPU
    (128, 0, 0, True, True, 1, True),  # persistent: each block loops over query tiles, in pairs of equal work
    (128, 64, 0, True, True, 1, True),
    (128, 0, 0, True, True, 1, True, "tma"),  # the output by stmatrix and TMA stores
    (128, 0, 0, True, True, 1, False, "tma"),
    (128, 0, 2, True, True),  # two stages, overlapped: K and V released apart
    (128, 176, 2, True, True),  # 176 keys a tile (FlashAttention-3's at head dim 128 without a mask)
    (128, 176, 2, True, True, 1, True),
    (128, 0, 2, True, True, 1, True),
    "default",  # napkin-sm90 as it stands: its own tiles, store and persistence for the shape
    (128, 176, 2, True, True, 1, False, "tma"),  # 176 keys and TMA stores through one panel stage
    (128, 176, 2, True, True, 1, True, "tma"),  # the same, persistent
    "persistent",  # the defaults with a persistent grid
    "plain",  # the defaults with a plain grid, one block a tile
    (128, 176, 2, True, False, 1, True, "tma"),  # 19 without ping-pong (spherical attention's turns are short)
    (128, 80, 2, True, True),  # 80 keys: FlashAttention-3's tile at head dim 256
    (192, 128, 2, True, True),  # three consumer warpgroups, 128 keys (FlashAttention-3's at head dim 64, causal)
    (128, 80, 2, True, True, 1, True),  # 23 and 24, persistent
    (192, 128, 2, True, True, 1, True),
    (128, 128, 0, True, True, 1, True, "tma"),  # 128 keys, persistent, TMA stores (the 176 default's short-stream peer)
    (128, 128, 0, True, True, 1, True, "tma", True),  # 27 with Q in registers (S = Q K^T by wgmma with A from registers)
    (128, 128, 0, True, True, 1, False, "tma", True),  # the same, a block a tile
    "q-shared",  # the defaults with Q in shared memory (what they were where napkin-sm90 now holds Q in registers)
]


NAMED = ("default", "auto")  # configurations the table also gives apart, beside the fastest
# napkin-sm90's defaults, and the defaults with one decision of theirs undone, by name
VARIANTS = {
    "default": {},
    "persistent": {"persistent": True},
    "plain": {"persistent": False},
    "q-shared": {"q_registers": False},  # Q in shared memory where the default holds it in registers
    "b128": {"block": "128,128"},  # blocks of 128 rows where the default takes 192
    "waits-late": {"early_waits": "none"},  # V awaited where reg-wgmma-overlap left it, before P V's wait
    "waits-scores": {"early_waits": "scores"},  # V awaited right after the scores retire
    "waits-max": {"early_waits": "max"},  # V awaited after the row max
    "waits-products": {"early_waits": "products"},  # V awaited in the next trip, before P V's products (FA4's order)
    "sums-exchanged": {"partial_sums": False},  # the running row sums exchanged across the quad each trip (the tree)
    "rescale-eager": {"lazy_rescale": False},  # the running max moved every trip, the output rescaled every trip
    "control": {},  # the default compiled again, timed as another kernel: its ratio to `default` is the call's noise
    "keys64": {"block": "128,64"},  # 64 keys a tile at d=256 with the output's panels beside them (80 store from Q's room)
    "keys80-tma": {"block": "128,80", "store": "tma"},  # 80 keys a tile, the output by TMA (from Q's room where no panel fits)
    "keys80-direct": {"block": "128,80", "store": "direct"},  # 80 keys a tile, the output from registers
}


def autotile_options() -> dict:
    """napkin-sm90{autotile=true} for the GPU at hand (the model knows the H100 and H200)."""
    import torch

    return {"autotile": True, "hw": "h200" if "H200" in torch.cuda.get_device_name() else "h100"}


def napkin_sm90_kernel(kind: str, b: int, h: int, n: int, d: int, t: str, config):
    """A launcher for napkin-sm90's kernel, its arguments bound once (None where the
    configuration does not compile)."""
    from xdsl.utils.exceptions import DiagnosticException

    import napkin_ir
    from napkin_ir.attention_diagrams import attention_diagram
    from napkin_ir.errors import UserError

    if config == "auto":
        options: dict = autotile_options()
    elif config in VARIANTS:
        options = VARIANTS[config]
    else:
        block, stream, stages, overlap, pingpong, blocks_per_sm, persistent, store, q_registers = (
            *config, *(1, False, "direct", False)[len(config) - 5 :])
        options = {"block": f"{block},{stream or (128 if d <= 128 else 64)}", "stages": stages, "overlap": overlap,
                   "pingpong": pingpong, "blocks_per_sm": blocks_per_sm, "persistent": persistent, "store": store,
                   "q_registers": q_registers}
    try:
        kern = napkin_ir.compile(attention_diagram(kind, b, h, n, d, t), target="sm90", cache=False, **options)
    except (UserError, DiagnosticException) as e:  # a configuration the pipeline refuses (shared memory)
        print(f"    {kind} {config}: not compiled ({str(e).splitlines()[0]})", flush=True)
        return None
    bound: dict = {}

    def launch(q, k, v, o, sync=False):
        key = tuple(x.data_ptr() for x in (q, k, v, o))
        if key not in bound:
            bound[key] = kern.bind({"q": q, "k": k, "v": v, "out": o})
        kern(bound=bound[key], sync=sync)

    return launch


def napkin_kernel(kind: str, b: int, h: int, n: int, d: int, t: str, config):
    """A launcher for napkin's kernel (None where this configuration does not compile)."""
    from xdsl.utils.exceptions import DiagnosticException

    from napkin_ir.attention_diagrams import attention_diagram

    from napkin_ir.compiler import compile_attention
    from napkin_ir.runtime import Param, load_ptx

    block, stream, warps, stages, q_in_registers, per_sm = config
    try:
        ptx, cfg = compile_attention(attention_diagram(kind, b, h, n, d, t), block=block, stream=stream, warps=warps, stages=stages,
                                     q_in_registers=q_in_registers, blocks_per_sm=per_sm)
    except DiagnosticException as e:  # a configuration the pipeline refuses (shared memory, rows per warp)
        print(f"    {kind} {config}: not compiled ({str(e).splitlines()[0]})", flush=True)
        return None
    shape = (b, h, n, d)
    kern = load_ptx(ptx).kernel(cfg["name"], [Param.pointer(t, shape), Param.pointer(t, shape), Param.pointer(t, shape), Param.pointer(t, shape, out=True)])

    def launch(q, k, v, o, sync=False):
        kern.launch(grid=cfg["grid"], block=cfg["block"], smem=cfg["smem"], args=[q, k, v, o], sync=sync)

    return launch


def rel_err(torch, out, ref) -> float:
    out, ref = out.float(), ref.float()
    if not torch.isfinite(out).all():
        return float("inf")
    return ((out - ref).norm() / ref.norm()).item()


def spherical_ref(torch, q, k, v):
    """(S / ||S|| along the keys) V in float32, chunked over heads to bound memory."""
    outs = []
    for hh in range(q.shape[1]):
        s = q[:, hh].float() @ k[:, hh].float().transpose(-1, -2)
        outs.append((s / s.norm(dim=-1, keepdim=True)) @ v[:, hh].float())
    return torch.stack(outs, dim=1)


def timed(torch, fns: dict) -> dict:
    """The median ms of a launch of each of `fns` (label: launch), all timed in the same
    rounds."""
    import statistics

    labels = list(fns)
    rounds = time_interleaved(torch, [fns[x] for x in labels], settle_s=0.05)
    return {label: statistics.median(ms) for label, ms in zip(labels, rounds)}


def in_backend(sdpa_kernel, backend, F, *args, **kwargs):
    """A launch of SDPA through one backend (None where it does not take this shape)."""
    def launch():
        with sdpa_kernel(backend):
            F.scaled_dot_product_attention(*args, **kwargs)
    try:
        launch()
    except RuntimeError as e:  # a backend this shape or device does not offer
        print(f"    sdpa {backend.name}: n/a ({str(e).splitlines()[0][:80]})", flush=True)
        return None
    return launch


def fa4_launch(torch, q, k, v, causal: bool):
    """A launch of FlashAttention-4's forward on `q`, `k`, `v` ([B, H, N, D]: copied once to its
    [B, N, H, D]), or None where it is not installed or refuses the shape."""
    from bench_attention_backward import fa4_func

    flash_attn_func = fa4_func()
    if flash_attn_func is None:
        return None
    q4, k4, v4 = (x.transpose(1, 2).contiguous() for x in (q, k, v))

    def launch():
        with torch.no_grad():
            flash_attn_func(q4, k4, v4, causal=causal)
    try:
        launch()
    except Exception as e:  # noqa: BLE001 (a head dim or GPU it has no kernel for)
        print(f"    fa4: n/a ({str(e).splitlines()[0][:80] if str(e) else type(e).__name__})", flush=True)
        return None
    return launch


def bench_shape(torch, F, sdpa_kernel, backends, n: int, d: int, t: str, configs, path: str = "sm80",
                sustained: float = 0.0, held: list | None = None):
    """The rows for one sequence length and head dim: softmax (causal and not) against each
    SDPA backend, and spherical against napkin's softmax. With `sustained` seconds, napkin's
    fastest kernel, cuDNN's and FA4's also run back to back that long each, twice in turn
    (`bench_gemm.time_alternating`): (n, d, causal, napkin's label, {name: (TFLOP/s, MHz,
    W)}) onto `held`."""
    dt = torch.bfloat16 if t == "bf16" else torch.float16
    tol = 2e-2 if t == "bf16" else 4e-3
    b, h = TOKENS // n, HIDDEN // d
    g = torch.Generator(device="cuda").manual_seed(n + d)
    q, k, v = (torch.randn(b, h, n, d, device="cuda", generator=g).to(dt) for _ in range(3))
    o = torch.empty_like(q)

    def correct(kind: str, ref) -> dict:
        """napkin's launches of `kind` by label, those that compile and match `ref`."""
        out = {}
        for config in configs:
            launch = (napkin_sm90_kernel if path == "sm90" else napkin_kernel)(kind, b, h, n, d, t, config)
            if launch is None:
                continue
            o.fill_(float("nan"))
            launch(q, k, v, o, sync=True)
            err = rel_err(torch, o, ref)
            label = (config if isinstance(config, str) else
                     "b{}s{}st{}{}{}{}{}{}{}".format(*config[:3], "" if config[3] else "-serial", "" if config[4] else "-nopp",
                                                       f"-x{config[5]}" if len(config) > 5 and config[5] > 1 else "",
                                                       "-persistent" if len(config) > 6 and config[6] else "",
                                                       "-tmastore" if len(config) > 7 and config[7] == "tma" else "",
                                                       "-qreg" if len(config) > 8 and config[8] else "") if path == "sm90" else
                     "b{}s{}w{}st{}{}{}".format(*config[:4], "" if config[4] else "-qsmem", f"-x{config[5]}" if config[5] > 1 else ""))
            print(f"  N={n} d={d} {kind} napkin {label}: err {err:.1e}{'' if err < tol else ' (wrong: not timed)'}", flush=True)
            if err < tol:
                out[label] = lambda launch=launch: launch(q, k, v, o)
        return out

    def show(kind: str, flop: float, ms: dict) -> None:
        for label, x in ms.items():
            print(f"  N={n} d={d} {kind} {label}: {flop / x / 1e9:.0f} TFLOP/s", flush=True)

    rows, softmax_best = [], None
    for causal in (False, True):
        kind = "causal" if causal else "softmax"
        flop = 4.0 * b * h * n * n * d / (2 if causal else 1)
        ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        ours = correct(kind, ref)
        theirs = {name: fn for name, backend in backends
                  if (fn := in_backend(sdpa_kernel, backend, F, q, k, v, is_causal=causal)) is not None}
        if (fn := fa4_launch(torch, q, k, v, causal)) is not None:
            theirs["fa4"] = fn
        ms = timed(torch, {**ours, **{f"sdpa {name}": fn for name, fn in theirs.items()}})
        show(kind, flop, ms)
        best = min(ours, key=ms.__getitem__) if ours else None
        if not causal and best:
            softmax_best = ours[best]
        tf = {name: flop / ms[f"sdpa {name}"] / 1e9 for name in theirs}
        if sustained and best and held is not None:
            runs = time_alternating(torch, {"napkin": ours[best], **{x: theirs[x] for x in ("cudnn", "fa4") if x in theirs}}, sustained)
            held.append((n, d, causal, best, {x: (flop / r[0] / 1e9, r[1], r[2]) for x, r in runs.items()}))
        rows.append((n, d, causal, best or "none correct", flop / ms[best] / 1e9 if best else float("nan"), tf,
                     {label: flop / ms[label] / 1e9 for label in ours}))
    flop = 4.0 * b * h * n * n * d
    ref = spherical_ref(torch, q, k, v)
    ours = correct("spherical", ref)
    program = op_program(torch, q, k, v, ref, tol)  # spherical attention over enough keys: its program of products
    if program is not None:
        ours["op (program)"] = program
    ms = timed(torch, {**ours, **({"softmax": softmax_best} if softmax_best else {})})
    show("spherical", flop, ms)
    best = min(ours, key=ms.__getitem__) if ours else None
    sph = (n, d, best or "none correct", flop / ms[best] / 1e9 if best else float("nan"),
           flop / ms["softmax"] / 1e9 if softmax_best else float("nan"))
    return rows, sph


def sustained_table(held: list, seconds: float) -> list[str]:
    """The lines of the sustained runs' table (none without them): TFLOP/s, and each one's
    SM clock and board power while it ran."""
    if not held:
        return []
    lines = ["", f"sustained: {seconds:g} s back to back each, twice in turn; TFLOP/s (SM clock MHz, board power W)",
             f"{'seq':>6} {'d':>4} {'causal':>6} {'napkin config':<22} {'napkin':>16} {'cudnn':>16} {'fa4':>16} {'vs cudnn':>8} {'vs fa4':>8}"]
    for n, d, causal, cfg, runs in held:
        cell = lambda x: f"{runs[x][0]:4.0f} ({runs[x][1]:4.0f} {runs[x][2]:3.0f})" if x in runs else f"{'n/a':>16}"
        vs = lambda x: runs["napkin"][0] / runs[x][0] if x in runs else float("nan")
        lines.append(f"{n:>6} {d:>4} {('yes' if causal else 'no'):>6} {cfg:<22} {cell('napkin'):>16} {cell('cudnn'):>16} "
                     f"{cell('fa4'):>16} {vs('cudnn'):8.2f} {vs('fa4'):8.2f}")
    return lines


def op_program(torch, q, k, v, ref, tol: float):
    """`napkin_ir.torch.attention(q, k, v, "spherical")` where the op runs spherical
    attention as its program of products (`attention_program`) and matches `ref`; None
    where it runs the tiled kernel (timed by its configurations already) or does not match."""
    import napkin_ir.torch as nt

    b, h, n, d = q.shape
    cap = torch.cuda.get_device_capability()
    if nt.attention_program("spherical", None, b, h, h, n, n, d, nt.DTYPES[q.dtype], cap) is None:
        return None
    err = rel_err(torch, nt.attention(q, k, v, "spherical"), ref)
    print(f"  N={n} d={d} spherical napkin op (program): err {err:.1e}{'' if err < tol else ' (wrong: not timed)'}", flush=True)
    return (lambda: nt.attention(q, k, v, "spherical")) if err < tol else None


def bench_gqa(torch, F, sdpa_kernel, backends, n: int, d: int, r: int, t: str):
    """Grouped-query attention at the same setting: HIDDEN / d query heads, r of them
    sharing each key/value head, against SDPA with `enable_gqa=True` (each backend that
    takes it) and against napkin's own kernel on K and V repeated r times (every query head
    its own: what the grouping saves), all timed in the same rounds. napkin-sm90's default
    configuration, and `auto` (and, printed but not tabled, `q-shared`: the default with Q
    in shared memory where it would hold Q in registers; `b128`: blocks of 128 rows where
    the default takes 192).
    Rows: (n, d, r, causal, napkin TFLOP/s by configuration, napkin without grouping, SDPA's)."""
    import napkin_ir
    from napkin_ir.attention_diagrams import attention_diagram, gqa_attention_diagram
    from napkin_ir.plan.recipes.attention import default_rows, q_registers_pay
    from napkin_ir.passmanager import run_pipeline

    dt = torch.bfloat16 if t == "bf16" else torch.float16
    tol = 2e-2 if t == "bf16" else 4e-3
    b, h = TOKENS // n, HIDDEN // d
    g = h // r
    gen = torch.Generator(device="cuda").manual_seed(n + d + r)
    q = torch.randn(b, h, n, d, device="cuda", generator=gen).to(dt)
    k, v = (torch.randn(b, g, n, d, device="cuda", generator=gen).to(dt) for _ in range(2))
    kr, vr = k.repeat_interleave(r, dim=1), v.repeat_interleave(r, dim=1)
    o = torch.empty_like(q)
    rows = []
    for causal in (False, True):
        kind = "causal" if causal else "softmax"
        flop = 4.0 * b * h * n * n * d / (2 if causal else 1)
        ref = F.scaled_dot_product_attention(q, kr, vr, is_causal=causal)
        fns, wrong = {}, set()
        diagram = gqa_attention_diagram(kind, b, g, r, n, d, t)
        # and, where the default holds Q in registers, the default with Q read from shared
        # memory; where it takes blocks of 192 rows, blocks of 128
        module = run_pipeline(diagram)
        undone = [x for x, pays in (("q-shared", q_registers_pay(module)), ("b128", default_rows(module) != 128)) if pays]
        for label, options in (("default", {}), ("auto", autotile_options()), *((x, VARIANTS[x]) for x in undone)):
            kern = napkin_ir.compile(diagram, target="sm90", cache=False, **options)
            bound = kern.bind({"q": q.view(b, g, r, n, d), "k": k, "v": v, "out": o.view(b, g, r, n, d)})
            o.fill_(float("nan"))
            kern(bound=bound, sync=True)
            err = rel_err(torch, o, ref)
            print(f"  N={n} d={d} r={r} {kind} napkin {label}: err {err:.1e}", flush=True)
            fns[label] = lambda kern=kern, bound=bound: kern(bound=bound)
            if err >= tol:
                wrong.add(label)
        plain = napkin_ir.compile(attention_diagram(kind, b, h, n, d, t), target="sm90", cache=False)
        fns["ungrouped"] = lambda bound=plain.bind({"q": q, "k": kr, "v": vr, "out": o}): plain(bound=bound)
        for name, backend in backends:
            fn = in_backend(sdpa_kernel, backend, F, q, k, v, is_causal=causal, enable_gqa=True)
            if fn is not None:
                fns[f"sdpa {name}"] = fn
        if (fn := fa4_launch(torch, q, k, v, causal)) is not None:
            fns["sdpa fa4"] = fn
        tf = {label: flop / x / 1e9 for label, x in timed(torch, fns).items()}
        for label, x in tf.items():
            print(f"  N={n} d={d} r={r} {kind} {label}: {x:.0f} TFLOP/s", flush=True)
        ours = {label: float("nan") if label in wrong else tf[label] for label in ("default", "auto")}
        theirs = {name: tf[f"sdpa {name}"] for name in (*(x for x, _ in backends), "fa4") if f"sdpa {name}" in tf}
        ungrouped = tf["ungrouped"]
        rows.append((n, d, r, causal, ours, ungrouped, theirs))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="sequence 4k only, head dim 128, three configurations")
    ap.add_argument("--dtype", choices=["bf16", "f16"], default="bf16")
    ap.add_argument("--seqs", help="sequence lengths, e.g. 4096,16384 (default: 1024,4096,16384)")
    ap.add_argument("--dims", help="head dims, e.g. 128 (default: 64,128)")
    ap.add_argument("--path", choices=["sm80", "sm90"], default="sm80", help="napkin-sm80's kernels or napkin-sm90's")
    ap.add_argument("--configs", help="which of the path's configurations to time, by position or by name ('auto': "
                    f"autotile=true; {', '.join(map(repr, VARIANTS))}: the default plan, or it with one option), e.g. 0,6 "
                    "or default,auto (default: all)")
    ap.add_argument("--groups", help="with --path sm90: grouped-query attention instead, r query heads a key/value head, e.g. 4,8")
    ap.add_argument("--sustained", type=float, default=0.0, metavar="SECONDS",
                    help="also run napkin's fastest kernel, cuDNN's and FA4's back to back for SECONDS each, twice in turn "
                         "(each at the clock its own power draw sustains), and table those too")
    args = ap.parse_args()
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    t = args.dtype
    seqs = [4096] if args.quick else [int(x) for x in args.seqs.split(",")] if args.seqs else SEQS
    dims = [128] if args.quick else [int(x) for x in args.dims.split(",")] if args.dims else HEAD_DIMS
    configs = ["default", *SM90_CONFIGS[:2]] if args.path == "sm90" and args.quick else SM90_CONFIGS if args.path == "sm90" else \
        [CONFIGS[0], CONFIGS[3], CONFIGS[4]] if args.quick else CONFIGS
    if args.configs:
        every = SM90_CONFIGS if args.path == "sm90" else CONFIGS
        configs = [x if x in NAMED or x in VARIANTS else every[int(x)] for x in args.configs.split(",")]
    backends = [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION), ("efficient", SDPBackend.EFFICIENT_ATTENTION)]
    print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}  {t}", flush=True)
    if args.groups:
        gqa_rows = [row for n in seqs for d in dims for r in (int(x) for x in args.groups.split(","))
                    for row in bench_gqa(torch, F, sdpa_kernel, backends, n, d, r, t)]
        names = [name for name, _ in backends] + ["fa4"]
        lines = [f"napkin-sm90 grouped-query attention, {t}, {TOKENS} tokens, hidden {HIDDEN} (query heads), r query heads a "
                 "key/value head; TFLOP/s; 'ungrouped': napkin's kernel on K and V repeated r times",
                 f"{'seq':>6} {'d':>4} {'r':>3} {'causal':>6} {'default':>8} {'auto':>6} {'ungrouped':>9} "
                 + " ".join(f"{x:>9}" for x in names) + f" {'vs cudnn':>8} {'vs fa4':>8}"]
        for n, d, r, causal, ours, ungrouped, tf in gqa_rows:
            best = max((x for x in ours.values() if x == x), default=float("nan"))
            cols = " ".join(f"{tf[x]:9.0f}" if x in tf else f"{'n/a':>9}" for x in names)
            lines.append(f"{n:>6} {d:>4} {r:>3} {('yes' if causal else 'no'):>6} {ours['default']:8.0f} {ours['auto']:6.0f} "
                         f"{ungrouped:9.0f} {cols} {best / tf['cudnn'] if 'cudnn' in tf else float('nan'):8.2f} "
                         f"{best / tf['fa4'] if 'fa4' in tf else float('nan'):8.2f}")
        report(lines, "bench_attention_gqa.txt")
        return 0
    rows, sph_rows, held = [], [], []
    for n in seqs:
        for d in dims:
            r, sph = bench_shape(torch, F, sdpa_kernel, backends, n, d, t, configs, args.path, args.sustained, held)
            rows += r
            sph_rows.append(sph)
            torch.cuda.empty_cache()
    names = [name for name, _ in backends] + ["fa4"]
    lines = [f"napkin-{args.path} attention, {t}, {TOKENS} tokens, hidden {HIDDEN}; TFLOP/s (4 B H N^2 D, halved when causal)",
             f"{'seq':>6} {'d':>4} {'causal':>6} {'napkin config':<22} {'napkin':>7} " + " ".join(f"{x:>9}" for x in names)
             + f" {'vs flash':>8} {'vs cudnn':>8} {'vs fa4':>8}" + "".join(f" {x:>7}" for x in NAMED if x in configs)]
    for n, d, causal, cfg, ours, tf, each in rows:
        cols = " ".join(f"{tf[x]:9.0f}" if x in tf else f"{'n/a':>9}" for x in names)
        ratio = ours / tf["flash"] if "flash" in tf else float("nan")
        vs_cudnn = ours / tf["cudnn"] if "cudnn" in tf else float("nan")
        vs_fa4 = ours / tf["fa4"] if "fa4" in tf else float("nan")
        named = "".join(f" {each.get(x, float('nan')):7.0f}" for x in NAMED if x in configs)  # napkin's own choices, each
        lines.append(f"{n:>6} {d:>4} {('yes' if causal else 'no'):>6} {cfg:<22} {ours:7.0f} {cols} {ratio:8.2f} {vs_cudnn:8.2f} {vs_fa4:8.2f}{named}")
    lines += ["", "spherical attention against napkin's softmax kernel (not causal)",
              f"{'seq':>6} {'d':>4} {'napkin config':<22} {'spherical':>9} {'softmax':>8} {'ratio':>6}"]
    lines += [f"{n:>6} {d:>4} {cfg:<22} {s:9.0f} {m:8.0f} {s / m:6.2f}" for n, d, cfg, s, m in sph_rows]
    lines += sustained_table(held, args.sustained)
    report(lines, "bench_attention.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
