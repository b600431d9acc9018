"""napkin::matmul's backward on the GPU: the gradients `ncd-grad` derives from the GEMM
diagram, compiled per shape, against float64 on fresh random inputs (parameters of a
module, one operand only requiring grad, ragged shapes, under torch.compile), and a small
model trained with napkin's matmul whose losses follow the same model on torch.matmul."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")


def _rel(x, y) -> float:
    return float((x.double() - y).norm() / y.norm())


@pytest.mark.parametrize("shape", [(1024, 1024, 512), (2048, 768, 1024), (520, 264, 200), (96, 72, 48)], ids=lambda s: "x".join(map(str, s)))
def test_matmul_gradients_match_float64(shape):
    import napkin_ir.torch as nt

    m, n, k = shape
    x = torch.randn(m, k, device="cuda").to(torch.bfloat16).requires_grad_()
    w = torch.nn.Parameter(torch.randn(k, n, device="cuda").to(torch.bfloat16))
    g = torch.randn(m, n, device="cuda").to(torch.bfloat16)
    torch.cuda.empty_cache()
    nt.matmul(x, w).backward(g)
    x64, w64, g64 = x.detach().double(), w.detach().double(), g.double()
    assert torch.isfinite(x.grad).all() and torch.isfinite(w.grad).all()
    assert _rel(x.grad, g64 @ w64.T) <= 2e-2
    assert _rel(w.grad, x64.T @ g64) <= 2e-2


def test_only_the_asked_gradient_and_torch_compile():
    import napkin_ir.torch as nt

    x = torch.randn(512, 256, device="cuda", dtype=torch.bfloat16)
    w = torch.nn.Parameter(torch.randn(256, 384, device="cuda", dtype=torch.bfloat16))

    @torch.compile(fullgraph=True)
    def loss(x, w):
        return nt.matmul(x, w).float().square().mean()

    loss(x, w).backward()
    y = x.double() @ w.detach().double()
    want = x.double().T @ (2 * y / y.numel())
    assert x.grad is None and _rel(w.grad, want) <= 2e-2


def test_a_small_model_trains_as_on_torch_matmul():
    import napkin_ir.torch as nt

    class Mlp(torch.nn.Module):
        def __init__(self, mm):
            super().__init__()
            gen = torch.Generator(device="cuda").manual_seed(0)
            self.w1 = torch.nn.Parameter((torch.randn(256, 512, device="cuda", generator=gen) / 16).to(torch.bfloat16))
            self.w2 = torch.nn.Parameter((torch.randn(512, 128, device="cuda", generator=gen) / 22).to(torch.bfloat16))
            self.mm = mm

        def forward(self, x):
            return self.mm(torch.relu(self.mm(x, self.w1)), self.w2)

    gen = torch.Generator(device="cuda").manual_seed(1)
    data = [(torch.randn(256, 256, device="cuda", generator=gen).to(torch.bfloat16),
             torch.randn(256, 128, device="cuda", generator=gen).to(torch.bfloat16)) for _ in range(8)]
    curves = []
    for mm in (nt.matmul, torch.matmul):
        model = Mlp(mm)
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        losses = []
        for step in range(60):
            x, y = data[step % len(data)]
            loss = (model(x).float() - y.float()).square().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        curves.append(losses)
    napkin, ref = curves
    assert napkin[-1] < 0.9 * napkin[0], "the loss did not fall"
    assert all(abs(a - b) <= 0.01 * b for a, b in zip(napkin, ref)), list(zip(napkin, ref))[:10]
