"""napkin_ir.torch without a GPU: the ops' schemas, their checks (dtype, device, shapes),
their fake kernels on meta tensors (refusing what the compile refuses: one decision),
SDPA's signature and its refusals, tracing under torch.compile(fullgraph=True), the
choice of target and tiles, torch tensors and parameters read through data_ptr() (never
DLPack), and the launch path's caching with the driver stubbed.
tests/gpu/test_torch_ops_gpu.py runs them on the GPU."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from torch._dynamo.testing import CompileCounter

import napkin_ir.torch as nt
from napkin_ir.plan.recipes.product_targets import sm90_block

BF16, F16 = torch.bfloat16, torch.float16


def meta(*shape: int, dtype: torch.dtype = BF16) -> torch.Tensor:
    return torch.empty(shape, device="meta", dtype=dtype)


def test_the_ops_are_registered():
    assert str(torch.ops.napkin.matmul.default._schema) == "napkin::matmul(Tensor a, Tensor b) -> Tensor"
    assert str(torch.ops.napkin.attention.default._schema) == \
        'napkin::attention(Tensor q, Tensor k, Tensor v, str kind="softmax", float? scale=None) -> Tensor'


def test_fake_kernels_give_the_shapes():
    c = torch.ops.napkin.matmul(meta(100, 64), meta(64, 32))
    assert (c.shape, c.dtype, c.device.type) == ((100, 32), BF16, "meta")
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
        h = torch.ops.napkin.matmul(a, b).float().relu() + nt.matmul(a, b).float()  # the wrapper's quick path too
        return h.sum() + nt.attention(q, k, v, "causal").float().mean() + nt.attention(q, k[:, :2], v[:, :2], "causal").float().mean()

    counter = CompileCounter()
    compiled = torch.compile(model, fullgraph=True, backend=counter)
    out = compiled(meta(256, 128), meta(128, 64), meta(*Q), meta(*KV), meta(*KV))
    assert counter.frame_count == 1 and out.shape == () and out.device.type == "meta"


def test_import_reads_no_xdsl():
    """`import napkin_ir.torch` registers the ops and loads no compiler: neither xDSL nor a
    dialect, nor the runtime (a call whose kernel the cache holds needs none of the first)."""
    code = ("import sys, torch, napkin_ir.torch; print([m for m in sys.modules if m == 'xdsl' or "
            "m.startswith(('xdsl.', 'napkin_ir.dialects', 'napkin_ir.passes', 'napkin_ir.runtime'))])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_the_target_and_tiles_chosen():
    assert nt.gemm_candidates(4096, 4096, 4096, (9, 0)) == [
        ("sm90", {"block": (128, 256, 64)}), ("sm80", {"block": (128, 128, 32), "warps": (2, 2)})]
    assert nt.gemm_candidates(4096, 4096, 4096, (8, 0)) == [("sm80", {"block": (128, 128, 32), "warps": (2, 2)})]
    # napkin-sm90's tile is the model's: a small output takes 64 x 64 tiles, twice the blocks of 64 x 128
    assert nt.gemm_candidates(64, 128, 64, (9, 0))[0] == ("sm90", {"block": (64, 64, 64)})
    # 1000 x 14336: 7 x 112 = 784 swapped tiles of 144 x 128 (5.9 waves), not 448 of 128 x 256 (3.4 of 4)
    assert nt.gemm_candidates(1000, 14336, 4096, (9, 0))[0] == ("sm90", {"block": (144, 128, 64), "swap": True})
    assert nt.gemm_candidates(40, 20, 16, (9, 0)) == [  # a contraction shorter than sm90's stream tile: read past its end
        ("sm90", {"block": (64, 64, 64)}), ("sm80", {"block": (32, 16, 16), "warps": (1, 1), "layout": "pad8"})]
    assert nt.gemm_candidates(300, 300, 24, (8, 6)) == [("sm80", {"block": (128, 128, 16), "warps": (2, 1)})]
    # an axis shorter than 16 takes a tile of 16 on napkin-sm80, zero-filled past its end; on
    # napkin-sm90 a 64-row tile, its TMA loads reading zeros past the end
    assert nt.gemm_candidates(8, 64, 64, (8, 0)) == [("sm80", {"block": (16, 64, 32), "warps": (1, 1), "layout": "pad8"})]
    assert nt.gemm_candidates(8, 64, 64, (9, 0))[0] == ("sm90", {"block": (64, 64, 64)})
    # a decode-sized M: the contraction split so that the tiles fill the machine, tried first
    assert nt.gemm_candidates(16, 4096, 14336, (8, 0), split=True)[:2] == [
        ("sm80", {"block": (16, 128, 32), "warps": (1, 1), "layout": "pad8", "split": 3}),
        ("sm80", {"block": (16, 128, 32), "warps": (1, 1), "layout": "pad8"})]
    # a 64-row tile past A's 16 rows: 64 x 64 in two parts, 128 blocks (the fastest measured, H200, 2026-11-29),
    # the parts in clusters first, then through the global scratch, then unsplit
    for m in (16, 64):
        assert nt.gemm_candidates(m, 4096, 14336, (9, 0), split=True)[:3] == [
            ("sm90", {"block": (64, 64, 64), "split": 2, "cluster": 2}), ("sm90", {"block": (64, 64, 64), "split": 2}),
            ("sm90", {"block": (64, 64, 64)})]
    # tiles that fill the machine: no split
    assert all("split" not in o for _, o in nt.gemm_candidates(4096, 4096, 4096, (9, 0), split=True))
    # a short contraction over many tiles (bound by the L2): persistent clusters of two first,
    # the plain grid after; not with an odd count of row tiles, nor from K = 4096
    clustered = ("sm90", {"block": (256, 128, 64), "cluster": 2, "swap": True})  # swapped: 12 x 55 tiles, 5.0 waves
    assert nt.gemm_candidates(3000, 7000, 1000, (9, 0))[:3] == [  # then 128 x 256 in clusters, for a diagram that cannot be swapped
        clustered, ("sm90", {"block": (128, 256, 64), "cluster": 2}), ("sm90", {"block": sm90_block(3000, 7000, 1000), "swap": True})]
    assert nt.gemm_candidates(5000, 3000, 2056, (9, 0), split=True)[0] == ("sm90", {"block": (232, 128, 64), "cluster": 2, "swap": True})
    assert all("cluster" not in o or -(-2100 // o["block"][0]) % 2 == 0  # type: ignore[index, operator]
               for _, o in nt.gemm_candidates(2100, 7000, 1000, (9, 0)))  # pairs of row tiles (17 of 128 x 256 would not pair)
    assert all("cluster" not in o for _, o in nt.gemm_candidates(1000, 7000, 1000, (9, 0)))
    assert all("cluster" not in o for _, o in nt.gemm_candidates(2048, 2048, 2048, (9, 0)))  # one wave
    assert all("cluster" not in o for _, o in nt.gemm_candidates(3000, 7000, 1000, (8, 0)))


def test_a_decode_sized_m_copies_only_its_rows_on_hopper():
    """A decode's few rows of A in a 64-row tile: its TMA copies bring M rounded up to 8 rows,
    not 64 of which the TMA writes the rest as zeros; one launch, eager or captured, no
    padding or copy back. From 64 rows on, the whole tile."""
    for m, rows in ((1, 8), (13, 16), (60, 64)):
        kernel = nt.matmul_kernel(m, 4096, 4096, "bf16", (9, 0))
        assert kernel.name == "matmul" and kernel.contract.param("a").shape == (m, 4096) and kernel.contract.target == "sm_90a"
        assert kernel.boxes["a"].box == (rows, 64)
    assert nt.matmul_kernel(64, 4096, 4096, "bf16", (9, 0)).boxes["a"].box == (64, 64)
    assert nt.matmul_kernel(13, 4096, 4096, "bf16", (8, 0)).contract.target == "sm_80"


def test_each_candidate_compiles_for_its_target():
    """The tiles chosen are ones the compiler takes (a fresh, memory-only cache); a split
    one on the f32-output diagram, or the op's bf16 one where its parts form a cluster
    (which sums them in shared memory and rounds them)."""
    from napkin_ir.cache import CompileCache
    from napkin_ir.diagrams import gemm
    import napkin_ir

    cache = CompileCache(disk=False)
    for shape in [(4096, 4096, 4096), (1000, 744, 520), (64, 128, 64), (128, 64, 64), (256, 32, 48), (32, 32, 16),
                  (300, 296, 24), (40, 24, 16), (16, 128, 64), (1, 4096, 4096), (3, 512, 1024), (64, 4096, 14336),
                  (16, 4096, 14336)]:
        for target, options in nt.gemm_candidates(*shape, (9, 0), split=True):
            wide = "split" in options and "cluster" not in options
            napkin_ir.compile(gemm(*shape, out_dtype="f32" if wide else None), target, cache=cache, **options)


def test_a_shape_no_kernel_takes_is_refused_with_every_reason(monkeypatch):
    monkeypatch.setattr(nt, "_kernels", {})
    with pytest.raises(ValueError, match=r"does not compile: napkin-sm90: .*rows.*; napkin-sm80: .*multiple of 8"):
        nt._compiled(("test",), [(t, __import__("napkin_ir").gemm(1000, 1000, 1004), o)
                                 for t, o in nt.gemm_candidates(1000, 1000, 1004, (9, 0))], "a test GEMM")


# --- one decision for the fake and the real kernel -----------------------------------------

def test_the_fake_kernel_refuses_what_the_compile_refuses(monkeypatch):
    """A GEMM whose N (30) no cp.async row fits: the fake kernel (meta tensors, judged for
    sm_80) raises the compiler's own reason, the one `matmul_kernel` gives the real op."""
    monkeypatch.setattr(nt, "_kernels", {})
    with pytest.raises(ValueError, match=r"does not compile: napkin-sm80: .*multiple of 8 elements") as fake:
        torch.ops.napkin.matmul(meta(100, 64), meta(64, 30))
    monkeypatch.setattr(nt, "_kernels", {})  # compiled afresh: the same words
    with pytest.raises(ValueError) as real:
        nt.matmul_kernel(100, 30, 64, "bf16", nt.FAKE_CAPABILITY)
    assert str(real.value) == str(fake.value)


@pytest.mark.parametrize("d, cap, target", [(64, (9, 0), "sm_90a"), (128, (9, 0), "sm_90a"), (64, (8, 0), "sm_80"),
                                            (32, (9, 0), "sm_80"), (96, (9, 0), "sm_80"), (96, (8, 6), "sm_80"),
                                            (72, (9, 0), None), (72, (8, 0), None), (256, (8, 0), "sm_80")])
def test_attention_head_dims_by_gpu(d, cap, target, monkeypatch):
    """Hopper falls back to napkin-sm80 for the head dims napkin-sm90 refuses; what neither
    compiles is refused by the fake kernel (under the GPU's capability) with both reasons."""
    monkeypatch.setattr(nt, "capability", lambda device: cap)
    q = meta(1, 4, 128, d)
    if target is None:
        with pytest.raises(ValueError, match=r"does not compile: napkin-sm"):
            torch.ops.napkin.attention(q, q, q)
        return
    assert torch.ops.napkin.attention(q, q, q).shape == q.shape
    assert nt.attention_kernel("softmax", None, 1, 4, 4, 128, 128, d, "bf16", cap).contract.target == target


def test_a_refusal_is_remembered(monkeypatch):
    calls = []
    monkeypatch.setattr(nt, "_kernels", {})
    monkeypatch.setattr(nt.napkin_ir, "compile", lambda *a, **k: calls.append(a) or (_ for _ in ()).throw(ValueError("no")))
    for _ in range(3):
        with pytest.raises(ValueError, match="napkin-sm80: no"):
            nt.matmul_kernel(128, 128, 64, "bf16", (8, 0))
    assert len(calls) == 1


def test_a_slow_compile_says_so_once(monkeypatch, caplog):
    monkeypatch.setattr(nt, "_kernels", {})
    monkeypatch.setattr(nt, "SLOW_S", 0.0)
    with caplog.at_level("INFO", logger="napkin_ir"):
        nt.matmul_kernel(128, 128, 64, "bf16", (8, 0))
        nt.matmul_kernel(128, 128, 64, "bf16", (8, 0))
    lines = [r.getMessage() for r in caplog.records if r.name == "napkin_ir"]
    assert len(lines) == 1 and lines[0].startswith("compiled napkin::matmul of a 128x64 and a 64x128 bf16 matrix for sm_80 in")


# --- SDPA's signature ------------------------------------------------------------------------

def test_sdpa_has_torchs_signature():
    import inspect

    ours = inspect.signature(nt.scaled_dot_product_attention).parameters
    theirs = ["query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa"]
    assert list(ours)[:8] == theirs
    assert [ours[n].default for n in theirs[3:]] == [None, 0.0, False, None, False]
    assert [n for n, p in ours.items() if p.kind is p.KEYWORD_ONLY] == ["layout", "return_lse"]


@pytest.mark.parametrize("kwargs, error, message", [
    ({"attn_mask": meta(1, 1, 128, 128)}, NotImplementedError, r"attn_mask is not supported .*is_causal=True"),
    ({"dropout_p": 0.1}, NotImplementedError, r"dropout_p=0.1 is not supported"),
    ({"layout": "nhd"}, ValueError, r"layout must be 'bhnd' .* or 'bnhd'"),
])
def test_sdpa_refuses_by_name(kwargs, error, message):
    q = meta(1, 4, 128, 64)
    with pytest.raises(error, match=message):
        nt.scaled_dot_product_attention(q, q, q, **kwargs)


def test_sdpa_grouped_heads_need_enable_gqa():
    q, kv = meta(1, 8, 128, 64), meta(1, 2, 128, 64)
    with pytest.raises(ValueError, match=r"query has 8 heads and key 2 .*pass enable_gqa=True"):
        nt.scaled_dot_product_attention(q, kv, kv)
    assert nt.scaled_dot_product_attention(q, kv, kv, is_causal=True, enable_gqa=True).shape == q.shape


def test_sdpa_flash_attn_layout():
    q, kv = meta(2, 100, 8, 64), meta(2, 100, 2, 64)  # (B, N, H, D)
    o = nt.scaled_dot_product_attention(q, kv, kv, is_causal=True, enable_gqa=True, layout="bnhd")
    assert o.shape == (2, 100, 8, 64) and o.is_contiguous()


def test_the_log_sum_exp_op_is_registered_and_its_fake_kernel_gives_the_shapes():
    assert str(torch.ops.napkin.attention_lse.default._schema) == \
        'napkin::attention_lse(Tensor q, Tensor k, Tensor v, str kind="softmax", float? scale=None) -> (Tensor, Tensor)'
    o, lse = torch.ops.napkin.attention_lse(meta(2, 8, 100, 64, dtype=F16), meta(2, 2, 70, 64, dtype=F16), meta(2, 2, 70, 64, dtype=F16))
    assert (o.shape, o.dtype, lse.shape, lse.dtype) == ((2, 8, 100, 64), F16, (2, 8, 100), torch.float32)
    o, lse = nt.attention(meta(1, 4, 128, 64), meta(1, 4, 128, 64), meta(1, 4, 128, 64), "causal", return_lse=True)
    assert (o.shape, lse.shape, lse.dtype) == ((1, 4, 128, 64), (1, 4, 128), torch.float32)
    with pytest.raises(ValueError, match=r"spherical attention .* has no softmax, so no log-sum-exp"):
        nt.attention(meta(*Q), meta(*KV), meta(*KV), "spherical", return_lse=True)


def test_sdpa_returns_the_log_sum_exp():
    q, kv = meta(2, 8, 100, 64), meta(2, 2, 100, 64)
    o, lse = nt.scaled_dot_product_attention(q, kv, kv, is_causal=True, enable_gqa=True, return_lse=True)
    assert (o.shape, lse.shape, lse.dtype) == ((2, 8, 100, 64), (2, 8, 100), torch.float32)
    q, kv = meta(2, 100, 8, 64), meta(2, 100, 2, 64)  # flash-attn's layout: the output (B, N, H, D), lse (B, H, N) as its
    o, lse = nt.scaled_dot_product_attention(q, kv, kv, enable_gqa=True, layout="bnhd", return_lse=True)
    assert (o.shape, lse.shape) == ((2, 100, 8, 64), (2, 8, 100)) and o.is_contiguous()


def test_the_log_sum_exp_kernel_compiles_for_both_targets():
    """The diagram with the log-sum-exp, grouped heads and causal, through both pipelines:
    two outputs, the second a plain f32 pointer."""
    import napkin_ir

    text = nt.attention_text("causal", 1, 8, 2, 77, 77, 64, "bf16", lse=True)
    assert "ncd.logsumexp %m along j" in text
    for target in ("sm90", "sm80"):
        kernel = napkin_ir.compile(text, target, cache=False)
        assert kernel.arg_names()[-2:] == ["out0", "out1"] and "lg2.approx.ftz.f32" in kernel.ptx
        (lse,) = [p for p in kernel.contract.params if p.arg == "out1"]
        assert (lse.kind, lse.dtype, lse.shape) == ("pointer", "f32", (1, 2, 4, 77))


def test_sdpa_traces_under_torch_compile():
    def f(q, k, v):
        return nt.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.1, enable_gqa=True).float().sum()

    counter = CompileCounter()
    out = torch.compile(f, fullgraph=True, backend=counter)(meta(1, 4, 128, 64), meta(1, 2, 128, 64), meta(1, 2, 128, 64))
    assert counter.frame_count == 1 and out.shape == ()


def test_help_shows_our_docstrings():
    for fn, words in [(nt.matmul, "a[M, K] @ b[K, N]"), (nt.attention, "`spherical`"),
                      (nt.scaled_dot_product_attention, "Refused by name")]:
        assert words in fn.__doc__ and fn.__module__ == "napkin_ir.torch"


# --- torch tensors through data_ptr(), never DLPack -------------------------------------------

ALIGNED = 1 << 20


def _fake_cuda(*shapes, dtype=BF16, parameter=False, requires_grad=False):
    """CUDA tensors as FakeTensorMode makes them, whose data_ptr() says a device address."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    out = []
    with FakeTensorMode():
        for k, shape in enumerate(shapes):
            t = torch.empty(shape, device="cuda", dtype=dtype)
            t = torch.nn.Parameter(t) if parameter else t.requires_grad_(requires_grad)
            out.append(t)
    for k, t in enumerate(out):
        t.data_ptr = lambda k=k: ALIGNED * (k + 1)
    return out


@pytest.fixture
def no_dlpack(monkeypatch):
    from napkin_ir.runtime import arrays

    def refuse(*a, **k):
        raise AssertionError("a torch tensor went through DLPack")

    monkeypatch.setattr(arrays, "dlpack_view", refuse)


@pytest.fixture(scope="module")
def gemm_kernel():
    from napkin_ir.build import compile_kernel
    from napkin_ir.diagrams import gemm

    return compile_kernel(gemm(128, 64, 32), "napkin-sm80")


@pytest.mark.parametrize("how", [{"parameter": True}, {"requires_grad": True}, {}])
def test_parameters_pass_the_checks(gemm_kernel, no_dlpack, how):
    from napkin_ir.runtime.compiled import check_arguments

    a, b, out = _fake_cuda((128, 32), (32, 64), (128, 64), **how)
    views, device = check_arguments(gemm_kernel.contract, {"a": a, "b": b, "out": out})
    assert device == 0 and [views[n].pointer for n in "ab"] == [ALIGNED, 2 * ALIGNED]
    assert views["a"].source == "torch" and views["a"].strides == (64, 2)


def test_a_cpu_bf16_tensor_is_refused_by_name(gemm_kernel, no_dlpack):
    from napkin_ir.runtime.driver import ArgumentError

    _, b, out = _fake_cuda((128, 32), (32, 64), (128, 64))
    a = torch.nn.Parameter(torch.zeros(128, 32, dtype=BF16))
    with pytest.raises(ArgumentError, match=r"argument 'a': the array lives in host memory"):
        gemm_kernel.check({"a": a, "b": b, "out": out})


def test_torch_layouts_are_checked(gemm_kernel):
    from napkin_ir.runtime.driver import ArgumentError

    a, b, out = _fake_cuda((128, 32), (64, 32), (128, 64))
    with pytest.raises(ArgumentError, match=r"argument 'b': expected shape \[32, 64\]"):
        gemm_kernel.check({"a": a, "b": b, "out": out})
    with pytest.raises(ArgumentError, match=r"argument 'b': expected a C-contiguous array, found strides \[2, 64\]"):
        gemm_kernel.check({"a": a, "b": b.t(), "out": out})


# --- the launch path, with the driver stubbed -------------------------------------------------

class _Driver:
    """The few driver entry points a Launcher uses; any other is a failure (a driver query
    in the launch path), and every call is counted."""

    class CUresult:
        CUDA_SUCCESS, CUDA_ERROR_INVALID_CONTEXT, CUDA_ERROR_INVALID_HANDLE, CUDA_ERROR_CONTEXT_IS_DESTROYED = 0, 201, 400, 709

    def __init__(self):
        self.calls: list[tuple] = []

    def cuLaunchKernel(self, *args):
        self.calls.append(("cuLaunchKernel", *args))
        return (0,)

    def CUstream(self, handle):
        self.calls.append(("CUstream", handle))
        return ("stream", handle)


class _Context:
    ordinal = 0

    def activate(self):
        pass

    def attribute(self, name):
        assert name == "MULTIPROCESSOR_COUNT"
        return 132


class _Kernel:
    name = "matmul"
    handle = "function"

    def __init__(self):
        self.module = type("M", (), {"context": _Context()})()

    def _allow_dynamic_smem(self, smem):
        pass


class _Encoder:
    def __init__(self, plan, device=0):
        self.encoded = []

    def encode(self, address):
        self.encoded.append(address)
        return address.to_bytes(8, "little") * 16


@pytest.fixture
def stub_driver(monkeypatch):
    from napkin_ir.runtime import compiled, kernels

    drv = _Driver()
    monkeypatch.setattr(kernels, "cuda", lambda: drv)
    monkeypatch.setattr(kernels, "_streams", {})
    monkeypatch.setattr(compiled, "TiledEncoder", _Encoder)
    return drv


def _stubbed(kernel):
    from napkin_ir.runtime.compiled import CompiledKernel

    fresh = CompiledKernel(kernel.ptx, kernel.contract)
    fresh._kernels[0] = _Kernel()
    return fresh


def test_a_call_checks_a_layout_once_and_packs_a_pointer_set_once(gemm_kernel, stub_driver, monkeypatch):
    from napkin_ir.runtime import compiled

    kernel = _stubbed(gemm_kernel)
    checks = []
    real_check = compiled.check_arguments
    monkeypatch.setattr(compiled, "check_arguments", lambda *a, **k: checks.append(1) or real_check(*a, **k))
    a, b, out = _fake_cuda((128, 32), (32, 64), (128, 64), parameter=True)
    for _ in range(3):
        kernel(a=a, b=b, out=out, stream=7)
    assert len(checks) == 1
    launcher = kernel.launcher(0)
    assert launcher.packed == 1
    launches = [c for c in stub_driver.calls if c[0] == "cuLaunchKernel"]
    assert len(launches) == 3 and len(stub_driver.calls) == 4  # and one CUstream for handle 7, made once
    assert launches[0][1:10] == ("function", *launcher.grid, *launcher.block, launcher.smem, ("stream", 7))
    out.data_ptr = lambda: 9 * ALIGNED  # a new output buffer: packed again, checked not again
    kernel(a=a, b=b, out=out, stream=7)
    assert len(checks) == 1 and launcher.packed == 2


def test_bound_arguments_launch_with_nothing_else(gemm_kernel, stub_driver):
    kernel = _stubbed(gemm_kernel)
    a, b, out = _fake_cuda((128, 32), (32, 64), (128, 64))
    bound = kernel.bind({"a": a, "b": b, "out": out})
    assert list(bound) == [ALIGNED, 2 * ALIGNED, 3 * ALIGNED] and bound.device == 0
    stub_driver.calls.clear()
    kernel(bound=bound, stream=5)
    kernel(bound=bound, stream=5)
    assert [c[0] for c in stub_driver.calls] == ["CUstream", "cuLaunchKernel", "cuLaunchKernel"]


def test_tensor_maps_are_encoded_once_per_address(stub_driver):
    """The sm90 GEMM passes A, B and the output as TMA maps: a new output pointer re-encodes
    the output's map alone."""
    from napkin_ir.build import compile_kernel
    from napkin_ir.diagrams import gemm

    kernel = _stubbed(compile_kernel(gemm(128, 256, 64), "napkin-sm90"))
    maps = [k for k, p in enumerate(kernel.contract.params) if p.kind == "tensormap"]
    assert maps
    shapes = [p.shape for p in kernel.contract.params]
    tensors = dict(zip(kernel.arg_names(), _fake_cuda(*shapes)))
    kernel(**tensors)
    launcher = kernel.launcher(0)
    encoded = sum(len(e.encoded) for e in launcher.maps.values())
    assert encoded == len(maps)
    tensors["out"].data_ptr = lambda: 17 * ALIGNED
    kernel(**tensors)
    assert sum(len(e.encoded) for e in launcher.maps.values()) == encoded + 1 and launcher.packed == 2
    kernel(**tensors)
    assert sum(len(e.encoded) for e in launcher.maps.values()) == encoded + 1 and launcher.packed == 2


def _recorded_launches(monkeypatch, decide: str) -> tuple[list, list]:
    """Every launch (pointers, stream) and every decision (args, kwargs) of `nt.<decide>`,
    the kernel it picks launching into a list instead of the driver, on stream 42."""
    launched, decided = [], []

    class Launcher:
        def launch(self, pointers, stream):
            launched.append((pointers, stream))

    real = getattr(nt, decide)

    def kernel(*args, **kwargs):
        decided.append((args, kwargs))
        k = real(*args, **kwargs)
        k._launchers[0] = Launcher()
        return k

    monkeypatch.setattr(nt, "_launches", {})
    monkeypatch.setattr(nt, decide, kernel)
    monkeypatch.setattr(nt, "_stream", lambda index: 42)
    monkeypatch.setattr(torch.cuda, "device", lambda index: __import__("contextlib").nullcontext())
    return launched, decided


def test_the_ops_first_call_decides_and_later_calls_only_launch(monkeypatch):
    """napkin::matmul's CUDA implementation on fake CUDA tensors: the first call of a
    layout checks, compiles and checks against the contract; later calls look it up and
    launch on the current stream, pointers in the kernel's parameter order."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    launched, decided = _recorded_launches(monkeypatch, "matmul_kernel")
    a, w = _fake_cuda((128, 32), (32, 64), parameter=True)
    with FakeTensorMode(allow_non_fake_inputs=True) as mode:
        a, w = mode.from_tensor(a), mode.from_tensor(w)
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(3):
                out = nt._matmul_impl(a, w)
    # the first call decides the kernel (a CUDA graph's capture takes the same), later ones only launch
    assert out.shape == (128, 64) and len(decided) == 1 and len(launched) == 3 and len(nt._launches) == 1
    assert all(stream == 42 and len(p) == 3 for p, stream in launched)


def test_the_log_sum_exp_op_checks_its_grouped_views_once_and_launches(monkeypatch):
    """napkin::attention_lse's CUDA implementation on fake CUDA tensors, grouped heads: the
    first call compiles and checks q, the output and the log-sum-exp against the
    contract as the diagram's [B, H_kv, H / H_kv, N, (D)] views; later calls only launch,
    five pointers in the kernel's parameter order."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    launched, decided = _recorded_launches(monkeypatch, "attention_kernel")
    q, k, v = _fake_cuda((1, 8, 96, 64), (1, 2, 96, 64), (1, 2, 96, 64))
    with FakeTensorMode(allow_non_fake_inputs=True) as mode:
        q, k, v = mode.from_tensor(q), mode.from_tensor(k), mode.from_tensor(v)
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(2):
                out, lse = nt._attention_lse_impl(q, k, v, "causal")
    assert (out.shape, lse.shape, lse.dtype) == ((1, 8, 96, 64), (1, 8, 96), torch.float32)
    assert len(decided) == 1 and decided[0][1] == {"lse": True} and len(launched) == 2
    assert all(stream == 42 and len(p) == 5 for p, stream in launched)


def test_a_call_autograd_does_not_record_runs_below_the_autograd_key(below_autograd_calls):
    """Where no input requires grad, or grad is off, the wrappers dispatch below the
    autograd key (the Python wrapper of register_autograd is skipped); where autograd
    records, the call goes through it and the result has a grad_fn."""
    seen = below_autograd_calls
    a, b = meta(128, 64), meta(64, 256)
    assert nt.matmul(a, b).shape == (128, 256) and len(seen) == 1
    q = meta(1, 2, 64, 64)
    assert nt.attention(q, q, q).shape == (1, 2, 64, 64) and len(seen) == 2
    assert nt.scaled_dot_product_attention(q, q, q, return_lse=True)[1].shape == (1, 2, 64) and len(seen) == 3
    a.requires_grad_(True)
    with torch.no_grad():
        assert nt.matmul(a, b).grad_fn is None and len(seen) == 4
    c = nt.matmul(a, b)
    assert c.grad_fn is not None and len(seen) == 4  # recorded: through the autograd wrapper


def test_a_kernel_with_module_state_gets_a_module_for_each_stream(monkeypatch):
    """A split's scratch and counters live in the module (`CompiledKernel.stateful`): the op
    launches such a kernel from a module of its own on each stream it sees (launches that
    run at once on two streams would meet in one), and a plain kernel from its one launcher."""
    import contextlib

    split = nt.matmul_kernel(128, 4096, 14336, "bf16", (9, 0))  # 64-row tiles over two row tiles: the global scratch
    assert split.contract.grid[2] > 1 and split.stateful
    assert not nt.matmul_kernel(16, 4096, 4096, "bf16", (9, 0)).stateful  # its parts summed in a cluster
    assert not nt.matmul_kernel(4096, 4096, 4096, "bf16", (9, 0)).stateful
    made = []

    class Kernel:
        stateful = True

        def launcher(self, index, instance=0):
            made.append((index, instance))
            return ("launcher", instance)

    monkeypatch.setattr(nt.torch.cuda, "device", lambda index: contextlib.nullcontext())
    launch = object.__new__(nt._Launch)
    launch.kernel, launch.index, launch.launcher, launch.streams = Kernel(), 3, ("launcher", 0), {}
    assert launch.on(11) == ("launcher", 0) and launch.on(11) == ("launcher", 0) and made == []
    assert launch.on(22) == ("launcher", 1) and launch.on(33) == ("launcher", 2) and launch.on(22) == ("launcher", 1)
    assert made == [(3, 1), (3, 2)]
    monkeypatch.setattr(nt, "_capturing", lambda: True)  # a stream being captured loads nothing: the first module
    assert launch.on(44) == ("launcher", 0) and made == [(3, 1), (3, 2)] and 44 not in launch.streams
    plain = object.__new__(nt._Launch)
    plain.launcher, plain.streams = ("launcher", 0), None
    assert plain.on(11) == plain.on(22) == ("launcher", 0)


class _Launches:
    """A launch looked up by `matmul`'s key for meta tensors (device index -1), its
    launcher recording (pointers, stream)."""

    def __init__(self, monkeypatch, **changes):
        self.launched = []
        launch = nt._Launch.__new__(nt._Launch)
        launch.out_shape, launch.streams, launch.checked, launch.copy, launch.in_order, launch.order = (128, 256), None, True, False, True, (0, 1, 2)
        for name, value in changes.items():
            setattr(launch, name, value)
        launch.launcher = type("L", (), {"launch": lambda _, p, s: self.launched.append((p, s))})()
        self.a, self.b = meta(128, 64), meta(64, 256)
        key = (self.a.shape, self.b.shape, self.a.stride(), self.b.stride(), BF16, BF16, -1, -1)
        monkeypatch.setattr(nt, "_launches", {key: launch})
        monkeypatch.setattr(nt, "_current_device", lambda: -1)
        monkeypatch.setattr(nt, "_stream", lambda index: 42)
        self.called = []
        monkeypatch.setattr(nt, "_call", lambda op, records, *args: self.called.append(records) or "the whole way")


def test_a_call_of_a_layout_seen_before_launches_at_once(monkeypatch):
    """`matmul` of plain tensors (or parameters, autograd off) whose layout ran before:
    the output made and the kernel launched on the current stream, pointers in order,
    without the dispatcher or the op's own checks again."""
    seen = _Launches(monkeypatch)
    out = nt.matmul(seen.a, seen.b)
    assert out.shape == (128, 256) and out.dtype == BF16 and seen.launched == [((0, 0, 0), 42)] and not seen.called
    w = torch.nn.Parameter(seen.b)
    with torch.no_grad():
        assert nt.matmul(seen.a, w).shape == (128, 256) and len(seen.launched) == 2 and not seen.called


@pytest.mark.parametrize("why", ["records", "mode", "stateful", "unchecked", "copied", "reordered", "new layout"])
def test_a_call_anything_else_would_see_goes_the_whole_way(monkeypatch, why):
    """Autograd recording, a dispatch mode, a kernel with module state (a module per
    stream), a layout not yet checked, inputs to copy, another parameter order, or a
    layout never seen: `matmul` goes through `_call`, launching nothing itself."""
    from torch.utils._python_dispatch import TorchDispatchMode

    changes = {"stateful": {"streams": {}}, "unchecked": {"checked": False}, "copied": {"copy": True},
               "reordered": {"in_order": False}}.get(why, {})
    seen = _Launches(monkeypatch, **changes)
    a, b = seen.a, seen.b
    if why == "records":
        b = torch.nn.Parameter(b)
    if why == "new layout":
        a = meta(128, 64).t().contiguous().t()

    class Mode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    if why == "mode":
        with Mode():
            assert nt.matmul(a, b) == "the whole way"
    else:
        assert nt.matmul(a, b) == "the whole way"
    assert seen.launched == [] and seen.called == [why == "records"]


def test_long_spherical_attention_is_a_program_of_products(monkeypatch):
    """Spherical attention over enough keys is reassociated (`ncd-reassociate`) and runs as
    a program of kernels (`attention_program`), forward and backward; the fake kernels
    compile the same program, so torch.compile refuses what the GPU would. Grouped heads
    take the plain diagram on each key/value head's queries as one head."""
    import napkin_ir.plan.program as plan_program

    cap = nt.FAKE_CAPABILITY
    # where the program pays (`program_pays`): at 16k tokens of 2048, the gradient from 1k
    # keys, the forward from 2k; a short sequence of few heads keeps the one kernel
    assert nt.attention_program("spherical", None, 16, 16, 16, 1024, 1024, 128, "bf16", cap) is None
    assert nt.attention_program("spherical", None, 16, 16, 16, 1024, 1024, 128, "bf16", cap, gradient=True) is not None
    assert nt.attention_program("spherical", None, 8, 16, 16, 2048, 2048, 128, "bf16", cap) is not None
    assert nt.attention_program("spherical", None, 1, 2, 2, 128, 128, 128, "bf16", cap) is None  # the one kernel does less
    assert nt.attention_program("softmax", None, 1, 2, 2, 4096, 4096, 128, "bf16", cap) is None
    monkeypatch.setattr(plan_program, "program_pays", lambda *a, **k: True)  # the program at a small shape
    monkeypatch.setattr(nt, "_programs", {})
    program, kernels = nt.attention_program("spherical", None, 1, 8, 2, 1024, 1024, 64, "bf16", cap)
    assert [p.output for p in program.parts] == ["a", "g", "w", "qn", "o"] and len(kernels) == 5
    assert program.values["q"].dims == (1, 2, 4 * 1024, 64)
    grad, _ = nt.attention_program("spherical", None, 1, 8, 2, 1024, 1024, 64, "bf16", cap, gradient=True)
    assert program.macs < grad.macs and grad.arguments == ("q", "k", "v", "d_o")
    q, k = meta(1, 8, 1024, 64), meta(1, 2, 1024, 64)
    o = torch.ops.napkin.attention(q, k, k, "spherical")
    o2, norm = torch.ops.napkin.attention_lse(q, k, k, "spherical")
    dq, dk, dv = torch.ops.napkin.attention_backward(q, k, k, o2, norm, meta(1, 8, 1024, 64), None, "spherical")
    assert o.shape == o2.shape == dq.shape == (1, 8, 1024, 64) and norm.shape == (1, 8, 1024)
    assert dk.shape == dv.shape == (1, 2, 1024, 64)


def test_a_programs_sum_of_products_takes_the_recipes_own_tile_first():
    """Spherical attention's dK (three products into one tile) takes napkin-sm90's own plan
    first, whose tile leaves room for every product's operands and the output's TMA
    stores; a GEMM's tile for its shape (192 x 128) left two stages and stores from
    registers: 295 us against 83 (H200, 2026-12-01). A single product keeps the GEMM's."""
    import napkin_ir
    from napkin_ir.plan.program import reassociated_program
    from napkin_ir.attention_diagrams import attention_diagram

    program = reassociated_program(attention_diagram("spherical", b=4, h=16, n=4096, d=128), gradient=True)
    assert program is not None
    dk = next(p for p in program.parts if p.products == 3)
    first = nt._part_candidates(dk, (9, 0))[0]
    assert first[0] == "sm90" and first[2] == {}
    kernel = napkin_ir.compile(dk.text, "sm90", cache=False)
    assert [p.kind for p in kernel.contract.params if p.role == "out"] == ["tensormap"]
    single = next(p for p in program.parts if p.products == 1)
    assert nt._part_candidates(single, (9, 0))[0][2] != {}
    assert nt._part_candidates(dk, (8, 0))[0][0] == "sm80"
