"""napkin_ir.context_parallel on the CPU: the engine's ring loops, the shards' layout, the
merge and the backward's plumbing, over two and three gloo processes.

napkin's attention kernels are CUDA's; here each process registers a float reference of
`napkin::attention_lse` and `napkin::attention_backward` for CPU tensors (the same
contract: output in the inputs' dtype, f32 log-sum-exp [B, H, N], dq, dk, dv from the
merged output and log-sum-exp), so what is checked is everything around the kernels. The
ring's output and gradients, unsharded, must match float64 attention of the whole
sequence. tests/gpu/test_context_parallel_gpu.py runs the same with napkin's kernels.
"""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")
if not dist.is_available():
    pytest.skip("torch.distributed is not available in this build", allow_module_level=True)


def _reference_kernels():
    """CPU implementations of napkin's two ops, in f32 (a test double of the kernels)."""
    import warnings

    import napkin_ir.torch  # noqa: F401 (defines the ops)

    def scores(q, k, kind, scale):
        k = k.float().repeat_interleave(q.shape[1] // k.shape[1], 1)
        s = q.float() @ k.transpose(-1, -2) * (scale if scale is not None else 1 / math.sqrt(q.shape[-1]))
        if kind == "causal":
            assert q.shape[2] == k.shape[2], "a causal step has as many queries as keys"
            s = s.masked_fill(torch.ones_like(s, dtype=torch.bool).triu(1), float("-inf"))
        return s

    def forward(q, k, v, kind="softmax", scale=None):
        s = scores(q, k, kind, scale)
        lse = s.logsumexp(-1)
        out = (s - lse[..., None]).exp() @ v.float().repeat_interleave(q.shape[1] // v.shape[1], 1)
        return out.to(q.dtype), lse

    def backward(q, k, v, out, stat, grad, grad_stat=None, kind="softmax", scale=None):
        r = q.shape[1] // k.shape[1]
        p = (scores(q, k, kind, scale) - stat[..., None]).exp()
        g = grad.float()
        ds = p * (g @ v.float().repeat_interleave(r, 1).transpose(-1, -2) - (g * out.float()).sum(-1, keepdim=True))
        ds = ds * (scale if scale is not None else 1 / math.sqrt(q.shape[-1]))
        b, hk, n, d = k.shape
        dk = (ds.transpose(-1, -2) @ q.float()).view(b, hk, r, n, d).sum(2)
        dv = (p.transpose(-1, -2) @ g).view(b, hk, r, n, d).sum(2)
        return (ds @ k.float().repeat_interleave(r, 1)).to(q.dtype), dk.to(k.dtype), dv.to(v.dtype)

    lib = torch.library.Library("napkin", "IMPL")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # replacing the CPU kernels that refuse CPU tensors
        lib.impl("attention_lse", forward, "CPU")
        lib.impl("attention_backward", backward, "CPU")
    return lib


def _whole(q, k, v, g, kind):
    """Float64 attention of the whole sequence and its gradients."""
    q, k, v = (x.detach().double().requires_grad_() for x in (q, k, v))
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=kind == "causal", enable_gqa=True)
    out.backward(g.double())
    return out.detach(), q.grad, k.grad, v.grad


def _check(rank: int, world: int) -> None:
    from tests.ring_checks import ring_round_trip

    lib = _reference_kernels()  # noqa: F841 (kept alive: the registration lasts as long as the library)
    torch.manual_seed(0)  # the same whole sequence on every rank
    b, h, hk, n, d = 2, 4, 2, 24 * world, 16
    q, g = (torch.randn(b, h, n, d).to(torch.float16) for _ in range(2))
    k, v = (torch.randn(b, hk, n, d).to(torch.float16) for _ in range(2))
    ring_round_trip(rank, q, k, v, g, lambda kind: _whole(q, k, v, g, kind), 3e-3)


@pytest.mark.parametrize("world", [2, 3])
def test_the_ring_matches_attention_of_the_whole_sequence(world):
    """Causal with the head-tail layout and without, softmax; grouped-query heads (4 over
    2); the shards' output and gradients, gathered back, against float64."""
    from tests.ring_checks import run_ranks

    run_ranks(_check, world, "gloo")


def test_refusals_say_what_is_wrong():
    from napkin_ir.context_parallel import ring_attention

    q = torch.zeros(1, 2, 8, 16, dtype=torch.float16)
    with pytest.raises(ValueError, match="spherical attention's steps merge by their norms"):
        ring_attention(q, q, q, kind="spherical")
    with pytest.raises(ValueError, match="share one dtype"):
        ring_attention(q, q.float(), q)
    with pytest.raises(ValueError, match=r"\[B, H, N, D\] shards"):
        ring_attention(q[0], q, q)
    with pytest.raises(RuntimeError, match="not initialised"):
        ring_attention(q, q, q)
