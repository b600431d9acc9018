"""napkin::matmul's backward on the CPU: autograd is wired (meta tensors run the fake
kernels, which compile the derived gradient kernels for sm_80), each gradient kernel is the
GEMM `ncd-grad` derives, and napkin::attention's backward refuses by name."""

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


def test_attention_backward_refuses_by_name():
    q = torch.empty(1, 2, 128, 64, dtype=torch.bfloat16, device="meta", requires_grad=True)
    k = torch.empty(1, 2, 128, 64, dtype=torch.bfloat16, device="meta")
    out = nt.attention(q, k, k)
    with pytest.raises(NotImplementedError, match="napkin::attention has no backward yet"):
        out.sum().backward()
