"""hbm-to-smem's `short_rows`: a TMA copy of a global shorter than its tile along the tile's
rows (a decode's few rows of A) brings those rows rounded up to 8, not the whole tile. The
rows past them keep what the stage held: the smem interpreter fills them with NaN, and
the numbers must survive (those rows reach only output rows that are not stored)."""

from __future__ import annotations

import numpy as np
import pytest

from napkin_ir import reference
from napkin_ir.attention_diagrams import attention_diagram
from napkin_ir.diagrams import gemm
from napkin_ir.dialects import smem
from napkin_ir.interpreters.ptx import HALF
from napkin_ir.interpreters.run import find_entry
from napkin_ir.passmanager import run_pipeline
from napkin_ir.pipelines import NapkinSm90Pass, spec


def _copies(module) -> list[smem.TmaCopyOp]:
    return [op for op in module.walk() if isinstance(op, smem.TmaCopyOp)]


@pytest.mark.parametrize("m, n, k, rows", [(1, 256, 192, 8), (13, 200, 128, 16), (60, 128, 64, None), (64, 128, 64, None)])
def test_a_decodes_rows_are_copied_and_the_numbers_survive(m, n, k, rows):
    text = gemm(m, n, k, "bf16")
    plan = NapkinSm90Pass(block="64,128,64").plan(run_pipeline(text))
    rng = np.random.default_rng(m + n + k)
    a = rng.standard_normal((m, k)).astype(HALF["bf16"])
    b = rng.standard_normal((k, n)).astype(HALF["bf16"])
    want = reference.matmul(a.astype(np.float64), b.astype(np.float64))
    for level in ("smem", "reg"):
        module = run_pipeline(text, spec(plan.passes(level)))
        a_copy, b_copy = _copies(module)
        assert (a_copy.rows.value.data if a_copy.rows else None) == rows and b_copy.rows is None  # B's rows are the contraction's
        got = find_entry(module).run([a, b])[0]
        assert not np.isnan(got).any()
        assert reference.relative_error(got, want) <= 5e-3, level


def test_not_where_the_rows_are_summed_over_or_a_kernel_has_more_products():
    """Attention over 40 queries and keys: every copy whole (its keys' rows are summed over,
    and stale rows would reach the valid outputs through 0 x NaN)."""
    text = attention_diagram("softmax", 1, 2, 40, 64, "bf16")
    module = run_pipeline(text, spec(NapkinSm90Pass().plan(run_pipeline(text)).passes("smem")))
    assert _copies(module) and all(c.rows is None for c in _copies(module))
    # a 2-block cluster multicasts B by halves: its kernel keeps whole copies
    text = gemm(8, 4096, 256, "bf16")
    plan = NapkinSm90Pass(block="64,128,64", cluster=2).plan(run_pipeline(text))
    assert all(c.rows is None for c in _copies(run_pipeline(text, spec(plan.passes("smem")))))
