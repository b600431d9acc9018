"""reg-to-ptx keeps the numbers: the `ptx` kernels napkin-sm80 emits, run on the CPU by
the warp-level emulator (`napkin_ir.interpreters.ptx`), give the GEMM on ragged shapes,
with warps out of step and copies landing early or late."""

from __future__ import annotations

import numpy as np
import pytest

from napkin_ir import reference
from napkin_ir.diagrams import gemm
from napkin_ir.interpreters.ptx import HALF, Memory, run_kernel
from napkin_ir.passmanager import run_pipeline
from napkin_ir.pipelines import launch_config, sm80_gemm_pipeline

def emulate_gemm(m: int, n: int, k: int, dtype: str, block, warps, stages, *, lazy: bool, reverse: bool, seed: int = 0,
                 layout: str = "auto", group: int = 0):
    module = run_pipeline(gemm(m, n, k, dtype), sm80_gemm_pipeline(block, warps, stages, layout=layout, group=group))
    rng = np.random.default_rng(seed)
    half = HALF[dtype]
    a = rng.standard_normal((m, k)).astype(half)
    b = rng.standard_normal((k, n)).astype(half)
    out = np.full((m, n), 0xFFFF, np.uint16).view(half)  # poisoned: NaN
    conflicts = run_kernel(module, [a, b, out], lazy=lazy, reverse=reverse)
    return a, b, out, conflicts


CASES = [
    # (m, n, k), block, warps, stages: shapes that end a tile, that do not (m, n ragged; k not a
    # multiple of the stream tile), fewer tiles than stages, one 16-wide step per tile
    ((64, 64, 64), (64, 64, 32), (2, 2), 2),
    ((200, 136, 104), (64, 64, 32), (2, 2), 3),
    ((130, 72, 40), (64, 64, 16), (2, 1), 4),
    ((96, 200, 200), (32, 128, 64), (1, 2), 3),
    ((160, 264, 72), (128, 128, 32), (2, 2), 4),
    ((136, 264, 72), (128, 256, 32), (2, 4), 4),
    ((264, 136, 136), (256, 128, 64), (4, 2), 3),
]
# each warp alone through a barrier interval, first to last or last to first; copies landing
# at once or as late as allowed
MODES = {"eager": (False, False), "lazy-reversed": (True, True), "eager-reversed": (False, True), "lazy": (True, False)}


@pytest.mark.parametrize("shape,block,warps,stages,mode", [
    pytest.param(*case, mode, id=f"{case[0][0]}x{case[0][1]}x{case[0][2]}-{case[1][0]}x{case[1][1]}x{case[1][2]}-s{case[3]}-{mode}")
    for n, case in enumerate(CASES) for mode in (MODES if n < 2 else ["eager", "lazy-reversed"])])
def test_emulated_gemm_keeps_the_numbers(shape, block, warps, stages, mode):
    lazy, reverse = MODES[mode]
    a, b, out, _ = emulate_gemm(*shape, "bf16", block, warps, stages, lazy=lazy, reverse=reverse)
    ref = reference.matmul(a, b)
    assert np.isfinite(out.astype(np.float64)).all(), "some output was not written"
    assert reference.relative_error(out, ref) <= reference.TOLERANCE["bf16"]
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=2e-2, atol=2e-2 * np.abs(ref).max())


def test_emulated_gemm_f16_f32_accumulate():
    a, b, out, _ = emulate_gemm(72, 80, 48, "f16", (64, 64, 16), (2, 2), 3, lazy=True, reverse=False)
    ref = reference.matmul(a, b)
    assert reference.relative_error(out, ref) <= reference.TOLERANCE["f16"]


@pytest.mark.parametrize("block,warps", [((128, 128, 32), (2, 2)), ((128, 128, 64), (2, 2)), ((128, 256, 32), (2, 4)), ((256, 128, 64), (4, 2))])
def test_shared_memory_accesses_are_free_of_bank_conflicts(block, warps):
    # swizzled stages (the default where rows are 64 or 128k bytes): ldmatrix's 8 rows lie in
    # 8 bank groups, and each 8 threads of a copy fill one 128-byte line of shared memory
    *_, conflicts = emulate_gemm(block[0], block[1], 2 * block[2], "bf16", block, warps, 3, lazy=False, reverse=False)
    assert conflicts == {"cp.async": 0, "ldmatrix": 0, "cp.async lines": 0, "st.shared": 0, "ld.shared": 0}


def test_padded_rows_straddle_lines():
    # padded rows keep ldmatrix's rows apart too, but a copied row starts 16 bytes further
    # into its line with each row: most 8-thread writes straddle two lines
    block, warps = (128, 128, 64), (2, 2)
    *_, conflicts = emulate_gemm(block[0], block[1], 2 * block[2], "bf16", block, warps, 3, lazy=False, reverse=False, layout="pad8")
    assert conflicts["cp.async"] == conflicts["ldmatrix"] == 0
    assert conflicts["cp.async lines"] > 0


@pytest.mark.parametrize("shape,block,warps,stages,layout", [
    ((136, 264, 72), (128, 256, 32), (2, 4), 4, "pad8"), ((200, 136, 104), (64, 64, 32), (2, 2), 3, "swizzle"),
    ((96, 200, 200), (32, 128, 64), (1, 2), 3, "swizzle")])
def test_emulated_gemm_either_layout(shape, block, warps, stages, layout):
    a, b, out, _ = emulate_gemm(*shape, "bf16", block, warps, stages, lazy=True, reverse=True, layout=layout)
    assert reference.relative_error(out, reference.matmul(a, b)) <= reference.TOLERANCE["bf16"]


@pytest.mark.parametrize("shape,block,group", [
    ((200, 136, 104), (64, 64, 32), 2),  # 4 x 3 blocks in two bands of two rows, the last row moved in
    ((264, 200, 72), (64, 64, 32), 3),  # 5 x 4 blocks: a band of three rows, then a shorter one of two
    ((136, 264, 72), (128, 64, 32), 16),  # a band taller than the grid: column by column
])
def test_emulated_grouped_launch_keeps_the_numbers(shape, block, group):
    # hbm-launch{group=G}: one grid axis, each block's row and column found from its index
    m, n, k = shape
    module = run_pipeline(gemm(m, n, k, "bf16"), sm80_gemm_pipeline(block, (2, 2), 3, group=group))
    rows, cols = -(-m // block[0]), -(-n // block[1])
    assert launch_config(module)["grid"] == [rows * cols]
    a, b, out, _ = emulate_gemm(m, n, k, "bf16", block, (2, 2), 3, lazy=True, reverse=True, group=group)
    assert np.isfinite(out.astype(np.float64)).all(), "some output was not written"
    assert reference.relative_error(out, reference.matmul(a, b)) <= reference.TOLERANCE["bf16"]


def test_grouped_launch_visits_each_tile_once_in_bands():
    # block p of the launch writes the output tile the band order gives it: bands of `group`
    # block rows (the last one shorter), each column by column
    m, n, block, group = 5 * 64, 4 * 64, (64, 64, 32), 3
    module = run_pipeline(gemm(m, n, 32, "bf16"), sm80_gemm_pipeline(block, (2, 2), 2, group=group))
    half = HALF["bf16"]
    out = np.zeros((m, n), half)

    class Writes(Memory):
        def __init__(self):
            super().__init__()
            self.written: list[int] = []

        def write(self, addr: int, data: bytes) -> None:
            super().write(addr, data)
            self.written.append(addr)

    a, b = np.ones((m, 32), half), np.ones((32, n), half)
    seen = []
    for p in range(20):
        mem = Writes()
        run_kernel(module, [a, b, out], lazy=False, reverse=False, mem=mem, only=[(p, 0, 0)])
        first = (min(mem.written) - mem.blocks[2][0]) // 2  # the tile's first element
        seen.append((first // n // 64, first % n // 64))
    assert seen == [(r, c) for band in (0, 3) for c in range(4) for r in range(band, min(band + 3, 5))]
