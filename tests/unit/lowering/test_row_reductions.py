"""Reduction-only diagrams (a row softmax, an L2 norm, a row sum or max: no product) keep
their numbers at every level, and their PTX assembles for sm_80 and sm_90a without spills.

The pass list per target is `ncd-relabel{grid="i:R"},ncd-to-hbm,hbm-to-smem,
smem-to-reg{warps="i:W"},reg-to-ptx`: the block stages its R rows with cp.async (legal on
both targets), each of W warps holds R / W rows whole in `line` fragments (8 columns of
every 256 a lane), reduces them with shuffles and stores 16 bytes a lane; the target is
the PTX printer's (`-t ptx` for sm_80, `-t "ptx{arch=sm_90a}"`). The hbm, smem and reg
levels run on the CPU interpreters, the PTX in the warp-level emulator with a poisoned
output, each against float64 on ragged (rows that no block divides) and even shapes.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.utils.exceptions import PassFailedException

from napkin_ir import reference
from napkin_ir.interpreters.ptx import HALF, run_kernel
from napkin_ir.interpreters.run import find_entry
from napkin_ir.model.ptxas import find_ptxas, ptxas_resources
from napkin_ir.passmanager import compile_to_ptx, run_pipeline


def diagram(op: str, rows: int, cols: int) -> str:
    """A bf16 [i, j] input, cast to f32, `op` along j; the output bf16 (f32 for a reduction)."""
    x, x32 = f"!ncd.tensor<i={rows}, j={cols} : bf16>", f"!ncd.tensor<i={rows}, j={cols} : f32>"
    if op in ("sum", "max"):
        out = f"!ncd.tensor<i={rows} : f32>"
        body = f"  %o = ncd.reduce {op} %a along [j] : {x32} -> {out}\n"
    else:
        out = x
        scale = " scale 0.5" if op == "softmax" else ""
        body = (f"  %p = ncd.{op} %a along j{scale} : {x32} -> {x32}\n"
                f"  %o = ncd.map cast %p : {x32} -> {x}\n")
    return (f"func.func @row_{op}(%x: {x}) -> {out} {{\n  %a = ncd.map cast %x : {x} -> {x32}\n{body}"
            f"  func.return %o : {out}\n}}\n")


def ref(op: str, x: np.ndarray) -> np.ndarray:
    x64 = np.asarray(x, np.float64)
    if op == "softmax":
        return reference.row_softmax(0.5 * x64)
    if op == "l2norm":
        return reference.row_l2norm(x64)
    return x64.sum(-1) if op == "sum" else x64.max(-1)


def passes(rows: int, warps: int) -> list[str]:
    """The pass list cut after each level: hbm, smem, reg, ptx."""
    steps = [f'ncd-relabel{{grid="i:{rows}"}},ncd-to-hbm', "hbm-to-smem", f'smem-to-reg{{warps="i:{warps}"}}', "reg-to-ptx"]
    return [",".join(steps[: n + 1]) for n in range(len(steps))]


OPS = ["softmax", "l2norm", "sum", "max"]
# (rows, cols, rows a block, warps): ragged rows (no block divides 40 or 1000), several rows a warp, 768 = 3 spans
SHAPES = [(40, 512, 16, 4), (64, 256, 8, 8), (37, 768, 4, 2)]


def _tolerance(op: str) -> float:
    return reference.TOLERANCE["f32" if op in ("sum", "max") else "bf16"]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shape", SHAPES)
def test_every_level_gives_the_diagrams_numbers(op, shape):
    rows, cols, block, warps = shape
    text = diagram(op, rows, cols)
    x = find_entry(run_pipeline(text)).random_inputs(3)
    want = ref(op, x[0])
    for level in passes(block, warps)[:3]:
        got = find_entry(run_pipeline(text, level)).run(x)[0]
        assert np.isfinite(np.asarray(got, np.float64)).all(), f"{level}: some output was not written"
        assert reference.relative_error(got, want) <= _tolerance(op), level


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("layout", ["row", "pad8"])
def test_ptx_matches_float64(op, shape, layout):
    """The PTX in the warp-level emulator (copies landing as late as allowed, warps in
    reverse order), its output poisoned: rows past the edge are neither read nor written.
    Padded rows in shared memory are read as well as plain ones."""
    rows, cols, block, warps = shape
    module = run_pipeline(diagram(op, rows, cols), passes(block, warps)[-1].replace("hbm-to-smem", f"hbm-to-smem{{layout={layout}}}"))
    rng = np.random.default_rng(5)
    half = HALF["bf16"]
    x = (3 * rng.standard_normal((rows, cols))).astype(half)
    if op in ("sum", "max"):
        out = np.full(rows, np.nan, np.float32)
    else:
        out = np.full((rows, cols), 0xFFFF, np.uint16).view(half)
    conflicts = run_kernel(module, [x, out], lazy=True, reverse=True)
    assert conflicts["ld.shared"] == 0
    assert np.isfinite(out.astype(np.float64)).all(), "some output was not written"
    assert reference.relative_error(out, ref(op, x)) <= _tolerance(op)


def f32_diagram(rows: int, cols: int) -> str:
    """A row softmax of an f32 [i, j] input scaled by a bf16 one, out in bf16 and its row
    sums in f32: f32 rows staged and read as they lie, beside 16-bit ones."""
    x, y = f"!ncd.tensor<i={rows}, j={cols} : f32>", f"!ncd.tensor<i={rows}, j={cols} : bf16>"
    r = f"!ncd.tensor<i={rows} : f32>"
    return (f"func.func @f32_rows(%x: {x}, %y: {y}) -> ({y}, {r}) {{\n"
            f"  %y32 = ncd.map cast %y : {y} -> {x}\n"
            f"  %z = ncd.map mul %x, %y32 : {x}, {x} -> {x}\n"
            f"  %p = ncd.softmax %z along j scale 0.5 : {x} -> {x}\n"
            f"  %o = ncd.map cast %p : {x} -> {y}\n"
            f"  %s = ncd.reduce sum %x along [j] : {x} -> {r}\n"
            f"  func.return %o, %s : {y}, {r}\n}}\n")


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("layout", ["row", "pad8"])
def test_f32_rows_match_float64(shape, layout):
    """f32 inputs staged by cp.async (16 bytes, 4 values, a copy) and read 8 values a lane
    by two 16-byte reads, beside a bf16 input in the same kernel (whose copies take 8 values
    a chunk: the two must not share a thread's element index), in the emulator against
    float64, the outputs poisoned."""
    rows, cols, block, warps = shape
    module = run_pipeline(f32_diagram(rows, cols), passes(block, warps)[-1].replace("hbm-to-smem", f"hbm-to-smem{{layout={layout}}}"))
    rng = np.random.default_rng(6)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    y = rng.standard_normal((rows, cols)).astype(HALF["bf16"])
    out = np.full((rows, cols), 0xFFFF, np.uint16).view(HALF["bf16"])
    sums = np.full(rows, np.nan, np.float32)
    run_kernel(module, [x, y, out, sums], lazy=True, reverse=True)
    assert np.isfinite(out.astype(np.float64)).all() and np.isfinite(sums).all(), "some output was not written"
    z = x.astype(np.float64) * y.astype(np.float64)
    assert reference.relative_error(out, reference.row_softmax(0.5 * z)) <= reference.TOLERANCE["bf16"]
    assert reference.relative_error(sums, x.astype(np.float64).sum(-1)) <= reference.TOLERANCE["f32"]


@pytest.mark.skipif(find_ptxas() is None, reason="ptxas not installed")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("op,shape", [("softmax", (4096, 1024, 4, 4)), ("softmax", (1000, 768, 8, 4)),
                                      ("softmax", (512, 4096, 4, 4)), ("l2norm", (4096, 2048, 8, 8)),
                                      ("sum", (1000, 768, 8, 4)), ("max", (4096, 1024, 16, 4))])
def test_ptx_assembles_without_spills(arch, op, shape):
    rows, cols, block, warps = shape
    ptx = compile_to_ptx(diagram(op, rows, cols), passes(block, warps)[-1], arch=arch)
    assert f".target {arch}" in ptx
    (res,) = ptxas_resources(ptx, arch).values()
    assert not res.spills and res.stack_bytes == 0, res


def test_an_f32_sum_down_the_columns_matches_float64():
    """A sum down the columns of an f32 tile (a bias's gradient in f32) through napkin-sm80:
    its streamed rows staged as f32, in the emulator against float64."""
    x = "!ncd.tensor<i=200, j=128 : f32>"
    text = (f"func.func @colsum(%x: {x}) -> !ncd.tensor<j=128 : f32> {{\n"
            f"  %s = ncd.reduce sum %x along [i] : {x} -> !ncd.tensor<j=128 : f32>\n"
            f"  func.return %s : !ncd.tensor<j=128 : f32>\n}}\n")
    module = run_pipeline(text, "napkin-sm80")
    a = np.random.default_rng(7).standard_normal((200, 128)).astype(np.float32)
    out = np.full(128, np.nan, np.float32)
    run_kernel(module, [a, out], lazy=True, reverse=True)
    assert reference.relative_error(out, a.astype(np.float64).sum(0)) <= reference.TOLERANCE["f32"]


@pytest.mark.skipif(find_ptxas() is None, reason="ptxas not installed")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_f32_rows_assemble_without_spills(arch):
    ptx = compile_to_ptx(f32_diagram(4096, 1024), passes(4, 4)[-1], arch=arch)
    assert "ld.shared.v4.f32" in ptx
    (res,) = ptxas_resources(ptx, arch).values()
    assert not res.spills and res.stack_bytes == 0, res


@pytest.mark.parametrize("op,shape,pipeline,message", [
    ("softmax", (64, 1000, 8, 4), None, "the rows along 'j' are 1000 columns long, which a warp cannot hold"),
    ("softmax", (64, 8192, 8, 4), None, "512 values a lane, over the 128 that fit in registers"),
    ("softmax", (64, 1024, 8, 3), None, "the block's 8 rows ('i') do not split over 3 warps"),
    ("softmax", (64, 1024, 8, 4), 'ncd-relabel{grid="i:8"},ncd-to-hbm,hbm-to-smem,smem-to-reg{warps="i:2,j:2"}',
     "warps may share only the rows ('i') of a kernel with no product"),
    ("sum", (64, 1024, 8, 4), 'ncd-relabel{grid="i:8" stream="j:256"},ncd-to-hbm,hbm-to-smem,smem-to-reg{warps="i:4"}',
     "a kernel with no product holds its rows whole in registers; it has a stream loop"),
    ("softmax", (64, 1024, 8, 4), 'ncd-relabel{grid="i:8"},ncd-to-hbm,hbm-to-smem{copy=tma},smem-to-reg{warps="i:4"}',
     "a kernel with no product reads its staged rows as they lie (layout=row or pad8), got layout=swizzle"),
    ("softmax", (64, 1024, 8, 4), 'ncd-relabel{grid="i:8"},ncd-to-hbm,hbm-to-smem,smem-to-reg{mma=wgmma}',
     "has no product for wgmma to compute; a kernel with no product reduces its rows in 'line' fragments"),
])
def test_shapes_smem_to_reg_refuses(op, shape, pipeline, message):
    rows, cols, block, warps = shape
    with pytest.raises(PassFailedException) as err:
        run_pipeline(diagram(op, rows, cols), pipeline or passes(block, warps)[2])
    assert message in str(err.value)
