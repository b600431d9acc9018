"""`diagrams.scaled` (out = scale * x, rounded to a narrower type: maps alone, the
attention backward's dQ on its way out of f32) compiles as a rows kernel on napkin-sm80 and
napkin-sm90 and keeps its numbers: every level of each plan on the CPU interpreters, the PTX
in the warp-level emulator with a poisoned output (rows that no block divides), each the
same bits as numpy's f32 product rounded to nearest even; its PTX assembles without spills.
`napkin_ir.torch.scaled_kernel` picks the longest rows that the elements fill."""

from __future__ import annotations

import numpy as np
import pytest

from napkin_ir.diagrams import scaled
from napkin_ir.errors import BadArgument
from napkin_ir.interpreters.ptx import HALF, run_kernel
from napkin_ir.interpreters.run import find_entry
from napkin_ir.model.ptxas import find_ptxas, ptxas_resources
from napkin_ir.passmanager import compile_to_ptx, run_pipeline, spec
from napkin_ir.pipelines import NapkinSm80Pass, NapkinSm90Pass

PIPELINES = {"napkin-sm80": NapkinSm80Pass(), "napkin-sm90": NapkinSm90Pass()}
SCALE = 0.08838834764831845  # 1 / sqrt(128): not a power of two, so the product rounds
SHAPES = [(37, 128), (200, 64), (70, 8), (1000, 16)]


def _want(x: np.ndarray, out_dtype: str) -> np.ndarray:
    """The f32 product (as the kernel's `mul.f32`), rounded to nearest even."""
    y = np.float32(SCALE) * np.asarray(x, np.float32)
    return y if out_dtype == "f32" else y.astype(HALF[out_dtype])


@pytest.mark.parametrize("pipeline", PIPELINES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("out_dtype", ["bf16", "f16", "f32"])
def test_every_level_gives_the_rounded_product(shape, pipeline, out_dtype):
    text = scaled(*shape, SCALE, "f32", out_dtype)
    x = find_entry(run_pipeline(text)).random_inputs(3)
    want = _want(x[0], out_dtype)
    plan = PIPELINES[pipeline].plan(run_pipeline(text))
    for level in ("hbm", "smem", "reg"):
        got = np.asarray(find_entry(run_pipeline(text, spec(plan.passes(level)))).run(x)[0])
        assert np.array_equal(got.astype(np.float64), want.astype(np.float64)), level


@pytest.mark.parametrize("pipeline", PIPELINES)
@pytest.mark.parametrize("shape", SHAPES)
def test_the_ptx_gives_the_rounded_product(shape, pipeline):
    rows, cols = shape
    module = run_pipeline(scaled(rows, cols, SCALE), pipeline)
    x = (3 * np.random.default_rng(8).standard_normal(shape)).astype(np.float32)
    out = np.full(shape, 0xFFFF, np.uint16).view(HALF["bf16"])  # NaN
    run_kernel(module, [x, out], lazy=True, reverse=True)
    assert np.array_equal(out.astype(np.float64), _want(x, "bf16").astype(np.float64))


@pytest.mark.skipif(find_ptxas() is None, reason="ptxas not installed")
@pytest.mark.parametrize("pipeline,arch", [("napkin-sm80", "sm_80"), ("napkin-sm90", "sm_90a")])
@pytest.mark.parametrize("shape", [(262144, 128), (1000, 8)])
def test_the_ptx_assembles_without_spills(shape, pipeline, arch):
    ptx = compile_to_ptx(scaled(*shape, SCALE), pipeline)
    assert f".target {arch}" in ptx and "cvt.rn.bf16x2.f32" in ptx
    (res,) = ptxas_resources(ptx, arch).values()
    assert not res.spills and res.stack_bytes == 0, res


@pytest.mark.parametrize("args,message", [((0, 128, 1.0), "rows"), ((4, 128, float("nan")), "scale must be a finite number"),
                                          ((4, 128, 1.0, "f64"), "dtype")])
def test_bad_arguments_are_named(args, message):
    with pytest.raises(BadArgument, match=message):
        scaled(*args)


def test_the_op_picks_the_longest_rows_the_elements_fill():
    nt = pytest.importorskip("napkin_ir.torch")
    for n, cols in ((4 * 16 * 4096 * 128, 128), (64 * 3, 64), (8 * 3, 8)):
        kernel = nt.scaled_kernel(n, SCALE, "f32", "bf16", (9, 0))
        assert kernel.contract.param("x").shape == (n // cols, cols)
        assert kernel.contract.target == "sm_90a"
    assert nt.scaled_kernel(12, SCALE, "f32", "bf16", (9, 0)) is None  # no whole row of 8
    assert nt.scaled_kernel(8 * 5, SCALE, "f32", "bf16", (8, 0)).contract.target == "sm_80"
