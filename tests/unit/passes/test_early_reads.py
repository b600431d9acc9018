"""reg-early-reads: the gradient's one kernel reads its row statistic (a softmax's
log-sum-exp, spherical attention's norms) from its stage right after the wait that fills
it, before the loop's products, and its numbers survive on the CPU interpreter (what it
leaves alone: tests/filecheck/passes/early_reads.mlir)."""

from __future__ import annotations

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


def test_the_forward_is_left_alone():
    text, _ = gradient_inputs("softmax", 256, 256, 128, seed=1)
    module = run_pipeline(text, "")
    assert not attention.sm90_plan(module).early_reads
