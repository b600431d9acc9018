"""tools/bench_attention_backward.py's check against float64, on the CPU: gradients that
are right (torch's own, in float64) measure no error, for softmax, causal and spherical
attention and for grouped heads (a key/value head's gradient summed over its group's
query heads); a wrong one is seen."""

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))
import bench_attention_backward as bench  # noqa: E402


def _grads(q, k, v, g, kind):
    q, k, v = (x.double().requires_grad_() for x in (q, k, v))
    r = q.shape[1] // k.shape[1]
    kk, vv = k.repeat_interleave(r, 1), v.repeat_interleave(r, 1)
    s = q @ kk.transpose(-1, -2)
    if kind == "spherical":
        p = s / s.norm(dim=-1, keepdim=True)
    else:
        s = s / q.shape[-1] ** 0.5
        if kind == "causal":
            s = s.masked_fill(~torch.ones(s.shape[-2:], dtype=torch.bool).tril(), float("-inf"))
        p = torch.softmax(s, -1)
    (p @ vv).backward(g.double())
    return q.grad, k.grad, v.grad


@pytest.mark.parametrize("kind", ["softmax", "causal", "spherical"])
@pytest.mark.parametrize("group", [1, 4])
def test_right_gradients_measure_no_error(kind, group):
    torch.manual_seed(0)
    b, h, n, d = 2, 8, 24, 16
    q, g = torch.randn(b, h, n, d), torch.randn(b, h, n, d)
    k, v = torch.randn(b, h // group, n, d), torch.randn(b, h // group, n, d)
    grads = _grads(q, k, v, g, kind)
    assert bench.check(torch, q, k, v, g, grads, kind) < 1e-12
    wrong = (grads[0], grads[1] * 1.01, grads[2])
    assert bench.check(torch, q, k, v, g, wrong, kind) > 5e-3
