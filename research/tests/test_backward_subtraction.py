"""research/backward_subtraction.py's copies: each takes out only what it names (the
multiplies by log2 e; dQ's reduces), and still assembles."""

import sys
from pathlib import Path

import pytest

from napkin_ir.model.ptxas import find_ptxas, ptxas_resources

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # research/
import backward_subtraction  # noqa: E402


def test_each_copy_takes_out_what_it_names(tmp_path):
    backward_subtraction.make(tmp_path, 64)
    for tag in ("n", "c"):
        base, log2e, dq = ((tmp_path / f"{tag}_{v}.ptx").read_text() for v in ("base", "nolog2e", "nodq"))
        exps = base.count("ex2.approx")
        assert exps and base.count("mul.f32") - log2e.count("mul.f32") == exps  # one multiply an exponential
        assert log2e.count("mov.f32") - base.count("mov.f32") == exps
        assert "cp.reduce.async.bulk" in base and "cp.reduce.async.bulk" not in dq
        assert len(dq.split("\n")) == len(base.split("\n")) - base.count("cp.reduce.async.bulk")
        if find_ptxas() is None:
            pytest.skip("no ptxas to assemble the copies")
        for ptx in (log2e, dq):
            assert ptxas_resources(ptx, "sm_90a")
