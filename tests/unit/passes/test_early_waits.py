"""reg-early-waits: napkin-sm90's overlapped forward waits for each trip's V right after the
trip's scores retire (d=64) or after its row max (d=128), its numbers survive on the CPU
interpreter, and the recipe asks for it only where it was measured to pay (what the pass
leaves alone: tests/filecheck/passes/early_waits.mlir)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from xdsl.dialects import scf

from napkin_ir.attention_diagrams import attention_diagram, gqa_attention_diagram, gradient_passes
from napkin_ir.dialects import loop_facts, reg, smem
from napkin_ir.interpreters.run import find_entry
from napkin_ir.passes.composite import spec
from napkin_ir.passes.early_waits import RegEarlyWaitsPass
from napkin_ir.passmanager import run_pipeline
from napkin_ir.plan.recipes import attention
from tests.unit.lowering.levels import every_level_keeps, gradient_inputs


def _wait_places(module) -> list[str]:
    """Per overlapped loop, what its trip's wait for a stage follows, after the first wgmma
    wait: "scores" (that wait), "max" (the row max folded into the running one) or "late";
    or "products" where the trip waits for none after it but, before it, for the stage the
    trip before carried, just ahead of the first product that reads it."""
    out = []
    for loop in module.walk():
        if isinstance(loop, scf.ForOp) and loop_facts.overlapped(loop):
            ops = list(loop.body.block.ops)
            first = next(n for n, o in enumerate(ops) if isinstance(o, reg.WgmmaWaitOp))
            wait = next((n for n, o in enumerate(ops) if n > first and isinstance(o, smem.MbarrierWaitOp)), None)
            if wait is None:
                carried = [n for n, o in enumerate(ops[:first]) if isinstance(o, smem.MbarrierWaitOp)
                           and o.stage in loop.body.block.args and o.parity in loop.body.block.args]
                assert len(carried) == 1 and ops[carried[0]].stage in ops[carried[0] + 1].operands
                out.append("products")
                continue
            before = ops[wait - 1]
            out.append("scores" if wait == first + 1 else "max" if isinstance(before, reg.MapOp) and before.fn.data == "max"
                       and isinstance(ops[wait - 2], reg.RowReduceOp) else "late")
    return out


@pytest.mark.parametrize("kind,d,place", [("softmax", 64, "scores"), ("causal", 64, "scores"), ("softmax", 128, "products"),
                                          ("causal", 128, "products"), ("softmax", 256, "max"), ("causal", 256, "max")])
def test_v_is_awaited_early(kind, d, place):
    """Over 400 keys and queries (three tiles of keys and a ragged one) the plan asks for the
    pass; every overlapped loop (a mask's unmasked and diagonal ones) waits for V right
    after the scores' wait (d=64), at d=128 in the next trip before its products, at d=256
    after the row max, and late without the pass; the reg level's numbers are the
    diagram's."""
    module = run_pipeline(attention_diagram(kind, 1, 2, 400, d), "")
    plan = attention.sm90_plan(module)
    assert plan.early_waits == place
    lowered = run_pipeline(str(module), spec(plan.passes("reg")))
    assert _wait_places(lowered) and set(_wait_places(lowered)) == {place}
    without = [p for p in plan.passes("reg") if not isinstance(p, RegEarlyWaitsPass)]
    assert set(_wait_places(run_pipeline(str(module), spec(tuple(without))))) == {"late"}
    diagram = find_entry(module)
    inputs = diagram.random_inputs(seed=d)
    every_level_keeps(module, plan, inputs, diagram.run(inputs), ("reg",))


@pytest.mark.parametrize("kind,n,d,stream,want", [
    ("softmax", 16384, 128, None, "products"), ("causal", 16384, 128, None, "products"), ("causal", 16384, 64, None, "scores"),
    ("softmax", 4096, 64, None, "scores"),
    ("softmax", 16384, 128, 176, ""),  # ptxas spills 156 bytes a thread
    ("softmax", 256, 128, None, ""),  # two tiles: a loop of one trip, 20 bytes spilled
    ("spherical", 16384, 128, None, ""),  # not measured
    ("softmax", 8192, 256, None, "max"), ("causal", 16384, 256, None, "max")])
def test_early_waits_place(kind, n, d, stream, want):
    module = run_pipeline(attention_diagram(kind, 1, 2, n, d), "")
    assert attention.sm90_plan(module, stream=stream).early_waits == want


@pytest.mark.parametrize("kind", ["softmax", "causal"])
def test_the_products_place_goes_with_the_partial_sums(kind):
    """At d=128 the wait before the products paid with the running sums kept as each
    lane's part (`reg-partial-row-sums`), grouped heads too; without them, only under a
    mask and for ungrouped heads, the rest keeping the max."""
    for module, ungrouped in ((run_pipeline(gqa_attention_diagram(kind, 1, 2, 4, 4096, 128), ""), False),
                              (run_pipeline(attention_diagram(kind, 1, 2, 4096, 128), ""), True)):
        plan = attention.sm90_plan(module)
        assert plan.partial_sums and plan.early_waits == "products"
        before = attention.early_waits_place(module, plan.stream[1], partial_sums=False)
        assert before == ("products" if kind == "causal" and ungrouped else "max")


@pytest.mark.parametrize("kind,persistent", [("causal", False), ("causal", True), ("softmax", True)])
def test_v_is_awaited_before_its_products(kind, persistent):
    """`at="products"` (FA4's order): no wait for tile 0's V before the first loop; each
    trip waits for the stage the one before it carried, with the parity it carried, just
    before the products that read it; after the last loop one wait before the products
    that end the chain. The CPU interpreter checks every wait's parity against the phase
    its data came with (a persistent block's phases run on from tile to tile), and the
    numbers are the diagram's."""
    module = run_pipeline(attention_diagram(kind, 2, 2, 400, 128), "")
    plan = replace(attention.sm90_plan(module, persistent=persistent), early_waits="products")
    lowered = run_pipeline(str(module), spec(plan.passes("reg")))
    assert set(_wait_places(lowered)) == {"products"}
    for loop in (o for o in lowered.walk() if isinstance(o, scf.ForOp) and loop_facts.overlapped(o)):
        after = loop.next_op
        while after is not None and not (isinstance(after, scf.ForOp) and loop_facts.overlapped(after)):
            if isinstance(after, smem.MbarrierWaitOp) and after.stage in loop.results:
                assert after.parity is loop.results[-1]
                break
            after = after.next_op
        assert after is not None
    diagram = find_entry(module)
    inputs = diagram.random_inputs(seed=7)
    every_level_keeps(module, plan, inputs, diagram.run(inputs), ("reg",))


@pytest.mark.parametrize("kind,at,persistent", [("softmax", "scores", False), ("causal", "max", False),
                                                ("softmax", "products", False), ("causal", "products", False),
                                                ("causal", "products", True)])
def test_moving_the_wait_changes_no_number(kind, at, persistent):
    """A wait moved is arithmetic untouched: the reg level with the wait at each place gives
    the same bits as with it where `reg-wgmma-overlap` left it (a far tighter check than
    the bound against float64, which a wrongly scaled row can pass)."""
    module = run_pipeline(attention_diagram(kind, 2, 2, 400, 128), "")
    plan = attention.sm90_plan(module, persistent=persistent)
    inputs = find_entry(module).random_inputs(seed=3)
    levels = [run_pipeline(str(module), spec(replace(plan, early_waits=w).passes("reg"))) for w in ("", at)]
    assert str(levels[0]) != str(levels[1])
    runs = [find_entry(level).run(inputs) for level in levels]
    for left, moved in zip(*runs, strict=True):
        assert np.isfinite(left).all() and np.abs(left).max() > 0
        assert np.array_equal(left, moved)


def test_the_gradient_is_left_alone():
    text, _ = gradient_inputs("softmax", 1024, 1024, 128, seed=1)
    for part in ("qkv", "kv", "q", "v"):
        assert not attention.sm90_plan(run_pipeline(text, gradient_passes("softmax", part)), persistent=False).early_waits
