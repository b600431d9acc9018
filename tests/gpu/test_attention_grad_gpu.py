"""The attention gradient on the GPU, kernel by kernel: dQ, dK and dV of softmax, causal and
spherical attention derived by `ncd-grad` (the forward's log-sum-exp or norm, and its
output, saved), each compiled by `napkin-sm80` and
`napkin-sm90` from its `ncd-extract`, against float64 torch.autograd on fresh random
inputs into NaN-poisoned outputs: head dims 64/128/256, causal or not, ragged lengths and
more keys than queries. D = rowsum(dO * O) is the row kernel's (`ncd-extract{value="delta"}`,
checked too); the log-sum-exp or norm is given from float64. dK and dV are checked from
one kernel of both too (`ncd-extract{results="1,2"}`)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from napkin_ir.attention_diagrams import NAMES, attention_diagram
from tests.gpu.checks import expect_close

pytestmark = pytest.mark.gpu

GRAD = "ncd-grad{residuals=true},ncd-fold-casts"


SHAPES = [(2, 3, 512, 512, 64), (1, 2, 1000, 1000, 128), (1, 4, 256, 256, 128), (1, 2, 300, 700, 64), (1, 2, 384, 384, 256)]


# a causal mask compares query and key positions: its diagram takes as many keys as queries
CASES = [(kind, shape) for kind in ("softmax", "causal", "spherical") for shape in SHAPES if kind != "causal" or shape[2] == shape[3]]


@pytest.mark.parametrize("kind,shape", CASES, ids=[f"{k}-b{s[0]}h{s[1]}n{s[2]}nk{s[3]}d{s[4]}" for k, s in CASES])
@pytest.mark.parametrize("pipeline", ["napkin-sm80", "napkin-sm90"])
def test_each_gradient_kernel_matches_float64(pipeline, kind, shape):
    torch = pytest.importorskip("torch")
    from napkin_ir.build import compile_kernel

    if pipeline == "napkin-sm90" and torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a kernels need a Hopper GPU")
    d = shape[4]
    text, name, given, grads = _inputs(torch, kind, shape)
    do, o16, delta = given["d_o"], given["o"], given["delta"]
    compile_kernel(text, f'{GRAD},ncd-extract{{function="{name}_grad" value="delta"}},{pipeline}')(d_o=do, o=o16, out=delta, sync=True)
    expect_close(delta.double().cpu().numpy(), (do.double() * o16.double()).sum(-1).cpu().numpy(), "bf16")
    for r, want in enumerate(grads):
        kernel = compile_kernel(text, f'{GRAD},ncd-extract{{function="{name}_grad" result={r} cut="delta"}},{pipeline}')
        out = torch.full(want.shape, float("nan"), device="cuda", dtype=torch.bfloat16)
        args = {p.arg: given[p.arg] for p in kernel.contract.params if p.arg != "out"}
        kernel(**args, out=out, sync=True)
        expect_close(out.double().cpu().numpy(), want.cpu().numpy(), "bf16")
    # dK and dV from one kernel (`results="1,2"`), both outputs poisoned
    kernel = compile_kernel(text, f'{GRAD},ncd-extract{{function="{name}_grad" results="1,2" cut="delta"}},{pipeline}')
    outs = {f"out{c}": torch.full(w.shape, float("nan"), device="cuda", dtype=torch.bfloat16) for c, w in enumerate(grads[1:])}
    kernel(**{p.arg: given[p.arg] for p in kernel.contract.params if p.arg not in outs}, **outs, sync=True)
    for out, want in zip(outs.values(), grads[1:]):
        expect_close(out.double().cpu().numpy(), want.cpu().numpy(), "bf16")
    if pipeline != "napkin-sm90" or d not in (64, 128):
        return
    # dQ, dK and dV from one kernel (`results="0,1,2"`): blocks of keys, dQ (f32, zeroed by
    # the launch) added into by every key block, dK and dV poisoned; at d=64 also with 128
    # queries a tile (dS in two panels; in blocks of 128 keys each warpgroup dQ^T for a
    # panel of the queries), at d=128 with 80 (dS staged keys innermost; the lengths here
    # leave the last tile ragged), as the model's search may pick
    wide = [f'{pipeline}{{block="{keys},128"}}' for keys in (128, 64)] if d == 64 else [f'{pipeline}{{block="128,80"}}']
    for plan in [pipeline, *wide]:
        _one_kernel_matches(text, name, plan, given, grads)


@pytest.mark.sanitize
@pytest.mark.parametrize("kind", ["softmax", "causal"])
def test_one_kernel_at_80_queries_a_tile_under_the_sanitizer(kind):
    """d=128's one kernel of dQ, dK and dV at 80 queries a tile (dS written keys innermost by
    stmatrix.trans, the statistics' stages 384 bytes apart) over a ragged 200 queries (the
    last tile 40): small enough for compute-sanitizer's memcheck, racecheck and synccheck."""
    torch = pytest.importorskip("torch")
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a kernels need a Hopper GPU")
    text, name, given, grads = _inputs(torch, kind, (1, 2, 200, 200, 128))
    _one_kernel_matches(text, name, 'napkin-sm90{block="128,80"}', given, grads)


def _inputs(torch, kind, shape):
    """The diagram, its gradient's name, the kernels' inputs (fresh random Q, K, V and dO;
    the statistic and the output from float64; D poisoned) and dQ, dK and dV in float64."""
    b, h, n, nk, d = shape
    text = attention_diagram(kind, b, h, n, d, n_keys=nk)
    q, do = (torch.randn(b, h, n, d, device="cuda").to(torch.bfloat16) for _ in range(2))  # fresh: no seed
    k, v = (torch.randn(b, h, nk, d, device="cuda").to(torch.bfloat16) for _ in range(2))
    Q, K, V = (x.double().requires_grad_() for x in (q, k, v))
    s = Q @ K.transpose(-1, -2)
    if kind == "spherical":
        stat = s.detach().norm(dim=-1).float()
        o = (s / s.norm(dim=-1, keepdim=True)) @ V
    else:
        s = s / math.sqrt(d)
        if kind == "causal":
            s = s.masked_fill(~torch.ones(n, nk, dtype=torch.bool, device="cuda").tril(), float("-inf"))
        stat = torch.logsumexp(s.detach(), -1).float()
        o = torch.softmax(s, -1) @ V
    o.backward(do.double())
    o16 = o.detach().to(torch.bfloat16)
    delta = torch.full((b, h, n), float("nan"), device="cuda")
    given = {"q": q, "k": k, "v": v, "d_o": do, "o": o16, "lse": stat, "norm": stat, "delta": delta}
    return text, NAMES[kind], given, (Q.grad, K.grad, V.grad)


def _one_kernel_matches(text, name, plan, given, grads):
    """dQ, dK and dV from the one kernel of `plan` into poisoned outputs, against float64
    (D computed here from the inputs)."""
    from napkin_ir.build import compile_kernel

    given = {**given, "delta": (given["d_o"].float() * given["o"].float()).sum(-1)}
    kernel = compile_kernel(text, f'{GRAD},ncd-extract{{function="{name}_grad" results="0,1,2" cut="delta"}},'
                                  f'ncd-widen-results{{result=0}},{plan}')
    outs = {"out0": _poisoned(grads[0], "float32"),
            **{f"out{c + 1}": _poisoned(w, "bfloat16") for c, w in enumerate(grads[1:])}}
    kernel(**{p.arg: given[p.arg] for p in kernel.contract.params if p.arg not in outs}, **outs, sync=True)
    for out, want in zip(outs.values(), grads):
        expect_close(out.double().cpu().numpy(), want.cpu().numpy(), "bf16")


def _poisoned(like, dtype: str):
    """A NaN-poisoned tensor of `like`'s shape on the GPU."""
    import torch

    return torch.full(like.shape, float("nan"), device="cuda", dtype=getattr(torch, dtype))
