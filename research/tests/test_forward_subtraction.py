"""research/forward_subtraction.py's copies of the attention forward: `nosumshfl` takes out
only the row sum's exchange across the quad (the max's stays), `laterescale` moves O's
rescale to the end of the trip before without adding or losing a multiply, the `waits`
copies are the kernel compiled with the other places of V's wait, and both regex copies
assemble."""

import sys
from pathlib import Path

import pytest

from napkin_ir.model.ptxas import find_ptxas, ptxas_resources

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # research/
import forward_subtraction  # noqa: E402


def test_each_copy_changes_what_it_names(tmp_path, monkeypatch):
    monkeypatch.setattr(forward_subtraction, "SHAPES", {"n64": ("softmax", 64), "c64": ("causal", 64)})
    forward_subtraction.make(tmp_path)
    for tag in ("n64", "c64"):
        base, shfl, late = ((tmp_path / f"{tag}_{v}.ptx").read_text() for v in ("base", "nosumshfl", "laterescale"))
        maxes = base.count("max.f32")
        assert shfl.count("shfl.sync.bfly") * 2 == base.count("shfl.sync.bfly") and shfl.count("max.f32") == maxes
        assert len(forward_subtraction.SUM_SHFL.findall(base)) > 0 and not forward_subtraction.SUM_SHFL.findall(shfl)
        assert late.count("mul.f32") == base.count("mul.f32") and late != base
        # d=64 waits right after the scores by default: that copy is the base's, not saved
        assert not (tmp_path / f"{tag}_waitsscores.ptx").exists()
        assert all((tmp_path / f"{tag}_waits{p}.ptx").read_text() != base for p in ("none", "max"))
        if find_ptxas() is None:
            pytest.skip("no ptxas to assemble the copies")
        for ptx in (shfl, late):
            assert ptxas_resources(ptx, "sm_90a")
