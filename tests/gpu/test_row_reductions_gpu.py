"""Kernels with no product on the GPU: a row softmax (the README's 4096 x 1024 and ragged
shapes, whose rows no block divides), a row L2 norm and a row sum, compiled by the pass list
for reduction-only diagrams for this GPU's architecture (sm_90a on Hopper, else sm_80),
launched through napkin_ir.runtime on fresh random inputs with a NaN-poisoned output, and
compared with float64.

    ncd-relabel{grid="i:R"},ncd-to-hbm,hbm-to-smem,smem-to-reg{warps="i:W"},reg-to-ptx
"""

from __future__ import annotations

import io

import numpy as np
import pytest

from napkin_ir import reference
from napkin_ir.dialects.ptx.printer import print_ptx
from napkin_ir.passmanager import run_pipeline
from napkin_ir.pipelines import launch_config

pytestmark = pytest.mark.gpu


def _diagram(op: str, rows: int, cols: int, scale: float) -> str:
    x, x32 = f"!ncd.tensor<i={rows}, j={cols} : bf16>", f"!ncd.tensor<i={rows}, j={cols} : f32>"
    if op == "sum":
        out = f"!ncd.tensor<i={rows} : f32>"
        body = f"  %o = ncd.reduce sum %a along [j] : {x32} -> {out}\n"
    else:
        out = x
        by = f" scale {scale!r}" if op == "softmax" else ""
        body = f"  %p = ncd.{op} %a along j{by} : {x32} -> {x32}\n  %o = ncd.map cast %p : {x32} -> {x}\n"
    return (f"func.func @row_{op}(%x: {x}) -> {out} {{\n  %a = ncd.map cast %x : {x} -> {x32}\n{body}"
            f"  func.return %o : {out}\n}}\n")


def _arch(torch) -> str:
    return "sm_90a" if torch.cuda.get_device_capability() == (9, 0) else "sm_80"


def _run(torch, op: str, rows: int, cols: int, block: int, warps: int, scale: float = 1.0):
    """The kernel's output (float64, on the host) and the float64 reference, on fresh inputs."""
    from napkin_ir.runtime import Param, load_ptx

    module = run_pipeline(_diagram(op, rows, cols, scale),
                          f'ncd-relabel{{grid="i:{block}"}},ncd-to-hbm,hbm-to-smem,smem-to-reg{{warps="i:{warps}"}},reg-to-ptx')
    text = io.StringIO()
    print_ptx(module, text, _arch(torch))
    cfg = launch_config(module)
    x = (3 * torch.randn(rows, cols, device="cuda")).to(torch.bfloat16)  # fresh: no seed
    f32 = op == "sum"
    out = torch.full((rows,) if f32 else (rows, cols), float("nan"), device="cuda", dtype=torch.float32 if f32 else torch.bfloat16)
    params = [Param.pointer("bf16", (rows, cols)), Param.pointer("f32" if f32 else "bf16", tuple(out.shape), out=True)]
    load_ptx(text.getvalue()).kernel(cfg["name"], params).launch(grid=cfg["grid"], block=cfg["block"], smem=cfg["smem"], args=[x, out])
    torch.cuda.synchronize()
    x64 = x.double().cpu().numpy()
    if op == "softmax":
        want = reference.row_softmax(scale * x64)
    elif op == "l2norm":
        want = reference.row_l2norm(x64)
    else:
        want = x64.sum(-1)
    return out.double().cpu().numpy(), want


# (rows, cols, rows a block, warps): the README's shape, ragged rows (1000 / 16, 1000 / 8
# blocks) and 3-span rows (768), a long row (4096 = 128 values a lane), two rows a warp
SOFTMAX_SHAPES = [(4096, 1024, 4, 4), (1000, 768, 16, 4), (1000, 768, 8, 8), (333, 4096, 4, 4), (4096, 1024, 8, 4)]


@pytest.mark.parametrize("shape", SOFTMAX_SHAPES)
def test_row_softmax_matches_float64(shape):
    torch = pytest.importorskip("torch")
    out, want = _run(torch, "softmax", *shape)
    assert np.isfinite(out).all(), "some output was not written"
    assert reference.relative_error(out, want) <= reference.TOLERANCE["bf16"]
    assert np.abs(out.sum(-1) - 1).max() < 2e-2  # every row a distribution (bf16 rounding of each value)


def test_row_softmax_scaled_matches_float64():
    torch = pytest.importorskip("torch")
    out, want = _run(torch, "softmax", 1000, 768, 16, 4, scale=0.125)
    assert np.isfinite(out).all(), "some output was not written"
    assert reference.relative_error(out, want) <= reference.TOLERANCE["bf16"]


@pytest.mark.parametrize("op,shape,tolerance", [("l2norm", (1000, 768, 16, 4), "bf16"), ("l2norm", (4096, 2048, 8, 8), "bf16"),
                                                ("sum", (1000, 768, 8, 4), "f32"), ("sum", (4096, 1024, 16, 4), "f32")])
def test_row_l2norm_and_sum_match_float64(op, shape, tolerance):
    torch = pytest.importorskip("torch")
    out, want = _run(torch, op, *shape)
    assert np.isfinite(out).all(), "some output was not written"
    assert reference.relative_error(out, want) <= reference.TOLERANCE[tolerance]
