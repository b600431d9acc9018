"""reg-reload-loads: spherical attention's gradient reads its norms again past a wgmma
wait, and its numbers survive on the CPU interpreter (what it leaves alone:
tests/filecheck/passes/reload_loads.mlir)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import scf

from napkin_ir.attention_diagrams import gradient_passes
from napkin_ir.dialects import reg, smem
from napkin_ir.interpreters.run import find_entry
from napkin_ir.passes.composite import spec
from napkin_ir.passes.reload_loads import RegReloadLoadsPass
from napkin_ir.passmanager import run_pipeline
from napkin_ir.plan.recipes import attention
from tests.unit.lowering.levels import every_level_keeps, gradient_inputs


def _is_norm(o) -> bool:
    """Whether `o` reads the norms: from global memory, or from the stage the TMA brought them to."""
    if isinstance(o, reg.LoadOp):
        return o.source.name_hint == "norm"
    return isinstance(o, reg.ReadOp) and any(isinstance(u.operation, smem.TmaCopyOp) and u.operation.source.name_hint == "norm"
                                              for u in o.source.uses)


def _norm_loads(module) -> list[int]:
    """How many times each loop body reads the norms."""
    return [sum(_is_norm(o) for o in loop.body.block.ops) for loop in module.walk() if isinstance(loop, scf.ForOp)]


@pytest.mark.parametrize("part,n,d", [("kv", 80, 64), ("kv", 72, 128), ("qkv", 200, 128)])
def test_spherical_gradient_reads_its_norms_again(part, n, d):
    """Spherical attention's dK and dV (and all three) divide P and dS by the queries' norms,
    which the streamed queries bring each trip: read twice a trip, once for each, and the
    kernel's numbers (lengths the tiles do not divide) are the diagram's."""
    text, values = gradient_inputs("spherical", n, n, d, seed=n)
    module = run_pipeline(text, gradient_passes("spherical", part))
    plan = attention.sm90_plan(module, persistent=False)
    lowered = run_pipeline(str(module), spec(plan.passes("reg")))
    assert 2 in _norm_loads(lowered)
    without = [p for p in plan.passes("reg") if not isinstance(p, RegReloadLoadsPass)]
    kept = run_pipeline(str(module), spec(tuple(without)))
    assert 2 not in _norm_loads(kept)
    diagram = find_entry(module)
    inputs = [values[name] for name in diagram.input_names]
    every_level_keeps(module, plan, inputs, diagram.run(inputs), ("reg",))
    # a value read again is the same value: the same bits as the kernel that keeps it
    for left, moved in zip(find_entry(kept).run(inputs), find_entry(lowered).run(inputs), strict=True):
        assert np.array_equal(left, moved)

