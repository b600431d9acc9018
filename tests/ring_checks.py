"""What the ring-attention tests share (CPU over gloo, GPUs over NCCL): a check run on
every rank of a fresh process group, and the ring's round trip against the whole
sequence's attention."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable


def run_ranks(check: Callable[..., None], world: int, backend: str, *args: object) -> None:
    """`check(rank, world, *args)` in `world` processes of one `backend` process group
    (nccl: rank r on GPU r, NVLink multicast off); a failed check fails the call."""
    import torch.multiprocessing as mp

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(_rank, args=(check, world, port, backend, args), nprocs=world, join=True)


def _rank(rank: int, check: Callable[..., None], world: int, port: int, backend: str, args: tuple) -> None:
    import torch
    import torch.distributed as dist

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), NCCL_NVLS_ENABLE="0")
    device = None
    if backend == "nccl":
        torch.cuda.set_device(rank)
        device = torch.device("cuda", rank)
    dist.init_process_group(backend, rank=rank, world_size=world, device_id=device)
    try:
        check(rank, world, *args)
    finally:
        dist.destroy_process_group()
    # the interpreter's teardown can abort under the process group's threads (std::terminate,
    # SIGABRT, about one run in six on two CPU cores): the checks are done, leave without it
    os._exit(0)


def ring_round_trip(rank: int, q, k, v, g, want: Callable, tol: float) -> None:
    """For causal attention in the head-tail layout and without it, and softmax: the
    whole-sequence q, k, v and output gradient g sharded, `ring_attention` and its
    backward, the output and gradients gathered back, each within `tol` (relative) of
    `want(kind)`'s (out, dq, dk, dv)."""
    import torch

    from napkin_ir.context_parallel import ring_attention, shard_sequence, unshard_sequence

    for kind, balanced in (("causal", True), ("causal", False), ("softmax", False)):
        expected = want(kind)
        qs, ks, vs, gs = (shard_sequence(x, load_balanced=balanced) for x in (q, k, v, g))
        qs, ks, vs = (x.detach().clone().requires_grad_() for x in (qs, ks, vs))
        out, lse = ring_attention(qs, ks, vs, kind=kind, load_balanced=balanced, return_lse=True)
        assert out.shape == qs.shape and out.dtype == q.dtype and lse.shape == qs.shape[:3] and lse.dtype == torch.float32
        out.backward(gs)
        got = [unshard_sequence(x, load_balanced=balanced) for x in (out.detach(), qs.grad, ks.grad, vs.grad)]
        for name, x, y in zip(("out", "dq", "dk", "dv"), got, expected):
            assert torch.isfinite(x).all(), f"{kind} rank {rank}: {name} has non-finite values"
            err = float((x.double() - y.double()).norm() / y.double().norm())
            assert err < tol, f"{kind} (load_balanced={balanced}) rank {rank}: {name} relative error {err:.1e}"
