"""The reg interpreter refuses an op that reads what a wgmma group still in flight makes
(on the GPU it would read registers the tensor cores are still writing); a product may
take such a value as its accumulator, and a loop may carry one to its next trip (the
GEMM's stream does)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.utils.exceptions import InterpretationError

from napkin_ir.attention_diagrams import gradient_passes
from napkin_ir.dialects import reg
from napkin_ir.interpreters.run import find_entry
from napkin_ir.passmanager import run_pipeline

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
GRADIENT_LEVELS = 'ncd-relabel{grid="b,h,j:64" stream="i:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma}'


def test_a_read_before_its_wait_is_refused():
    """The causal gradient's dK and dV, scheduled: dS is computed from dP after a wait that
    leaves dV's group in flight. Without that wait, dS reads dP while its group runs."""
    text = (EXAMPLES / "causal_attention.mlir").read_text()
    module = run_pipeline(text, f"{gradient_passes('causal', 'kv')},{GRADIENT_LEVELS},reg-wgmma-schedule")
    entry = find_entry(module)
    inputs = entry.random_inputs(0)
    entry.run(inputs)  # as scheduled: every group retired before its results are read
    loop = next(op for op in module.walk() if op.name == "scf.for" and any(isinstance(o, reg.WgmmaWaitOp) for o in op.walk()))
    dp_wait = [o for o in loop.walk() if isinstance(o, reg.WgmmaWaitOp) and o.pending.value.data == 1][1]
    dp_wait.detach()
    dp_wait.erase()
    with pytest.raises(InterpretationError, match="reg.map reads operand 0, which a wgmma group still in flight makes"):
        find_entry(module).run(inputs)


def test_a_gemm_stream_carries_a_group_in_flight():
    """The GEMM's stream leaves each trip's group pending across the back edge."""
    module = run_pipeline((EXAMPLES / "matmul.mlir").read_text(),
                          'ncd-relabel{grid="m:128,n:128" stream="k:64"},ncd-to-hbm,hbm-to-smem{stages=3 copy=tma},smem-to-reg{mma=wgmma}')
    assert any(isinstance(o, reg.WgmmaWaitOp) and o.pending.value.data == 1 for o in module.walk())
    entry = find_entry(module)
    (out,) = entry.run(entry.random_inputs(0))
    assert np.isfinite(out).all()
