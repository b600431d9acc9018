"""Spherical attention reassociated (`ncd-reassociate`) and cut into a program of kernels
(`napkin_ir.plan.program`): the numbers survive each step on the CPU, every kernel of the
program compiles on both pipelines, and its PTX assembles."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import napkin_ir
from napkin_ir.attention_diagrams import attention_diagram, gqa_attention_diagram
from napkin_ir.cache import assemble, find_ptxas
from napkin_ir.compiler import parse
from napkin_ir.interpreters.run import find_entry, run_function
from napkin_ir.passmanager import run_pipeline
from napkin_ir.plan.diagram import the_function
from napkin_ir.plan.program import kernel_program, program_pays, reassociated_program
from napkin_ir.reference_eval import evaluate, macs

EXAMPLES = Path(__file__).parents[3] / "examples"
DIAGRAMS = [
    attention_diagram("spherical", b=2, h=3, n=40, d=16, n_keys=72),
    attention_diagram("spherical", b=1, h=2, n=64, d=32, lse=True),
    gqa_attention_diagram("spherical", b=1, g=2, r=3, n=24, d=16),
]


def _function(module, grad: bool = False):
    funcs = [o for o in module.body.block.ops if o.name == "func.func"]
    return funcs[-1] if grad else funcs[0]


def _inputs(f, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {a.name_hint: rng.standard_normal(a.type.dims) for a in f.body.blocks[0].args}


def _relative(want: list[np.ndarray], got: list[np.ndarray]) -> float:
    return max(float(np.abs(w - g).max() / np.abs(w).max()) for w, g in zip(want, got, strict=True))


@pytest.mark.parametrize("text", DIAGRAMS)
@pytest.mark.parametrize("grad", [False, True], ids=["forward", "gradient"])
def test_reassociated_diagram_computes_the_same_in_float64(text: str, grad: bool) -> None:
    derive = ",ncd-grad" if grad else ""
    before = _function(run_pipeline(text, "ncd-fold-casts" + derive), grad)
    after = _function(run_pipeline(text, "ncd-reassociate" + derive), grad)
    assert not any(o.name == "ncd.l2norm" for o in after.walk())
    inputs = list(_inputs(before, 0).values())
    assert _relative(evaluate(before, inputs), evaluate(after, inputs)) < 1e-12


def test_reassociated_diagram_survives_the_interpreter_in_bf16() -> None:
    """The interpreter rounds each op to its element type: the reassociated diagram's
    roundings (A, G, W and Q / n in bf16) keep it near the float64 reference."""
    text = attention_diagram("spherical", b=1, h=2, n=64, d=32, n_keys=96)
    module = run_pipeline(text, "ncd-reassociate")
    f = _function(module)
    inputs = list(_inputs(f, 1).values())
    (want,) = evaluate(_function(parse(text)), inputs)
    (got,) = run_function(module, f, [x.astype(np.float32) for x in inputs])
    assert float(np.linalg.norm(got - want) / np.linalg.norm(want)) < 1e-2


@pytest.mark.parametrize("text", DIAGRAMS)
@pytest.mark.parametrize("grad", [False, True], ids=["forward", "gradient"])
def test_program_computes_the_diagram(text: str, grad: bool) -> None:
    """Each kernel run by the float64 reference in turn gives the diagram's results."""
    reassociated = run_pipeline(text, "ncd-reassociate,ncd-grad,ncd-fold-casts" if grad else "ncd-reassociate")
    program = kernel_program(_only_gradient(reassociated) if grad else reassociated)
    reference = _function(run_pipeline(text, "ncd-grad") if grad else parse(text), grad)
    inputs = _inputs(reference, 2)
    assert _relative(evaluate(reference, list(inputs.values())), program.evaluate(inputs)) < 1e-12


def _only_gradient(module):
    for f in [o for o in module.body.block.ops if o.name == "func.func" and not o.sym_name.data.endswith("_grad")]:
        module.body.block.erase_op(f)
    return module


def _program(text: str, gradient: bool = False):
    """The program of `text` reassociated (its gradient's, with `gradient`), whether or not
    it pays at this small shape."""
    program = reassociated_program(text, gradient, always=True)
    assert program is not None
    return program


def test_program_cuts_at_products_and_reads_views_in_place() -> None:
    program = _program(attention_diagram("spherical", b=1, h=2, n=1024, d=64))
    assert [p.output for p in program.parts] == ["a", "g", "w", "qn", "o"]
    assert [p.contraction for p in program.parts] == [True, True, True, False, True]
    # V and K renamed are read as V and K; the result's renaming is the last product's own
    assert program.views == {} and program.memory(program.results[0]) == "o"
    assert dict(program.parts[0].inputs) == {"k": "k", "v": "v"} and dict(program.parts[1].inputs) == {"k": "k", "k_b": "k"}
    for part in program.parts:
        assert "ncd.rename" not in part.text  # a kernel takes a renamed value as an argument of its type
    assert [v.name for v in program.intermediates()] == ["a", "g", "w", "qn"]


def test_program_rounds_products_that_rows_kernels_read() -> None:
    """A product of bf16 operands that the gradient keeps in f32 is rounded where it is
    made: the rows kernels read 16-bit tiles, and its cast for the next product is free."""
    program = _program(attention_diagram("spherical", b=1, h=2, n=1024, d=64), gradient=True)
    made = {p.output for p in program.parts}
    assert all(program.values[p.output].dtype == "bf16" for p in program.parts)
    assert program.views["d_g16"] == "d_g" and "d_g16" not in made
    assert len(program.results) == 3 and all(program.memory(r) in made for r in program.results)
    assert program.memory(program.results[2]) == "d_v" in made  # dV, renamed back by its product itself


def test_a_product_keeps_its_epilogue():
    """Elementwise maps of one product's sums, each read once, are its kernel's epilogue:
    applied to the f32 sums before they are rounded (relu, then the cast), not to a
    rounded copy in a kernel of their own."""
    text = """func.func @chain(%a: !ncd.tensor<m=256, k=128 : bf16>, %b: !ncd.tensor<k=128, n=256 : bf16>,
                   %c: !ncd.tensor<n=256, p=64 : bf16>) -> !ncd.tensor<m=256, p=64 : bf16> {
  %ab = ncd.contract %a, %b over [k] : !ncd.tensor<m=256, k=128 : bf16>, !ncd.tensor<k=128, n=256 : bf16> -> !ncd.tensor<m=256, n=256 : f32>
  %r = ncd.map exp %ab : !ncd.tensor<m=256, n=256 : f32> -> !ncd.tensor<m=256, n=256 : f32>
  %h = ncd.map cast %r : !ncd.tensor<m=256, n=256 : f32> -> !ncd.tensor<m=256, n=256 : bf16>
  %o = ncd.contract %h, %c over [n] : !ncd.tensor<m=256, n=256 : bf16>, !ncd.tensor<n=256, p=64 : bf16> -> !ncd.tensor<m=256, p=64 : bf16>
  func.return %o : !ncd.tensor<m=256, p=64 : bf16>
}"""
    program = kernel_program(parse(text))
    assert [p.output for p in program.parts] == ["h", "o"]
    assert "ncd.map exp" in program.parts[0].text and "-> !ncd.tensor<m=256, n=256 : f32>" in program.parts[0].text
    f = the_function(parse(text))
    inputs = {k: v / 8 for k, v in _inputs(f, 3).items()}
    assert _relative(evaluate(f, list(inputs.values())), program.evaluate(inputs)) < 1e-12
    for target in ("sm90", "sm80"):
        for part in program.parts:
            napkin_ir.compile(part.text, target, cache=False)


def test_a_sum_of_products_is_one_kernel():
    """Products added into one tile are one kernel's, each product's sums added in one
    accumulator (the products family streams all their operands a stage), where each was a
    kernel and their sum another: a product over another axis name, or read renamed,
    takes its operands renamed at their edges instead."""
    def t(*axes: str, dt: str = "bf16") -> str:
        return f"!ncd.tensor<{', '.join(f'{a}=64' for a in axes)} : {dt}>"

    text = f"""func.func @sums(%a: {t('m', 'k')}, %b: {t('k', 'n')}, %c: {t('m', 'p')}, %d: {t('n', 'p')}, %e: {t('m', 'k')}, %g: {t('k', 'q')}) -> {t('m', 'n')} {{
  %x = ncd.contract %a, %b over [k] : {t('m', 'k')}, {t('k', 'n')} -> {t('m', 'n', dt='f32')}
  %y = ncd.contract %c, %d over [p] : {t('m', 'p')}, {t('n', 'p')} -> {t('m', 'n', dt='f32')}
  %s = ncd.map add %x, %y : {t('m', 'n', dt='f32')}, {t('m', 'n', dt='f32')} -> {t('m', 'n', dt='f32')}
  %w = ncd.contract %e, %g over [k] : {t('m', 'k')}, {t('k', 'q')} -> {t('m', 'q', dt='f32')}
  %wn = ncd.rename %w [q -> n] : {t('m', 'q', dt='f32')} -> {t('m', 'n', dt='f32')}
  %z = ncd.map add %s, %wn : {t('m', 'n', dt='f32')}, {t('m', 'n', dt='f32')} -> {t('m', 'n', dt='f32')}
  %o = ncd.map cast %z : {t('m', 'n', dt='f32')} -> {t('m', 'n')}
  func.return %o : {t('m', 'n')}
}}"""
    program = kernel_program(parse(text))
    assert [p.output for p in program.parts] == ["o"] and program.parts[0].contraction
    assert [m for _, m in program.parts[0].inputs] == ["a", "b", "c", "d", "e", "g"]
    assert program.parts[0].text.count("ncd.contract") == 3 and "ncd.rename" not in program.parts[0].text
    f = the_function(parse(text))
    inputs = _inputs(f, 5)
    assert _relative(evaluate(f, list(inputs.values())), program.evaluate(inputs)) < 1e-12
    for target in ("sm90", "sm80"):
        napkin_ir.compile(program.parts[0].text, target, cache=False)


def test_the_spherical_gradients_dk_is_one_kernel_of_its_three_products():
    """dK = K dG^T + K dG + V dA^T: one kernel reading K once and dG two ways (as it lies,
    and transposed), 11 kernels in all where it was 15 (one more fewer for the norm's
    quadratic form, below), and its numbers survive every level of napkin-sm90 on the CPU
    interpreters."""
    grad = _program(attention_diagram("spherical", b=1, h=2, n=1024, d=64), gradient=True)
    assert len(grad.parts) == 11
    dk = next(p for p in grad.parts if p.output == grad.memory(grad.results[1]))
    assert dk.contraction and [m for _, m in dk.inputs] == ["k", "d_g", "v", "d_a", "d_g"]
    f = the_function(parse(dk.text))
    inputs = [(a / 4).astype(np.float32) for a in _inputs(f, 9).values()]
    (want,) = evaluate(f, inputs)
    module = run_pipeline(dk.text, spec_to_reg(dk.text))
    (got,) = find_entry(module).run(inputs)
    assert float(np.linalg.norm(got - want) / np.linalg.norm(want)) < 1e-2


def spec_to_reg(text: str) -> str:
    """napkin-sm90's passes for `text`, up to the reg level (before reg-to-ptx)."""
    from napkin_ir.passmanager import spec
    from napkin_ir.pipelines import NapkinSm90Pass

    return spec(list(NapkinSm90Pass().passes(parse(text)))[:-1])


def test_reassociation_only_where_it_pays() -> None:
    long = attention_diagram("spherical", b=1, h=2, n=4096, d=128)
    program = reassociated_program(long)
    assert program is not None
    assert program.macs * 16 <= macs(the_function(parse(long)))
    assert program_pays(program, macs(the_function(parse(long))))
    # few keys: the tiled kernel does less
    assert reassociated_program(attention_diagram("spherical", b=1, h=2, n=128, d=128)) is None
    assert reassociated_program(attention_diagram("softmax", b=1, h=2, n=4096, d=128)) is None
    assert reassociated_program(attention_diagram("causal", b=1, h=2, n=4096, d=128)) is None
    # f16 would hold K^T K's sums over 4096 keys to 65504
    assert reassociated_program(attention_diagram("spherical", b=1, h=2, n=4096, d=128, dtype="f16")) is None


@pytest.mark.parametrize("n,d,forward,backward", [
    (1024, 128, False, True), (1024, 64, True, True), (1024, 256, False, True),
    (512, 64, False, False), (512, 128, False, False), (2048, 256, True, True),
])
def test_the_program_where_it_measured_faster(n: int, d: int, forward: bool, backward: bool) -> None:
    """At 16k tokens of 2048 (H200, 2026-12-01): the program where it measured faster than
    the tiled kernel, the tiled kernel where that did; the forward at 1k keys measured
    close either way (192 against 211 us at d=64, 208 against 208 at d=128)."""
    text = attention_diagram("spherical", b=16384 // n, h=2048 // d, n=n, d=d)
    assert (reassociated_program(text) is not None) == forward
    assert (reassociated_program(text, gradient=True) is not None) == backward


def test_a_program_costs_its_bytes_and_kernels() -> None:
    program = reassociated_program(attention_diagram("spherical", b=4, h=16, n=4096, d=128), gradient=True)
    assert program is not None
    nd = 4 * 16 * 4096 * 128 * 2  # an N x d tensor in bf16
    # at least each kernel's N x d output, and Q, K, V and dO read
    assert program.bytes() >= nd * (sum(program.values[p.output].dims[-2] == 4096 for p in program.parts) + 4)
    tiled = macs(the_function(_only_gradient(run_pipeline(attention_diagram("spherical", b=4, h=16, n=4096, d=128), "ncd-grad"))))
    assert program_pays(program, tiled, gradient=True)
    assert not program_pays(program, tiled // 8, gradient=True)


@pytest.mark.parametrize("target,d", [("sm90", 128), ("sm80", 64)])
def test_every_kernel_of_the_programs_compiles_and_assembles(target: str, d: int) -> None:
    ptxas = find_ptxas()
    if ptxas is None:  # the test extras bring the nvidia-cuda-nvcc wheel's
        pytest.skip("no ptxas to assemble the programs' PTX (pip install -e '.[test]')")
    text = attention_diagram("spherical", b=1, h=4, n=2048, d=d)
    for grad in (False, True):
        program = _program(text, gradient=grad)
        for part in program.parts:
            kernel = napkin_ir.compile(part.text, target, cache=False)
            names = [p.arg for p in kernel.contract.params if p.role == "in"]
            assert names == [a for a, _ in part.inputs], part.name
            assert assemble(kernel.ptx, "sm_90a" if target == "sm90" else "sm_80", ptxas)


def test_the_mlp_gradient_is_a_program_of_gemms_and_rows():
    """Nothing in the cut is attention's: the two-layer MLP's whole gradient (relu's mask
    included) is 7 kernels, each compiling on both pipelines, that compute it."""
    text = (EXAMPLES / "mlp.mlir").read_text()
    module = _only_gradient(run_pipeline(text, "ncd-grad,ncd-fold-casts"))
    reference = _function(run_pipeline(text, "ncd-grad"), grad=True)
    program = kernel_program(module)
    assert [p.contraction for p in program.parts] == [True, False, True, True, False, True, True]
    inputs = _inputs(reference, 4)
    assert _relative(evaluate(reference, list(inputs.values())), program.evaluate(inputs)) < 1e-12
    for target in ("sm90", "sm80"):
        for part in program.parts:
            napkin_ir.compile(part.text, target, cache=False)



def test_the_norms_quadratic_form_reads_w_again():
    """dQ's term through W = Q G is dW G^T, dW = Q scaled by rows; G = K^T K is symmetric,
    so it is the scale times W: no product of dW with G, and dQ's kernel reads W (made for
    the forward) instead. The program's numbers still match the gradient in float64 (above,
    `test_program_computes_the_diagram`)."""
    from napkin_ir.plan.program import _gram_axes

    text = attention_diagram("spherical", b=1, h=2, n=1024, d=64)
    grad = _program(text, gradient=True)
    assert not any(p.contraction and {"g", "d_w16"} <= {m for _, m in p.inputs} for p in grad.parts)
    dq = next(p for p in grad.parts if p.output == grad.memory(grad.results[0]))
    assert "w" in {m for _, m in dq.inputs}
    f = the_function(_only_gradient(run_pipeline(text, "ncd-reassociate,ncd-grad,ncd-fold-casts")))
    products = {op.result.name_hint: op for op in f.body.block.ops if op.name == "ncd.contract"}
    assert _gram_axes(products["g"].result) == ("d", "d2")  # K with K renamed d -> d2
    assert _gram_axes(products["a"].result) is None  # K with V: not symmetric
