"""napkin's attention over the GPUs of a process group, the sequence sharded: ring attention.

PyTorch's context parallelism (`torch.distributed.tensor.experimental.context_parallel`)
runs attention as a ring: each rank holds a shard of the queries, keys and values along
the sequence; K and V shards pass from rank to rank, each step computes attention of the
local queries over one K/V shard, and the steps' outputs are merged by their log-sum-exp.
Its backward runs the ring again with the merged output and log-sum-exp. Here napkin's
`napkin::attention_lse` and `napkin::attention_backward` are the kernels of those steps,
called from the engine's own ring loops (`_templated_ring_attention` and its backward):
the same rotation (all-gather by default; `set_rotate_method("alltoall")` for a ring of
sends), the same merge in f32, no host synchronisation.

Causal attention's steps are the diagonal one (local queries over local keys: causal,
equal lengths) and full ones; with `load_balanced` (the engine's head-tail layout: the
sequence cut into 2 W chunks, rank r holding chunks r and 2 W - 1 - r) every rank does
the same work, its later steps the full queries over the first half of a K/V shard, or
the second half of the queries over a whole one (softmax with N_keys != N_queries).
`shard_sequence` and `unshard_sequence` make and undo that layout.

Softmax and causal attention, grouped-query heads included (K and V travel with their
own heads). Spherical attention merges by its norm, not a log-sum-exp: refused. A loss on
the log-sum-exp has no backward through the ring.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch
import torch.distributed as dist

SEQ_DIM = 2  # [B, H, N, D]


def _engine() -> Any:
    """The module of the engine's ring loops (its place moved between PyTorch releases)."""
    try:
        from torch.distributed.tensor.experimental._context_parallel import _attention as engine
    except ImportError:  # before the package split: all of it in experimental/_attention.py
        from torch.distributed.tensor.experimental import _attention as engine  # type: ignore[no-redef]
    return engine


def _step_kind(is_causal: bool) -> str:
    """The kernel of one ring step: the diagonal step of causal attention is causal (its
    queries and keys are the same positions); every other step is a plain softmax."""
    return "causal" if is_causal else "softmax"


def _forward_step(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, is_causal: bool, kind: str,
                  scale: float | None) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.ops.napkin.attention_lse(q, k, v, _step_kind(is_causal), scale)


def _backward_step(*, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, out: torch.Tensor, logsumexp: torch.Tensor,
                   is_causal: bool, grad_out: torch.Tensor, kind: str, scale: float | None) -> tuple[torch.Tensor, ...]:
    # the merged (whole-sequence) output and log-sum-exp: each step's dQ, dK, dV are exact parts
    return torch.ops.napkin.attention_backward(query, key, value, out.contiguous(), logsumexp.contiguous(), grad_out.contiguous(),
                                              None, _step_kind(is_causal), scale)


@contextlib.contextmanager
def _load_balance(engine: Any, on: bool) -> Iterator[None]:
    """The engine reads whether the shards are head-tail from a global option: set it for
    this call, as the shards were made, and put it back."""
    saved = engine._cp_options.enable_load_balance
    engine._cp_options.enable_load_balance = on
    try:
        yield
    finally:
        engine._cp_options.enable_load_balance = saved


def _check(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, kind: str) -> None:
    if kind not in ("softmax", "causal"):
        raise ValueError(f"ring_attention: kind must be softmax or causal, got {kind!r} (spherical attention's steps "
                         "merge by their norms, not a log-sum-exp: not supported over a ring)")
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        raise ValueError(f"ring_attention: q, k and v are [B, H, N, D] shards, got {list(q.shape)}, {list(k.shape)}, {list(v.shape)}")
    if not (q.dtype == k.dtype == v.dtype):
        raise ValueError(f"ring_attention: q, k and v share one dtype (K and V travel packed together), got {q.dtype}, {k.dtype}, {v.dtype}")
    if kind == "causal" and q.shape[SEQ_DIM] != k.shape[SEQ_DIM]:
        raise ValueError(f"ring_attention: causal shards hold as many queries as keys, got {q.shape[SEQ_DIM]} and {k.shape[SEQ_DIM]}")
    if not dist.is_initialized():
        raise RuntimeError("ring_attention: torch.distributed is not initialised (dist.init_process_group)")


class _Ring(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, group: Any, kind: str, scale: float | None,
                balanced: bool) -> tuple[torch.Tensor, torch.Tensor]:
        engine = _engine()
        with _load_balance(engine, balanced):
            out, lse, *_ = engine._templated_ring_attention(group, SEQ_DIM, _forward_step, q, k, v, is_causal=kind == "causal",
                                                            kind=kind, scale=scale)
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.ring = (group, kind, scale, balanced)
        return out, lse

    @staticmethod
    def backward(ctx: Any, grad_out: torch.Tensor | None, grad_lse: torch.Tensor | None) -> tuple[Any, ...]:
        if grad_lse is not None:
            raise NotImplementedError("ring_attention: a loss that reads the log-sum-exp has no backward through the ring")
        q, k, v, out, lse = ctx.saved_tensors
        if grad_out is None:
            return (None,) * 7
        group, kind, scale, balanced = ctx.ring
        engine = _engine()
        with _load_balance(engine, balanced):
            dq, dk, dv, *_ = engine._templated_ring_attention_backward(group, SEQ_DIM, _backward_step, grad_out, "grad_out", q, k, v,
                                                                       out, lse, kind == "causal", kind=kind, scale=scale)
        return dq, dk, dv, None, None, None, None


def ring_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, group: Any = None, kind: str = "softmax",
                   scale: float | None = None, *, load_balanced: bool = False,
                   return_lse: bool = False) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Attention of this rank's queries over the whole sequence's keys and values, every
    rank of `group` (None: the default group) holding its shard of each along dim 2 (q [B,
    H, N/W, D], k and v [B, H_kv, N/W, D], in `shard_sequence`'s layout: `load_balanced`
    as they were made). Differentiable in q, k and v; with `return_lse`, the log-sum-exp
    of each of this rank's rows too (f32 [B, H, N/W], natural log; no gradient flows
    through it)."""
    _check(q, k, v, kind)
    if load_balanced and kind != "causal":
        raise ValueError("ring_attention: load_balanced is the causal mask's layout; without a mask every rank's work is equal")
    group = group if group is not None else dist.group.WORLD
    out, lse = _Ring.apply(q, k, v, group, kind, scale, load_balanced)
    return (out, lse) if return_lse else out


def _layout(n: int, world: int, load_balanced: bool, what: str) -> int:
    """The number of chunks the sequence is cut into (W, or 2 W head-tail), refusing a
    length they do not divide."""
    chunks = 2 * world if load_balanced else world
    if n % chunks:
        raise ValueError(f"{what}: a sequence of {n} does not cut into {chunks} equal chunks "
                         f"({world} ranks{', two chunks each (load_balanced)' if load_balanced else ''})")
    return chunks


def shard_sequence(x: torch.Tensor, group: Any = None, *, load_balanced: bool = False, dim: int = SEQ_DIM) -> torch.Tensor:
    """This rank's shard of `x` (the whole sequence, the same on every rank) along `dim`:
    its W-th part, or with `load_balanced` the engine's head-tail layout (2 W chunks,
    rank r chunks r and 2 W - 1 - r, so that a causal mask gives every rank equal work)."""
    world, rank = dist.get_world_size(group), dist.get_rank(group)
    chunks = x.chunk(_layout(x.shape[dim], world, load_balanced, "shard_sequence"), dim)
    if not load_balanced:
        return chunks[rank].contiguous()
    return torch.cat([chunks[rank], chunks[2 * world - 1 - rank]], dim)


def unshard_sequence(x: torch.Tensor, group: Any = None, *, load_balanced: bool = False, dim: int = SEQ_DIM) -> torch.Tensor:
    """The whole sequence from every rank's shard (`shard_sequence`'s inverse), on every
    rank: the shards gathered, then, head-tail, each rank's two chunks put back in place."""
    world = dist.get_world_size(group)
    parts = [torch.empty_like(x) for _ in range(world)]
    dist.all_gather(parts, x.contiguous(), group=group)
    if not load_balanced:
        return torch.cat(parts, dim)
    halves = [h for p in parts for h in p.chunk(2, dim)]  # rank r: chunk r, then chunk 2 W - 1 - r
    ordered = [halves[2 * c] if c < world else halves[2 * (2 * world - 1 - c) + 1] for c in range(2 * world)]
    return torch.cat(ordered, dim)


__all__ = ["ring_attention", "shard_sequence", "unshard_sequence"]
