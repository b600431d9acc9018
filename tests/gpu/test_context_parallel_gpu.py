"""napkin_ir.context_parallel with napkin's kernels over NCCL: each GPU a rank, the ring's
output and gradients, gathered back, against napkin's attention of the whole sequence on
one GPU (same inputs). Needs two GPUs or more (the `nvidia-h200-x2`
and `-x4` kinds); keep NCCL's multicast off (NCCL_NVLS_ENABLE=0)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")


def _check(rank: int, world: int, n: int, d: int) -> None:
    import napkin_ir.torch as nt
    from tests.ring_checks import ring_round_trip

    gen = torch.Generator(device="cuda").manual_seed(0)  # the same whole sequence on every rank
    b, h, hk = 1, 4, 2
    q, g = (torch.randn(b, h, n, d, device="cuda", generator=gen).to(torch.bfloat16) for _ in range(2))
    k, v = (torch.randn(b, hk, n, d, device="cuda", generator=gen).to(torch.bfloat16) for _ in range(2))

    def one_gpu(kind):
        whole = [x.detach().clone().requires_grad_() for x in (q, k, v)]
        out = nt.attention(*whole, kind)
        out.backward(g)
        return [out.detach(), *(x.grad for x in whole)]

    ring_round_trip(rank, q, k, v, g, one_gpu, 1e-2)


@pytest.mark.parametrize("n", [8192, 32768, 131072])
@pytest.mark.parametrize("world", [2, 4])
def test_the_ring_matches_one_gpu(world, n):
    """Causal (head-tail and plain) and softmax, grouped heads 4 over 2, d=128, 8k to 128k tokens."""
    if not torch.cuda.is_available() or torch.cuda.device_count() < world:
        pytest.skip(f"needs {world} GPUs")
    from tests.ring_checks import run_ranks

    run_ranks(_check, world, "nccl", n, 128)
