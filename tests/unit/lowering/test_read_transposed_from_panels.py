"""`reg.read` of a `c` fragment whose rows are a TMA-swizzled buffer's columns (dB of
C = exp(0.5 A B) on sm_90a reads dC's stage transposed): ldmatrix.trans from 128-byte
swizzled panels, checked in the warp-level emulator. The emulator runs no TMA or
mbarriers, so this test lands each TMA box itself (a warp takes its elected thread's
branch as a whole: the branches that issue the copies and init the barriers), as the hardware's 128-byte swizzle
lays it out (16-byte chunk c of row r at chunk c ^ (r % 8)), independently of the
compiler's own address functions, and lets every mbarrier wait succeed at once."""

from __future__ import annotations

import numpy as np
import pytest

from napkin_ir.dialects.ptx import ops as P
from napkin_ir.dialects.ptx import tensor_ops as T
from napkin_ir.interpreters import ptx as emulator
from napkin_ir.passmanager import run_pipeline

KERNEL = """
builtin.module {
  hbm.kernel attributes {sym_name = "read_t", grid = #hbm.labels<n=128>, num_outputs = 1 : i32, reg.warps = #hbm.labels<n=WARPS>} {
  ^bb0(%d: !hbm.global<m=128, n=256 : bf16>, %out: !hbm.global<n=256, m=128 : bf16>, %n0: index):
    %c0 = arith.constant 0 : index
    %buf = smem.alloc : !smem.buffer<m=128, n=128 : bf16, stages=1, layout=swizzle>
    %full = smem.mbarrier_alloc : !smem.mbarrier<stages=1, arrivals=1>
    smem.producer attributes {warps = 4 : i32} {
      smem.arrive_expect %full[%c0] {bytes = 32768 : i32} : !smem.mbarrier<stages=1, arrivals=1>
      smem.tma_copy %d[%c0, %n0] -> %buf[%c0], %full[%c0] : !hbm.global<m=128, n=256 : bf16>, !smem.buffer<m=128, n=128 : bf16, stages=1, layout=swizzle>, !smem.mbarrier<stages=1, arrivals=1>
    }
    smem.mbarrier_wait %full[%c0] parity %c0 : !smem.mbarrier<stages=1, arrivals=1>
    %r = reg.read %buf[%c0] : !smem.buffer<m=128, n=128 : bf16, stages=1, layout=swizzle> -> !reg.frag<c, n=ROWS, m=128 : f32>
    reg.store %r, %out[%n0, %c0] : !reg.frag<c, n=ROWS, m=128 : f32>, !hbm.global<n=256, m=128 : bf16>
    hbm.return
  }
}
"""

BOX = (64, 128)  # the tensor map's box, innermost first: one 128-byte panel of bf16 by the buffer's rows


class TmaWarp(emulator.Warp):
    """A warp whose TMA loads land at once and whose mbarrier waits succeed."""

    shape = (128, 256)  # the tensor the map describes, outermost first

    def get(self, v):
        x = self.regs[v]
        if x.dtype == bool and any(isinstance(u.operation, P.CondBraOp) for u in v.uses):
            return np.full(32, x.any())  # one thread's branch (an election) is taken by its warp
        return x

    def step_core(self, op) -> None:
        if isinstance(op, T.CpAsyncBulkTensorLoadOp):
            self.land_box(op)
        elif isinstance(op, T.MbarrierTryWaitParityOp):
            self.regs[op.results[0]] = np.ones(32, bool)
        elif isinstance(op, T.MbarrierExpectTxOp | T.MbarrierArriveOp):
            self.regs[op.results[0]] = np.zeros(32, np.uint64)
        elif not isinstance(op, T.MbarrierInitOp | T.SetmaxnregOp | T.PrefetchTensormapOp):
            super().step_core(op)

    def land_box(self, op) -> None:
        dst, tmap = (int(self.get(v)[0]) for v in (op.dst, op.tmap))
        x, y = (int(self.get(v)[0]) for v in op.coords)
        assert dst % 1024 == 0, "a 128-byte swizzled box starts on a 1024-byte boundary"
        raw, at = self.mem.find(tmap, 1)  # the map's parameter holds the tensor itself
        tile = raw[at:].view(np.uint16).reshape(self.shape)[y : y + BOX[1], x : x + BOX[0]]
        for r in range(BOX[1]):
            for c in range(8):
                at = dst + 128 * r + 16 * (c ^ (r % 8))
                self.block.smem[at : at + 16] = np.frombuffer(tile[r, 8 * c : 8 * c + 8].tobytes(), np.uint8)


@pytest.mark.parametrize("warps,rows", [(8, 16), (4, 32)])
def test_a_swizzled_tile_read_transposed_keeps_the_numbers(monkeypatch, warps, rows):
    """Each warp reads its `rows` columns of dC's two panels transposed into the
    accumulators' lanes (a warp's columns may start in the second panel), and stores
    them: the output is the tile transposed, bit for bit, with no bank conflicts."""
    module = run_pipeline(KERNEL.replace("WARPS", str(warps)).replace("ROWS", str(rows)), "reg-to-ptx")
    rng = np.random.default_rng(5)
    half = emulator.HALF["bf16"]
    d = rng.standard_normal((128, 256)).astype(half)
    out = np.full((256, 128), 0xFFFF, np.uint16).view(half)  # poisoned: NaN
    monkeypatch.setattr(emulator, "Warp", TmaWarp)
    conflicts = emulator.run_kernel(module, [d, out], lazy=False, reverse=False)
    assert np.array_equal(out.view(np.uint16), np.ascontiguousarray(d.T).view(np.uint16))
    assert conflicts["ldmatrix"] == 0
