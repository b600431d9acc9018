"""research/backward_subtraction.py's copies: each takes out only what it names (dQ's
reduces, its stores into the stage predicated off, the wait for the stage, the epilogue's
global stores predicated off), and still
assembles; the kernel it copies has no multiply by log2 e left
(`ncd-fold-log2e`)."""

import sys
from pathlib import Path

import pytest

from napkin_ir.model.ptxas import find_ptxas, ptxas_resources

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # research/
import backward_subtraction  # noqa: E402


def test_each_copy_takes_out_what_it_names(tmp_path):
    backward_subtraction.make(tmp_path, 64)
    for tag in ("n", "c"):
        base, dq, sts, wait = ((tmp_path / f"{tag}_{v}.ptx").read_text() for v in ("base", "nodq", "offsts", "nowait"))
        assert "ex2.approx" in base and "0f3FB8AA3B" not in base  # log2 e folded out of the loop
        assert "cp.reduce.async.bulk" in base and "cp.reduce.async.bulk" not in dq
        assert len(dq.split("\n")) == len(base.split("\n")) - base.count("cp.reduce.async.bulk")
        stores = base.count("st.shared.f32")
        assert stores >= 32 and sts.count("@%poff st.shared.f32") == stores  # every one predicated off, none removed
        loops = {"n": 1, "c": 2}[tag]  # the mask's diagonal tiles in a loop of their own
        assert len(backward_subtraction.STAGE_WAIT.findall(base)) == loops and not backward_subtraction.STAGE_WAIT.findall(wait)
        assert base.count("mbarrier.try_wait") == wait.count("mbarrier.try_wait")  # the wait's result ignored, not removed
        v4 = (tmp_path / f"{tag}_v4.ptx").read_text()  # the same values, four a store
        assert "st.shared.f32 " not in v4 and v4.count("st.shared.v4.f32") * 4 == stores
        epi = (tmp_path / f"{tag}_noepi.ptx").read_text()  # dK's and dV's stores issued, moving nothing
        globals_ = base.count("\tst.global.")
        assert globals_ and epi.count("\t@%poff st.global.") == globals_ and epi.count("\tst.global.") == 0
        once = (tmp_path / f"{tag}_v4once.ptx").read_text()  # the lane's part of the address made once, at the entry
        assert once.count("st.shared.v4.f32") * 4 == stores and once.count("%tid.x") == base.count("%tid.x") + loops
        assert once.index("mov.u32 %rv4t0, %tid.x") < once.index("ld.param")
        if find_ptxas() is None:
            pytest.skip("no ptxas to assemble the copies")
        for ptx in (dq, sts, wait, v4, once, epi):
            assert ptxas_resources(ptx, "sm_90a")


def test_the_kernel_at_another_tile_keeps_its_own_contract(tmp_path):
    """`--queries 64` at d=64 (whose default is 128 queries a tile): a kernel of its own, its
    grid and shared memory its own, the log-sum-exp read before the products."""
    from napkin_ir.runtime.compiled import CompiledKernel

    backward_subtraction.make(tmp_path, 64, queries=64)
    for tag in ("n", "c"):
        base, q64 = (CompiledKernel.load(str(tmp_path / f"{tag}_{v}")) for v in ("base", "q64"))
        assert q64.ptx != base.ptx and q64.contract != base.contract
        first = q64.ptx.index("wgmma.fence")
        assert "ld.shared.v2.f32" in q64.ptx[:first] and "ld.shared.v2.f32" not in base.ptx[:base.ptx.index("wgmma.fence")]
