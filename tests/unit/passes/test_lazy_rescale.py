"""reg-lazy-rescale: napkin-sm90's forward keeps its running row max until a row of a warp
outgrows it by the slack and skips the output's unit corrections. The reg level's numbers
survive on the CPU interpreter whether the max stays or moves, a slack of 0 is the eager
max bit for bit, the PTX holds the votes, and the recipe asks for it only where it was
measured to pay (the IR's shape: tests/filecheck/passes/lazy_rescale.mlir)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from xdsl.dialects import scf
from xdsl.dialects.builtin import f32
from xdsl.ir import Block

import napkin_ir
from napkin_ir import reference
from napkin_ir.attention_diagrams import attention_diagram, gqa_attention_diagram
from napkin_ir.dialects import reg
from napkin_ir.interpreters.reg import RegFunctions
from napkin_ir.interpreters.run import find_entry
from napkin_ir.passes.composite import spec
from napkin_ir.passes.lazy_rescale import lazy_rescale
from napkin_ir.passmanager import run_pipeline
from napkin_ir.plan.recipes import attention

CASES = [
    (attention_diagram("softmax", 2, 2, 400, 128), False),
    (attention_diagram("causal", 2, 2, 400, 64), False),
    (attention_diagram("causal", 2, 2, 400, 64), True),
    (gqa_attention_diagram("causal", 1, 2, 4, 400, 128), False),
    (attention_diagram("softmax", 1, 2, 300, 128, n_keys=700), False),
]


def _levels(text: str, persistent: bool, slack: float | None):
    """The diagram, and its reg level with the eager max (slack None) or the lazy one."""
    module = run_pipeline(text, "")
    plan = replace(attention.sm90_plan(module, persistent=persistent), lazy_rescale=False)
    level = run_pipeline(str(module), spec(plan.passes("reg")))
    if slack is not None:
        maxes, rescales = lazy_rescale(level, slack)
        assert maxes and rescales == maxes  # each loop's max, the output's correction by it in the loop
    return module, level


def _run(level, inputs) -> list[np.ndarray]:
    return find_entry(level).run(inputs)


def _in_loops(module, cls) -> list:
    return [op for loop in module.walk() if isinstance(loop, scf.ForOp) for op in loop.body.walk() if isinstance(op, cls)]


def _row_frag() -> reg.FragType:
    return reg.FragType("row", {"i": 16}, f32)


def _lazy_max(old: np.ndarray, new: np.ndarray, slack: float) -> np.ndarray:
    block = Block(arg_types=[_row_frag(), _row_frag()])
    op = reg.LazyMaxOp(block.args[0], block.args[1], slack)
    (out,) = RegFunctions().run_lazy_max(None, op, ({(0,): old}, {(0,): new})).values  # type: ignore[arg-type]
    return out[(0,)]


def test_a_warp_keeps_its_max_only_while_no_row_outgrows_it():
    old = np.zeros((32, 2), np.float32)
    grown = old + 8.0
    assert (_lazy_max(old, grown, 8.0) == old).all()  # by the slack exactly: kept
    once = grown.copy()
    once[5, 1] = 8.5  # one row of one lane past it: every row of the warp moves
    assert (_lazy_max(old, once, 8.0) == once).all()
    lower = old - 3.0
    lower[0, 0] = 1.0
    assert (_lazy_max(old, lower, 8.0) == old).all()
    assert (_lazy_max(old, lower, 0.0) == np.maximum(old, lower)).all()
    start = np.full((32, 2), -np.inf, np.float32)
    assert (_lazy_max(start, start, 8.0) == start).all()  # -inf - -inf is NaN, counted as growing: max(-inf, -inf)
    assert (_lazy_max(start, old, 8.0) == old).all()


@pytest.mark.parametrize("text,persistent", CASES)
def test_a_slack_of_zero_is_the_eager_max(text, persistent):
    """With no slack the max moves wherever a row grows, as `reg.map max` does: the same
    bits."""
    module, eager = _levels(text, persistent, None)
    _, lazy = _levels(text, persistent, 0.0)
    assert _in_loops(lazy, reg.LazyMaxOp) and _in_loops(lazy, reg.RescaleOp)
    inputs = find_entry(module).random_inputs(seed=5)
    for a, b in zip(_run(eager, inputs), _run(lazy, inputs), strict=True):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("text,persistent", CASES)
def test_the_numbers_hold_whether_the_max_stays_or_moves(text, persistent):
    """On random inputs the max stays (the rounding then differs from the eager max's);
    with the last keys scaled up it moves mid-stream (by more than the slack). Both are the
    diagram's numbers within bf16's bound."""
    module, eager = _levels(text, persistent, None)
    _, lazy = _levels(text, persistent, 8.0)
    diagram = find_entry(module)
    inputs = diagram.random_inputs(seed=11)
    stays = _run(lazy, inputs)
    assert any(not np.array_equal(a, b) for a, b in zip(_run(eager, inputs), stays, strict=True))
    grown = [x.copy() for x in inputs]
    k = diagram.input_names.index("k")
    grown[k][..., -90:, :] *= 6.0  # scores of the last keys some 8-40 log2 units above the rest
    for got, want in ((stays, diagram.run(inputs)), (_run(lazy, grown), diagram.run(grown))):
        for g, w in zip(got, want, strict=True):
            assert np.isfinite(g).all()
            assert reference.relative_error(g, w) <= reference.TOLERANCE["bf16"]


def test_the_ptx_votes_and_skips():
    text = attention_diagram("softmax", 1, 16, 16384, 128)
    lazy = napkin_ir.compile(text, target="sm90", cache=False)
    eager = napkin_ir.compile(text, target="sm90", cache=False, lazy_rescale=False)
    assert lazy.ptx.count("vote.sync.all.pred") == 2  # the loop's max and its rescale (the one after the loop multiplies)
    assert "vote.sync" not in eager.ptx
    assert lazy.contract == eager.contract


@pytest.mark.parametrize("text,persistent,want", [
    (attention_diagram("softmax", 1, 16, 16384, 128), False, True),
    (gqa_attention_diagram("softmax", 1, 4, 4, 16384, 128), False, True),
    (attention_diagram("causal", 1, 32, 16384, 64), False, True),
    (attention_diagram("causal", 1, 16, 16384, 128), False, False),  # measured 0.982-1.000
    (gqa_attention_diagram("causal", 1, 4, 8, 16384, 64), False, False),  # grouped at d=64: not measured
    (attention_diagram("softmax", 1, 32, 16384, 64), False, False),  # 0.989-0.993
    (attention_diagram("softmax", 4, 16, 4096, 128), True, False),  # persistent: 0.969-0.984
    (attention_diagram("softmax", 1, 8, 16384, 256), False, False),  # 0.99-1.03, not taken
    (attention_diagram("spherical", 1, 16, 16384, 128), False, False),  # no running max
])
def test_lazy_rescale_pays(text, persistent, want):
    assert attention.lazy_rescale_pays(run_pipeline(text, ""), persistent) == want


def test_the_option_turns_it_on_and_off():
    causal = attention_diagram("causal", 1, 2, 4096, 128)
    assert "vote.sync" not in napkin_ir.compile(causal, target="sm90", cache=False).ptx
    assert "vote.sync" in napkin_ir.compile(causal, target="sm90", cache=False, lazy_rescale=True).ptx
    with pytest.raises(napkin_ir.CompileError, match="lazy_rescale=true keeps a running row max"):
        napkin_ir.compile(attention_diagram("spherical", 1, 2, 4096, 128), target="sm90", cache=False, lazy_rescale=True)


def test_the_model_searches_with_the_option_as_asked():
    """Under autotile every candidate is planned with the running max as asked."""
    module = run_pipeline(attention_diagram("softmax", 1, 16, 16384, 128), "")
    for asked in (False, True):
        configs = attention.attention_configs(module, attention.AttentionSpace(lazy_rescale=asked))
        assert configs and all(c.plan(module).lazy_rescale == asked for c in configs)
