"""hbm-to-smem keeps the numbers exactly (the same tiles, summed in the same order), and
the smem interpreter refuses pipelines that would read a stage too early."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.utils.exceptions import InterpretationError

from napkin_ir.interpreters.run import find_entry
from napkin_ir.passmanager import run_pipeline

from napkin_ir.diagrams import gemm


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 60), st.integers(1, 60), st.integers(1, 90), st.integers(2, 5), st.sampled_from(["row", "pad8", "swizzle"]), st.data())
def test_pipelined_tiles_equal_the_hbm_kernel(m, n, k, stages, layout, data):
    tm, tn, tk = data.draw(st.integers(1, m)), data.draw(st.integers(1, n)), data.draw(st.integers(1, k))
    text = gemm(m, n, k, "bf16")
    labels = f'ncd-relabel{{grid="m:{tm},n:{tn}" stream="k:{tk}"}},ncd-to-hbm'
    hbm_level = find_entry(run_pipeline(text, labels))
    smem_level = find_entry(run_pipeline(text, f"{labels},hbm-to-smem{{stages={stages} layout={layout}}}"))
    inputs = hbm_level.random_inputs(m + n + k)
    np.testing.assert_array_equal(smem_level.run(inputs)[0], hbm_level.run(inputs)[0])


def _pipelined_text() -> str:
    from napkin_ir.passmanager import run_pipeline as rp

    module = rp(gemm(64, 64, 128, "bf16"), 'ncd-relabel{grid="m:32,n:32" stream="k:16"},ncd-to-hbm,hbm-to-smem{stages=3}')
    return str(module)


def test_the_lowered_pipeline_runs(run_printed):
    assert not np.isnan(run_printed(_pipelined_text())[0]).any()


def test_waiting_too_little_is_caught(run_printed):
    text = _pipelined_text().replace("smem.wait {pending = 1 : i32}", "smem.wait {pending = 2 : i32}")
    with pytest.raises(InterpretationError, match="still has a copy in flight"):
        run_printed(text)


def test_a_missing_barrier_is_caught(run_printed):
    text = _pipelined_text().replace("smem.barrier\n", "", 1)
    with pytest.raises(InterpretationError, match="filled since the last barrier"):
        run_printed(text)
