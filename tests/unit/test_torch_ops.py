"""napkin_ir.torch without a GPU: the ops' schemas, their checks (dtype, device, shapes),
their fake kernels on meta tensors, tracing under torch.compile(fullgraph=True), and the
choice of target and tiles. tests/gpu/test_torch_ops_gpu.py runs them on the GPU."""

from __future__ import annotations

import pytest
import torch
from torch._dynamo.testing import CompileCounter

import napkin_ir.torch as nt

BF16, F16 = torch.bfloat16, torch.float16


def meta(*shape: int, dtype: torch.dtype = BF16) -> torch.Tensor:
    return torch.empty(shape, device="meta", dtype=dtype)


def test_the_ops_are_registered():
    assert str(torch.ops.napkin.matmul.default._schema) == "napkin::matmul(Tensor a, Tensor b) -> Tensor"
    assert str(torch.ops.napkin.attention.default._schema) == \
        'napkin::attention(Tensor q, Tensor k, Tensor v, str kind="softmax", float? scale=None) -> Tensor'


def test_fake_kernels_give_the_shapes():
    c = torch.ops.napkin.matmul(meta(100, 64), meta(64, 30))
    assert (c.shape, c.dtype, c.device.type) == ((100, 30), BF16, "meta")
    o = torch.ops.napkin.attention(meta(2, 8, 100, 64, dtype=F16), meta(2, 2, 70, 64, dtype=F16), meta(2, 2, 70, 64, dtype=F16))
    assert (o.shape, o.dtype) == ((2, 8, 100, 64), F16)


def test_fake_cuda_tensors_under_fake_tensor_mode():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        a = torch.empty(256, 128, device="cuda", dtype=BF16)
        b = torch.empty(128, 512, device="cuda", dtype=BF16)
        c = nt.matmul(a, b)
    assert (c.shape, c.device.type) == ((256, 512), "cuda")


@pytest.mark.parametrize("args, message", [
    ((meta(4, 8), meta(4, 8)), r"a is \[4, 8\] and b is \[4, 8\]; a's columns \(K\) must equal b's rows"),
    ((meta(4, 8, dtype=torch.float32), meta(8, 4)), r"a is torch.float32; napkin's kernels take torch.bfloat16 or torch.float16"),
    ((meta(4, 8), meta(8, 4, dtype=F16)), r"a is torch.bfloat16 but b is torch.float16"),
    ((meta(2, 4, 8), meta(8, 4)), r"a must be 2-dimensional \(\[M, K\]\), found shape \[2, 4, 8\]"),
    ((torch.zeros(4, 8, dtype=BF16), torch.zeros(8, 4, dtype=BF16)), r"a is on cpu; napkin's kernels run on CUDA tensors"),
])
def test_matmul_checks_name_the_argument(args, message):
    with pytest.raises(ValueError, match=message):
        torch.ops.napkin.matmul(*args)


Q, KV = (2, 8, 128, 64), (2, 8, 128, 64)


@pytest.mark.parametrize("q, kv, kind, scale, message", [
    (Q, KV, "sigmoid", None, r"kind must be one of softmax, causal, spherical, found 'sigmoid'"),
    (Q, KV, "spherical", 0.5, r"spherical attention divides the scores by their L2 norm and takes no scale"),
    (Q, (2, 3, 128, 64), "softmax", None, r"q has 8 heads and k, v 3; the query heads must be a multiple"),
    (Q, (2, 8, 128, 32), "softmax", None, r"their batch and head dim must match"),
    (Q, (2, 8, 100, 64), "causal", None, r"causal attention compares query and key positions: q has 128 tokens, k 100"),
    ((8, 128, 64), KV, "softmax", None, r"q must be 4-dimensional \(\[batch, heads, tokens, head dim\]\)"),
])
def test_attention_checks_say_what_is_wrong(q, kv, kind, scale, message):
    with pytest.raises(ValueError, match=message):
        torch.ops.napkin.attention(meta(*q), meta(*kv), meta(*kv), kind, scale)


def test_k_and_v_must_match():
    with pytest.raises(ValueError, match=r"k is \[2, 8, 128, 64\] but v is \[2, 8, 64, 64\]"):
        nt.attention(meta(*Q), meta(*KV), meta(2, 8, 64, 64))


def test_grouped_query_attention_is_the_grouped_diagram():
    # 8 query heads sharing 2 key/value heads: a group axis r of 4, K and V without it, any kind
    o = torch.ops.napkin.attention(meta(2, 8, 128, 64), meta(2, 2, 128, 64), meta(2, 2, 128, 64), "causal")
    assert o.shape == (2, 8, 128, 64)
    text = nt.attention_text("causal", 2, 8, 2, 128, 128, 64, "bf16")
    assert "func.func @gqa_causal_attention(%q: !ncd.tensor<b=2, g=2, r=4, i=128, d=64 : bf16>, " \
           "%k: !ncd.tensor<b=2, g=2, j=128, d=64 : bf16>" in text
    assert "ncd.mask causal %s keep i >= j" in text
    assert nt.attention_text("softmax", 2, 8, 8, 128, 100, 64, "f16").startswith("func.func @attention(")


def test_grouped_query_attention_compiles_for_both_targets():
    """The diagram the op builds for grouped heads, causal, through both pipelines
    (napkin-sm90 packs a group's 4 heads into a block: one TMA box of heads x positions)."""
    import napkin_ir

    text = nt.attention_text("causal", 1, 8, 2, 77, 77, 64, "bf16")
    assert "cp.async.bulk.tensor.5d" in napkin_ir.compile(text, "sm90", cache=False).ptx
    assert "mma.sync" in napkin_ir.compile(text, "sm80", cache=False).ptx


def test_torch_compile_traces_the_ops_without_graph_breaks():
    def model(a, b, q, k, v):
        h = torch.ops.napkin.matmul(a, b).float().relu()
        return h.sum() + nt.attention(q, k, v, "causal").float().mean() + nt.attention(q, k[:, :2], v[:, :2], "causal").float().mean()

    counter = CompileCounter()
    compiled = torch.compile(model, fullgraph=True, backend=counter)
    out = compiled(meta(256, 128), meta(128, 64), meta(*Q), meta(*KV), meta(*KV))
    assert counter.frame_count == 1 and out.shape == () and out.device.type == "meta"


def test_the_target_and_tiles_chosen():
    assert nt.gemm_candidates(4096, 4096, 4096, (9, 0)) == [
        ("sm90", {"block": (128, 256, 64)}), ("sm80", {"block": (128, 128, 32), "warps": (2, 2)})]
    assert nt.gemm_candidates(4096, 4096, 4096, (8, 0)) == [("sm80", {"block": (128, 128, 32), "warps": (2, 2)})]
    assert nt.gemm_candidates(64, 128, 64, (9, 0))[0] == ("sm90", {"block": (64, 128, 64)})
    assert nt.gemm_candidates(40, 20, 16, (9, 0)) == [("sm80", {"block": (32, 16, 16), "warps": (1, 1), "layout": "pad8"})]
    assert nt.gemm_candidates(300, 300, 24, (8, 6)) == [("sm80", {"block": (128, 128, 16), "warps": (2, 1)})]
    assert nt.gemm_candidates(8, 64, 64, (9, 0)) == []


def test_each_candidate_compiles_for_its_target():
    """The tiles chosen are ones the compiler takes (a fresh, memory-only cache)."""
    from napkin_ir.cache import CompileCache
    from napkin_ir.diagrams import gemm
    import napkin_ir

    cache = CompileCache(disk=False)
    for shape in [(4096, 4096, 4096), (1000, 744, 520), (64, 128, 64), (128, 64, 64), (256, 32, 48), (32, 32, 16),
                  (300, 296, 24), (40, 24, 16), (16, 128, 64)]:
        for target, options in nt.gemm_candidates(*shape, (9, 0)):
            napkin_ir.compile(gemm(*shape), target, cache=cache, **options)


def test_a_shape_no_kernel_takes_is_refused_with_every_reason(monkeypatch):
    monkeypatch.setattr(nt, "_kernels", {})
    with pytest.raises(ValueError, match=r"does not compile: napkin-sm90: .*rows.*; napkin-sm80: .*multiple of 8"):
        nt._compiled(("test",), [(t, __import__("napkin_ir").gemm(1000, 1000, 1004), o)
                                 for t, o in nt.gemm_candidates(1000, 1000, 1004, (9, 0))], "a test GEMM")
