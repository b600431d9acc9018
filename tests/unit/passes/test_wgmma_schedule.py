"""reg-wgmma-schedule: the gradient's groups issued early and waited for late keep the
numbers on the CPU interpreter, the plans take it where it pays, and loops of another
shape are left as they are."""

from __future__ import annotations

from dataclasses import replace

import pytest

from napkin_ir.attention_diagrams import attention_diagram, gradient_passes
from napkin_ir.dialects import reg
from napkin_ir.interpreters.run import find_entry
from napkin_ir.passes.composite import spec
from napkin_ir.passes.wgmma_schedule import schedule
from napkin_ir.passmanager import run_pipeline
from napkin_ir.diagrams import gemm
from napkin_ir.plan.recipes import attention, products
from tests.unit.lowering.levels import every_level_keeps, gradient_inputs


def _gradient(kind: str, part: str, n: int, d: int):
    text = attention_diagram(kind, 1, 2, n, d)
    return text, run_pipeline(text, gradient_passes(kind, part))


def _waits(module) -> list[int]:
    return [op.pending.value.data for op in module.walk() if isinstance(op, reg.WgmmaWaitOp)]


@pytest.mark.parametrize("kind,part,n,d", [("causal", "kv", 80, 64), ("softmax", "q", 72, 64), ("causal", "qkv", 200, 128),
                                          ("spherical", "kv", 80, 128)])
def test_scheduled_groups_keep_the_gradient(kind, part, n, d):
    """Every kernel of the gradient, scheduled (forced where the default does not), run at
    the register level against the extracted diagram; lengths the tiles do not divide."""
    text, values = gradient_inputs(kind, n, n, d, seed=n)
    module = run_pipeline(text, gradient_passes(kind, part))
    plan = replace(attention.sm90_plan(module, persistent=False), schedule=True)
    scheduled = run_pipeline(str(module), spec(plan.passes("reg")))
    plain = run_pipeline(str(module), spec(replace(plan, schedule=False).passes("reg")))
    assert 1 in _waits(scheduled) and 1 not in _waits(plain), "no group was left in flight"
    diagram = find_entry(module)
    inputs = [values[name] for name in diagram.input_names]
    every_level_keeps(module, plan, inputs, diagram.run(inputs), ("reg",))


def test_the_plans_schedule_where_it_pays():
    """The gradient's kernels but dK and dV's at d=64 unmasked or at d=128 under a mask
    (the first streams 128 queries, the mask's kernels 64); never the forward."""
    pays = {(kind, part, d): attention.sm90_plan(_gradient(kind, part, 256, d)[1]).schedule
            for kind in ("softmax", "causal") for part, d in (("q", 64), ("kv", 64), ("q", 128), ("kv", 128), ("qkv", 128))}
    assert pays == {(kind, part, d): not (part == "kv" and (d == 128) == (kind == "causal"))
                    for kind, part, d in pays}
    streams = {kind: attention.sm90_plan(_gradient(kind, "kv", 256, 64)[1]).stream for kind in ("softmax", "causal")}
    assert streams == {"softmax": ("i", 128), "causal": ("i", 64)}
    forward = run_pipeline(attention_diagram("softmax", 1, 2, 256, 64), "")
    assert not attention.sm90_plan(forward).schedule


def test_a_gemm_stream_is_left_alone():
    """The GEMM's stream waits with a group pending (its own pipeline): nothing to do."""
    lowered = run_pipeline(gemm(256, 256, 256), spec(products.sm90_plan().passes("reg")))
    before = str(lowered)
    loops = [op for op in lowered.walk() if op.name == "scf.for"]
    assert loops and 1 in _waits(lowered) and not any(schedule(loop.body.block) for loop in loops)
    assert str(lowered) == before
