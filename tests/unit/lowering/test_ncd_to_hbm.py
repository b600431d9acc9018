"""ncd-to-hbm keeps the numbers: the hbm kernel, run block by block on the CPU, computes
what the diagram computes, on random shapes with ragged edges and random tile sizes."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from napkin_ir import reference
from napkin_ir.diagrams import gemm
from napkin_ir.interpreters.run import find_entry
from napkin_ir.passmanager import run_pipeline



def _both(text: str, labels: str, seed: int):
    diagram = find_entry(run_pipeline(text))
    kernel = find_entry(run_pipeline(text, f"ncd-relabel{{{labels}}},ncd-to-hbm"))
    inputs = diagram.random_inputs(seed)
    return inputs, diagram.run(inputs)[0], kernel.run(inputs)[0]


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 70), st.integers(1, 70), st.integers(1, 70), st.sampled_from(["bf16", "f16"]), st.data())
def test_gemm_tiles_keep_the_numbers(m, n, k, t, data):
    tm, tn, tk = data.draw(st.integers(1, m)), data.draw(st.integers(1, n)), data.draw(st.integers(1, k))
    (a, b), diagram, kernel = _both(gemm(m, n, k, t), f'grid="m:{tm},n:{tn}" stream="k:{tk}"', seed=m * n + k)
    assert not np.isnan(kernel).any()  # every output element was written, ragged edges too
    # the kernel sums k in tiles: the same f32 sum in another order, then one rounding to t
    ulp = 2.0**-7 if t == "bf16" else 2.0**-10
    np.testing.assert_allclose(kernel, diagram, rtol=2 * ulp, atol=2 * ulp * np.abs(diagram).max())
    assert reference.relative_error(kernel, reference.matmul(a, b)) <= reference.TOLERANCE[t]


@pytest.mark.parametrize("example", ["attention", "causal_attention", "spherical_attention"])
@pytest.mark.parametrize("labels", ['grid="i:64"', 'grid="b:1,h:3,i:100"', 'grid="h:1,i:17"'])
def test_attention_over_query_tiles_keeps_the_numbers(example, labels):
    from pathlib import Path

    text = (Path(__file__).resolve().parents[3] / "examples" / f"{example}.mlir").read_text()
    (q, k, v), diagram, kernel = _both(text, labels, seed=7)
    assert not np.isnan(kernel).any()
    # no axis is streamed: each block computes its query rows exactly as the diagram does
    np.testing.assert_allclose(kernel, diagram, rtol=2.0**-7, atol=1e-6)
    assert reference.relative_error(kernel, reference.REFERENCES[example](q, k, v)) <= reference.TOLERANCE["bf16"]
