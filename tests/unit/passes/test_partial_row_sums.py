"""reg-partial-row-sums: napkin-sm90's forward keeps its running row sums as each lane's
part (no quad exchange in a loop, one chain a row a trip from the scaled part), the reg
level's numbers survive on the CPU interpreter, the PTX loses the exchange's shuffles, and
the recipe asks for it only where it was measured to pay (the IR's shape:
tests/filecheck/passes/partial_row_sums.mlir)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from xdsl.dialects import scf

import napkin_ir
from napkin_ir.attention_diagrams import attention_diagram, gqa_attention_diagram, gradient_passes
from napkin_ir.dialects import reg
from napkin_ir.interpreters.run import find_entry
from napkin_ir.passes.composite import spec
from napkin_ir.passes.partial_row_sums import keep_parts
from napkin_ir.passmanager import run_pipeline
from napkin_ir.plan.recipes import attention
from tests.unit.lowering.levels import every_level_keeps, gradient_inputs


def _in_loops(module, cls) -> list:
    return [op for loop in module.walk() if isinstance(loop, scf.ForOp) for op in loop.body.walk() if isinstance(op, cls)]


@pytest.mark.parametrize("text,persistent", [
    (attention_diagram("softmax", 2, 2, 400, 128), False),
    (attention_diagram("causal", 2, 2, 400, 128), False),
    (attention_diagram("causal", 2, 2, 400, 64), True),
    (gqa_attention_diagram("causal", 1, 2, 4, 400, 128), False),
    (attention_diagram("softmax", 1, 2, 300, 128, n_keys=700), False),
])
def test_the_sums_are_kept_in_parts_and_the_numbers_hold(text, persistent):
    """No row sum is exchanged across a quad inside a loop; each chain's sum is combined
    once, after its loops (in the branch that made it, under a mask); the reg level's numbers are the
    diagram's, and within a bf16 step of the kernel that exchanges a trip (the sum's
    order alone differs)."""
    module = run_pipeline(text, "")
    plan = attention.sm90_plan(module, persistent=persistent)
    assert plan.partial_sums
    levels = [run_pipeline(str(module), spec(replace(plan, partial_sums=p).passes("reg"))) for p in (False, True)]
    assert _in_loops(levels[0], reg.RowReduceOp) and not _in_loops(levels[0], reg.RowAccumulateOp)
    assert not [op for op in _in_loops(levels[1], reg.RowReduceOp) if op.kind.data == "sum"]
    assert _in_loops(levels[1], reg.RowAccumulateOp)
    combines = [op for op in levels[1].walk() if isinstance(op, reg.RowCombineOp)]
    assert combines and not _in_loops(levels[1], reg.RowCombineOp) or persistent  # a persistent block's loops sit in the tiles' loop
    assert all(op.result.uses for op in combines)
    diagram = find_entry(module)
    inputs = diagram.random_inputs(seed=11)
    want = diagram.run(inputs)
    every_level_keeps(module, replace(plan, partial_sums=True), inputs, want, ("reg",))
    exchanged, parts = (find_entry(level).run(inputs) for level in levels)
    for a, b in zip(exchanged, parts, strict=True):
        assert np.isfinite(b).all() and np.abs(b).max() > 0
        assert (np.abs(a - b) <= 2.0**-7 * np.abs(a) + 1e-6).all()


def test_a_persistent_block_combines_inside_the_tiles_loop_only():
    """In a persistent block the stream loops sit in the loop over query tiles: the sum is
    combined once a tile, after the stream loops, not in them."""
    module = run_pipeline(attention_diagram("causal", 2, 2, 400, 64), "")
    lowered = run_pipeline(str(module), spec(attention.sm90_plan(module, persistent=True).passes("reg")))
    for loop in (o for o in lowered.walk() if isinstance(o, scf.ForOp)):
        body = list(loop.body.block.ops)
        if any(isinstance(o, reg.RowAccumulateOp) for o in body):  # a stream loop
            assert not any(isinstance(o, reg.RowCombineOp) for o in body)


def test_a_web_without_a_sum_added_is_left_alone():
    """The running max is a web of row values too (a fill, maps, carried), but no sum is
    added onto it: it stays a `row` fragment, and a kernel with no running sum is
    unchanged."""
    module = run_pipeline(attention_diagram("softmax", 1, 2, 400, 128), "")
    lowered = run_pipeline(str(module), spec(replace(attention.sm90_plan(module), partial_sums=False).passes("reg")))
    before = str(lowered)
    assert keep_parts(lowered) == 3  # the first tile's, the loop's and the ragged last tile's sums
    assert before.count("reg.fill {value = 0xff800000 : f32} : !reg.frag<row,") == str(lowered).count(
        "reg.fill {value = 0xff800000 : f32} : !reg.frag<row,")
    text, _ = gradient_inputs("softmax", 256, 256, 64, seed=1)
    for part in ("qkv", "kv", "q"):
        grad = run_pipeline(text, gradient_passes("softmax", part))
        assert not attention.running_sums(grad) and not attention.sm90_plan(grad, persistent=False).partial_sums


def test_the_ptx_loses_the_exchange_in_the_loop():
    text = attention_diagram("softmax", 1, 16, 16384, 128)
    with_parts = napkin_ir.compile(text, target="sm90", cache=False)
    without = napkin_ir.compile(text, target="sm90", cache=False, partial_sums=False)
    assert with_parts.ptx.count("shfl.sync.bfly") == without.ptx.count("shfl.sync.bfly") - 4  # 2 rows a lane, 2 steps each


@pytest.mark.parametrize("text,stream,want", [
    (attention_diagram("softmax", 1, 2, 16384, 128), None, True),
    (attention_diagram("causal", 1, 2, 16384, 64), None, True),
    (gqa_attention_diagram("causal", 1, 2, 4, 4096, 128), None, True),
    (attention_diagram("softmax", 1, 2, 16384, 256), None, False),  # measured no faster
    (attention_diagram("softmax", 1, 2, 256, 128), None, False),  # two tiles: ptxas spills 168 bytes a thread
    (attention_diagram("softmax", 1, 2, 2048, 128), 176, False),  # spills too
    (attention_diagram("spherical", 1, 2, 16384, 128), None, False),  # not measured
])
def test_partial_sums_pay(text, stream, want):
    assert attention.sm90_plan(run_pipeline(text, ""), stream=stream).partial_sums == want


def test_the_option_turns_it_on_and_off():
    """Spherical attention's forward keeps its exchange by default and takes the parts
    when asked; `partial_sums=false` turns them off where they are the default."""
    spherical = attention_diagram("spherical", 1, 2, 4096, 128)
    on = napkin_ir.compile(spherical, target="sm90", cache=False, partial_sums=True)
    off = napkin_ir.compile(spherical, target="sm90", cache=False)
    assert on.ptx.count("shfl.sync.bfly") < off.ptx.count("shfl.sync.bfly")
    softmax = attention_diagram("softmax", 1, 2, 16384, 128)
    assert napkin_ir.compile(softmax, target="sm90", cache=False, partial_sums=False).ptx.count("shfl.sync.bfly") \
        > napkin_ir.compile(softmax, target="sm90", cache=False).ptx.count("shfl.sync.bfly")


def test_the_model_searches_with_the_parts_as_asked():
    """The model's search (`autotile=true`) plans its candidates with the running sums as
    the request says, the wait for V placed to match (on a plain grid at d=128, before the
    products with the parts, after the row max without), not the chosen plan patched
    afterwards; the option reaches the search."""
    from napkin_ir.plan.planner import plan_kernel
    from napkin_ir.plan.request import request
    from napkin_ir.target import SM90

    module = run_pipeline(attention_diagram("softmax", 2, 4, 2048, 128), "")
    places = []
    for given in (True, False):
        space = attention.AttentionSpace(stream_sizes=(128,), persistent=False, partial_sums=given)
        plan = attention.chosen_attention(module, "h200", "napkin-sm90", space)
        assert plan.partial_sums is given
        places.append(plan.early_waits)
    assert places == ["products", "max"]
    asked = request("napkin-sm90", {"autotile": True, "hw": "h200", "partial_sums": False}, {"autotile": False, "hw": "h100", "partial_sums": None})
    assert not plan_kernel(module, SM90, asked).partial_sums
