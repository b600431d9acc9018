"""The attention gradient on the GPU, kernel by kernel: dQ, dK and dV derived by `ncd-grad`
(the forward's log-sum-exp and output saved), each compiled by `napkin-sm80` and
`napkin-sm90` from its `ncd-extract`, against float64 torch.autograd on fresh random
inputs into NaN-poisoned outputs: head dims 64/128/256, causal or not, ragged lengths and
more keys than queries. D = rowsum(dO * O) is the row kernel's (`ncd-extract{value="delta"}`,
checked too); the log-sum-exp is given from float64."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.gpu.checks import expect_close

pytestmark = pytest.mark.gpu

GRAD = "ncd-grad{residuals=true},ncd-fold-casts"


def attention_text(b: int, h: int, n: int, nk: int, d: int, causal: bool) -> str:
    """Softmax attention over Q [b, h, i, d], K and V [b, h, j, d], scaled by 1/sqrt(d)."""
    t = lambda **ax: "!ncd.tensor<" + ", ".join(f"{a}={x}" for a, x in ax.items()) + " : {}>"  # noqa: E731
    q, k, s = t(b=b, h=h, i=n, d=d), t(b=b, h=h, j=nk, d=d), t(b=b, h=h, i=n, j=nk)
    lines = [f"func.func @att(%q: {q.format('bf16')}, %k: {k.format('bf16')}, %v: {k.format('bf16')}) -> {q.format('bf16')} {{",
             f"  %s = ncd.contract %q, %k over [d] : {q.format('bf16')}, {k.format('bf16')} -> {s.format('f32')}"]
    x = "%s"
    if causal:
        lines.append(f"  %sm = ncd.mask causal %s keep i >= j fill -inf : {s.format('f32')} -> {s.format('f32')}")
        x = "%sm"
    lines += [f"  %p = ncd.softmax {x} along j scale {1 / math.sqrt(d)!r} : {s.format('f32')} -> {s.format('f32')}",
              f"  %p16 = ncd.map cast %p : {s.format('f32')} -> {s.format('bf16')}",
              f"  %o = ncd.contract %p16, %v over [j] : {s.format('bf16')}, {k.format('bf16')} -> {q.format('bf16')}",
              f"  func.return %o : {q.format('bf16')}", "}"]
    return "\n".join(lines) + "\n"


SHAPES = [(2, 3, 512, 512, 64), (1, 2, 1000, 1000, 128), (1, 2, 300, 700, 64), (1, 2, 384, 384, 256)]


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "b{}h{}n{}nk{}d{}".format(*s))
@pytest.mark.parametrize("pipeline", ["napkin-sm80", "napkin-sm90"])
def test_each_gradient_kernel_matches_float64(pipeline, shape, causal):
    torch = pytest.importorskip("torch")
    from napkin_ir.build import compile_kernel

    if pipeline == "napkin-sm90" and torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a kernels need a Hopper GPU")
    b, h, n, nk, d = shape
    text = attention_text(b, h, n, nk, d, causal)
    q, do = (torch.randn(b, h, n, d, device="cuda").to(torch.bfloat16) for _ in range(2))  # fresh: no seed
    k, v = (torch.randn(b, h, nk, d, device="cuda").to(torch.bfloat16) for _ in range(2))
    Q, K, V = (x.double().requires_grad_() for x in (q, k, v))
    s = Q @ K.transpose(-1, -2) / math.sqrt(d)
    if causal:
        s = s.masked_fill(~torch.ones(n, nk, dtype=torch.bool, device="cuda").tril(), float("-inf"))
    o = torch.softmax(s, -1) @ V
    o.backward(do.double())
    o16 = o.detach().to(torch.bfloat16)
    delta = torch.full((b, h, n), float("nan"), device="cuda")
    compile_kernel(text, f'{GRAD},ncd-extract{{function="att_grad" value="delta"}},{pipeline}')(d_o=do, o=o16, out=delta, sync=True)
    expect_close(delta.double().cpu().numpy(), (do.double() * o16.double()).sum(-1).cpu().numpy(), "bf16")
    given = {"q": q, "k": k, "v": v, "d_o": do, "lse": torch.logsumexp(s.detach(), -1).float(), "delta": delta}
    for r, (name, want) in enumerate((("q", Q.grad), ("k", K.grad), ("v", V.grad))):
        kernel = compile_kernel(text, f'{GRAD},ncd-extract{{function="att_grad" result={r} cut="delta"}},{pipeline}')
        out = torch.full(want.shape, float("nan"), device="cuda", dtype=torch.bfloat16)
        args = {p.arg: given[p.arg] for p in kernel.contract.params if p.arg != "out"}
        kernel(**args, out=out, sync=True)
        expect_close(out.double().cpu().numpy(), want.cpu().numpy(), "bf16")
