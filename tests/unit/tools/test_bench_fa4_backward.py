"""tools/bench_attention_backward.py's launch of FA4's backward, on a stand-in for FA4 on
the CPU: its inputs laid out [B, N, H, D], its output a tuple or a tensor, the backward
through its saved graph or, with `step`, the forward again; None where it refuses."""

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))
import bench_attention_backward  # noqa: E402

CALLS = []


def _fa4(q, k, v, causal=False):
    CALLS.append((tuple(q.shape), causal))
    return (q * k * v.sum(2, keepdim=True), None)


def test_the_backward_through_fa4_s_graph_and_the_step():
    q, k, v, g = (torch.randn(2, 3, 5, 4) for _ in range(4))
    CALLS.clear()
    back = bench_attention_backward.fa4_backward(torch, _fa4, q, k, v, g, True)
    dq, dk, dv = back()
    assert CALLS == [((2, 5, 3, 4), True)]  # [B, N, H, D], once: the backward reuses the graph
    q4, k4, v4, g4 = (x.transpose(1, 2) for x in (q, k, v, g))
    assert torch.allclose(dq, (g4 * k4 * v4.sum(2, keepdim=True)))
    step = bench_attention_backward.fa4_backward(torch, _fa4, q, k, v, g, False, step=True)
    assert [x.shape for x in step()] == [(2, 5, 3, 4)] * 3 and CALLS[-1] == ((2, 5, 3, 4), False) and len(CALLS) == 3


def test_a_shape_fa4_refuses_gives_none(capsys):
    def refuses(q, k, v, causal=False):
        raise RuntimeError("no kernel for head dim 4")

    q = torch.randn(1, 1, 2, 4)
    assert bench_attention_backward.fa4_backward(torch, refuses, q, q, q, q, False) is None
    assert "fa4: n/a (no kernel for head dim 4)" in capsys.readouterr().out
