"""Rows shorter than 256 columns (the attention backward's D = rowsum(dO * O) over a head
dim of 64 or 128, a row softmax over 64 or 128 columns) keep their numbers at every level.

A row of L columns (L = 8, 16, 32, 64 or 128) lies across L / 8 lanes of a warp, 8 columns
a lane, the warp holding 256 / L rows at a time (`line` fragments of span L); its
reductions shuffle only within its lanes. The hbm, smem and reg levels of the plans that
napkin-sm80 and napkin-sm90 choose run on the CPU interpreters, the PTX in the warp-level
emulator with a poisoned output, each against float64, on ragged row counts (no block
divides 200 or 37) and even ones; the PTX assembles for sm_80 and sm_90a without spills.
Rows of 256 and more are test_row_reductions.py's; D at 256 is here too.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.utils.exceptions import PassFailedException

from napkin_ir import reference
from napkin_ir.dialects.reg import LINE_SPANS, lane_layout
from napkin_ir.interpreters.ptx import HALF, run_kernel
from napkin_ir.interpreters.run import find_entry
from napkin_ir.model.ptxas import find_ptxas, ptxas_resources
from napkin_ir.passmanager import compile_to_ptx, run_pipeline, spec
from napkin_ir.pipelines import NapkinSm80Pass, NapkinSm90Pass

from test_row_reductions import diagram, ref

PIPELINES = {"napkin-sm80": NapkinSm80Pass(), "napkin-sm90": NapkinSm90Pass()}


def delta_diagram(b: int, h: int, i: int, d: int) -> str:
    """D[b, h, i] = sum_d dO[b, h, i, d] O[b, h, i, d] in f32, as examples/attention_delta.mlir."""
    x, x32, out = (f"!ncd.tensor<b={b}, h={h}, i={i}, d={d} : bf16>", f"!ncd.tensor<b={b}, h={h}, i={i}, d={d} : f32>",
                   f"!ncd.tensor<b={b}, h={h}, i={i} : f32>")
    return (f"func.func @attention_delta(%o: {x}, %d_o: {x}) -> {out} {{\n"
            f"  %o32 = ncd.map cast %o : {x} -> {x32}\n  %d_o32 = ncd.map cast %d_o : {x} -> {x32}\n"
            f"  %p = ncd.map mul %d_o32, %o32 : {x32}, {x32} -> {x32}\n"
            f"  %delta = ncd.reduce sum %p along [d] : {x32} -> {out}\n  func.return %delta : {out}\n}}\n")


def delta_ref(o: np.ndarray, d_o: np.ndarray) -> np.ndarray:
    return (np.asarray(o, np.float64) * np.asarray(d_o, np.float64)).sum(-1)


@pytest.mark.parametrize("span", LINE_SPANS)
@pytest.mark.parametrize("spans_a_row", [1, 2, 3])
def test_a_line_layout_places_each_element_once(span, spans_a_row):
    rows, cols = 2 * 256 // span, spans_a_row * span
    r, c = lane_layout("line", rows, cols, span)
    assert r.shape == (32, rows * cols // 32)
    count = np.zeros((rows, cols), int)
    np.add.at(count, (r.ravel(), c.ravel()), 1)
    assert (count == 1).all()
    lanes = np.arange(32)[:, None]
    assert (c % span // 8 == lanes % (span // 8)).all(), "a lane holds 8 columns of every span, at its place in its row"
    # one value per row: the row of each value of the lane, in the lanes that hold the row
    rr, _ = lane_layout("line", rows, 1, span)
    per = cols // (span // 8)
    assert (rr[:, np.arange(r.shape[1]) // per] == r).all()


def test_a_row_of_64_lies_across_8_lanes_4_rows_at_a_time():
    r, c = lane_layout("line", 8, 64, 64)
    assert list(zip(r[9], c[9]))[:2] == [(1, 8), (1, 9)]  # lane 9: row 1, columns 8..15
    assert (r[9, 8], c[9, 8]) == (5, 8)  # then the row 4 on


def _levels(text: str, pipeline: str) -> list[str]:
    plan = PIPELINES[pipeline].plan(run_pipeline(text))
    return [spec(plan.passes(level)) for level in ("hbm", "smem", "reg")]


DELTA_SHAPES = [(1, 2, 200, 64), (2, 2, 64, 64), (1, 2, 200, 128), (1, 3, 37, 128), (1, 2, 200, 256), (1, 1, 37, 32), (1, 1, 70, 16), (1, 1, 70, 8)]


@pytest.mark.parametrize("pipeline", PIPELINES)
@pytest.mark.parametrize("shape", DELTA_SHAPES)
def test_every_level_gives_the_delta(shape, pipeline):
    text = delta_diagram(*shape)
    x = find_entry(run_pipeline(text)).random_inputs(3)
    want = delta_ref(*x)
    for level in _levels(text, pipeline):
        got = find_entry(run_pipeline(text, level)).run(x)[0]
        assert np.isfinite(np.asarray(got, np.float64)).all(), f"{level}: some output was not written"
        assert reference.relative_error(got, want) <= reference.TOLERANCE["f32"], level


OPS = ["softmax", "l2norm", "sum", "max"]
ROW_SHAPES = [(40, 64), (37, 128), (64, 128), (37, 32), (70, 16), (70, 8)]


def _tolerance(op: str) -> float:
    return reference.TOLERANCE["f32" if op in ("sum", "max") else "bf16"]


@pytest.mark.parametrize("pipeline", PIPELINES)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shape", ROW_SHAPES)
def test_every_level_gives_the_row_ops_numbers(op, shape, pipeline):
    text = diagram(op, *shape)
    x = find_entry(run_pipeline(text)).random_inputs(3)
    want = ref(op, x[0])
    for level in _levels(text, pipeline):
        got = find_entry(run_pipeline(text, level)).run(x)[0]
        assert np.isfinite(np.asarray(got, np.float64)).all(), f"{level}: some output was not written"
        assert reference.relative_error(got, want) <= _tolerance(op), level


def _run_ptx(module, inputs: list[np.ndarray], out: np.ndarray) -> dict[str, int]:
    """The PTX in the warp-level emulator: copies landing as late as allowed, warps in reverse order."""
    return run_kernel(module, [*inputs, out], lazy=True, reverse=True)


@pytest.mark.parametrize("pipeline", PIPELINES)
@pytest.mark.parametrize("shape", DELTA_SHAPES + [(1, 1, 3, 64)])
def test_the_delta_ptx_matches_float64(shape, pipeline):
    """Rows past the edge (200 and 37 in blocks of 16 or more, 3 in a block of 16) are neither
    read nor written; rows of 64 and 128 read shared memory without bank conflicts."""
    b, h, i, d = shape
    module = run_pipeline(delta_diagram(*shape), pipeline)
    rng = np.random.default_rng(5)
    o, d_o = ((3 * rng.standard_normal((b, h, i, d))).astype(HALF["bf16"]) for _ in range(2))
    out = np.full((b, h, i), np.nan, np.float32)
    conflicts = _run_ptx(module, [o, d_o], out)
    assert conflicts["ld.shared"] == 0
    assert np.isfinite(out).all(), "some output was not written"
    assert reference.relative_error(out, delta_ref(o, d_o)) <= reference.TOLERANCE["f32"]


@pytest.mark.parametrize("layout", ["row", "pad8"])
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shape", [(40, 64, 16, 4), (37, 128, 8, 2), (64, 64, 32, 4), (37, 32, 16, 2)])
def test_the_row_ops_ptx_matches_float64(op, shape, layout):
    """Several steps of rows a warp (32 rows of 64 over 4 warps: 2 steps of 4), padded rows in
    shared memory as well as plain ones."""
    rows, cols, block, warps = shape
    passes = f'ncd-relabel{{grid="i:{block}"}},ncd-to-hbm,hbm-to-smem{{layout={layout}}},smem-to-reg{{warps="i:{warps}"}},reg-to-ptx'
    module = run_pipeline(diagram(op, rows, cols), passes)
    rng = np.random.default_rng(7)
    half = HALF["bf16"]
    x = (3 * rng.standard_normal((rows, cols))).astype(half)
    out = np.full(rows, np.nan, np.float32) if op in ("sum", "max") else np.full((rows, cols), 0xFFFF, np.uint16).view(half)
    conflicts = _run_ptx(module, [x], out)
    if cols >= 64:  # 8 lanes of a quarter-warp read 128 adjacent bytes of one row
        assert conflicts["ld.shared"] == 0
    assert np.isfinite(out.astype(np.float64)).all(), "some output was not written"
    assert reference.relative_error(out, ref(op, x)) <= _tolerance(op)


@pytest.mark.skipif(find_ptxas() is None, reason="ptxas not installed")
@pytest.mark.parametrize("pipeline,arch", [("napkin-sm80", "sm_80"), ("napkin-sm90", "sm_90a")])
@pytest.mark.parametrize("text", [delta_diagram(2, 4, 256, 64), delta_diagram(2, 4, 256, 128), delta_diagram(2, 4, 256, 256),
                                  delta_diagram(1, 16, 1000, 64), diagram("softmax", 4096, 64), diagram("softmax", 1000, 128),
                                  diagram("l2norm", 4096, 128), diagram("max", 1000, 32)],
                         ids=["delta-d64", "delta-d128", "delta-d256", "delta-d64-ragged", "softmax-64", "softmax-128", "l2norm-128", "max-32"])
def test_the_ptx_assembles_without_spills(text, pipeline, arch):
    ptx = compile_to_ptx(text, pipeline)
    assert f".target {arch}" in ptx
    (res,) = ptxas_resources(ptx, arch).values()
    assert not res.spills and res.stack_bytes == 0, res


@pytest.mark.parametrize("text,pipeline,message", [
    (delta_diagram(2, 4, 256, 72), "napkin-sm90",
     "the rows along 'd' are 72 columns long, which a warp cannot hold: each lane holds 8 adjacent columns (16 bytes of bf16) "
     "of a row that lies across 1, 2, 4, 8, 16 or 32 lanes, so a row is 8, 16, 32, 64, 128 or a multiple of 256 columns long; "
     "pad the rows to 128"),
    (diagram("softmax", 64, 200), "napkin-sm80", "the rows along 'j' are 200 columns long, which a warp cannot hold"),
    (diagram("sum", 64, 1000), "napkin-sm80", "a multiple of 256 columns long; pad the rows to 1024"),
    (delta_diagram(2, 4, 256, 64), 'napkin-sm80{block="8" warps="4"}',
     "rows of 64 columns lie across 8 lanes, a warp holding 4 at a time, so each warp's rows ('i') must be a multiple of 4; "
     "8 rows a block over 4 warp(s) give each 2: use a multiple of 16 rows a block, or 2 warp(s)"),
    (diagram("softmax", 64, 32), 'napkin-sm90{block="4" warps="1"}',
     "rows of 32 columns lie across 4 lanes, a warp holding 8 at a time, so each warp's rows ('i') must be a multiple of 8; "
     "4 rows a block over 1 warp(s) give each 4: use a multiple of 8 rows a block"),
])
def test_rows_no_warp_holds_are_refused_with_what_would_do(text, pipeline, message):
    with pytest.raises(PassFailedException) as err:
        run_pipeline(text, pipeline)
    assert message in str(err.value)
