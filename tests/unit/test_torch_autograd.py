"""The ops' backwards on the CPU: autograd is wired (meta tensors run the fake kernels,
which compile the derived gradient kernels for sm_80), each of matmul's gradient kernels is
the GEMM `ncd-grad` derives, and attention's are the four kernels it derives (D, dQ, dK,
dV), for every kind, grouped heads included."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import napkin_ir.torch as nt  # noqa: E402


@pytest.mark.parametrize("cap,target", [((9, 0), "sm_90a"), ((8, 0), "sm_80")])
def test_each_gradient_is_a_derived_gemm(cap, target):
    da = nt.matmul_grad_kernel(0, 1024, 768, 512, "bf16", cap)
    db = nt.matmul_grad_kernel(1, 1024, 768, 512, "bf16", cap)
    assert (da.name, da.arg_names(), da.contract.target) == ("matmul_grad_a", ["b", "d_c", "out"], target)
    assert (db.name, db.arg_names(), db.contract.target) == ("matmul_grad_b", ["a", "d_c", "out"], target)


def test_autograd_runs_the_backward_op_on_meta_tensors():
    a = torch.empty(256, 128, dtype=torch.bfloat16, device="meta", requires_grad=True)
    b = torch.empty(128, 192, dtype=torch.bfloat16, device="meta", requires_grad=True)
    nt.matmul(a, b).sum().backward()
    assert a.grad.shape == (256, 128) and b.grad.shape == (128, 192)
    c = torch.empty(64, 64, dtype=torch.bfloat16, device="meta")
    w = torch.nn.Parameter(torch.empty(64, 32, dtype=torch.bfloat16, device="meta"))
    nt.matmul(c, w).sum().backward()  # only the parameter asks for a gradient
    assert w.grad.shape == (64, 32) and c.grad is None


def test_a_gradient_no_kernel_compiles_for_is_refused_naming_it():
    with pytest.raises(ValueError, match="dB of napkin::matmul of a 100x44 and a 44x70 bf16 matrix does not compile"):
        nt.matmul_grad_kernel(1, 100, 70, 44, "bf16", (8, 0))


@pytest.mark.parametrize("kind", ["softmax", "causal", "spherical"])
@pytest.mark.parametrize("heads", [2, 1], ids=["mha", "gqa"])
def test_attention_autograd_runs_the_backward_op_on_meta_tensors(kind, heads):
    q = torch.empty(1, 2, 128, 64, dtype=torch.bfloat16, device="meta", requires_grad=True)
    k = torch.nn.Parameter(torch.empty(1, heads, 128, 64, dtype=torch.bfloat16, device="meta"))
    v = torch.empty(1, heads, 128, 64, dtype=torch.bfloat16, device="meta", requires_grad=True)
    nt.attention(q, k, v, kind).sum().backward()
    assert (q.grad.shape, k.grad.shape, v.grad.shape) == (q.shape, k.shape, v.shape)


def test_the_direct_op_saves_no_statistic_and_runs_the_forward_again():
    q = torch.empty(1, 2, 128, 64, dtype=torch.bfloat16, device="meta", requires_grad=True)
    torch.ops.napkin.attention(q, q, q, "causal", None).sum().backward()
    assert q.grad.shape == q.shape


def test_a_loss_on_the_log_sum_exp_reaches_the_backward():
    q = torch.empty(1, 2, 128, 64, dtype=torch.bfloat16, device="meta", requires_grad=True)
    out, lse = nt.attention(q, q, q, return_lse=True)
    (out.float().sum() + lse.sum()).backward()
    assert q.grad.shape == q.shape


@pytest.mark.parametrize("cap,target", [((9, 0), "sm_90a"), ((8, 0), "sm_80")])
def test_each_attention_gradient_is_a_derived_kernel(cap, target):
    kernels = {part: nt.attention_grad_kernel(part, "causal", None, 1, 2, 300, 300, 64, "bf16", cap) for part in nt.ATTENTION_GRAD_PARTS
               if part != "qkv"}
    # the row kernel: D, and the log-sum-exp in base 2 that the others read in its place
    assert kernels["delta"].name == "causal_attention_grad_delta_lse_log2"
    assert sorted(kernels["delta"].arg_names()) == ["d_o", "lse", "o", "out0", "out1"]
    for part in "qkv":
        assert kernels[part].name == f"causal_attention_grad_{part}"
        reads = {"q": ["q", "k", "v", "d_o", "delta", "lse_log2", "out"], "k": ["q", "k", "v", "d_o", "delta", "lse_log2", "out"],
                 "v": ["q", "k", "d_o", "lse_log2", "out"]}  # dV = P^T dO needs neither V nor D
        assert kernels[part].arg_names() == reads[part]
        assert kernels[part].contract.target == target
    spherical = nt.attention_grad_kernel("k", "spherical", None, 1, 2, 300, 300, 64, "bf16", cap)
    assert "norm" in spherical.arg_names() and "lse_log2" not in spherical.arg_names()
    assert nt.attention_grad_kernel("delta", "spherical", None, 1, 2, 300, 300, 64, "bf16", cap).arg_names() == ["d_o", "o", "out"]
    # the backward's dK and dV: one kernel, two outputs
    assert kernels["kv"].name == "causal_attention_grad_k_v"
    assert kernels["kv"].arg_names() == ["q", "k", "v", "d_o", "delta", "lse_log2", "out0", "out1"]
    # the backward runs it up to head dim 128, a kernel each past that
    assert nt.backward_parts(128) == ("delta", "q", "kv") and nt.backward_parts(256) == ("delta", "q", "k", "v")
    assert {*nt.backward_parts(128), *nt.backward_parts(256)} <= set(nt.ATTENTION_GRAD_PARTS)
    # dQ, dK and dV from one kernel: Hopper's, at d=64 and 128, from 512 keys (1024 under a mask)
    assert nt.FUSED_DQ_DIMS == (64, 128) and nt.FUSED_DQ_MIN_KEYS == 512 and nt.FUSED_DQ_MASKED_MIN_KEYS == 1024
    assert nt.backward_parts(128, (9, 0), keys=512) == ("delta", "qkv")
    assert nt.backward_parts(128, (9, 0), masked=True, keys=1024) == ("delta", "qkv")
    for other in (dict(cap=(8, 0)), dict(masked=True, keys=1000), dict(keys=500), dict(deterministic=True)):
        assert nt.backward_parts(128, **{"cap": (9, 0), "keys": 1024, **other}) == ("delta", "q", "kv"), other
    assert nt.backward_parts(64, (9, 0), keys=4096) == ("delta", "qkv")
    assert nt.backward_parts(256, (9, 0), keys=4096) == ("delta", "q", "k", "v")
    # its kernel: sm_90a's, dQ an f32 sum the launch zeroes
    if cap != (9, 0):
        with pytest.raises(ValueError, match="is sm_90a's"):
            nt.attention_grad_kernel("qkv", "causal", None, 1, 2, 300, 300, 128, "bf16", cap)
        return
    fused = nt.attention_grad_kernel("qkv", "causal", None, 1, 2, 300, 300, 128, "bf16", cap)
    assert fused.name == "causal_attention_grad_q_k_v"
    assert [(p.arg, p.role, p.dtype) for p in fused.contract.params if p.arg.startswith("out")] == \
        [("out0", "accumulate", "f32"), ("out1", "out", "bf16"), ("out2", "out", "bf16")]
    # a block a key tile (not persistent), at a length where dK's and dV's kernel beside dQ's loops
    assert fused.contract.persistent == 0 and fused.contract.grid == (3, 2, 1)
    assert nt.attention_grad_kernel("kv", "causal", None, 1, 2, 300, 300, 128, "bf16", cap).contract.persistent == 1
    # grouped heads' (a causal mask): each query head's dK and dV added into its group's too
    grouped = nt.attention_grad_kernel("qkv", "causal", None, 1, 4, 300, 300, 128, "bf16", cap, 2)
    assert grouped.contract.param("k").shape == (1, 2, 300, 128) and grouped.contract.param("q").shape == (1, 2, 2, 300, 128)
    assert [(p.arg, p.role, p.dtype) for p in grouped.contract.params if p.arg.startswith("out")] == \
        [("out0", "accumulate", "f32"), ("out1", "accumulate", "f32"), ("out2", "accumulate", "f32")]


@pytest.mark.parametrize("cap,target", [((9, 0), "sm_90a"), ((8, 0), "sm_80")])
def test_grouped_heads_gradients_sum_the_group_into_f32(cap, target):
    """8 query heads sharing 2 key/value heads: the grouped diagram's kernels; dK and dV are
    added into by a block per query head (f32, zeroed by the launch), dQ is not."""
    kernels = {part: nt.attention_grad_kernel(part, "causal", None, 1, 8, 300, 300, 64, "bf16", cap, 2) for part in "qkv"}
    for part, kernel in kernels.items():
        assert kernel.name == f"gqa_causal_attention_grad_{part}" and kernel.contract.target == target
        out = kernel.contract.param("out")
        assert (out.role, out.dtype) == (("out", "bf16") if part == "q" else ("accumulate", "f32"))
    both = nt.attention_grad_kernel("kv", "causal", None, 1, 8, 300, 300, 64, "bf16", cap, 2)
    assert [(p.arg, p.role, p.dtype) for p in both.contract.params if p.arg.startswith("out")] == \
        [("out0", "accumulate", "f32"), ("out1", "accumulate", "f32")]
    assert kernels["k"].contract.param("q").shape == (1, 2, 4, 300, 64)
    assert kernels["k"].contract.param("out").shape == (1, 2, 300, 64)


def test_an_unknown_gradient_part_is_refused():
    with pytest.raises(ValueError, match="part must be one of delta, q, k, v, kv"):
        nt.attention_grad_kernel("o", "softmax", None, 1, 2, 128, 128, 64, "bf16", (8, 0))


def test_grouped_heads_without_a_mask_are_one_head_of_the_group_s_queries():
    """Without a mask, a key/value head's 4 query heads are one head of 4 x N queries to
    the plain kernels (dK and dV summed over the group in registers, no f32 sum); under a
    causal mask, the grouped diagram's (the one kernel of dQ, dK and dV where the plain
    heads take it), or the plain one's on repeated K and V when deterministic; heads that
    are not grouped as they are."""
    assert nt.gradient_heads(8, 2, 300, "softmax") == (2, 2, 1200)
    assert nt.gradient_heads(8, 2, 300, "spherical", deterministic=True) == (2, 2, 1200)
    assert nt.gradient_heads(8, 2, 300, "causal") == (8, 2, 300)
    assert nt.gradient_heads(8, 2, 300, "causal", deterministic=True) == (8, 8, 300)
    assert nt.gradient_heads(8, 2, 4096, "causal") == (8, 2, 4096)
    assert nt.gradient_heads(8, 2, 4096, "softmax") == (2, 2, 4 * 4096)
    assert nt.gradient_heads(8, 8, 300, "softmax") == (8, 8, 300)
    gh, ghk, gn = nt.gradient_heads(8, 2, 300, "softmax")
    kv = nt.attention_grad_kernel("kv", "softmax", None, 1, gh, gn, 300, 64, "bf16", (9, 0), ghk)
    assert kv.name == "attention_grad_k_v"
    assert kv.contract.param("q").shape == (1, 2, 1200, 64)
    assert [(p.arg, p.role, p.dtype) for p in kv.contract.params if p.arg.startswith("out")] == \
        [("out0", "out", "bf16"), ("out1", "out", "bf16")]
