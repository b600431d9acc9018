"""The store role (`smem.storer`) that adds the attention gradient's dQ tile by tile: the
CPU interpreter checks its protocol with the consumers whatever the roles' threads do,
the numbers survive it, and reg-to-ptx gives its rings the right arrival counts."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from xdsl.utils.exceptions import InterpretationError

from napkin_ir import reference
from napkin_ir.dialects import smem
from napkin_ir.dialects.ptx.printer import print_ptx
from napkin_ir.interpreters.ptx import HALF
from napkin_ir.interpreters.run import find_entry
from napkin_ir.passmanager import run_pipeline

DIAGRAM = """
func.func @f(%b: !ncd.tensor<i=200, d=128 : bf16>, %k: !ncd.tensor<j=256, d=128 : bf16>) -> (!ncd.tensor<i=200, d=128 : f32>, !ncd.tensor<j=256, d=128 : f32>) {
  %s = ncd.contract %b, %k over [d] : !ncd.tensor<i=200, d=128 : bf16>, !ncd.tensor<j=256, d=128 : bf16> -> !ncd.tensor<i=200, j=256 : f32>
  %s16 = ncd.map cast %s : !ncd.tensor<i=200, j=256 : f32> -> !ncd.tensor<i=200, j=256 : bf16>
  %t = ncd.contract %s16, %k over [j] : !ncd.tensor<i=200, j=256 : bf16>, !ncd.tensor<j=256, d=128 : bf16> -> !ncd.tensor<i=200, d=128 : f32>
  %r = ncd.contract %s16, %b over [i] : !ncd.tensor<i=200, j=256 : bf16>, !ncd.tensor<i=200, d=128 : bf16> -> !ncd.tensor<j=256, d=128 : f32>
  func.return %t, %r : !ncd.tensor<i=200, d=128 : f32>, !ncd.tensor<j=256, d=128 : f32>
}
"""
SMEM = 'ncd-relabel{grid="j:128" stream="i:64"},ncd-to-hbm,hbm-to-smem{copy=tma stages=2}'


def _inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(5)
    half = HALF["bf16"]
    return [rng.standard_normal((200, 128)).astype(half).astype(np.float32) / 8,
            rng.standard_normal((256, 128)).astype(half).astype(np.float32) / 8]


def test_the_store_role_keeps_the_numbers():
    inputs = _inputs()
    want = find_entry(run_pipeline(DIAGRAM, "")).run(inputs)
    module = run_pipeline(DIAGRAM, SMEM)
    assert any(isinstance(o, smem.StorerOp) for o in module.walk())
    for g, w in zip(find_entry(module).run(inputs), want):
        assert reference.relative_error(g, w) <= reference.TOLERANCE["bf16"]


def test_a_write_without_the_empty_wait_is_refused():
    """The consumers write a stage only once the store role gave it back (its arrival on
    the empty barrier after its add read the stage): without their wait, the second write
    of a stage is refused, however the threads ran."""
    module = run_pipeline(DIAGRAM, SMEM)
    (write,) = [o for o in module.walk() if isinstance(o, smem.WriteOp) and o.dest.type.element_type.name == "f32"]
    wait = write.prev_op
    assert isinstance(wait, smem.MbarrierWaitOp) and smem.returned_by_store_role(wait.bars)
    wait.detach()
    wait.erase()
    with pytest.raises(InterpretationError, match="handed to the store role, before it gave the stage back"):
        find_entry(module).run(_inputs())


def test_the_rings_count_their_parties():
    """The full ring counts a lane of each of the 8 consumer warps, the empty ring the store
    role's one thread (thread 32, lane 0 of the producer's second warp)."""
    out = io.StringIO()
    print_ptx(run_pipeline(DIAGRAM, f"{SMEM},smem-to-reg{{mma=wgmma}},reg-to-ptx{{arch=sm_90a}}"), out)
    ptx = out.getvalue()
    inits = re.findall(r"mov\.u32 (%r\d+), (\d+);\n\s*mbarrier\.init\.shared::cta\.b64 \[%r\d+\], \1;", ptx)
    counts = [int(n) for _, n in inits]
    assert counts[-2:] == [8, 1], counts  # dQ's full ring, then its empty ring: the last made
    assert re.search(r"mov\.u32 (%r\d+), 32;\n\s*setp\.eq\.u32 %p\d+, %r\d+, \1;", ptx)
