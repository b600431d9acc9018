"""ncd-to-hbm with a streamed axis under a softmax, an L2 norm, a sum or a max keeps the
numbers: the hbm kernel, run block by block on the CPU, computes what the diagram
computes and what float64 numpy computes, on shapes with ragged ends and several tile
sizes; causal kernels read no key tile above the diagonal."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from napkin_ir import reference
from napkin_ir.interpreters import hbm as hbm_interpreter
from napkin_ir.interpreters.run import find_entry
from napkin_ir.passmanager import run_pipeline

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
ATTENTION = ["attention", "causal_attention", "spherical_attention"]
ULP = {"bf16": 2.0**-8, "f16": 2.0**-11, "f32": 2.0**-24}


def attention_diagram(example: str, b: int, h: int, n: int, m: int, d: int, t: str = "bf16") -> str:
    """An example diagram at another shape: n queries, m keys, head dim d, element type t."""
    text = (EXAMPLES / f"{example}.mlir").read_text()
    for old, new in (("b=2", f"b={b}"), ("h=4", f"h={h}"), ("i=256", f"i={n}"), ("j=256", f"j={m}"), ("d=64", f"d={d}"), ("bf16", t)):
        assert old in text, old
        text = text.replace(old, new)
    return text.replace("scale 0.125", f"scale {float(1 / np.sqrt(d))!r}")


def run_both(text: str, labels: str, seed: int):
    """Random inputs, the diagram's outputs and the kernel's outputs on them."""
    diagram = find_entry(run_pipeline(text))
    kernel = find_entry(run_pipeline(text, f"ncd-relabel{{{labels}}},ncd-to-hbm"))
    inputs = diagram.random_inputs(seed)
    return inputs, diagram.run(inputs), kernel.run(inputs)


# (b, h, n queries, m keys, d), (query tile, key tile): ragged on either side, tiles from 1
# key to the whole axis, more queries than keys and fewer
CASES = [
    ((1, 2, 37, 53, 16), (16, 8)),
    ((2, 1, 64, 64, 32), (32, 16)),
    ((1, 1, 20, 70, 8), (8, 64)),
    ((1, 1, 70, 20, 8), (64, 8)),
    ((1, 1, 33, 33, 16), (33, 33)),
    ((1, 1, 5, 9, 4), (2, 1)),
]


@pytest.mark.parametrize("example", ATTENTION)
@pytest.mark.parametrize("t", ["bf16", "f16"])
@pytest.mark.parametrize("shape,tiles", CASES, ids=[f"n{s[2]}-m{s[3]}-ti{ti}-tj{tj}" for s, (ti, tj) in CASES])
def test_streamed_attention_keeps_the_numbers(example, t, shape, tiles):
    (ti, tj) = tiles
    text = attention_diagram(example, *shape, t=t)
    (q, k, v), (diagram,), (kernel,) = run_both(text, f'grid="b,h,i:{ti}" stream="j:{tj}"', seed=sum(shape) + ti)
    assert not np.isnan(kernel).any()  # every query row was stored, no key past the end leaked a NaN
    # the kernel rounds the unnormalised weights where the diagram rounds the normalised
    # ones: a few units in the last place of t apart, well inside the reference's bound
    assert reference.relative_error(kernel, diagram) <= 8 * ULP[t]
    assert reference.relative_error(kernel, reference.REFERENCES[example](q, k, v)) <= reference.TOLERANCE[t]


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(ATTENTION), st.integers(1, 40), st.integers(1, 40), st.sampled_from([1, 4, 8]), st.data())
def test_streamed_attention_in_f32_is_the_diagram(example, n, m, d, data):
    """In f32 nothing is rounded between the two orders of summation: any key past the end,
    any tile skipped that should not be (or kept that should not), shows."""
    ti, tj = data.draw(st.integers(1, n)), data.draw(st.integers(1, m))
    text = attention_diagram(example, 1, 2, n, m, d, t="f32")
    _, (diagram,), (kernel,) = run_both(text, f'grid="b,h,i:{ti}" stream="j:{tj}"', seed=n * m + d)
    np.testing.assert_allclose(kernel, diagram, rtol=1e-4, atol=1e-5 * np.abs(diagram).max())


def _record_loads(monkeypatch) -> list[tuple[tuple[str, ...], tuple[int, ...]]]:
    """Every tile the interpreter reads: the global's axes and the tile's offsets."""
    loads: list[tuple[tuple[str, ...], tuple[int, ...]]] = []
    read = hbm_interpreter.read_tile

    def recording(g, offsets, dims):
        loads.append((g.type.axis_names, tuple(offsets)))
        return read(g, offsets, dims)

    monkeypatch.setattr(hbm_interpreter, "read_tile", recording)
    return loads


def _key_tiles_per_block(loads) -> dict[tuple[int, ...], list[int]]:
    """The key tiles each block read (after its Q tile), by block origin (b, h, i)."""
    per_block: dict[tuple[int, ...], list[int]] = {}
    block = None
    for axes, offsets in loads:
        if "i" in axes:
            assert block is None or offsets[:3] not in per_block, "the Q tile is loaded once per block"
            block = offsets[:3]
            per_block[block] = []
        elif axes[2] == "j" and block is not None:
            per_block[block].append(offsets[2])
    return per_block


@pytest.mark.parametrize("n,m,ti,tj", [(64, 64, 16, 16), (50, 37, 16, 8), (50, 64, 16, 8), (40, 70, 8, 32), (70, 20, 32, 8)])
def test_causal_reads_no_tile_above_the_diagonal(monkeypatch, n, m, ti, tj):
    text = attention_diagram("causal_attention", 1, 1, n, m, 8)
    kernel = find_entry(run_pipeline(text, f'ncd-relabel{{grid="b,h,i:{ti}" stream="j:{tj}"}},ncd-to-hbm'))
    loads = _record_loads(monkeypatch)
    kernel.run(kernel.random_inputs(0))
    per_block = _key_tiles_per_block(loads)
    assert sorted(per_block) == [(0, 0, i0) for i0 in range(0, n, ti)]
    for (_, _, i0), tiles in per_block.items():
        last_row = min(i0 + ti, n) - 1  # the block's last query inside the sequence
        expected = list(range(0, min(last_row + 1, m), tj))  # every tile holding a key j <= last_row
        assert sorted(set(tiles)) == expected, (i0, tiles)
        assert len(tiles) == 2 * len(expected)  # K and V, each once per tile


def test_non_causal_reads_every_tile_once(monkeypatch):
    text = attention_diagram("attention", 1, 1, 40, 70, 8)
    kernel = find_entry(run_pipeline(text, 'ncd-relabel{grid="b,h,i:16" stream="j:32"},ncd-to-hbm'))
    loads = _record_loads(monkeypatch)
    kernel.run(kernel.random_inputs(0))
    for tiles in _key_tiles_per_block(loads).values():
        assert sorted(tiles) == [0, 0, 32, 32, 64, 64]


# Diagrams beyond attention: the same streamed reductions in other combinations.
ROW_STATS = """
func.func @row_stats(%x: !ncd.tensor<i={n}, j={m} : f32>) -> (!ncd.tensor<i={n} : f32>, !ncd.tensor<i={n} : f32>) {{
  %c = ncd.mask causal %x keep i >= j fill -inf : !ncd.tensor<i={n}, j={m} : f32> -> !ncd.tensor<i={n}, j={m} : f32>
  %mx = ncd.reduce max %c along [j] : !ncd.tensor<i={n}, j={m} : f32> -> !ncd.tensor<i={n} : f32>
  %e = ncd.map exp %x : !ncd.tensor<i={n}, j={m} : f32> -> !ncd.tensor<i={n}, j={m} : f32>
  %z = ncd.reduce sum %e along [j] : !ncd.tensor<i={n}, j={m} : f32> -> !ncd.tensor<i={n} : f32>
  func.return %mx, %z : !ncd.tensor<i={n} : f32>, !ncd.tensor<i={n} : f32>
}}
"""
SOFTMAX_SUMS = """
func.func @softmax_sums(%x: !ncd.tensor<i={n}, j={m} : f32>) -> !ncd.tensor<i={n} : f32> {{
  %p = ncd.softmax %x along j scale 0.7 : !ncd.tensor<i={n}, j={m} : f32> -> !ncd.tensor<i={n}, j={m} : f32>
  %s = ncd.reduce sum %p along [j] : !ncd.tensor<i={n}, j={m} : f32> -> !ncd.tensor<i={n} : f32>
  func.return %s : !ncd.tensor<i={n} : f32>
}}
"""
# a negative scale, weights on the keys between the softmax and the sum, a sum over two axes
# (one of them streamed)
WEIGHTED = """
func.func @weighted(%x: !ncd.tensor<i={n}, j={m} : f32>, %w: !ncd.tensor<j={m} : f32>, %v: !ncd.tensor<j={m}, d=3 : f32>) -> !ncd.tensor<i={n} : f32> {{
  %p = ncd.softmax %x along j scale -0.5 : !ncd.tensor<i={n}, j={m} : f32> -> !ncd.tensor<i={n}, j={m} : f32>
  %pw = ncd.map mul %p, %w : !ncd.tensor<i={n}, j={m} : f32>, !ncd.tensor<j={m} : f32> -> !ncd.tensor<i={n}, j={m} : f32>
  %p2 = ncd.map scale %pw by 2.0 : !ncd.tensor<i={n}, j={m} : f32> -> !ncd.tensor<i={n}, j={m} : f32>
  %pv = ncd.map mul %p2, %v : !ncd.tensor<i={n}, j={m} : f32>, !ncd.tensor<j={m}, d=3 : f32> -> !ncd.tensor<i={n}, j={m}, d=3 : f32>
  %o = ncd.reduce sum %pv along [j, d] : !ncd.tensor<i={n}, j={m}, d=3 : f32> -> !ncd.tensor<i={n} : f32>
  func.return %o : !ncd.tensor<i={n} : f32>
}}
"""
# a causal mask after the normalisation (fill 0): linear, but not a reason to skip tiles
MASKED_AFTER = """
func.func @masked_after(%x: !ncd.tensor<i={n}, j={m} : f32>, %v: !ncd.tensor<j={m}, d=3 : f32>) -> !ncd.tensor<i={n}, d=3 : f32> {{
  %p = ncd.l2norm %x along j : !ncd.tensor<i={n}, j={m} : f32> -> !ncd.tensor<i={n}, j={m} : f32>
  %c = ncd.mask causal %p keep i >= j fill 0.0 : !ncd.tensor<i={n}, j={m} : f32> -> !ncd.tensor<i={n}, j={m} : f32>
  %o = ncd.contract %c, %v over [j] : !ncd.tensor<i={n}, j={m} : f32>, !ncd.tensor<j={m}, d=3 : f32> -> !ncd.tensor<i={n}, d=3 : f32>
  func.return %o : !ncd.tensor<i={n}, d=3 : f32>
}}
"""


@pytest.mark.parametrize("template", [ROW_STATS, SOFTMAX_SUMS, WEIGHTED, MASKED_AFTER], ids=["row_stats", "softmax_sums", "weighted", "masked_after"])
@pytest.mark.parametrize("n,m,ti,tj", [(12, 30, 4, 8), (30, 12, 8, 5), (9, 9, 9, 9), (7, 16, 3, 4)])
def test_other_streamed_diagrams_keep_the_numbers(template, n, m, ti, tj):
    _, diagram, kernel = run_both(template.format(n=n, m=m), f'grid="i:{ti}" stream="j:{tj}"', seed=n + m)
    for d, k in zip(diagram, kernel, strict=True):
        assert np.isfinite(k).all()
        np.testing.assert_allclose(k, d, rtol=1e-5, atol=1e-5 * np.abs(d).max())


def test_softmax_weights_sum_to_one():
    _, _, (kernel,) = run_both(SOFTMAX_SUMS.format(n=10, m=23), 'grid="i:4" stream="j:8"', seed=1)
    np.testing.assert_allclose(kernel, 1.0, rtol=1e-6)


def test_masked_after_the_normalisation_reads_every_tile(monkeypatch):
    """Its mask fills 0 after the L2 norm, whose sum of squares still sees every key:
    tiles above the diagonal are masked, not skipped."""
    kernel = find_entry(run_pipeline(MASKED_AFTER.format(n=8, m=24), 'ncd-relabel{grid="i:4" stream="j:8"},ncd-to-hbm'))
    loads = _record_loads(monkeypatch)
    kernel.run(kernel.random_inputs(0))
    x_tiles = [offsets for axes, offsets in loads if axes == ("i", "j")]
    assert sorted(x_tiles) == sorted((i0, j0) for i0 in (0, 4) for j0 in (0, 8, 16))
