#!/usr/bin/env python3
"""Ring attention over 1, 2 and 4 GPUs: napkin's kernels in PyTorch's context-parallel ring
against the same ring running SDPA's cuDNN and flash kernels, in one run.

    python3 tools/bench_context_parallel.py [--seqs 131072] [--worlds 1,2,4] [--kinds causal,softmax]
                                            [--heads 16] [--dim 128] [--peers cudnn,flash]

Each world size W runs in W processes (one GPU each, NCCL, NVLink multicast off). The
whole sequence, batch 1, H heads of D (hidden 2048 by default), is made on every rank from
one seed and sharded along the sequence (`shard_sequence`; head-tail when causal, as the
engine balances a causal mask). napkin is `napkin_ir.context_parallel.ring_attention`; a
peer is the engine's own ring function for its SDPA kernel
(`_scaled_dot_product_ring_{cudnn,flash}_attention` and their backwards, which its
`context_parallel` dispatches SDPA to), under the same options. At W = 1 every entry is its
kernel alone, with no ring: napkin's `attention`, SDPA under `sdpa_kernel`. Each is timed
forward alone and forward + backward (`out.backward(grad)`), in interleaved rounds on every
rank at once (`bench_gemm.time_interleaved`; the collectives keep the ranks in step), the
slowest rank's median counted. Tokens per second are the whole sequence's over that time;
`scale` is against the same entry on one GPU; `vs X` is napkin's time against peer X's at
that world size. Before timing, each peer's ring output is compared with napkin's (relative
error, norm-wise). The table is printed last and written to
$OUT/bench_context_parallel.txt.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import sys
import tempfile
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from bench_gemm import report, time_interleaved  # CUDA events, batches of each entry in turn; the table out

ROUNDS, PER_BATCH, WARM = 4, 2, 1


def sdpa_ring(backend: str):
    """The engine's ring for SDPA's `backend` kernel as an autograd function of this rank's
    shards: its forward and backward ring functions, called as its SDPA dispatch calls them."""
    import torch

    from napkin_ir.context_parallel import _engine, _load_balance

    engine = _engine()
    forward = getattr(engine, f"_scaled_dot_product_ring_{backend}_attention")
    backward = getattr(engine, f"_scaled_dot_product_ring_{backend}_attention_backward")

    class Ring(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, mesh, causal, balanced):
            with _load_balance(engine, balanced):
                out, lse, cum_q, cum_k, max_q, max_k, seed, offset, *_ = forward(mesh, q, k, v, is_causal=causal)
            ctx.save_for_backward(q, k, v, out, lse, cum_q, cum_k, seed, offset)
            ctx.ring = (mesh, causal, balanced, max_q, max_k)
            return out

        @staticmethod
        def backward(ctx, grad):
            q, k, v, out, lse, cum_q, cum_k, seed, offset = ctx.saved_tensors
            mesh, causal, balanced, max_q, max_k = ctx.ring
            with _load_balance(engine, balanced):
                if backend == "flash":
                    dq, dk, dv, *_ = backward(mesh, grad, q, k, v, out, lse, cum_q, cum_k, max_q, max_k, 0.0, causal, seed, offset)
                else:  # cudnn: no bias (an undefined tensor)
                    dq, dk, dv, *_ = backward(mesh, grad, q, k, v, out, lse, seed, offset, None, cum_q, cum_k, max_q, max_k, 0.0,
                                              causal)
            return dq, dk, dv, None, None, None

    return Ring.apply


def entries(world: int, kind: str, peers: list[str]):
    """name -> f(q, k, v) -> out for this world size: the ring's at W > 1, the kernel alone at W = 1."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    import napkin_ir.torch as nt
    from napkin_ir.context_parallel import ring_attention

    causal = kind == "causal"
    if world == 1:
        def alone(backend):
            def f(q, k, v):
                with sdpa_kernel(backend):
                    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            return f

        backends = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}
        return {"napkin": lambda q, k, v: nt.attention(q, k, v, kind), **{p: alone(backends[p]) for p in peers}}
    from torch.distributed.device_mesh import init_device_mesh

    mesh = init_device_mesh("cuda", (world,))
    made = {"napkin": lambda q, k, v: ring_attention(q, k, v, kind=kind, load_balanced=causal)}
    for p in peers:
        ring = sdpa_ring(p)
        made[p] = lambda q, k, v, ring=ring: ring(q, k, v, mesh, causal, causal)
    return made


def _rank(rank: int, world: int, port: int, args: argparse.Namespace, result: str) -> None:
    import torch
    import torch.distributed as dist

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), NCCL_NVLS_ENABLE="0")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank),
                            timeout=timedelta(minutes=3))  # a rank that fails alone ends the run, not the device's time
    try:
        rows = [measure(rank, world, n, kind, args) for n in args.seqs for kind in args.kinds]
        if rank == 0:
            Path(result).write_text(json.dumps(rows))
    finally:
        dist.destroy_process_group()
    os._exit(0)  # the interpreter's teardown can abort under the process group's threads


def measure(rank: int, world: int, n: int, kind: str, args: argparse.Namespace) -> list[dict]:
    """Per entry: forward and forward + backward ms (the slowest rank's median), and the
    relative error of its output against napkin's."""
    import torch
    import torch.distributed as dist

    from napkin_ir.context_parallel import shard_sequence

    causal = kind == "causal"
    gen = torch.Generator(device="cuda").manual_seed(n)  # the same whole sequence on every rank
    whole = [torch.randn(1, args.heads, n, args.dim, device="cuda", generator=gen, dtype=torch.bfloat16) for _ in range(4)]
    q, k, v, g = (shard_sequence(x, load_balanced=causal) if world > 1 else x for x in whole)
    del whole
    qg, kg, vg = (x.detach().clone().requires_grad_() for x in (q, k, v))
    made = entries(world, kind, args.peers)
    rows, reference = [], None
    for name, f in made.items():
        row = {"n": n, "kind": kind, "world": world, "entry": name}
        try:
            with torch.no_grad():
                out = f(q, k, v)
            if reference is None:
                reference = out.float()
            else:
                row["err"] = float((out.float() - reference).norm() / reference.norm())

            def fwd(f=f):
                with torch.no_grad():
                    f(q, k, v)

            def step(f=f):
                for x in (qg, kg, vg):
                    x.grad = None
                f(qg, kg, vg).backward(g)

            times = time_interleaved(torch, [fwd, step], rounds=ROUNDS + WARM, per_batch=PER_BATCH, warm_s=0.0)
            slowest = torch.tensor([statistics.median(t[WARM:]) for t in times], device="cuda")
            dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
            row["fwd_ms"], row["step_ms"] = slowest.tolist()
        except Exception as e:  # noqa: BLE001 (a peer the installed torch cannot run: say so in its row)
            row["failed"] = f"{type(e).__name__}: {str(e).strip().splitlines()[0][:80]}"
        rows.append(row)
        torch.cuda.synchronize()
        dist.barrier()
    return rows


def run_world(world: int, args: argparse.Namespace) -> list[dict]:
    import torch.multiprocessing as mp

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as tmp:
        result = os.path.join(tmp, "rows.json")
        mp.spawn(_rank, args=(world, port, args, result), nprocs=world, join=True)
        return [r for rows in json.loads(Path(result).read_text()) for r in rows]


def table(rows: list[dict], args: argparse.Namespace, device: str) -> list[str]:
    lines = [f"# ring attention, {device}, {date.today()}, bf16, batch 1, {args.heads} heads of {args.dim}",
             f"# python3 tools/bench_context_parallel.py --seqs {','.join(map(str, args.seqs))} --worlds "
             f"{','.join(map(str, args.worlds))} --kinds {','.join(args.kinds)} --peers {','.join(args.peers)}",
             "# tokens/s (M) of the whole sequence; scale against the same entry on one GPU; vs: napkin's time / the peer's",
             "", "| tokens | kind | GPUs | entry | fwd Mtok/s | fwd+bwd Mtok/s | fwd+bwd scale | napkin vs it (fwd / fwd+bwd) | out err |",
             "|---|---|---|---|---|---|---|---|---|"]
    at = {(r["n"], r["kind"], r["world"], r["entry"]): r for r in rows}
    for r in rows:
        key = (r["n"], r["kind"], r["world"])
        if "failed" in r:
            lines.append(f"| {r['n']} | {r['kind']} | {r['world']} | {r['entry']} | failed: {r['failed']} | | | | |")
            continue
        one = at.get((r["n"], r["kind"], 1, r["entry"]), {})
        scale = f"{one['step_ms'] / r['step_ms']:.2f}x" if "step_ms" in one else ""
        ours = at.get((*key, "napkin"), {})
        vs = f"{r['fwd_ms'] / ours['fwd_ms']:.2f} / {r['step_ms'] / ours['step_ms']:.2f}" \
            if r["entry"] != "napkin" and "step_ms" in ours else ""
        err = f"{r['err']:.1e}" if "err" in r else ""
        lines.append(f"| {r['n']} | {r['kind']} | {r['world']} | {r['entry']} | {r['n'] / r['fwd_ms'] / 1e3:.2f} | "
                     f"{r['n'] / r['step_ms'] / 1e3:.2f} | {scale} | {vs} | {err} |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ints = lambda s: [int(x) for x in s.split(",")]  # noqa: E731
    parser.add_argument("--seqs", type=ints, default=[131072])
    parser.add_argument("--worlds", type=ints, default=[1, 2, 4])
    parser.add_argument("--kinds", type=lambda s: s.split(","), default=["causal", "softmax"])
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--peers", type=lambda s: [p for p in s.split(",") if p], default=["cudnn", "flash"])
    args = parser.parse_args()
    bad = [k for k in args.kinds if k not in ("causal", "softmax")] + [p for p in args.peers if p not in ("cudnn", "flash")]
    if bad:
        parser.error(f"kinds are causal and softmax, peers cudnn and flash; got {', '.join(bad)}")
    import torch

    if not torch.cuda.is_available():
        print("bench_context_parallel: no GPU here", file=sys.stderr)
        return 1
    have = torch.cuda.device_count()
    worlds = [w for w in args.worlds if w <= have]
    if len(worlds) < len(args.worlds):
        print(f"bench_context_parallel: {have} GPU(s) here, skipping worlds {[w for w in args.worlds if w > have]}", file=sys.stderr)
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    rows = []
    for world in worlds:
        rows += run_world(world, args)
        print(f"world {world} done", flush=True)
    device = f"{have}x {torch.cuda.get_device_name(0)}"
    report(table(rows, args, device), "bench_context_parallel.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
