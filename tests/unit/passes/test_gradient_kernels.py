"""A diagram's gradients as kernels of their own: `ncd-grad`, then `ncd-fold-casts` (the
f32 casts of 16-bit operands folded into the contraction) and `ncd-extract` (one result,
the ops and arguments it needs). The numbers survive each step on the CPU interpreter, and
a GEMM's dA and dB compile through both pipelines; dB = A^T dC, a product over A's rows,
runs in the warp-level emulator against float64. A GEMM with an epilogue (C = exp(0.5 A B))
reads its dC in the accumulators' layout, multiplies it by the recomputed C in registers
and takes the product as an operand: dA as the first (`reg.to_a`); dB computed transposed so
that it is the first too (a tile in registers is no product's second operand)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from xdsl.utils.exceptions import PassFailedException

from napkin_ir import reference
from napkin_ir.interpreters.ptx import HALF, run_kernel
from napkin_ir.interpreters.run import find_function, random_inputs, run_function
from napkin_ir.model.ptxas import find_ptxas
from napkin_ir.passmanager import compile_to_ptx, run_pipeline, spec
from napkin_ir.plan.kernel_plan import StorePath
from napkin_ir.target import SM90

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
GRAD = "ncd-grad,ncd-fold-casts"


def _extract(function: str, result: int) -> str:
    return f'{GRAD},ncd-extract{{function="{function}" result={result}}}'


@pytest.mark.parametrize("example,function", [("matmul", "matmul_grad"), ("gemm_bias", "gemm_bias_grad"),
                                              ("two_products", "two_grad"), ("row_softmax", "row_softmax_grad")])
def test_each_extracted_gradient_keeps_the_numbers(example, function):
    text = (EXAMPLES / f"{example}.mlir").read_text()
    whole = run_pipeline(text, "ncd-grad")
    f = find_function(whole, function)
    inputs = random_inputs(f, seed=5)
    expected = run_function(whole, f, inputs)
    names = [a.name_hint for a in f.body.block.args]
    for r, want in enumerate(expected):
        part = run_pipeline(text, _extract(function, r))
        g = find_function(part)
        kept = [inputs[names.index(a.name_hint)] for a in g.body.block.args]
        (got,) = run_function(part, g, kept)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * float(np.abs(want).max() + 1))


def test_folding_the_casts_keeps_the_numbers():
    text = (EXAMPLES / "matmul.mlir").read_text()
    before, after = run_pipeline(text, "ncd-grad"), run_pipeline(text, GRAD)
    f, g = find_function(before, "matmul_grad"), find_function(after, "matmul_grad")
    inputs = random_inputs(f, seed=9)
    for x, y in zip(run_function(before, f, inputs), run_function(after, g, inputs)):
        np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-6 * float(np.abs(x).max()))


def test_the_gemm_gradients_run_in_the_emulator():
    m, n, k = 136, 200, 72
    text = (f"func.func @mm(%a: !ncd.tensor<m={m}, k={k} : bf16>, %b: !ncd.tensor<k={k}, n={n} : bf16>) -> !ncd.tensor<m={m}, n={n} : bf16> {{\n"
            f"  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m={m}, k={k} : bf16>, !ncd.tensor<k={k}, n={n} : bf16> -> !ncd.tensor<m={m}, n={n} : bf16>\n"
            f"  func.return %c : !ncd.tensor<m={m}, n={n} : bf16>\n}}\n")
    half = HALF["bf16"]
    rng = np.random.default_rng(2)
    a, b, dc = (rng.standard_normal(s).astype(half) for s in ((m, k), (k, n), (m, n)))
    for result, args, want in ((0, (b, dc), dc.astype(np.float64) @ b.astype(np.float64).T),
                               (1, (a, dc), a.astype(np.float64).T @ dc.astype(np.float64))):
        module = run_pipeline(text, _extract("mm_grad", result) + ",napkin-sm80")
        out = np.full(want.shape, 0xFFFF, np.uint16).view(half)  # poisoned: NaN
        run_kernel(module, [*args, out], lazy=True, reverse=True)
        assert np.isfinite(out.astype(np.float64)).all(), "some output was not written"
        assert reference.relative_error(out, want) <= reference.TOLERANCE["bf16"]


@pytest.mark.parametrize("pipeline", ["napkin-sm80", "napkin-sm90"])
@pytest.mark.parametrize("result", [0, 1])
def test_the_gemm_gradients_compile_on_both_targets(pipeline, result):
    ptx = compile_to_ptx((EXAMPLES / "matmul.mlir").read_text(), f"{_extract('matmul_grad', result)},{pipeline}")
    assert (".entry matmul_grad_a" if result == 0 else ".entry matmul_grad_b") in ptx


def test_a_kernel_compiled_with_its_derivation_has_the_gradients_parameters():
    from napkin_ir.build import compile_kernel

    kernel = compile_kernel((EXAMPLES / "matmul.mlir").read_text(), f"{_extract('matmul_grad', 1)},napkin-sm90")
    assert [(p.arg, p.shape) for p in kernel.contract.params] == [("a", (512, 256)), ("d_c", (512, 384)), ("out", (256, 384))]


def test_the_mlp_input_gradient_runs_in_the_emulator():
    """dX of the MLP (its ReLU's gradient a `ge` mask in registers, then a product with
    W1) through napkin-sm80, in the warp-level emulator, against the extracted diagram."""
    text = (EXAMPLES / "mlp.mlir").read_text()
    part = run_pipeline(text, _extract("mlp_grad", 0))
    g = find_function(part)
    inputs = random_inputs(g, seed=3)
    (want,) = run_function(part, g, inputs)
    module = run_pipeline(text, _extract("mlp_grad", 0) + ",napkin-sm80")
    half = HALF["bf16"]
    out = np.full(want.shape, 0xFFFF, np.uint16).view(half)  # poisoned: NaN
    run_kernel(module, [x.astype(half) for x in inputs] + [out], lazy=True, reverse=True)
    assert np.isfinite(out.astype(np.float64)).all(), "some output was not written"
    assert reference.relative_error(out, want) <= reference.TOLERANCE["bf16"]
    assert ".entry mlp_grad_x" in compile_to_ptx(text, _extract("mlp_grad", 0) + ",napkin-sm90")


def _gemm_exp_inputs(g) -> list[np.ndarray]:
    """Random A, B scaled so that exp(0.5 A B) stays within a few units, and dC."""
    a, b, dc = random_inputs(g, seed=3)
    return [(a * 0.2).astype(a.dtype), (b * 0.2).astype(b.dtype), dc]


@pytest.mark.parametrize("result", [0, 1])
def test_the_gemm_exp_gradients_run_in_the_emulator(result):
    """dA = (dC * C) B^T and dB = A^T (dC * C) of C = exp(0.5 A B): dC read from its stage
    into the accumulators' lanes (transposed for dB, whose block recomputes C^T), through
    napkin-sm80 in the warp-level emulator, against the extracted diagram."""
    text = (EXAMPLES / "gemm_exp.mlir").read_text()
    part = run_pipeline(text, _extract("gemm_exp_grad", result))
    g = find_function(part)
    inputs = _gemm_exp_inputs(g)
    (want,) = run_function(part, g, inputs)
    module = run_pipeline(text, _extract("gemm_exp_grad", result) + ",napkin-sm80")
    half = HALF["bf16"]
    out = np.full(want.shape, 0xFFFF, np.uint16).view(half)  # poisoned: NaN
    run_kernel(module, [x.astype(half) for x in inputs] + [out], lazy=True, reverse=True)
    assert np.isfinite(out.astype(np.float64)).all(), "some output was not written"
    assert reference.relative_error(out, want) <= reference.TOLERANCE["bf16"]


def test_a_product_in_registers_as_a_second_operand_is_refused_with_the_way_out():
    """dB with the warps splitting both of the block's axes would take dC * C, computed in
    registers, as its second operand, which no product lowering takes: refused, naming the
    warp split under which the product is computed transposed instead."""
    with pytest.raises(PassFailedException, match="split the warps along the output's columns alone"):
        run_pipeline((EXAMPLES / "gemm_exp.mlir").read_text(), f"{_extract('gemm_exp_grad', 1)},"
                     'ncd-relabel{grid="n:128" stream="m:64"},ncd-to-hbm,hbm-to-smem{layout=pad8},smem-to-reg{warps="n:4,k:2"}')


@pytest.mark.skipif(find_ptxas() is None, reason="ptxas not installed")
@pytest.mark.parametrize("pipeline,arch,result", [("napkin-sm80", "sm_80", 0), ("napkin-sm80", "sm_80", 1), ("napkin-sm90", "sm_90a", 0)])
@pytest.mark.parametrize("residuals", [False, True])
def test_the_gemm_exp_gradients_assemble(tmp_path, pipeline, arch, result, residuals):
    grad = "ncd-grad{residuals=true},ncd-fold-casts" if residuals else GRAD
    ptx = compile_to_ptx((EXAMPLES / "gemm_exp.mlir").read_text(),
                         f'{grad},ncd-extract{{function="gemm_exp_grad" result={result}}},{pipeline}')
    path = tmp_path / "k.ptx"
    path.write_text(ptx)
    report = subprocess.run([find_ptxas(), "-v", f"-arch={arch}", str(path), "-o", str(tmp_path / "k.cubin")],
                            capture_output=True, text=True)
    assert report.returncode == 0, report.stderr
    assert " 0 bytes spill stores" in report.stderr


def test_the_gemm_exp_weight_gradient_compiles_on_wgmma(tmp_path):
    """dB = A^T (dC * C): napkin-sm90 computes it transposed, so that dC * C, computed in
    registers, is wgmma's A; dC's stage, TMA-swizzled panels, is read into the
    accumulators' lanes across its rows (ldmatrix.trans through the swizzle, a warp's
    columns in either panel). The numbers survive at the register level; the PTX
    assembles for sm_90a without spills."""
    text = (EXAMPLES / "gemm_exp.mlir").read_text()
    part = run_pipeline(text, _extract("gemm_exp_grad", 1))
    g = find_function(part)
    inputs = _gemm_exp_inputs(g)
    (want,) = run_function(part, g, inputs)
    _sm90_registers(text, "gemm_exp_grad", 1, inputs, want)
    ptx = compile_to_ptx(text, f"{_extract('gemm_exp_grad', 1)},napkin-sm90")
    assert "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in ptx
    assert " 0 bytes spill stores" in _assembles(ptx, "sm_90a", tmp_path)


def _reference(text: str, function: str, result: int, seed: int):
    """The extracted gradient kernel's diagram, random inputs for it and its result on the CPU."""
    part = run_pipeline(text, _extract(function, result))
    g = find_function(part)
    inputs = random_inputs(g, seed=seed)
    (want,) = run_function(part, g, inputs)
    return inputs, want


def _emulated(text: str, function: str, result: int, inputs, want) -> None:
    """napkin-sm80's PTX of the kernel in the warp-level emulator, against `want`."""
    module = run_pipeline(text, _extract(function, result) + ",napkin-sm80")
    half = HALF["bf16"]
    out = np.full(want.shape, 0xFFFF, np.uint16).view(half)  # poisoned: NaN
    run_kernel(module, [x.astype(half) for x in inputs] + [out], lazy=True, reverse=True)
    assert np.isfinite(out.astype(np.float64)).all(), "some output was not written"
    assert reference.relative_error(out, want) <= reference.TOLERANCE["bf16"]


def _sm90_registers(text: str, function: str, result: int, inputs, want):
    """napkin-sm90's plan of the kernel down to the register level, run on the CPU
    interpreter (the emulator runs no wgmma), against `want`; the plan."""
    from napkin_ir.interpreters.run import find_entry
    from napkin_ir.pipelines import NapkinSm90Pass

    plan = NapkinSm90Pass().plan(run_pipeline(text, _extract(function, result)))
    module = run_pipeline(text, f"{_extract(function, result)},{spec(plan.passes('reg'))}")
    (out,) = find_entry(module).run(inputs)
    assert not np.isnan(out).any()
    assert reference.relative_error(out, want) <= reference.TOLERANCE["bf16"]
    return plan


def _assembles(ptx: str, arch: str, tmp_path) -> str:
    ptxas = find_ptxas()
    assert ptxas is not None, "ptxas (the test extra's nvidia-cuda-nvcc) is needed"
    path = tmp_path / f"{arch}.ptx"
    path.write_text(ptx)
    report = subprocess.run([ptxas, "-v", f"-arch={arch}", str(path), "-o", str(tmp_path / f"{arch}.cubin")], capture_output=True, text=True)
    assert report.returncode == 0, report.stderr
    return report.stderr


def test_the_sum_of_two_products_fits_its_stages_on_sm90(tmp_path):
    """dA of two products (dC1 B1^T + dC2 B2^T) streams four operands' tiles, not a GEMM's
    two: napkin-sm90 takes the stages that fit (three of 64 KiB), where four were planned
    and hbm-to-smem refused them; its TMA store's panels fit beside them (one output). The
    numbers survive on sm_80 in the emulator and on sm_90a at the register level."""
    text = (EXAMPLES / "two_products.mlir").read_text()
    inputs, want = _reference(text, "two_grad", 0, seed=4)
    _emulated(text, "two_grad", 0, inputs, want)
    plan = _sm90_registers(text, "two_grad", 0, inputs, want)
    assert (plan.stages, plan.store, plan.smem_bytes) == (3, StorePath.TMA, SM90.smem_per_block() - 1024 - 16 * 3)
    for pipeline, arch in (("napkin-sm80", "sm_80"), ("napkin-sm90", "sm_90a")):
        _assembles(compile_to_ptx(text, f"{_extract('two_grad', 0)},{pipeline}"), arch, tmp_path)


def test_the_mlp_second_weight_gradient_reads_its_m_major_a_from_shared_memory(tmp_path):
    """dW2 = relu(X W1)^T dY holds W1 [k, h] for its block's rows h: the first product's A
    is M-major, which ldmatrix cannot load from a 128-byte swizzle, so napkin-sm90 leaves
    it in shared memory for wgmma's transpose bit (q_registers=true is refused, naming
    why). The numbers survive on sm_80 in the emulator and on sm_90a at the register level."""
    text = (EXAMPLES / "mlp.mlir").read_text()
    inputs, want = _reference(text, "mlp_grad", 2, seed=6)
    _emulated(text, "mlp_grad", 2, inputs, want)
    assert not _sm90_registers(text, "mlp_grad", 2, inputs, want).a_registers
    _assembles(compile_to_ptx(text, f"{_extract('mlp_grad', 2)},napkin-sm80"), "sm_80", tmp_path)
    ptx = compile_to_ptx(text, f"{_extract('mlp_grad', 2)},napkin-sm90")
    assert "ldmatrix" not in ptx and ", 1, 1, 1, 0;" in ptx  # wgmma: scale A and B by 1, A transposed, B not
    _assembles(ptx, "sm_90a", tmp_path)
    with pytest.raises(PassFailedException, match=r"q_registers=true .*\(M-major\)"):
        compile_to_ptx(text, f"{_extract('mlp_grad', 2)},napkin-sm90{{q_registers=true}}")


def test_the_mlp_first_weight_gradient_computes_its_product_transposed(tmp_path):
    """dW1 = X^T dH [k, h], dH = (dY W2^T) relu'(X W1) a tile computed in registers with the
    block's rows h: its product is computed transposed, as h x k (the fragment's rows are
    those the warps split), so that dH is its A from registers as attention's P is, and X
    its B from shared memory; the accumulators leave transposed, from registers (TMA
    stores' stmatrix writes rows of the output's panels). The numbers survive on sm_80 in
    the emulator and on sm_90a at the register level."""
    text = (EXAMPLES / "mlp.mlir").read_text()
    inputs, want = _reference(text, "mlp_grad", 1, seed=8)
    _emulated(text, "mlp_grad", 1, inputs, want)
    assert _sm90_registers(text, "mlp_grad", 1, inputs, want).store is StorePath.DIRECT
    _assembles(compile_to_ptx(text, f"{_extract('mlp_grad', 1)},napkin-sm80"), "sm_80", tmp_path)
    _assembles(compile_to_ptx(text, f"{_extract('mlp_grad', 1)},napkin-sm90"), "sm_90a", tmp_path)
    with pytest.raises(PassFailedException, match=r"store=tma .* holds them innermost"):
        compile_to_ptx(text, f"{_extract('mlp_grad', 1)},napkin-sm90{{store=tma}}")


def test_a_vector_of_the_rows_does_not_keep_q_out_of_registers():
    """The attention gradient's dQ reads the log-sum-exp [b, h, i], which ends in its rows i
    but is no tile of A: Q stays in registers, as before."""
    from napkin_ir.pipelines import NapkinSm90Pass

    part = run_pipeline((EXAMPLES / "attention.mlir").read_text(),
                        'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="attention_grad" result=0 cut="delta"}')
    assert NapkinSm90Pass().plan(part).a_registers


def _emulate_gradient(text: str, function: str, result: int, *, residuals: bool = True, seed: int = 3) -> None:
    """One cotangent of `text`'s gradient (with the forward's residuals, or recomputing)
    through napkin-sm80 in the warp-level emulator, its output poisoned, against the
    extracted diagram on the CPU interpreter; it also compiles for napkin-sm90."""
    grad = "ncd-grad{residuals=true},ncd-fold-casts" if residuals else GRAD
    extract = f'{grad},ncd-extract{{function="{function}" result={result}}}'
    part = run_pipeline(text, extract)
    g = find_function(part)
    inputs = random_inputs(g, seed=seed)
    (want,) = run_function(part, g, inputs)
    dtypes = [a.type.dtype for a in g.body.block.args]
    (out_type,) = g.function_type.outputs.data
    module = run_pipeline(text, extract + ",napkin-sm80")
    if out_type.dtype == "f32":
        out = np.full(want.shape, np.nan, np.float32)
    else:
        out = np.full(want.shape, 0xFFFF, np.uint16).view(HALF[out_type.dtype])  # NaN
    run_kernel(module, [x.astype(HALF[d]) if d in HALF else x.astype(np.float32) for x, d in zip(inputs, dtypes)] + [out],
               lazy=True, reverse=True)
    assert np.isfinite(out.astype(np.float64)).all(), "some output was not written"
    assert reference.relative_error(out, want) <= reference.TOLERANCE[out_type.dtype]
    assert f".entry {g.sym_name.data}" in compile_to_ptx(text, extract + ",napkin-sm90")


def _row_softmax(rows: int, cols: int) -> str:
    x, x32 = f"!ncd.tensor<i={rows}, j={cols} : bf16>", f"!ncd.tensor<i={rows}, j={cols} : f32>"
    return (f"func.func @row_softmax(%x: {x}) -> {x} {{\n  %x32 = ncd.map cast %x : {x} -> {x32}\n"
            f"  %p = ncd.softmax %x32 along j scale 1.0 : {x32} -> {x32}\n  %o = ncd.map cast %p : {x32} -> {x}\n"
            f"  func.return %o : {x}\n}}\n")


@pytest.mark.parametrize("residuals", [True, False])
@pytest.mark.parametrize("rows,cols", [(37, 768), (40, 64), (6, 1024)])
def test_the_row_softmax_gradient_runs_in_the_emulator(rows, cols, residuals):
    """dX = P (dY - rowsum(dY P)), P recomputed from X and the forward's log-sum-exp (a
    statistic of the rows, read straight into registers) or from X alone, on rows that no
    block divides and rows shorter than a warp's 256 columns."""
    _emulate_gradient(_row_softmax(rows, cols), "row_softmax_grad", 0, residuals=residuals)


def _gemm_bias(m: int, n: int, k: int) -> str:
    a, b, c, c32 = (f"!ncd.tensor<m={m}, k={k} : bf16>", f"!ncd.tensor<k={k}, n={n} : bf16>", f"!ncd.tensor<m={m}, n={n} : bf16>",
                    f"!ncd.tensor<m={m}, n={n} : f32>")
    return (f"func.func @gemm_bias(%a: {a}, %b: {b}, %bias: !ncd.tensor<n={n} : f32>) -> {c} {{\n"
            f"  %c = ncd.contract %a, %b over [k] : {a}, {b} -> {c32}\n"
            f"  %y = ncd.map add %c, %bias : {c32}, !ncd.tensor<n={n} : f32> -> {c32}\n"
            f"  %o = ncd.map cast %y : {c32} -> {c}\n  func.return %o : {c}\n}}\n")


@pytest.mark.parametrize("m,n", [(256, 192), (100, 200), (70, 24), (9, 1040)])
def test_the_bias_gradient_runs_in_the_emulator(m, n):
    """d bias = the sum of dC's rows: a reduction down the columns, the columns tiled over
    the grid and split over the warps, the rows streamed; on rows no stage divides and
    columns no block divides."""
    _emulate_gradient(_gemm_bias(m, n, 32), "gemm_bias_grad", 2)


def _attention_delta(i: int, d: int) -> str:
    t, t32 = f"!ncd.tensor<h=2, i={i}, d={d} : bf16>", f"!ncd.tensor<h=2, i={i}, d={d} : f32>"
    return (f"func.func @attention_delta(%o: {t}, %d_o: {t}) -> !ncd.tensor<h=2, i={i} : f32> {{\n"
            f"  %o32 = ncd.map cast %o : {t} -> {t32}\n  %d_o32 = ncd.map cast %d_o : {t} -> {t32}\n"
            f"  %p = ncd.map mul %d_o32, %o32 : {t32}, {t32} -> {t32}\n"
            f"  %delta = ncd.reduce sum %p along [d] : {t32} -> !ncd.tensor<h=2, i={i} : f32>\n"
            f"  func.return %delta : !ncd.tensor<h=2, i={i} : f32>\n}}\n")


@pytest.mark.parametrize("result", [0, 1])
@pytest.mark.parametrize("i,d", [(50, 64), (24, 128)])
def test_the_row_statistic_gradient_runs_in_the_emulator(i, d, result):
    """The gradient of D = rowsum(dO * O): dO's cotangent times O (and O's times dO), D's
    cotangent broadcast along the columns: maps alone, with a constant and a statistic of
    the rows."""
    _emulate_gradient(_attention_delta(i, d), "attention_delta_grad", result)
