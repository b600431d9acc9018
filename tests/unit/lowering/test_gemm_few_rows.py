"""napkin-sm80 compiles a GEMM of fewer than 16 rows (a decode's few tokens): its block of
16 rows takes its warps along the columns alone (1 x 4), each warp all 16 rows, where
2 x 2 left each warp 8 rows, under mma.sync's 16. The PTX, in the warp-level emulator
(copies landing as late as allowed, warps in reverse order, the output poisoned), matches
float64."""

from __future__ import annotations

import numpy as np
import pytest

from napkin_ir import reference
from napkin_ir.diagrams import gemm
from napkin_ir.interpreters.ptx import HALF
from napkin_ir.passmanager import run_pipeline
from napkin_ir.plan.recipes.products import default_warps
from tests.unit.lowering.levels import emulated


def test_a_block_of_16_rows_takes_its_warps_along_the_columns():
    assert default_warps((16, 128, 32), 1) == (1, 4)
    assert default_warps((16, 16, 32), 1) == (1, 2)
    assert default_warps((128, 128, 32), 1) == (2, 2)  # as before from 32 rows


@pytest.mark.parametrize("m, n, k", [(8, 256, 128), (1, 136, 64), (15, 72, 40)])
def test_sm80_gemm_of_few_rows_matches_float64(m, n, k):
    module = run_pipeline(gemm(m, n, k), "napkin-sm80")
    rng = np.random.default_rng(m + n + k)
    half = HALF["bf16"]
    a, b = rng.standard_normal((m, k)).astype(half), rng.standard_normal((k, n)).astype(half)
    out = emulated(module, [a, b], (m, n))
    assert reference.relative_error(out, reference.matmul(a, b)) <= reference.TOLERANCE["bf16"]
