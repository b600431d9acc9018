#!/usr/bin/env python3
"""Time napkin's GEMM kernels against cuBLAS (torch.matmul) in the same run.

    python3 tools/bench_gemm.py [--quick] [--path sm80|sm90|both] [--sustained SECONDS]
    python3 tools/bench_gemm.py --op [--m 1,16,64,...]
    python3 tools/bench_gemm.py --tiles [--m 128,256,...]

`--op` sweeps `napkin_ir.torch.matmul` (the op users call: its own choice of kernel, its
host time) against torch.matmul (cuBLAS) over M in OP_M (or `--m`) by the N x K of
Llama-3 8B's and 70B's projections, and ragged shapes, bf16, each pair timed in
interleaved rounds after checking the op against float64, called eagerly (its host time
counted: where the GPU finishes first, both ops are timed on the host; OP_ROUNDS rounds, as
host-paced ratios move several percent from round to round) and, under
GRAPHED_MS a call, captured in CUDA graphs of GRAPH_CALLS calls (what the GPU spends: the
same kernel the eager call launches); the table ends with the geometric mean and the least
ratios (all, M >= 128).

`--tiles` times napkin-sm90's plain GEMM kernel alone (launched bound, bf16; under GRAPHED_MS
a launch, GRAPH_CALLS launches captured in a CUDA graph, so that the host does not pace them) with each
block tile of TILES that fits, unsplit and, where its blocks leave SMs idle, with its
contraction split (its parts summed and rounded in the kernel: one launch), and the
SWAPPED_TRIED swapped tiles the model counts fastest (named with an `s`: `152x128s/1`), beside cuBLAS,
over the same shapes (at a decode's few rows, the 64-row tiles past them): what
`product_targets.sm90_choice`'s count of waves and
padding is checked against. The table
gives each tile's us, the measured best, the pick and how far the pick is from the best;
the measurements go to $OUT/bench_gemm_tiles.json. Splits in SPLIT_CLUSTER_PARTS parts are
timed both ways: through the module's global scratch and as clusters (`2c`), as the op runs them.

For each shape and dtype: compile the GEMM diagram through napkin's sm_80 and sm_90a
pipelines for a few tile configurations, check each against torch.matmul on random
inputs, time it and cuBLAS with CUDA events (warm-up, then batches of launches, median of
the batches). The fastest configuration of each shape is timed again with its batches
alternating with cuBLAS's (same clocks, same heat): the table's TFLOP/s and `ratio` are
that paired run's medians; `sweep` is the ratio from the first, separate timings. With
`--sustained`, the fastest configuration and cuBLAS also run back to back for that long
each (twice, alternating), with the SM clock and board power: short batches let a kernel
run above the clock the power limit allows for longer. The tables are printed last and
written to $OUT.
"""

from __future__ import annotations

import argparse
import io
import math
import os
import random
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 2048), (16384, 4096, 4096)]
CONFIGS = [  # block tile (m, n, k), warps (m, n), stages, layout; 64 x 64 warp tiles (smaller ones read more shared memory per mma)
    ((128, 128, 32), (2, 2), 4, "auto"),
    ((128, 128, 64), (2, 2), 3, "auto"),
    ((128, 256, 32), (2, 4), 4, "auto"),
    ((256, 128, 32), (4, 2), 4, "auto"),
    ((128, 256, 64), (2, 4), 3, "auto"),
    ((128, 256, 64), (2, 4), 4, "auto"),
    ((256, 128, 64), (4, 2), 3, "auto"),
    ((256, 128, 64), (4, 2), 4, "auto"),
    ((256, 128, 64), (4, 2), 3, "pad8"),  # the padded layout, for comparison
]


SM90_CONFIGS = [  # block tile (m, n, k), stages, block-row group, persistent, cluster, output store (direct / tma)
    ((128, 256, 64), 4, 8, False, 1, "direct"),
    ((128, 256, 64), 4, 8, True, 1, "direct"),
    ((128, 256, 64), 4, 8, False, 1, "tma"),
    ((128, 256, 64), 4, 8, True, 1, "tma"),
    ((128, 256, 64), 4, 16, True, 1, "tma"),
    ((128, 256, 64), 4, 0, False, 2, "tma"),
]


OP_M = (1, 16, 64, 128, 256, 1000, 2048, 4096, 5000, 8192, 16384)
OP_NK = ((4096, 4096), (4096, 14336), (14336, 4096), (8192, 8192), (8192, 28672), (28672, 8192))  # N x K
OP_RAGGED = ((5000, 3000, 2056), (3000, 7000, 1000), (100, 4096, 1000), (13, 11008, 4096))
GRAPH_CALLS = 20  # calls of each op captured in one CUDA graph
OP_ROUNDS = 15  # `--op`'s eager rounds (of 10 calls each): host-paced ratios move 0.83-1.04x between 7-round runs
GRAPHED_MS = 0.3  # shapes whose calls take less (eagerly, either op) are timed in CUDA graphs too


TILES = ((128, 256), (256, 128), (128, 192), (192, 128), (192, 192), (128, 128), (64, 256), (64, 128), (128, 64), (64, 64))
TILES_M = (128, 256, 1000, 2048, 4096, 5000, 8192)


SWAPPED_TRIED = 3  # the swapped tiles timed a shape: those the model counts fastest


def _tile_jobs(m: int, n: int, k: int) -> list[tuple[int, int, int, tuple[int, int], int, bool]]:
    """(shape, tile, parts, swapped) to time: each fitting tile unsplit, and in the splits
    the model counts (`product_targets.split_parts`; in SPLIT_CLUSTER_PARTS parts, as the
    op runs them, a cluster's: parts negative), and the SWAPPED_TRIED swapped tiles
    (`swapped_tiles`) the model counts fastest, unsplit."""
    from napkin_ir.plan.recipes.product_targets import SM90_LEAST, SPLIT_CLUSTER_PARTS, sm90_time, split_parts, swapped_tiles

    out = []
    for t in TILES:  # no longer than its axes, but for the least tile past a short one (as `sm90_plans`)
        if (t[0] > m and t[0] > SM90_LEAST[0]) or (t[1] > n and t[1] > SM90_LEAST[1]):
            continue
        parts = split_parts(-(-m // t[0]) * -(-n // t[1]), k)
        out += [(m, n, k, t, p, False) for p in [1, *parts, *(-p for p in parts if p == SPLIT_CLUSTER_PARTS)]]
    swapped = sorted(swapped_tiles(m, n), key=lambda t: sm90_time(m, n, k, t))[:SWAPPED_TRIED]
    return out + [(m, n, k, t, 1, True) for t in swapped]


def _tile_kernel(job: tuple[int, int, int, tuple[int, int], int, bool]) -> object:
    import napkin_ir
    from napkin_ir.diagrams import gemm

    m, n, k, t, parts, swap = job
    options = {"block": (*t, 64), "swap": swap, **({"split": abs(parts)} if abs(parts) > 1 else {}),
               **({"cluster": -parts} if parts < 0 else {})}
    return napkin_ir.compile(gemm(m, n, k, "bf16"), "sm90", **options)


def _tile_name(t: tuple[int, int], parts: int, swap: bool) -> str:
    """A tile's name in the `--tiles` table: rows x columns, `s` where swapped, / parts, `c`
    where they form a cluster."""
    return f"{t[0]}x{t[1]}{'s' if swap else ''}/{abs(parts)}{'c' if parts < 0 else ''}"


def _compile_tile(job: tuple[int, int, int, tuple[int, int], int, bool]) -> str | None:
    """Compile one (shape, tile, parts) into the disk cache (a worker process's job); the refusal, if any."""
    try:
        _tile_kernel(job)
        return None
    except Exception as e:
        return str(e).strip().splitlines()[0]


def tile_sweep(torch, ms: tuple[int, ...]) -> list[str]:
    """The `--tiles` table: each fitting tile of TILES, unsplit and split, against cuBLAS,
    kernels alone (a split one's parts summed and rounded in the kernel)."""
    import json
    import multiprocessing

    from napkin_ir.plan.recipes.product_targets import sm90_choice, sm90_swaps, split_cluster

    shapes = [(m, n, k) for m in ms for n, k in OP_NK] + [s for s in OP_RAGGED if s[0] >= min(ms)]
    jobs = [j for s in shapes for j in _tile_jobs(*s)]
    with multiprocessing.get_context("spawn").Pool(min(14, os.cpu_count() or 1)) as pool:
        refused = dict(zip(jobs, pool.map(_compile_tile, jobs)))
    lines = [f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}",
             f"{'M x N x K':<18} {'cuBLAS':>8} {'best':>10} {'us':>8} {'pick':>10} {'us':>8} {'pick/best':>9} {'best/cuBLAS':>11} "
             f"{'pick/cuBLAS':>11}  next best"]
    record = []
    for m, n, k in shapes:
        a, b = torch.randn(m, k, device="cuda").to(torch.bfloat16), torch.randn(k, n, device="cuda").to(torch.bfloat16)
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        want = (a.double() @ b.double()).float()
        fns, names = [], []
        for job in _tile_jobs(m, n, k):
            if refused.get(job, "not compiled"):
                print(f"{m}x{n}x{k} {_tile_name(*job[3:])}: {refused.get(job, 'not compiled')}", flush=True)
                continue
            kern = _tile_kernel(job)
            bound = kern.bind({"a": a, "b": b, "out": c})

            def run(kern=kern, bound=bound) -> None:  # on torch's current stream: a graph's capture takes it
                kern(sync=False, bound=bound, stream=torch.cuda.current_stream().cuda_stream)

            c.fill_(float("nan"))
            run()
            err = float((c.float() - want).norm() / want.norm())
            if not err <= 1e-2:
                print(f"{m}x{n}x{k} {_tile_name(*job[3:])}: relative error {err:.1e}", flush=True)
                continue
            fns.append(run)
            names.append(_tile_name(*job[3:]))
        del want
        fns.append(lambda: torch.matmul(a, b, out=c))
        one = time_ms(torch, fns[0], batches=3, per_batch=2)
        if one < GRAPHED_MS:  # calls this short: in CUDA graphs, the host's share gone
            med = time_graphed(torch, fns, rounds=5, warm_s=0.2)
        else:
            per_batch = max(1, round(3.0 / max(one, 1e-3)))
            med = [statistics.median(r) for r in time_interleaved(torch, fns, rounds=5, per_batch=per_batch, warm_s=0.2)]
        times = dict(zip(names, (x * 1e3 for x in med[:-1])))
        block, parts = sm90_choice(m, n, k, split=True)  # what napkin_ir.torch.matmul takes, but for a cluster of pairs
        pick = _tile_name(block[:2], -parts if split_cluster(m, block, parts) else parts, sm90_swaps(block))
        ranked = sorted(times, key=times.get)
        best, cublas = ranked[0], med[-1] * 1e3
        record.append({"shape": [m, n, k], "us": times, "cublas_us": cublas, "pick": pick})
        picked = times.get(pick, float("nan"))
        lines.append(f"{f'{m}x{n}x{k}':<18} {cublas:8.1f} {best:>10} {times[best]:8.1f} {pick:>10} {picked:8.1f} "
                     f"{times[best] / picked:9.2f} {cublas / times[best]:11.2f} {cublas / picked:11.2f}  "
                     + " ".join(f"{r} {times[r]:.1f}" for r in ranked[1:4]))
        print(lines[-1], flush=True)
        if os.environ.get("OUT"):  # after every shape: a run cut short keeps what it measured
            Path(os.environ["OUT"]).mkdir(parents=True, exist_ok=True)
            Path(os.environ["OUT"], "bench_gemm_tiles.json").write_text(json.dumps(record, indent=1) + "\n")
    return lines


def op_sweep(torch, ms: tuple[int, ...]) -> list[str]:
    """The `--op` table: the torch op against cuBLAS over `ms` x OP_NK and OP_RAGGED."""
    import napkin_ir.torch as nt

    shapes = [(m, n, k) for m in ms for n, k in OP_NK] + [s for s in OP_RAGGED]
    lines = [f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}",
             f"{'M x N x K':<20} {'kernel':<34} {'err':>8} {'napkin us':>10} {'cuBLAS us':>10} {'ratio':>6}"
             f" {'graphed':>10} {'cuBLAS':>10} {'ratio':>6}"]
    ratios, graphed = [], []
    for m, n, k in shapes:
        a, b = torch.randn(m, k, device="cuda").to(torch.bfloat16), torch.randn(k, n, device="cuda").to(torch.bfloat16)
        out = nt.matmul(a, b)
        want = a.double() @ b.double()
        err = float((out.double() - want).norm() / want.norm())
        del want
        kern = nt.matmul_kernel(m, n, k, "bf16", torch.cuda.get_device_capability())
        grid = "x".join(map(str, kern.contract.grid))
        what = f"{kern.name} {kern.contract.target} grid {grid}" + (
            f" cl {'x'.join(map(str, kern.contract.cluster))}" if kern.contract.cluster else "")  # a cluster's launch
        ours, theirs = (statistics.median(r) for r in time_interleaved(torch, [lambda: nt.matmul(a, b), lambda: torch.matmul(a, b)],
                                                                        rounds=OP_ROUNDS, warm_s=0.3))
        ours_g, theirs_g = ours, theirs  # a call longer than GRAPHED_MS: the host is not what paces it
        if min(ours, theirs) < GRAPHED_MS:  # what the calls cost the GPU, the host's share gone
            ours_g, theirs_g = time_graphed(torch, [lambda: nt.matmul(a, b), lambda: torch.matmul(a, b)], rounds=7, warm_s=0.1)
        ratios.append((m, theirs / ours if err <= 1e-2 else 0.0))
        graphed.append(theirs_g / ours_g if err <= 1e-2 else 0.0)
        lines.append(f"{f'{m}x{n}x{k}':<20} {what:<34} {err:8.1e} {ours * 1e3:10.1f} {theirs * 1e3:10.1f} {ratios[-1][1]:6.2f}"
                     f" {ours_g * 1e3:10.1f} {theirs_g * 1e3:10.1f} {graphed[-1]:6.2f}")
        print(lines[-1], flush=True)
    geo = math.exp(statistics.mean(math.log(max(r, 1e-9)) for _, r in ratios))
    large = [r for m, r in ratios if m >= 128]
    lines.append(f"{len(ratios)} shapes: geometric mean {geo:.2f}x cuBLAS; least {min(r for _, r in ratios):.2f}x"
                 + (f"; least at M >= 128 {min(large):.2f}x" if large else ""))
    geo_g = math.exp(statistics.mean(math.log(max(r, 1e-9)) for r in graphed))
    large_g = [r for (m, _), r in zip(ratios, graphed) if m >= 128]
    lines.append(f"under CUDA graphs: geometric mean {geo_g:.2f}x cuBLAS; least {min(graphed):.2f}x"
                 + (f"; least at M >= 128 {min(large_g):.2f}x" if large_g else ""))
    return lines


def report(lines: list[str], name: str) -> None:
    """Print the table last (the device call's reply carries the end of the output) and
    write it to $OUT/name where $OUT is set."""
    table = "\n".join(lines)
    print("\n" + table)
    out = os.environ.get("OUT")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        Path(out, name).write_text(table + "\n")


def time_ms(torch, fn, batches: int = 10, per_batch: int = 10) -> float:
    """The median over `batches` batches of `per_batch` launches of the ms a launch took."""
    return statistics.median(time_interleaved(torch, [fn], batches, per_batch, warm_s=0.0)[0])


def time_graphed(torch, fns: list, rounds: int, warm_s: float) -> list[float]:
    """Per function, the median ms a call took, GRAPH_CALLS calls of it captured in one CUDA
    graph and the graphs replayed in interleaved rounds (`time_interleaved`)."""
    graphs = []
    for fn in fns:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(GRAPH_CALLS):
                fn()
        graphs.append(g)
    return [statistics.median(r) / GRAPH_CALLS for r in time_interleaved(torch, [g.replay for g in graphs], rounds=rounds,
                                                                         per_batch=2, warm_s=warm_s)]


def time_interleaved(torch, fns: list, rounds: int = 15, per_batch: int = 10, warm_s: float = 1.0,
                     settle_s: float = 0.0) -> list[list[float]]:
    """Per function, the ms a launch took in each of `rounds` rounds; a round runs a batch of
    `per_batch` launches of every function, starting one further along the list each round,
    so all of them see the same clocks and heat. Rounds run for `warm_s` seconds first, not
    counted, to bring the GPU to the clock it sustains under this load. With `settle_s`,
    each timed batch follows about that many seconds of untimed launches of the same
    function, and each round takes the functions in an order of its own (seeded): the
    board's clock follows its power draw over tens of milliseconds, so a batch timed
    straight after a lighter kernel's runs at a higher clock, and identical kernels, each
    always after the same neighbour, differed by 10% (3% with 30 ms to settle; H200,
    2026-11-26)."""
    import time

    for _ in range(3):
        for fn in fns:
            fn()
    torch.cuda.synchronize()
    settle = [0] * len(fns)
    for n, fn in enumerate(fns if settle_s else []):  # launches that take settle_s, from one timed batch
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(per_batch):
            fn()
        end.record()
        end.synchronize()
        settle[n] = math.ceil(settle_s * 1e3 / max(start.elapsed_time(end) / per_batch, 1e-3))
    times: list[list[float]] = [[] for _ in fns]
    begin, counted = time.perf_counter(), 0
    shuffle = random.Random(len(fns))
    while counted < rounds:
        warm = time.perf_counter() - begin < warm_s
        order = [(j + counted) % len(fns) for j in range(len(fns))]
        if settle_s:
            shuffle.shuffle(order)
        for i in order:
            for _ in range(settle[i]):
                fns[i]()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(per_batch):
                fns[i]()
            end.record()
            end.synchronize()
            if not warm:
                times[i].append(start.elapsed_time(end) / per_batch)
        counted += not warm
    return times


def time_paired(torch, ours, theirs, rounds: int = 15, per_batch: int = 10) -> tuple[float, float, float]:
    """Alternate batches of `ours` and `theirs` so both see the same clocks and heat; returns
    (median ms of ours, median ms of theirs, median of the per-round ratios theirs/ours)."""
    mine, peer = time_interleaved(torch, [ours, theirs], rounds, per_batch, warm_s=0.0)
    return statistics.median(mine), statistics.median(peer), statistics.median(p / m for m, p in zip(mine, peer))


def time_sustained(torch, fn, seconds: float) -> tuple[float, float, float]:
    """Launch `fn` back to back for `seconds` (after a warm-up), as a training step keeps the
    GPU busy; returns (ms a launch, median SM clock in MHz, median board power in W), the
    clock and power sampled by NVML every 50 ms (NaN where NVML is missing). Long enough
    runs reach the board's power limit, where the clock settles."""
    import threading
    import time

    try:
        import pynvml

        pynvml.nvmlInit()
        dev = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
    except Exception:  # no NVML: times only
        dev = None
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    samples: list[tuple[float, float]] = []
    stop = threading.Event()

    def sample() -> None:
        while dev is not None and not stop.is_set():
            samples.append((pynvml.nvmlDeviceGetClockInfo(dev, pynvml.NVML_CLOCK_SM), pynvml.nvmlDeviceGetPowerUsage(dev) / 1000))
            time.sleep(0.05)

    thread = threading.Thread(target=sample)
    thread.start()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    launches, t0 = 0, time.time()
    start.record()
    while time.time() - t0 < seconds:
        for _ in range(10):
            fn()
        launches += 10
        torch.cuda.synchronize()
    end.record()
    end.synchronize()
    stop.set()
    thread.join()
    mhz = statistics.median(x for x, _ in samples) if samples else float("nan")
    watts = statistics.median(w for _, w in samples) if samples else float("nan")
    return start.elapsed_time(end) / launches, mhz, watts


def time_alternating(torch, fns: dict, seconds: float, repeats: int = 2) -> dict:
    """Each of `fns` (label: launch) sustained (`time_sustained`) for `seconds`, in turn,
    `repeats` times; per label the mean of its runs' (ms a launch, SM clock MHz, board power
    W). Under the board's power limit each kernel then runs at the clock its own draw
    sustains: the figure a training loop sees, where interleaved batches (`time_interleaved`)
    each run some milliseconds after another kernel's."""
    runs: dict = {label: [] for label in fns}
    for _ in range(repeats):
        for label, fn in fns.items():
            runs[label].append(time_sustained(torch, fn, seconds))
    return {label: tuple(statistics.mean(r[i] for r in rs) for i in range(3)) for label, rs in runs.items()}


def main() -> int:
    import torch

    from napkin_ir.diagrams import gemm
    from napkin_ir.dialects.ptx.printer import print_ptx
    from napkin_ir.passmanager import run_pipeline
    from napkin_ir.pipelines import launch_config, sm80_gemm_pipeline, sm90_gemm_pipeline
    from napkin_ir.runtime import Param, load_ptx
    from napkin_ir.build import compile_kernel

    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="the first two shapes, bf16 only")
    ap.add_argument("--path", choices=["sm80", "sm90", "both"], default="both", help="which napkin pipeline to time")
    ap.add_argument("--sm80-unroll", type=int, default=2, metavar="N",
                    help="the sm_80 GEMM's stream loop unrolled N times its stages (0: not unrolled)")
    ap.add_argument("--sustained", type=float, default=0.0, metavar="SECONDS",
                    help="also run each shape's fastest configuration and cuBLAS back to back for SECONDS each, twice, alternating")
    ap.add_argument("--op", action="store_true", help="sweep the torch op napkin_ir.torch.matmul against cuBLAS instead")
    ap.add_argument("--tiles", action="store_true", help="time napkin-sm90's GEMM with each block tile of TILES instead")
    ap.add_argument("--m", default=None, help="with --op or --tiles: the rows of A to sweep")
    args = ap.parse_args()
    if args.tiles:
        report(tile_sweep(torch, tuple(int(x) for x in (args.m or ",".join(map(str, TILES_M))).split(","))), "bench_gemm_tiles.txt")
        return 0
    if args.op:
        report(op_sweep(torch, tuple(int(x) for x in (args.m or ",".join(map(str, OP_M))).split(","))), "bench_gemm_op.txt")
        return 0
    paths = ["sm80", "sm90"] if args.path == "both" else [args.path]
    if torch.cuda.get_device_capability() < (9, 0) and "sm90" in paths:
        paths.remove("sm90")
    shapes = SHAPES[:2] if args.quick else SHAPES
    dtypes = ["bf16"] if args.quick else ["bf16", "f16"]
    rows, sustained = [], []
    print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}", flush=True)
    for (m, n, k) in shapes:
        for t in dtypes:
            dt = torch.bfloat16 if t == "bf16" else torch.float16
            a = torch.randn(m, k, device="cuda").to(dt)
            b = torch.randn(k, n, device="cuda").to(dt)
            c = torch.empty(m, n, device="cuda", dtype=dt)
            ref = torch.matmul(a, b)
            flop = 2.0 * m * n * k
            cublas = time_ms(torch, lambda: torch.matmul(a, b, out=c))
            def measure(label, launch):
                c.fill_(float("nan"))
                launch(True)
                err = ((c.float() - ref.float()).norm() / ref.float().norm()).item()
                ms = time_ms(torch, lambda: launch(False))
                print(f"  {m}x{n}x{k} {t} {label}: {flop / ms / 1e9:.0f} TFLOP/s (err vs cuBLAS {err:.1e})", flush=True)
                return (ms, label, launch) if err < 1e-2 else None

            for path in paths:
                results = []
                if path == "sm80":
                    for block, warps, stages, layout in CONFIGS:
                        module = run_pipeline(gemm(m, n, k, t), sm80_gemm_pipeline(block, warps, stages, layout=layout,
                                                                                              unroll=args.sm80_unroll))
                        text = io.StringIO()
                        print_ptx(module, text)
                        cfg = launch_config(module)
                        kern = load_ptx(text.getvalue()).kernel(cfg["name"], [Param.pointer(t, (m, k)), Param.pointer(t, (k, n)), Param.pointer(t, (m, n), out=True)])
                        results.append(measure(f"{block[0]}x{block[1]}x{block[2]} w{warps[0]}x{warps[1]} s{stages}"
                                               + ("" if layout == "auto" else f" {layout}"),
                                               lambda sync, kern=kern, cfg=cfg: kern.launch(grid=cfg["grid"], block=cfg["block"], smem=cfg["smem"], args=[a, b, c], sync=sync)))
                else:
                    for block, stages, group, persistent, cluster, store in SM90_CONFIGS:
                        kern = compile_kernel(gemm(m, n, k, t), sm90_gemm_pipeline(block, stages, group=group, persistent=persistent,
                                                                                  cluster=cluster, store=store))
                        bound = kern.bind({"a": a, "b": b, "out": c})
                        label = (f"{block[0]}x{block[1]}x{block[2]} s{stages} g{group}{' p' if persistent else ''}{' c2' if cluster > 1 else ''}"
                                 f"{' tma-st' if store == 'tma' else ''}")
                        results.append(measure(label,
                                               lambda sync, kern=kern, bound=bound: kern(sync=sync, bound=bound)))
                best = min((r for r in results if r), default=None, key=lambda r: r[0])
                if best is None:
                    rows.append((f"{m}x{n}x{k}", t, path, "none correct", float("nan"), flop / cublas / 1e9, float("nan"), float("nan")))
                    continue
                # the fastest configuration again, its batches alternating with cuBLAS's
                mine, peer, ratio = time_paired(torch, lambda launch=best[2]: launch(False), lambda: torch.matmul(a, b, out=c))
                rows.append((f"{m}x{n}x{k}", t, path, best[1], flop / mine / 1e9, flop / peer / 1e9, ratio,
                             cublas / best[0]))
                if args.sustained:
                    runs = time_alternating(torch, {"napkin": lambda launch=best[2]: launch(False),
                                                    "cublas": lambda: torch.matmul(a, b, out=c)}, args.sustained)
                    (ours_ms, mo, wo), (theirs_ms, mc, wc) = runs["napkin"], runs["cublas"]
                    sustained.append((f"{m}x{n}x{k}", t, path, best[1], flop / ours_ms / 1e9, flop / theirs_ms / 1e9, theirs_ms / ours_ms,
                                      mo, mc, wo, wc))
    lines = [f"{'shape':<18} {'dtype':<5} {'path':<5} {'napkin config':<24} {'napkin':>8} {'cuBLAS':>8} {'ratio':>6} {'sweep':>6}"]
    lines += [f"{s:<18} {t:<5} {p:<5} {cfg:<24} {o:8.0f} {c:8.0f} {r:6.2f} {q:6.2f}" for s, t, p, cfg, o, c, r, q in rows]
    if sustained:
        lines += ["", f"sustained: {args.sustained:.0f} s back to back each, alternating twice (clock MHz and power W: napkin / cuBLAS)",
                  f"{'shape':<18} {'dtype':<5} {'path':<5} {'napkin config':<24} {'napkin':>8} {'cuBLAS':>8} {'ratio':>6} {'MHz':>11} {'W':>9}"]
        lines += [f"{s_:<18} {t:<5} {p:<5} {cfg:<24} {o:8.0f} {c_:8.0f} {r:6.2f} {f'{mo:.0f}/{mc:.0f}':>11} {f'{wo:.0f}/{wc:.0f}':>9}"
                  for s_, t, p, cfg, o, c_, r, mo, mc, wo, wc in sustained]
    report(lines, "bench_gemm.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
