"""Grouped-query attention's dK and dV from the grouped diagram: each sums over a group's
query heads as well as the queries. `ncd-widen-results` gives them f32 results, the plan
spreads the query heads over the grid (a head a block, `AttentionAxes.summed`) and
streams the queries, and each block adds its part into the f32 output. The numbers
survive every level of both pipelines on the CPU, and napkin-sm80's PTX in the warp-level
emulator, against the grouped diagram (softmax and causal, lengths the tiles do not
divide)."""

from __future__ import annotations

import numpy as np
import pytest

from napkin_ir import reference
from napkin_ir.attention_diagrams import gqa_attention_diagram
from napkin_ir.interpreters.ptx import HALF, run_kernel
from napkin_ir.interpreters.run import find_entry
from napkin_ir.passmanager import run_pipeline
from napkin_ir.plan.diagram import attention_axes
from napkin_ir.plan.recipes import attention
from napkin_ir.runtime.contract import launch_contract
from tests.unit.lowering.levels import every_level_keeps

GRAD = "ncd-grad{residuals=true},ncd-fold-casts"
CASES = [("softmax", 2, 72, 40), ("causal", 4, 80, 80)]  # kind, query heads a group, queries, keys


def _name(kind: str) -> str:
    return {"softmax": "gqa_attention", "causal": "gqa_causal_attention"}[kind]


def _derive(kind: str, part: str) -> str:
    pick = 'value="delta"' if part == "delta" else f'result={"qkv".index(part)} cut="delta"'
    return f'{GRAD},ncd-extract{{function="{_name(kind)}_grad" {pick}}}' + (",ncd-widen-results" if part in "kv" else "")


def _values(kind: str, r: int, n: int, nk: int, d: int = 64):
    text = gqa_attention_diagram(kind, 1, 2, r, n, d, n_keys=nk)
    rng = np.random.default_rng(r + n)
    half = HALF["bf16"]
    q, d_o = (rng.standard_normal((1, 2, r, n, d)).astype(half).astype(np.float32) for _ in range(2))
    k, v = (rng.standard_normal((1, 2, nk, d)).astype(half).astype(np.float32) for _ in range(2))
    o, lse = find_entry(run_pipeline(text, GRAD), _name(kind)).run([q, k, v])
    delta = find_entry(run_pipeline(text, _derive(kind, "delta"))).run([d_o, o])[0]
    return text, {"q": q, "k": k, "v": v, "d_o": d_o, "o": o, "lse": lse, "delta": delta}


def test_the_grouped_gradient_sums_the_query_heads_over_the_grid():
    module = run_pipeline(gqa_attention_diagram("softmax", 1, 2, 4, 64, 64), _derive("softmax", "k"))
    axes = attention_axes(module)
    assert axes is not None and (axes.query, axes.keys, axes.summed) == ("j", "i", ("r",))
    plan = attention.sm90_plan(module)
    assert ("r", None) in plan.grid and plan.stream[0] == "i"


@pytest.mark.parametrize("plan", ["sm80", "sm90"])
@pytest.mark.parametrize("part", ["k", "v"])
@pytest.mark.parametrize("kind, r, n, nk", CASES)
def test_every_level_sums_the_group(kind, r, n, nk, part, plan):
    text, values = _values(kind, r, n, nk)
    module = run_pipeline(text, _derive(kind, part))
    diagram = find_entry(module)
    inputs = [values[name] for name in diagram.input_names]
    kernel_plan = attention.sm80_plan(module) if plan == "sm80" else attention.sm90_plan(module, persistent=False)
    every_level_keeps(module, kernel_plan, inputs, diagram.run(inputs))


@pytest.mark.parametrize("part", ["k", "v"])
def test_sm80_ptx_adds_the_heads_in_the_emulator(part):
    kind, r, n, nk = CASES[1]
    text, values = _values(kind, r, n, nk)
    module = run_pipeline(text, _derive(kind, part))
    diagram = find_entry(module)
    inputs = [values[name] for name in diagram.input_names]
    want = diagram.run(inputs)[0]
    compiled = run_pipeline(text, _derive(kind, part) + ",napkin-sm80")
    assert [p.arg for p in launch_contract(compiled).params if p.role == "accumulate"] == ["out"]
    out = np.zeros(want.shape, np.float32)  # the launch zeroes an accumulated output
    halves = {"q", "k", "v", "d_o"}  # bf16 arguments; the log-sum-exp and D are f32
    run_kernel(compiled, [x.astype(HALF["bf16"]) if name in halves else x for x, name in zip(inputs, diagram.input_names)] + [out],
               lazy=True, reverse=True)
    assert reference.relative_error(out, want) <= reference.TOLERANCE["bf16"]
