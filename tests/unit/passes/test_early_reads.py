"""reg-early-reads: the gradient's one kernel reads its row statistic (a softmax's
log-sum-exp, spherical attention's norms) from its stage right after the wait that fills
it, before the loop's products, and its numbers survive on the CPU interpreter (what it
leaves alone: tests/filecheck/passes/early_reads.mlir)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from xdsl.dialects import scf

from napkin_ir.attention_diagrams import gradient_passes
from napkin_ir.dialects import reg, smem
from napkin_ir.interpreters.run import find_entry
from napkin_ir.passes.composite import spec
from napkin_ir.passes.early_reads import RegEarlyReadsPass
from napkin_ir.passmanager import run_pipeline
from napkin_ir.plan.recipes import attention
from tests.unit.lowering.levels import every_level_keeps, gradient_inputs


def _first_reads(module) -> list[bool]:
    """Per stream loop, whether its first vector read comes right after its first mbarrier
    wait, before any product is issued."""
    out = []
    for loop in module.walk():
        if not isinstance(loop, scf.ForOp) or not any(isinstance(o, reg.WgmmaOp) for o in loop.body.block.ops):
            continue
        ops = list(loop.body.block.ops)
        wait = next(n for n, o in enumerate(ops) if isinstance(o, smem.MbarrierWaitOp))
        read = next(n for n, o in enumerate(ops) if isinstance(o, reg.ReadOp) and o.vector)
        out.append(read == wait + 1)
    return out


@pytest.mark.parametrize("kind,n", [("softmax", 200), ("causal", 200), ("spherical", 136)])
def test_the_statistic_is_read_before_the_products(kind, n):
    """At d=128 (64 or 80 queries a tile) the plan asks for the pass; every loop of the one
    kernel (the mask's diagonal tiles in a loop of their own) reads its statistic first,
    and the kernel's numbers (lengths the tiles do not divide) are the diagram's."""
    text, values = gradient_inputs(kind, n, n, 128, seed=n)
    module = run_pipeline(text, gradient_passes(kind, "qkv"))
    plan = attention.sm90_plan(module, persistent=False)
    assert plan.early_reads
    lowered = run_pipeline(str(module), spec(plan.passes("reg")))
    assert _first_reads(lowered) and all(_first_reads(lowered))
    without = [p for p in plan.passes("reg") if not isinstance(p, RegEarlyReadsPass)]
    assert not any(_first_reads(run_pipeline(str(module), spec(tuple(without)))))
    diagram = find_entry(module)
    inputs = [values[name] for name in diagram.input_names]
    every_level_keeps(module, plan, inputs, diagram.run(inputs), ("reg",))


@pytest.mark.parametrize("kind", ["softmax", "causal"])
def test_reading_early_changes_no_number(kind):
    """A read moved is arithmetic untouched: the one kernel's reg level gives the same bits
    with the pass as without it (tighter than the bound against the diagram)."""
    text, values = gradient_inputs(kind, 200, 200, 128, seed=5)
    module = run_pipeline(text, gradient_passes(kind, "qkv"))
    plan = attention.sm90_plan(module, persistent=False)
    without = tuple(p for p in plan.passes("reg") if not isinstance(p, RegEarlyReadsPass))
    levels = [run_pipeline(str(module), spec(passes)) for passes in (without, plan.passes("reg"))]
    assert str(levels[0]) != str(levels[1])
    diagram = find_entry(module)
    inputs = [values[name] for name in diagram.input_names]
    runs = [find_entry(level).run(inputs) for level in levels]
    for left, moved in zip(*runs, strict=True):
        assert np.isfinite(left).all() and np.abs(left).max() > 0
        assert np.array_equal(left, moved)


@pytest.mark.parametrize("part,d,want", [("qkv", 128, True), ("qkv", 64, False), ("kv", 128, False), ("q", 128, False)])
def test_early_reads_pay(part, d, want):
    """Only the one kernel of dQ, dK and dV, and only at up to 80 queries a tile (d=64
    streams 128: 32 registers a lane held across the products measured slower)."""
    text, _ = gradient_inputs("softmax", 256, 256, d, seed=1)
    module = run_pipeline(text, gradient_passes("softmax", part))
    assert attention.sm90_plan(module, persistent=False).early_reads == want


def _read_before_second_wait(module) -> list[bool]:
    """Per stream loop with two waits or more, whether a vector read comes right before its
    second `reg.wgmma_wait`."""
    out = []
    for loop in module.walk():
        if not isinstance(loop, scf.ForOp):
            continue
        waits = [o for o in loop.body.block.ops if isinstance(o, reg.WgmmaWaitOp)]
        if len(waits) > 1:
            before = waits[1].prev_op
            out.append(isinstance(before, reg.ReadOp) and before.vector)
    return out


@pytest.mark.parametrize("kind,d,n,want", [("softmax", 128, 240, True), ("causal", 128, 240, False),
                                           ("softmax", 64, 256, False), ("causal", 64, 256, False)])
def test_d_is_read_before_dps_wait_at_80_queries(kind, d, n, want):
    """The plan reads D before dP's wait only in the one kernel at 80 queries a tile (d=128
    without a mask: 64 under one, and d=64's 128, measured slower); where it does, every
    loop reads it there and the numbers are the same bits as without it."""
    text, values = gradient_inputs(kind, n, n, d, seed=n + d)
    module = run_pipeline(text, gradient_passes(kind, "qkv"))
    plan = attention.sm90_plan(module, persistent=False)
    assert plan.later_reads == want
    lowered = run_pipeline(str(module), spec(plan.passes("reg")))
    placed = _read_before_second_wait(lowered)
    assert placed and all(placed) == want and any(placed) == want
    if not want:
        return
    earlier = dataclasses.replace(plan, later_reads=False)
    before = run_pipeline(str(module), spec(earlier.passes("reg")))
    assert not any(_read_before_second_wait(before))
    diagram = find_entry(module)
    inputs = [values[name] for name in diagram.input_names]
    runs = [find_entry(level).run(inputs) for level in (before, lowered)]
    for left, moved in zip(*runs, strict=True):
        assert np.isfinite(left).all() and np.abs(left).max() > 0
        assert np.array_equal(left, moved)
    every_level_keeps(module, plan, inputs, diagram.run(inputs), ("reg",))


def test_the_forward_is_left_alone():
    text, _ = gradient_inputs("softmax", 256, 256, 128, seed=1)
    module = run_pipeline(text, "")
    plan = attention.sm90_plan(module)
    assert not plan.early_reads and not plan.later_reads
