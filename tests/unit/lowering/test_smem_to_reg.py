"""smem-to-reg keeps the numbers: warps' fragments, computed lane by lane through the
mma.sync layouts, give the block's tile; and every layout places each element once."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from napkin_ir import reference
from napkin_ir.dialects.reg import lane_layout
from napkin_ir.interpreters.run import find_entry
from napkin_ir.passmanager import run_pipeline

from napkin_ir.diagrams import gemm


@pytest.mark.parametrize("role,rows,cols", [("a", 16, 16), ("a", 64, 16), ("b", 16, 8), ("b", 16, 64), ("c", 16, 8), ("c", 64, 32), ("c", 32, 128)])
def test_each_element_lives_in_exactly_one_lane_register(role, rows, cols):
    r, c = lane_layout(role, rows, cols)
    assert r.shape == (32, rows * cols // 32)
    count = np.zeros((rows, cols), int)
    np.add.at(count, (r.ravel(), c.ravel()), 1)
    assert (count == 1).all()


def test_accumulator_layout_is_the_one_ptx_documents():
    # lane 5 = group 1, thread 1: c0, c1 at row 1, columns 2 and 3; c2, c3 at row 9
    r, c = lane_layout("c", 16, 8)
    assert list(zip(r[5], c[5])) == [(1, 2), (1, 3), (9, 2), (9, 3)]
    # a: lane 5, register 2 (k 8..15): row 1, columns 10 and 11
    r, c = lane_layout("a", 16, 16)
    assert (r[5, 4], c[5, 4], c[5, 5]) == (1, 10, 11)


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 2), st.integers(1, 2), st.integers(1, 3), st.sampled_from(["bf16", "f16"]), st.data())
def test_warp_fragments_keep_the_numbers(fm, fn, wm, wn, kt, t, data):
    bm, bn, tk = 16 * fm * wm, 8 * fn * wn, 16 * kt
    # axes at least one tile long (a tile cannot exceed its axis), ragged past that
    m, n, k = (data.draw(st.integers(s, 2 * s + 7)) for s in (bm, bn, tk))
    text = gemm(m, n, k, t)
    base = f'ncd-relabel{{grid="m:{bm},n:{bn}" stream="k:{tk}"}},ncd-to-hbm,hbm-to-smem{{stages=2}}'
    smem_level = find_entry(run_pipeline(text, base))
    reg_level = find_entry(run_pipeline(text, f'{base},smem-to-reg{{warps="m:{wm},n:{wn}"}}'))
    inputs = smem_level.random_inputs(m * n + k)
    a, b = inputs
    got, want = reg_level.run(inputs)[0], smem_level.run(inputs)[0]
    assert not np.isnan(got).any()
    ulp = 2.0**-7 if t == "bf16" else 2.0**-10
    np.testing.assert_allclose(got, want, rtol=2 * ulp, atol=2 * ulp * np.abs(want).max())
    assert reference.relative_error(got, reference.matmul(a, b)) <= reference.TOLERANCE[t]
