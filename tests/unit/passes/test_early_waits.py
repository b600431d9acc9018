"""reg-early-waits: napkin-sm90's overlapped forward waits for each trip's V right after the
trip's scores retire, its numbers survive on the CPU interpreter, and the recipe asks for
it only where it was measured to pay (what the pass leaves alone:
tests/filecheck/passes/early_waits.mlir)."""

from __future__ import annotations

import pytest
from xdsl.dialects import scf

from napkin_ir.attention_diagrams import attention_diagram, gradient_passes
from napkin_ir.dialects import loop_facts, reg, smem
from napkin_ir.interpreters.run import find_entry
from napkin_ir.passes.composite import spec
from napkin_ir.passes.early_waits import RegEarlyWaitsPass
from napkin_ir.passmanager import run_pipeline
from napkin_ir.plan.recipes import attention
from tests.unit.lowering.levels import every_level_keeps, gradient_inputs


def _waits_first(module) -> list[bool]:
    """Per overlapped loop, whether an mbarrier wait comes right after its first wgmma wait."""
    out = []
    for loop in module.walk():
        if isinstance(loop, scf.ForOp) and loop_facts.overlapped(loop):
            ops = list(loop.body.block.ops)
            first = next(n for n, o in enumerate(ops) if isinstance(o, reg.WgmmaWaitOp))
            out.append(isinstance(ops[first + 1], smem.MbarrierWaitOp))
    return out


@pytest.mark.parametrize("kind,d", [("softmax", 64), ("causal", 64), ("causal", 128)])
def test_v_is_awaited_with_the_scores(kind, d):
    """Over 400 keys and queries (three tiles of keys and a ragged one) the plan asks for the pass; every
    overlapped loop (a mask's unmasked and diagonal ones) waits for V first, and not
    without the pass; the reg level's numbers are the diagram's."""
    module = run_pipeline(attention_diagram(kind, 1, 2, 400, d), "")
    plan = attention.sm90_plan(module)
    assert plan.early_waits
    lowered = run_pipeline(str(module), spec(plan.passes("reg")))
    assert _waits_first(lowered) and all(_waits_first(lowered))
    without = [p for p in plan.passes("reg") if not isinstance(p, RegEarlyWaitsPass)]
    assert not any(_waits_first(run_pipeline(str(module), spec(tuple(without)))))
    diagram = find_entry(module)
    inputs = diagram.random_inputs(seed=d)
    every_level_keeps(module, plan, inputs, diagram.run(inputs), ("reg",))


@pytest.mark.parametrize("kind,n,d,stream,want", [
    ("softmax", 16384, 128, None, True), ("causal", 16384, 64, None, True), ("softmax", 4096, 64, None, True),
    ("softmax", 16384, 128, 176, False),  # ptxas spills 156 bytes a thread
    ("softmax", 256, 128, None, False),  # two tiles: a loop of one trip, 20 bytes spilled
    ("spherical", 16384, 128, None, False),  # not measured
    ("softmax", 8192, 256, None, False)])  # not measured
def test_early_waits_pay(kind, n, d, stream, want):
    module = run_pipeline(attention_diagram(kind, 1, 2, n, d), "")
    assert attention.sm90_plan(module, stream=stream).early_waits == want


def test_the_gradient_is_left_alone():
    text, _ = gradient_inputs("softmax", 1024, 1024, 128, seed=1)
    for part in ("qkv", "kv", "q", "v"):
        assert not attention.sm90_plan(run_pipeline(text, gradient_passes("softmax", part)), persistent=False).early_waits
