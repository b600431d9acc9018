"""ncd-to-hbm keeps the numbers: the hbm kernel, run block by block on the CPU, computes
what the diagram computes, on random shapes with ragged edges and random tile sizes."""

import re

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


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 60), st.integers(1, 60), st.integers(2, 300), st.data())
def test_split_sums_keep_the_numbers(m, n, k, data):
    """A contraction axis split over the grid: each block sums its part of k (streamed, or
    whole in the block) and adds it into the f32 output, which the blocks leave whole."""
    tk = data.draw(st.integers(1, 32))
    part = tk * data.draw(st.integers(1, max(1, k // tk)))
    streamed = data.draw(st.booleans())
    labels = f'grid="m:16,n:16,k:{part}"' + (f' stream="k:{tk}"' if streamed else "")
    (a, b), diagram, kernel = _both(gemm(m, n, k, "bf16", out_dtype="f32"), labels, seed=m + n * k)
    assert not np.isnan(kernel).any()
    # f32 sums in another order differ by roundings of the terms summed, not of the sum: a
    # one-element output whose terms cancel (1x1x260: 0.0425 of terms summing to 168 in
    # magnitude) is 3e-5 off relative to itself; an output rounded to bf16 (2^-9 relative)
    # is caught wherever its terms do not cancel
    for want in (diagram, reference.matmul(a, b)):
        allowed = 1e-5 * np.abs(want) + 2.0**-22 * reference.matmul(np.abs(a), np.abs(b))
        assert (np.abs(kernel - want) <= allowed).all(), float((np.abs(kernel - want) - allowed).max())


@pytest.mark.parametrize("labels", ['grid="m:16,n:16,k:64" stream="k:32"', 'grid="m:16,n:16,k:64"', 'grid="k:48" stream="k:16"'])
@pytest.mark.parametrize("t", ["bf16", "f16"])
def test_a_split_sum_into_a_16_bit_output_is_rounded_once(t, labels):
    """The blocks' f32 parts summed, then the whole sum rounded to the 16-bit output: what the
    diagram computes (an f32 sum in another order, one rounding)."""
    (a, b), diagram, kernel = _both(gemm(40, 40, 200, t), labels, seed=3)
    assert not np.isnan(kernel).any()
    ulp = 2.0**-7 if t == "bf16" else 2.0**-10
    np.testing.assert_allclose(kernel, diagram, rtol=2 * ulp, atol=2 * ulp * np.abs(diagram).max())


def test_what_a_split_cannot_sum_is_refused():
    """A sum split over the grid that some op uses before it is returned (here scaled): each
    block has only its part, which the op would not add up."""
    from pathlib import Path

    from xdsl.utils.exceptions import PassFailedException

    text = (Path(__file__).resolve().parents[3] / "examples" / "gemm_exp.mlir").read_text()
    with pytest.raises(PassFailedException, match=re.escape("must be a result of the function, in f32 as it is or rounded to 16 bits once")):
        run_pipeline(text, 'ncd-relabel{grid="m:64,n:64,k:64"},ncd-to-hbm')
