"""A stage of shared memory may be written (smem.write, reg.stmatrix, reg.write) only
when no TMA store and no wgmma still reads it; a write leaves it unsynced until a barrier
(the other threads' parts are not visible before)."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import bf16
from xdsl.utils.exceptions import InterpretationError

from napkin_ir.dialects import smem
from napkin_ir.interpreters.smem import Buffer


def _buffer() -> Buffer:
    return Buffer(smem.BufferType({"j": 128, "i": 64}, bf16, 2, "swizzle"))


def test_a_stage_a_wgmma_still_reads_is_not_written():
    buf = _buffer()
    buf.check_writable(0, "reg.stmatrix")
    buf.wgmma_reads[0] = 1
    with pytest.raises(InterpretationError, match="reg.stmatrix: writes stage 0 .* while a wgmma still reads it"):
        buf.check_writable(0, "reg.stmatrix")
    buf.check_writable(1, "reg.write")  # the other stage is free


def test_a_stage_a_tma_store_still_reads_is_not_written():
    buf = _buffer()
    buf.storing[1] = 1
    with pytest.raises(InterpretationError, match="while a TMA store still reads it"):
        buf.check_writable(1, "smem.write")


KERNEL = """
hbm.kernel attributes {{sym_name = "k", grid = #hbm.labels<m=64>, num_outputs = 1 : i32}} {{
^bb0(%out: !hbm.global<m=64, n=64 : bf16>, %m0: index):
  %c0 = arith.constant 0 : index
  %t = hbm.fill {{value = 1.000000e+00 : f32}} : !ncd.tensor<m=64, n=64 : bf16>
  %b = smem.alloc : !smem.buffer<m=64, n=64 : bf16, stages=1, layout=swizzle>
  smem.write %t -> %b[%c0] {{at = #hbm.labels<>}} : !ncd.tensor<m=64, n=64 : bf16>, !smem.buffer<m=64, n=64 : bf16, stages=1, layout=swizzle>
  {barrier}
  %r = smem.read %b[%c0] : !smem.buffer<m=64, n=64 : bf16, stages=1, layout=swizzle> -> !ncd.tensor<m=64, n=64 : bf16>
  hbm.store %r, %out[%m0, %c0] : !ncd.tensor<m=64, n=64 : bf16>, !hbm.global<m=64, n=64 : bf16>
  hbm.return
}}
"""


def test_a_written_stage_is_read_after_a_barrier(run_printed):
    """smem.write leaves the stage unsynced: a read before a barrier is refused."""
    (out,) = run_printed(KERNEL.format(barrier="smem.barrier {async_proxy}"))
    assert (out == 1.0).all()
    with pytest.raises(InterpretationError, match="since the last barrier"):
        run_printed(KERNEL.format(barrier=""))
