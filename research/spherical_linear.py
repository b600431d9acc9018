"""Spherical attention without a mask is linear in its scores but for the row norm, so it
reassociates: O = (Q (K^T V)) / sqrt(rowsum((Q (K^T K)) * Q)), O(N d^2) work against the
tiled kernel's O(N^2 d). This checks the forward and the gradient of that form against
float64 autograd of the reference (napkin_ir.reference.spherical_attention), on the CPU.
The compiler now derives the same form (`ncd-reassociate`) and its gradient (`ncd-grad`),
and napkin::attention runs it as a program of kernels (`napkin_ir.plan.program`).

    python3 research/spherical_linear.py

The gradient, with A = K^T V, G = K^T K, u = Q A, n = sqrt(rowsum((Q G) * Q)), O = u / n,
D = rowsum(dO * O) (the tiled backward's D):
    dQ = (dO A^T) / n - (D / n^2) (Q G)
    dA = Q^T (dO / n),  dG = -Q^T diag(D / (2 n^2)) Q
    dK = V dA^T + K (dG + dG^T),  dV = K dA
every product d x d or N x d (no N x N)."""

from __future__ import annotations

import torch


def linear_form(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, ...]:
    a, g = k.transpose(-1, -2) @ v, k.transpose(-1, -2) @ k
    qg = q @ g
    n = ((qg * q).sum(-1, keepdim=True)).sqrt()
    return (q @ a) / n, a, g, qg, n


def linear_grad(q, k, v, d_o):
    o, a, g, qg, n = linear_form(q, k, v)
    delta = (d_o * o).sum(-1, keepdim=True)
    dq = (d_o @ a.transpose(-1, -2)) / n - (delta / n**2) * qg
    da = q.transpose(-1, -2) @ (d_o / n)
    dg = -(q * (delta / (2 * n**2))).transpose(-1, -2) @ q
    dk = v @ da.transpose(-1, -2) + k @ (dg + dg.transpose(-1, -2))
    dv = k @ da
    return o, dq, dk, dv


def main() -> None:
    torch.manual_seed(0)
    for n, nk, d in [(300, 700, 64), (256, 256, 128), (1000, 1000, 128)]:
        q, k, v, d_o = (torch.randn(2, 3, m, d, dtype=torch.float64) for m in (n, nk, nk, n))
        q.requires_grad_(), k.requires_grad_(), v.requires_grad_()
        s = q @ k.transpose(-1, -2)
        ref = (s / s.norm(dim=-1, keepdim=True)) @ v
        ref.backward(d_o)
        with torch.no_grad():
            o, dq, dk, dv = linear_grad(q, k, v, d_o)
        errs = [float((x - y).norm() / y.norm()) for x, y in ((o, ref.detach()), (dq, q.grad), (dk, k.grad), (dv, v.grad))]
        print(f"n={n} nk={nk} d={d}: relative errors O {errs[0]:.1e}, dQ {errs[1]:.1e}, dK {errs[2]:.1e}, dV {errs[3]:.1e}")
        assert max(errs) < 1e-10, errs
        # bf16 operands for the tensor cores: Q, K, V rounded, A and G rounded after their f32 sums
        bf = lambda x: x.to(torch.bfloat16).to(torch.float64)  # noqa: E731
        with torch.no_grad():
            qb, kb, vb = bf(q), bf(k), bf(v)
            a, g = bf(kb.transpose(-1, -2) @ vb), bf(kb.transpose(-1, -2) @ kb)
            o16 = (qb @ a) / ((qb @ g) * qb).sum(-1, keepdim=True).sqrt()
        print(f"    forward with bf16 operands, A and G rounded: relative error {float((o16 - ref.detach()).norm() / ref.detach().norm()):.1e}")


if __name__ == "__main__":
    main()
