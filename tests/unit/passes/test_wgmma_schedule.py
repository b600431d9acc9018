"""reg-wgmma-schedule: the gradient's groups issued early and waited for late keep the
numbers on the CPU interpreter, the plans take it where it pays, and loops of another
shape are left as they are."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from napkin_ir.attention_diagrams import attention_diagram, gradient_passes
from napkin_ir.dialects import reg, smem
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
    # issue and wait moved, arithmetic untouched: the same bits as the kernel unscheduled
    for left, moved in zip(find_entry(plain).run(inputs), find_entry(scheduled).run(inputs), strict=True):
        assert np.array_equal(left, moved)


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


def _dv_issue_after_ds(block) -> bool:
    """Whether the loop body issues its first register-A product (dV += P^T dO) after the
    last register math before dS is written to shared memory (dS = P (dP - D), scaled)."""
    ops = list(block.ops)
    first_rs = next(n for n, o in enumerate(ops) if isinstance(o, reg.WgmmaRsOp))
    stmatrix = next(n for n, o in enumerate(ops) if isinstance(o, reg.StmatrixOp))
    last_math = max(n for n, o in enumerate(ops[:stmatrix]) if isinstance(o, reg.MapOp))
    return first_rs > last_math


def _dv_between_write_and_meeting(block) -> bool:
    """Whether the loop body issues its first register-A product (dV) and commits it after
    dS's write into its stage and before the writers' fenced meeting, so that it runs while
    they wait (FlashAttention-4's order)."""
    ops = list(block.ops)
    first_rs = next(n for n, o in enumerate(ops) if isinstance(o, reg.WgmmaRsOp))
    commit = next(n for n, o in enumerate(ops) if n > first_rs and isinstance(o, reg.WgmmaCommitOp))
    stmatrix = next(n for n, o in enumerate(ops) if isinstance(o, reg.StmatrixOp))
    meeting = next(n for n, o in enumerate(ops) if n > stmatrix and isinstance(o, smem.BarrierOp))
    return stmatrix < first_rs < commit < meeting


@pytest.mark.parametrize("kind", ["softmax", "causal"])
def test_a_register_operand_waits_where_the_consumers_registers_run_out(kind):
    """dQ, dK and dV from one kernel at d=64 with 128 queries a tile: issued as soon as P is
    made, dV's product would hold P's bf16 copy beside S, dP, D and the accumulators while
    dS is computed, past the 240 registers a consumer has (`fragment_peak` 276); under that
    budget the schedule issues it after dS's math and dS's write into its stage, before the
    writers' fenced meeting (FlashAttention-4's order). At 64 queries
    a tile (180 registers) it keeps dV under dS. The numbers survive on the interpreter."""
    from xdsl.dialects import scf

    from napkin_ir.dialects import hbm
    from napkin_ir.model.registers import consumer_budget, fragment_peak
    from napkin_ir.passes.wgmma_schedule import RegWgmmaSchedulePass

    for queries, late in ((128, True), (64, False)):
        text, values = gradient_inputs(kind, 256, 256, 64, seed=queries)
        module = run_pipeline(text, gradient_passes(kind, "qkv"))
        plan = attention.sm90_plan(module, block=128, stream=queries, persistent=False)
        upto = [p for p in plan.passes("reg")]
        cut = next(n for n, p in enumerate(upto) if isinstance(p, RegWgmmaSchedulePass))
        before = run_pipeline(str(module), spec(tuple(upto[:cut])))
        (kernel,) = [o for o in before.walk() if isinstance(o, hbm.KernelOp)]
        assert consumer_budget(kernel) == 240
        loops = [o for o in kernel.walk() if isinstance(o, scf.ForOp) and any(isinstance(x, reg.WgmmaRsOp) for x in o.body.block.ops)]
        for loop in loops:
            block = loop.body.block
            schedule(block)  # no budget: every group as early as it may go
            free = fragment_peak(block, list(block.ops))
            assert (free > 240) == late and not _dv_issue_after_ds(block)
        after = run_pipeline(str(module), spec(tuple(upto[: cut + 1])))
        for loop in [o for o in after.walk() if isinstance(o, scf.ForOp) and any(isinstance(x, reg.WgmmaRsOp) for x in o.body.block.ops)]:
            assert _dv_issue_after_ds(loop.body.block) == late
            assert _dv_between_write_and_meeting(loop.body.block) == late
            if late:
                assert fragment_peak(loop.body.block, list(loop.body.block.ops)) < free
        if late:
            diagram = find_entry(module)
            inputs = [values[name] for name in diagram.input_names]
            every_level_keeps(module, plan, inputs, diagram.run(inputs), ("reg",))
