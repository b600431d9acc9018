"""ncd-fold-log2e keeps the numbers: attention's gradient with its probabilities as 2 to the
power (log2 e in the scale and in the statistic) gives the same cotangents in float64 (up
to the f32 roundings of the two constants), and within a rounding through the bf16 interpreter; the row kernel that writes the statistic
in base 2 beside D gives both, in napkin-sm80's and napkin-sm90's PTX in the emulator."""

from __future__ import annotations

import math

import numpy as np
import pytest

from napkin_ir.attention_diagrams import NAMES, RESIDUAL_GRADIENT, ROW_VALUES, attention_diagram, gradient_passes
from napkin_ir.dialects import ncd, ptx
from napkin_ir.interpreters.ptx import HALF, run_kernel
from napkin_ir.interpreters.run import find_entry, find_function, random_inputs, run_function
from napkin_ir.passmanager import run_pipeline
from napkin_ir.reference import TOLERANCE, relative_error
from napkin_ir.reference_eval import evaluate

WITHOUT = RESIDUAL_GRADIENT.replace(",ncd-fold-log2e", "")


def _grad(kind: str, passes: str, n: int = 96, d: int = 64):
    module = run_pipeline(attention_diagram(kind, b=1, h=2, n=n, d=d), passes)
    return module, find_function(module, f"{NAMES[kind]}_grad")


def _fns(f) -> list[str]:
    return [op.fn.data for op in f.walk() if isinstance(op, ncd.MapOp) and op.fn.data in ("exp", "exp2")]


@pytest.mark.parametrize("kind", ["softmax", "causal"])
def test_folded_log2e_keeps_the_gradient(kind):
    assert "ncd-fold-log2e" in RESIDUAL_GRADIENT
    module0, before = _grad(kind, WITHOUT)
    module, after = _grad(kind, RESIDUAL_GRADIENT)
    assert _fns(before) == ["exp"] and _fns(after) == ["exp2"]
    (stat,) = [op for op in after.walk() if isinstance(op, ncd.MapOp) and op.result.name_hint == "lse_log2"]
    assert stat.by.value.data == pytest.approx(math.log2(math.e)) and stat.inputs[0].name_hint == "lse"
    inputs = random_inputs(before, seed=3)
    for want, got in zip(evaluate(before, inputs), evaluate(after, inputs), strict=True):
        assert np.abs(got - want).max() <= 1e-6 * np.abs(want).max()  # the constants are f32
    for want, got in zip(run_function(module0, before, inputs), run_function(module, after, inputs), strict=True):
        assert relative_error(got, want) <= TOLERANCE["bf16"]


def test_spherical_attention_has_no_exp_to_fold():
    """Nothing to fold, so its row kernel gives D alone: as many outputs as ROW_VALUES names."""
    _, f = _grad("spherical", RESIDUAL_GRADIENT)
    assert _fns(f) == []
    rows = find_entry(run_pipeline(attention_diagram("spherical", b=1, h=2, n=96, d=64), gradient_passes("spherical", "delta")))
    assert len(rows.outputs) == len(ROW_VALUES["spherical"]) == 1 and "norm" not in rows.input_names


@pytest.mark.parametrize("pipeline", ["napkin-sm80", "napkin-sm90"])
def test_the_row_kernel_writes_d_and_the_statistic_in_base_2(pipeline):
    """`gradient_passes(kind, "delta")`: one row kernel, D = rowsum(dO * O) and lse log2 e,
    its PTX run in the emulator against float64, over rows the blocks do not divide."""
    text = attention_diagram("softmax", b=1, h=2, n=100, d=64)
    module = run_pipeline(text, gradient_passes("softmax", "delta") + f",{pipeline}")
    diagram = find_entry(run_pipeline(text, gradient_passes("softmax", "delta")))
    assert diagram.name == "attention_grad_delta_lse_log2" and len(diagram.outputs) == 2
    rng = np.random.default_rng(11)
    half = HALF["bf16"]
    given = {"d_o": rng.standard_normal((1, 2, 100, 64)).astype(half), "o": rng.standard_normal((1, 2, 100, 64)).astype(half),
             "lse": rng.standard_normal((1, 2, 100)).astype(np.float32) * 4}
    outs = [np.full((1, 2, 100), np.nan, np.float32) for _ in range(2)]  # poisoned
    (kernel,) = [op for op in module.walk() if isinstance(op, ptx.KernelOp)]
    names = [p.removeprefix(f"{kernel.sym_name.data}_") for p, _ in kernel.param_list()]
    assert names == [*diagram.input_names, "out0", "out1"]
    run_kernel(module, [given[name] for name in names[:-2]] + outs, lazy=True, reverse=True)
    delta = (given["d_o"].astype(np.float64) * given["o"].astype(np.float64)).sum(-1)
    assert relative_error(outs[0], delta) <= TOLERANCE["f32"]
    assert relative_error(outs[1], given["lse"].astype(np.float64) * math.log2(math.e)) <= TOLERANCE["f32"]


@pytest.mark.parametrize("kind,n", [("softmax", 72), ("causal", 80)])
def test_the_statistic_in_base_2_scaled_in_the_kernel_where_no_row_kernel_wrote_it(kind, n):
    """After the fold, `ncd-extract{cut="delta"}` alone: the kernel of dK reads the log-sum-exp
    and scales it itself, on its fragment once a block (`smem-to-reg`), the TMA's stage read
    before that map (`hbm-to-smem`). Every level of both plans, and sm_80's PTX in the
    emulator into a poisoned output, against the diagram."""
    from napkin_ir.plan.recipes import attention
    from tests.unit.lowering.levels import every_level_keeps, gradient_inputs

    text, values = gradient_inputs(kind, n, n, 64, seed=n)
    module = run_pipeline(text, f'{RESIDUAL_GRADIENT},ncd-extract{{function="{NAMES[kind]}_grad" result=1 cut="delta"}}')
    diagram = find_entry(module)
    assert "lse" in diagram.input_names and _fns(find_function(module)) == ["exp2"]
    inputs = [values[name] for name in diagram.input_names]
    want = diagram.run(inputs)
    for kernel_plan in (attention.sm80_plan(module), attention.sm90_plan(module, persistent=False)):
        every_level_keeps(module, kernel_plan, inputs, want)
    ptx_module = run_pipeline(str(module), "napkin-sm80")
    (kernel,) = [op for op in ptx_module.walk() if isinstance(op, ptx.KernelOp)]
    names = [p.removeprefix(f"{kernel.sym_name.data}_") for p, _ in kernel.param_list()]
    half = HALF["bf16"]
    out = np.full(want[0].shape, 0xFFFF, np.uint16).view(half)  # poisoned: NaN
    run_kernel(ptx_module, [*(values[a].astype(half) if a in ("q", "k", "v", "d_o") else values[a] for a in names[:-1]), out],
               lazy=True, reverse=True)
    assert np.isfinite(out.astype(np.float64)).all(), "some output was not written"
    assert relative_error(out, want[0]) <= TOLERANCE["bf16"]
