"""research/backward_subtraction.py's copies: each takes out only what it names (dQ's
reduces), and still assembles; the kernel it copies has no multiply by log2 e left
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
        base, dq = ((tmp_path / f"{tag}_{v}.ptx").read_text() for v in ("base", "nodq"))
        assert "ex2.approx" in base and "0f3FB8AA3B" not in base  # log2 e folded out of the loop
        assert "cp.reduce.async.bulk" in base and "cp.reduce.async.bulk" not in dq
        assert len(dq.split("\n")) == len(base.split("\n")) - base.count("cp.reduce.async.bulk")
        if find_ptxas() is None:
            pytest.skip("no ptxas to assemble the copies")
        assert ptxas_resources(dq, "sm_90a")
