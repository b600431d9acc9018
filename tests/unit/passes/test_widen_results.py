"""ncd-widen-results keeps the numbers: each widened result, rounded to the 16-bit type the
diagram gave it, is the diagram's result (a GEMM, and the attention gradient's dK)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from napkin_ir.interpreters.run import find_function, random_inputs, run_function
from napkin_ir.interpreters.tensors import round_to
from napkin_ir.passmanager import run_pipeline

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
DK = 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="attention_grad" result=1 cut="delta"}'


@pytest.mark.parametrize("example, derive", [("matmul", ""), ("attention", DK)])
def test_a_widened_result_rounds_to_the_diagrams(example, derive):
    text = (EXAMPLES / f"{example}.mlir").read_text()
    narrow = run_pipeline(text, derive) if derive else run_pipeline(text)
    wide = run_pipeline(text, ",".join(p for p in (derive, "ncd-widen-results") if p))
    f, g = find_function(narrow), find_function(wide)
    assert [t.dtype for t in g.function_type.outputs.data] == ["f32"]
    inputs = random_inputs(f, seed=4)
    (want,) = run_function(narrow, f, inputs)
    (got,) = run_function(wide, g, inputs)
    np.testing.assert_array_equal(round_to(f.function_type.outputs.data[0].dtype, got), want)
