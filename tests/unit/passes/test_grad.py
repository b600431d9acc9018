"""`ncd-grad`: each op's rule against central finite differences, and every example's
`@f_grad` against `torch.autograd` in float64, with and without saved row statistics.

The rules are checked on small f32 diagrams run by the ncd interpreter: for a random
cotangent w of the results, the gradient of the loss sum(w * f(x)) that `@f_grad` returns
is compared, element by element, with (L(x + h e) - L(x - h e)) / 2h in float64.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from napkin_ir import reference, registry
from napkin_ir.dialects import ncd
from napkin_ir.interpreters.run import find_function, run_function
from napkin_ir.passes.grad import NcdGradPass

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def differentiate(parse, text: str, residuals: bool = False):
    module = parse(text)
    NcdGradPass(residuals=residuals).apply(registry.make_context(), module)
    module.verify()
    return module


def _loss(module, f, xs, ws, n_results: int) -> float:
    ys = run_function(module, f, xs)[:n_results]
    return sum(float(np.sum(np.asarray(y, np.float64) * w)) for y, w in zip(ys, ws))


def n_stats(f) -> int:
    """The row statistics a residuals-form forward returns after its results: one per
    softmax and L2 norm."""
    return sum(isinstance(op, ncd.SoftmaxOp | ncd.L2NormOp) for op in f.body.block.ops)


def check_rule(parse, text: str, *, seed: int = 0, inputs=None, residuals: bool = False, h: float = 1e-2, tol: float = 2e-3):
    """`@f_grad` against central differences of sum(w * f(x)) for each element of each argument."""
    module = differentiate(parse, text, residuals)
    name = re.search(r"func.func @(\w+)", text).group(1)
    fwd, grad = find_function(module, name), find_function(module, f"{name}_grad")
    rng = np.random.default_rng(seed)
    xs = inputs or [rng.standard_normal(t.dims).astype(np.float32) for t in fwd.function_type.inputs.data]
    outs = run_function(module, fwd, xs)
    k = n_stats(fwd) if residuals else 0
    results, stats = outs[: len(outs) - k], outs[len(outs) - k :]
    ws = [rng.standard_normal(o.shape) for o in results]
    # with statistics, @f_grad also reads @f's results (the row sum of dO * O)
    grads = run_function(module, grad, [*xs, *(w.astype(np.float32) for w in ws), *stats, *(results if k else [])])
    if residuals:  # the forward with its statistics has the results it has without them
        plain = differentiate(parse, text)
        for a, b in zip(run_function(plain, find_function(plain, name), xs), results):
            np.testing.assert_array_equal(a, b)
    for n, (x, g) in enumerate(zip(xs, grads)):
        fd = np.zeros(x.shape)
        for idx in np.ndindex(*x.shape):
            xp, xm = x.copy(), x.copy()
            xp[idx] = np.float32(x[idx] + h)
            xm[idx] = np.float32(x[idx] - h)
            step = float(xp[idx]) - float(xm[idx])
            lp = _loss(module, fwd, [*xs[:n], xp, *xs[n + 1 :]], ws, len(results))
            lm = _loss(module, fwd, [*xs[:n], xm, *xs[n + 1 :]], ws, len(results))
            fd[idx] = (lp - lm) / step
        np.testing.assert_allclose(g, fd, rtol=tol, atol=tol * max(1.0, float(np.abs(fd).max())),
                                   err_msg=f"@{name}: the gradient of argument #{n}")
    return grads


def T(shape: str, dtype: str = "f32") -> str:
    return f"!ncd.tensor<{shape} : {dtype}>" if shape else f"!ncd.tensor<: {dtype}>"


def unary(fn: str, extra: str = "", shape: str = "i=3, j=4", out: str | None = None) -> str:
    out = out or shape
    return f"""
func.func @{fn}(%x: {T(shape)}) -> {T(out)} {{
  %y = ncd.map {fn} %x{extra} : {T(shape)} -> {T(out)}
  func.return %y : {T(out)}
}}"""


def binary(fn: str, a: str = "i=3, j=4", b: str = "i=3", out: str = "i=3, j=4") -> str:
    return f"""
func.func @{fn}(%x: {T(a)}, %y: {T(b)}) -> {T(out)} {{
  %z = ncd.map {fn} %x, %y : {T(a)}, {T(b)} -> {T(out)}
  func.return %z : {T(out)}
}}"""


def _positive(shapes, seed=1, low=0.5):
    rng = np.random.default_rng(seed)
    return [(low + np.abs(rng.standard_normal(s))).astype(np.float32) for s in shapes]


RULES = {
    "contract": f"""
func.func @contract(%a: {T("m=3, k=4")}, %b: {T("k=4, n=2")}) -> {T("n=2, m=3")} {{
  %c = ncd.contract %a, %b over [k] : {T("m=3, k=4")}, {T("k=4, n=2")} -> {T("n=2, m=3")}
  func.return %c : {T("n=2, m=3")}
}}""",
    # K lacks the query heads' axis r: its cotangent sums over r, as grouped-query attention's dK
    "contract_broadcast": f"""
func.func @contract_broadcast(%q: {T("g=2, r=2, i=3, d=2")}, %k: {T("g=2, j=3, d=2")}) -> {T("g=2, r=2, i=3, j=3")} {{
  %s = ncd.contract %q, %k over [d] : {T("g=2, r=2, i=3, d=2")}, {T("g=2, j=3, d=2")} -> {T("g=2, r=2, i=3, j=3")}
  func.return %s : {T("g=2, r=2, i=3, j=3")}
}}""",
    "contract_self": f"""
func.func @contract_self(%x: {T("i=3, d=4")}) -> {T("i=3")} {{
  %n = ncd.contract %x, %x over [d] : {T("i=3, d=4")}, {T("i=3, d=4")} -> {T("i=3")}
  func.return %n : {T("i=3")}
}}""",
    "exp": unary("exp"),
    "exp2": unary("exp2"),
    "neg": unary("neg"),
    "scale": unary("scale", " by -0.75"),
    "cast": unary("cast", out="j=4, i=3"),  # f32 to f32 with the axes in another order
    "add": binary("add"),
    "sub": binary("sub", "i=3", "i=3, j=4", "j=4, i=3"),
    "mul": binary("mul", "j=4", "i=3", "i=3, j=4"),
    "max": binary("max"),
    "add_by": unary("add", " by 1.5"),
    "sub_by": unary("sub", " by 1.5"),
    "mul_by": unary("mul", " by -2.0"),
    "div_by": unary("div", " by 4.0"),
    "max_by": unary("max", " by 0.25"),
    "reduce_sum": f"""
func.func @reduce_sum(%x: {T("i=3, j=4, k=2")}) -> {T("j=4")} {{
  %y = ncd.reduce sum %x along [i, k] : {T("i=3, j=4, k=2")} -> {T("j=4")}
  func.return %y : {T("j=4")}
}}""",
    "reduce_max": f"""
func.func @reduce_max(%x: {T("i=3, j=4")}) -> {T("i=3")} {{
  %y = ncd.reduce max %x along [j] : {T("i=3, j=4")} -> {T("i=3")}
  func.return %y : {T("i=3")}
}}""",
    "softmax": f"""
func.func @softmax(%x: {T("i=3, j=5")}) -> {T("i=3, j=5")} {{
  %p = ncd.softmax %x along j scale 0.7 : {T("i=3, j=5")} -> {T("i=3, j=5")}
  func.return %p : {T("i=3, j=5")}
}}""",
    "softmax_rows": f"""
func.func @softmax_rows(%x: {T("i=4, j=3")}) -> {T("i=4, j=3")} {{
  %p = ncd.softmax %x along i : {T("i=4, j=3")} -> {T("i=4, j=3")}
  func.return %p : {T("i=4, j=3")}
}}""",
    "l2norm": f"""
func.func @l2norm(%x: {T("i=3, j=5")}) -> {T("i=3, j=5")} {{
  %y = ncd.l2norm %x along j : {T("i=3, j=5")} -> {T("i=3, j=5")}
  func.return %y : {T("i=3, j=5")}
}}""",
    "logsumexp": f"""
func.func @logsumexp(%x: {T("i=3, j=5")}) -> {T("i=3")} {{
  %l = ncd.logsumexp %x along j scale 0.5 : {T("i=3, j=5")} -> {T("i=3")}
  func.return %l : {T("i=3")}
}}""",
    # the masked scores' cotangent is zero, before a softmax as in causal attention
    "mask_causal": f"""
func.func @mask_causal(%x: {T("i=4, j=4")}) -> {T("i=4, j=4")} {{
  %m = ncd.mask causal %x keep i >= j fill -inf : {T("i=4, j=4")} -> {T("i=4, j=4")}
  %p = ncd.softmax %m along j : {T("i=4, j=4")} -> {T("i=4, j=4")}
  func.return %p : {T("i=4, j=4")}
}}""",
    "mask_bound": f"""
func.func @mask_bound(%x: {T("i=2, j=5")}) -> {T("i=2, j=5")} {{
  %m = ncd.mask_bound %x keep j < 3 fill 2.0 : {T("i=2, j=5")} -> {T("i=2, j=5")}
  %y = ncd.map mul %m, %m : {T("i=2, j=5")}, {T("i=2, j=5")} -> {T("i=2, j=5")}
  func.return %y : {T("i=2, j=5")}
}}""",
    # relu as x * (x >= 0): ge passes nothing back; x is used twice (contributions add up)
    "ge": f"""
func.func @ge(%x: {T("i=3, j=4")}) -> {T("i=3, j=4")} {{
  %g = ncd.map ge %x by 0.0 : {T("i=3, j=4")} -> {T("i=3, j=4")}
  %y = ncd.map mul %x, %g : {T("i=3, j=4")}, {T("i=3, j=4")} -> {T("i=3, j=4")}
  func.return %y : {T("i=3, j=4")}
}}""",
    # two results, one of them an argument; an argument no result depends on gets zeros
    "results": f"""
func.func @results(%x: {T("i=3")}, %y: {T("i=3")}, %unused: {T("k=2")}) -> ({T("i=3")}, {T("i=3")}, {T("")}) {{
  %e = ncd.map exp %x : {T("i=3")} -> {T("i=3")}
  %s = ncd.reduce sum %e along [i] : {T("i=3")} -> {T("")}
  func.return %e, %y, %s : {T("i=3")}, {T("i=3")}, {T("")}
}}""",
}

POSITIVE = {  # rules whose functions need inputs away from zero
    "div": (binary("div", "i=3, j=4", "j=4"), [(3, 4), (4,)]),
    "sqrt": (unary("sqrt"), [(3, 4)]),
}


@pytest.mark.parametrize("rule", list(RULES))
def test_rule_against_finite_differences(parse, rule):
    check_rule(parse, RULES[rule])


@pytest.mark.parametrize("rule", list(POSITIVE))
def test_rule_on_positive_inputs(parse, rule):
    text, shapes = POSITIVE[rule]
    check_rule(parse, text, inputs=_positive(shapes))


@pytest.mark.parametrize("rule", ["softmax", "softmax_rows", "l2norm", "mask_causal"])
def test_rule_with_saved_statistics(parse, rule):
    check_rule(parse, RULES[rule], residuals=True)


def test_unused_argument_gets_zeros(parse):
    grads = check_rule(parse, RULES["results"])
    assert grads[2].shape == (2,) and not grads[2].any()


def test_max_splits_ties(parse):
    """Equal operands share the cotangent of max equally (as torch.maximum), and the
    maxima of a row share the cotangent of reduce max (as torch.amax)."""
    module = differentiate(parse, RULES["max"])
    x = np.array([[1.0, 2.0, 3.0, 4.0]] * 3, np.float32)
    y = np.array([2.0, 2.0, 9.0], np.float32)
    dz = np.ones((3, 4), np.float32)
    dx, dy = run_function(module, find_function(module, "max_grad"), [x, y, dz])
    np.testing.assert_array_equal(dx, [[0, 0.5, 1, 1], [0, 0.5, 1, 1], [0, 0, 0, 0]])
    np.testing.assert_array_equal(dy, [1.5, 1.5, 4])
    tx, ty = torch.tensor(x, requires_grad=True), torch.tensor(y[:, None], requires_grad=True)
    torch.maximum(tx, ty).sum().backward()
    np.testing.assert_array_equal(dx, tx.grad.numpy())

    module = differentiate(parse, RULES["reduce_max"])
    x = np.array([[1, 3, 3, 0], [5, 5, 5, 5], [0, 0, 0, 1]], np.float32)
    (dx,) = run_function(module, find_function(module, "reduce_max_grad"), [x, np.array([2, 4, 1], np.float32)])
    np.testing.assert_array_equal(dx, [[0, 1, 1, 0], [1, 1, 1, 1], [0, 0, 0, 1]])
    tx = torch.tensor(x, requires_grad=True)
    (tx.amax(dim=1) * torch.tensor([2.0, 4.0, 1.0])).sum().backward()
    np.testing.assert_array_equal(dx, tx.grad.numpy())

    module = differentiate(parse, RULES["max_by"])
    x = np.array([[0.25, 1.0, -1.0, 0.0]] * 3, np.float32)
    (dx,) = run_function(module, find_function(module, "max_grad"), [x, np.ones((3, 4), np.float32)])
    np.testing.assert_array_equal(dx[0], [0.5, 1, 0, 0])


# -- every example's @f_grad against torch.autograd in float64 --------------------------


def _attention(q, k, v, *, causal=False, spherical=False, scale=0.125):
    if q.dim() == k.dim() + 1:  # grouped-query: K and V broadcast over the group's query heads
        k, v = k.unsqueeze(-3), v.unsqueeze(-3)
    s = q @ k.transpose(-1, -2)
    if spherical:
        p = s / s.norm(dim=-1, keepdim=True)
    else:
        if causal:
            n_i, n_j = s.shape[-2:]
            s = s.masked_fill(torch.arange(n_i)[:, None] < torch.arange(n_j)[None, :], -math.inf)
        p = torch.softmax(scale * s, dim=-1)
    return (p @ v,)


TORCH = {
    "matmul": lambda a, b: (a @ b,),
    "gemm_bias": lambda a, b, bias: (a @ b + bias,),
    "gemm_exp": lambda a, b: (torch.exp(0.5 * (a @ b)),),
    "mlp": lambda x, w1, w2: (torch.relu(x @ w1) @ w2,),
    "attention": _attention,
    "causal_attention": lambda q, k, v: _attention(q, k, v, causal=True),
    "spherical_attention": lambda q, k, v: _attention(q, k, v, spherical=True),
    "gqa_attention": _attention,
    "gqa_causal_attention": lambda q, k, v: _attention(q, k, v, causal=True),
    "two": lambda a, b1, b2: (a @ b1, a @ b2),
    "row_softmax": lambda x: (torch.softmax(x, dim=-1),),
}
FILES = {"two": "two_products", "matmul": "matmul", "gemm_bias": "gemm_bias", "gemm_exp": "gemm_exp", "mlp": "mlp",
         "row_softmax": "row_softmax"} | {n: n for n in TORCH if "attention" in n}


def _example(name: str, f32: bool) -> str:
    text = (EXAMPLES / f"{FILES[name]}.mlir").read_text()
    return text.replace(": bf16>", ": f32>") if f32 else text


def _torch_grads(name, xs, ws):
    ts = [torch.tensor(np.asarray(x, np.float64), requires_grad=True) for x in xs]
    ys = TORCH[name](*ts)
    loss = sum((y * torch.tensor(np.asarray(w, np.float64))).sum() for y, w in zip(ys, ws))
    return [g.numpy() for g in torch.autograd.grad(loss, ts, allow_unused=True)]


def example_grads(parse, name: str, *, f32: bool, residuals: bool, seed: int = 0):
    """@f_grad's gradients and torch's, on the same inputs and cotangents."""
    module = differentiate(parse, _example(name, f32), residuals)
    fwd, grad = find_function(module, name), find_function(module, f"{name}_grad")
    rng = np.random.default_rng(seed)
    types = list(fwd.function_type.inputs.data)
    from napkin_ir.interpreters.tensors import round_to

    xs = [round_to(t.dtype, rng.standard_normal(t.dims).astype(np.float32)) for t in types]
    outs = run_function(module, fwd, xs)
    k = n_stats(fwd) if residuals else 0
    results, stats = outs[: len(outs) - k], outs[len(outs) - k :]
    out_types = list(fwd.function_type.outputs.data)
    ws = [round_to(t.dtype, rng.standard_normal(t.dims).astype(np.float32)) for t in out_types[: len(results)]]
    got = run_function(module, grad, [*xs, *ws, *stats, *(results if k else [])])
    for g, t in zip(got, types):
        assert g.shape == t.dims
    return got, _torch_grads(name, xs, ws)


@pytest.mark.parametrize("residuals", [False, True], ids=["recompute", "residuals"])
@pytest.mark.parametrize("name", list(TORCH))
def test_example_gradient_f32_against_torch(parse, name, residuals):
    got, want = example_grads(parse, name, f32=True, residuals=residuals)
    for n, (g, w) in enumerate(zip(got, want)):
        err = reference.relative_error(g, w)
        assert err < 1e-4, f"@{name}_grad: argument #{n}: relative error {err:.2e} against torch.autograd in float64"


@pytest.mark.parametrize("name", list(TORCH))
def test_example_gradient_bf16_against_torch(parse, name):
    """The examples as written (bf16 inputs, products and results; f32 cotangents inside),
    against torch in float64 on the same bf16-rounded inputs."""
    got, want = example_grads(parse, name, f32=False, residuals=name.endswith("attention"))
    for n, (g, w) in enumerate(zip(got, want)):
        err = reference.relative_error(g, w)
        assert err < reference.TOLERANCE["bf16"], f"@{name}_grad: argument #{n}: relative error {err:.2e}"
