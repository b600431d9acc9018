"""Kernels lowered op by op (reg-to-ptx's rules) run on the GPU and match float64: sm_80's,
and, through napkin-run, sm_90a's for the same diagrams.

The plain GEMM after smem-unroll-stages and reg-prefetch (swizzled and padded stages,
unrolled or not), and more product diagrams: a batch axis on the grid, B stored [n, k],
an f32 output, a GEMM with a bias (per column or per row, f32 or bf16, relu or not after it) on both pipelines. Fresh
random inputs, a NaN-poisoned output, ragged shapes; bf16 and f16.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

from napkin_ir import reference
from napkin_ir.diagrams import gemm
from napkin_ir.dialects.ptx.printer import print_ptx
from napkin_ir.passmanager import run_pipeline
from napkin_ir.pipelines import launch_config, sm80_gemm_pipeline

pytestmark = pytest.mark.gpu

NEW_DIAGRAMS = {  # name: (text, grid, inputs' shapes, the reference)
    "batched": (gemm(200, 136, 72, name="bmm", batch=3), "b,m:64,n:64", [(3, 200, 72), (3, 72, 136)], lambda a, b: np.einsum("bmk,bkn->bmn", a, b)),
    "b_nk": (gemm(200, 136, 72, name="gemm_bt", b_nk=True), "m:64,n:64", [(200, 72), (136, 72)], lambda a, b: a @ b.T),
    "f32_out": (gemm(200, 136, 72, name="gemm_f32", out_dtype="f32"), "m:64,n:64", [(200, 72), (72, 136)], lambda a, b: a @ b),
}


def _compile(text: str, passes: str):
    module = run_pipeline(text, passes)
    out = io.StringIO()
    print_ptx(module, out)
    return out.getvalue(), launch_config(module)


def _launch(torch, ptx, cfg, arrays, dtypes):
    from napkin_ir.runtime import Param, load_ptx

    params = [Param.pointer(t, tuple(a.shape), out=n == len(arrays) - 1) for n, (a, t) in enumerate(zip(arrays, dtypes))]
    load_ptx(ptx).kernel(cfg["name"], params).launch(grid=cfg["grid"], block=cfg["block"], smem=cfg["smem"], args=arrays)
    torch.cuda.synchronize()


@pytest.mark.parametrize("t", ["bf16", "f16"])
@pytest.mark.parametrize("layout,unroll", [("auto", 2), ("pad8", 2), ("auto", 0)])
@pytest.mark.parametrize("shape,block,warps,stages", [((1000, 744, 520), (128, 128, 32), (2, 2), 3), ((2048, 1024, 1024), (128, 256, 64), (2, 4), 3),
                                                      ((130, 136, 48), (64, 64, 16), (2, 2), 4), ((4000, 3000, 1000), (256, 128, 64), (4, 2), 3)])
def test_op_by_op_gemm_matches_float64(shape, block, warps, stages, layout, unroll, t):
    torch = pytest.importorskip("torch")
    m, n, k = shape
    ptx, cfg = _compile(gemm(m, n, k, t), sm80_gemm_pipeline(block, warps, stages, layout=layout, unroll=unroll))
    dt = torch.bfloat16 if t == "bf16" else torch.float16
    a, b = torch.randn(m, k, device="cuda").to(dt), torch.randn(k, n, device="cuda").to(dt)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=dt)
    _launch(torch, ptx, cfg, [a, b, c], [t, t, t])
    out = c.double().cpu().numpy()
    assert np.isfinite(out).all(), "some output was not written"
    assert reference.relative_error(out, reference.matmul(a.double().cpu().numpy(), b.double().cpu().numpy())) <= reference.TOLERANCE[t]


@pytest.mark.sanitize
@pytest.mark.parametrize("name", sorted(NEW_DIAGRAMS))
def test_more_gemm_diagrams_match_float64(name):
    torch = pytest.importorskip("torch")
    text, grid, shapes, ref = NEW_DIAGRAMS[name]
    passes = (f'ncd-relabel{{grid="{grid}" stream="k:16"}},ncd-to-hbm,hbm-to-smem{{stages=3 layout=pad8}},'
              'smem-to-reg{warps="m:2,n:2"},smem-unroll-stages,reg-prefetch,reg-to-ptx')
    ptx, cfg = _compile(text, passes)
    a, b = (torch.randn(*s, device="cuda").to(torch.bfloat16) for s in shapes)
    want = ref(a.double().cpu().numpy(), b.double().cpu().numpy())
    f32 = name == "f32_out"
    c = torch.full(want.shape, float("nan"), device="cuda", dtype=torch.float32 if f32 else torch.bfloat16)
    _launch(torch, ptx, cfg, [a, b, c], ["bf16", "bf16", "f32" if f32 else "bf16"])
    out = c.double().cpu().numpy()
    assert np.isfinite(out).all(), "some output was not written"
    assert reference.relative_error(out, want) <= reference.TOLERANCE["bf16"]


BIAS_EPILOGUES = {  # name: diagrams.gemm's epilogue options
    "col": {"bias": "n"},
    "col_relu": {"bias": "n", "relu": True},
    "row_relu": {"bias": "m", "relu": True},
    "col_bf16_relu": {"bias": "n", "bias_dtype": "bf16", "relu": True},
}
BIAS_SHAPES = [(1000, 744, 520), (200, 136, 104), (2048, 1024, 1024), (256, 256, 128)]  # ragged, then even


def _bias_inputs(torch, shape, epilogue):
    """Random bf16 A and B, a bias of its type, a NaN-poisoned output, and the float64 result."""
    m, n, k = shape
    opts = BIAS_EPILOGUES[epilogue]
    a, b = torch.randn(m, k, device="cuda").to(torch.bfloat16), torch.randn(k, n, device="cuda").to(torch.bfloat16)
    dt = opts.get("bias_dtype", "f32")
    bias = torch.randn(n if opts["bias"] == "n" else m, device="cuda").to(torch.bfloat16 if dt == "bf16" else torch.float32)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    a64, b64, v = (x.double().cpu().numpy() for x in (a, b, bias))
    want = reference.matmul(a64, b64) + (v[None, :] if opts["bias"] == "n" else v[:, None])
    return a, b, bias, c, np.maximum(want, 0) if opts.get("relu") else want


@pytest.mark.parametrize("epilogue", sorted(BIAS_EPILOGUES))
@pytest.mark.parametrize("shape", BIAS_SHAPES)
def test_gemm_bias_sm80_matches_float64(shape, epilogue):
    """napkin-sm80's bias GEMM, op by op: each warp's bias read by ld.global, guarded at the edges."""
    torch = pytest.importorskip("torch")
    a, b, bias, c, want = _bias_inputs(torch, shape, epilogue)
    ptx, cfg = _compile(gemm(*shape, name="gemm_bias", **BIAS_EPILOGUES[epilogue]), "napkin-sm80")
    _launch(torch, ptx, cfg, [a, b, bias, c], ["bf16", "bf16", BIAS_EPILOGUES[epilogue].get("bias_dtype", "f32"), "bf16"])
    out = c.double().cpu().numpy()
    assert np.isfinite(out).all(), "some output was not written"
    assert reference.relative_error(out, want) <= reference.TOLERANCE["bf16"]


@pytest.mark.parametrize("epilogue", sorted(BIAS_EPILOGUES))
@pytest.mark.parametrize("shape", BIAS_SHAPES)
def test_gemm_bias_sm90_matches_float64(shape, epilogue):
    """napkin-sm90's bias GEMM (persistent, TMA stores where they fit): the consumers read
    the bias of each tile by ld.global; tensor maps for A, B and the output, a pointer for
    the bias (compile_kernel binds both)."""
    torch = pytest.importorskip("torch")
    from napkin_ir.runtime import get_context
    from napkin_ir.build import compile_kernel

    if get_context().compute_capability() < (9, 0):
        pytest.skip("needs an sm_90 GPU")
    a, b, bias, c, want = _bias_inputs(torch, shape, epilogue)
    compile_kernel(gemm(*shape, name="gemm_bias", **BIAS_EPILOGUES[epilogue]), "napkin-sm90")(a=a, b=b, bias=bias, out=c)
    torch.cuda.synchronize()
    out = c.double().cpu().numpy()
    assert np.isfinite(out).all(), "some output was not written"
    assert reference.relative_error(out, want) <= reference.TOLERANCE["bf16"]


def _examples():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "examples"
    return {name: (root / f"{name}.mlir").read_text() for name in ("two_products", "mlp", "gemm_exp", "gemm_bias")}


CLI_CASES = [  # (diagram, pipeline): napkin-run --gpu PIPELINE --check, against the diagram's own interpretation
    # (gemm_bias: against reference.gemm_bias, float64)
    *((name, "napkin-sm80") for name in ("two_products", "mlp", "gemm_exp", "gemm_bias")),
    ("batched", "napkin-sm80"), ("b_nk", "napkin-sm80"), ("f32_out", "napkin-sm80"), ("b_nk", "napkin-sm90"), ("f32_out", "napkin-sm90"),
    *((name, "napkin-sm90") for name in ("two_products", "mlp", "gemm_exp", "gemm_bias", "batched")),
]


@pytest.mark.parametrize("name,pipeline", CLI_CASES)
def test_named_pipelines_on_more_diagrams(name, pipeline, tmp_path, capsys):
    pytest.importorskip("torch")
    from napkin_ir.cli.run import main

    text = _examples()[name] if name in _examples() else NEW_DIAGRAMS[name][0]
    path = tmp_path / f"{name}.mlir"
    path.write_text(text)
    with pytest.raises(SystemExit) as done:
        main([str(path), "--gpu", pipeline, "--random-inputs", "--seed", "11", "--check"])
    said = capsys.readouterr().out
    assert done.value.code == 0, said
    assert "running on the CPU instead" not in said and "ok" in said, said
