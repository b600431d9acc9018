"""The reg interpreter checks the warpgroups' turns (reg-pingpong) are taken in order: a
turn waited for before the turns start, or twice, or passed unheld, is an error."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from napkin_ir.passmanager import run_pipeline

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
PASSES = ('ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 copy=tma},'
          'smem-to-reg{mma=wgmma},reg-wgmma-overlap,reg-pingpong')


def _reg_text() -> str:
    return str(run_pipeline((EXAMPLES / "attention.mlir").read_text(), PASSES))


def _run(text: str) -> subprocess.CompletedProcess:
    return subprocess.run(["napkin-run", "--random-inputs", "--check"], input=text, capture_output=True, text=True)


def test_turns_in_order_run():
    done = _run(_reg_text())
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr


@pytest.mark.parametrize("edit,said", [
    (lambda s: s.replace("reg.turn_start\n", "", 1).replace("reg.turn_wait\n", "reg.turn_wait\n    reg.turn_start\n", 1),
     "before reg.turn_start"),
    (lambda s: s.replace("reg.turn_pass\n", "", 1), "twice without reg.turn_pass"),
    (lambda s: s.replace("reg.turn_wait\n", "", 1), "passes a turn this warpgroup does not hold"),
])
def test_turns_out_of_order_are_refused(edit, said):
    text = _reg_text()
    assert "reg.turn_start" in text
    done = _run(edit(text))
    assert done.returncode != 0 and said in done.stderr, done.stderr
