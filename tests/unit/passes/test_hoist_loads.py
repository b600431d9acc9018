"""reg-hoist-loads: the attention gradient's dQ kernel reads its rows' statistics once a
tile, before its loops, and keeps its numbers on the CPU interpreter; a load from a
global the kernel also writes, or whose offsets move with the loop, stays."""

from __future__ import annotations

import pytest
from xdsl.dialects import scf

from napkin_ir.attention_diagrams import attention_diagram, gradient_passes
from napkin_ir.dialects import reg
from napkin_ir.interpreters.run import find_entry
from napkin_ir.passes.composite import spec
from napkin_ir.passes.hoist_loads import hoist
from napkin_ir.passmanager import run_pipeline
from napkin_ir.plan.recipes import attention
from tests.unit.lowering.levels import every_level_keeps


def _loads_in_loops(module) -> int:
    return sum(isinstance(o, reg.LoadOp) for loop in module.walk() if isinstance(loop, scf.ForOp) for o in loop.body.block.ops)


@pytest.mark.parametrize("kind,n,d", [("causal", 200, 64), ("softmax", 72, 128), ("spherical", 80, 64)])
def test_the_dq_kernel_reads_its_statistics_once_a_tile(kind, n, d):
    text = attention_diagram(kind, 1, 2, n, d)
    module = run_pipeline(text, gradient_passes(kind, "q"))
    plan = attention.sm90_plan(module, persistent=False)
    lowered = run_pipeline(str(module), spec(plan.passes("reg")))
    assert _loads_in_loops(lowered) == 0
    assert any(isinstance(o, reg.LoadOp) for o in lowered.walk())
    entry = find_entry(module)  # the numbers, on random inputs (a statistic and D of any value)
    inputs = entry.random_inputs(5)
    every_level_keeps(module, plan, inputs, entry.run(inputs), ("reg",))


def test_loads_that_move_with_the_loop_stay():
    # 202 queries: rows of 808 bytes, no whole 16 (the TMA's stride), so the statistics are
    # read from global memory in the loop rather than brought with Q and dO
    module = run_pipeline(attention_diagram("causal", 1, 2, 202, 64), gradient_passes("causal", "kv"))
    plan = attention.sm90_plan(module, persistent=False)
    lowered = run_pipeline(str(module), spec(plan.passes("reg")))
    before = _loads_in_loops(lowered)
    assert before > 0 and sum(hoist(loop) for loop in lowered.walk() if isinstance(loop, scf.ForOp)) == 0
    assert _loads_in_loops(lowered) == before
