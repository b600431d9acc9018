"""A GEMM with a bias keeps its numbers at every level, on both pipelines.

The bias (a vector per column or per row, f32 or bf16 cast to f32, relu or not after it)
stays in global memory through hbm-to-smem and is read into `col` or `row` fragments by
reg.load: the hbm, smem and reg levels of napkin-sm80's and napkin-sm90's pass lists,
run by the CPU interpreters, give the diagram's own numbers on ragged shapes (no tile
divides M = 200 or N = 136; K = 104, as the 16-byte copies need a multiple of 8) and
even ones; the sm_80 PTX, in the warp-level emulator, matches float64.
"""

from __future__ import annotations

import numpy as np
import pytest

from napkin_ir import reference
from napkin_ir.diagrams import gemm
from napkin_ir.interpreters.ptx import HALF
from napkin_ir.passmanager import run_pipeline
from tests.unit.lowering.levels import PIPELINES, emulated, every_pipeline_level_keeps

RAGGED, EVEN = (200, 136, 104), (256, 256, 128)
EPILOGUES = {  # name: gemm()'s epilogue options
    "col": {"bias": "n"},
    "row": {"bias": "m"},
    "col_bf16_relu": {"bias": "n", "bias_dtype": "bf16", "relu": True},
    "row_f16_relu": {"bias": "m", "bias_dtype": "f16", "relu": True},
}


def _text(shape, epilogue: str) -> str:
    return gemm(*shape, name="gemm_bias", **EPILOGUES[epilogue])


@pytest.mark.parametrize("pipeline", sorted(PIPELINES))
@pytest.mark.parametrize("shape,epilogue", [(RAGGED, e) for e in EPILOGUES] + [(EVEN, "col_bf16_relu"), (EVEN, "row")])
def test_every_level_gives_the_diagrams_numbers(pipeline, shape, epilogue):
    got = every_pipeline_level_keeps(_text(shape, epilogue), pipeline, sum(shape))
    np.testing.assert_array_equal(got["smem"], got["hbm"])  # the same tiles, summed in the same order
    if epilogue.endswith("relu"):
        assert (got["reg"] >= 0).all() and (got["reg"] == 0).any()


def _bias_reference(a, b, bias, epilogue: str) -> np.ndarray:
    c = reference.matmul(a, b)
    v = np.asarray(bias, np.float64)
    y = c + (v[None, :] if EPILOGUES[epilogue]["bias"] == "n" else v[:, None])
    return np.maximum(y, 0) if EPILOGUES[epilogue].get("relu") else y


@pytest.mark.parametrize("pipeline", ["napkin-sm80", 'napkin-sm80{block="64,64,32" warps="2,2" stages=2}'])
@pytest.mark.parametrize("shape,epilogue", [(RAGGED, "col"), (RAGGED, "row"), (RAGGED, "col_bf16_relu"), (RAGGED, "row_f16_relu"),
                                            (EVEN, "col_bf16_relu")])
def test_sm80_ptx_matches_float64(pipeline, shape, epilogue):
    """The PTX in the warp-level emulator (copies landing as late as allowed, warps in
    reverse order), its output poisoned: the guarded loads at the ragged edges read the
    bias right and nothing past it."""
    m, n, k = shape
    module = run_pipeline(_text(shape, epilogue), pipeline)
    rng = np.random.default_rng(17)
    half = HALF["bf16"]
    a, b = rng.standard_normal((m, k)).astype(half), rng.standard_normal((k, n)).astype(half)
    dtype = EPILOGUES[epilogue].get("bias_dtype", "f32")
    bias = rng.standard_normal(n if EPILOGUES[epilogue]["bias"] == "n" else m).astype(HALF.get(dtype, np.float32))
    out = emulated(module, [a, b, bias], (m, n))
    assert reference.relative_error(out, _bias_reference(a, b, bias, epilogue)) <= reference.TOLERANCE["bf16"]


@pytest.mark.parametrize("target", ["sm80", "sm90"])
def test_compile_takes_the_bias_as_a_pointer(target):
    """Beside cp.async's pointers or the TMA's tensor maps, the bias is a pointer."""
    import napkin_ir

    kernel = napkin_ir.compile(_text(RAGGED, "col"), target=target, cache=False)
    assert kernel.arg_names() == ["a", "b", "bias", "out"]
    bias = kernel.contract.param("bias")
    assert (bias.kind, bias.role, bias.dtype, bias.axes, bias.shape) == ("pointer", "in", "f32", ("n",), (136,))


@pytest.mark.parametrize("pipeline", sorted(PIPELINES))
def test_a_bias_scaled_on_its_own_keeps_the_numbers(pipeline):
    """`bias * 2` before the add: a map of the vector alone, computed on its fragment where
    the add reads it. Every level of both pipelines, and sm_80's PTX in the emulator against
    float64 (ragged: the guarded load before the multiply)."""
    m, n, k = RAGGED
    text = _text(RAGGED, "col").replace(
        "%y = ncd.map add %c, %bias",
        f"%b2 = ncd.map scale %bias by 2.0 : !ncd.tensor<n={n} : f32> -> !ncd.tensor<n={n} : f32>\n  %y = ncd.map add %c, %b2")
    assert "%b2" in text
    every_pipeline_level_keeps(text, pipeline, 7)
    if pipeline == "napkin-sm80":
        rng = np.random.default_rng(19)
        half = HALF["bf16"]
        a, b = rng.standard_normal((m, k)).astype(half), rng.standard_normal((k, n)).astype(half)
        bias = rng.standard_normal(n).astype(np.float32)
        out = emulated(run_pipeline(text, pipeline), [a, b, bias], (m, n))
        assert reference.relative_error(out, _bias_reference(a, b, 2 * bias.astype(np.float64), "col")) <= reference.TOLERANCE["bf16"]
