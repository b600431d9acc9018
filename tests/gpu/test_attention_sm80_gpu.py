"""Attention on the GPU through every level on the sm_80 path (ncd, hbm, smem, reg, ptx):
softmax, causal and spherical attention, head dims 64 and 128, bf16 and f16, sequence
lengths the tiles divide and ragged ones, against a float64 reference on fresh random
inputs with a NaN-poisoned output.

    python3 -m pytest -q tests/gpu/test_attention_sm80_gpu.py
"""

from __future__ import annotations

import numpy as np
import pytest

from napkin_ir import reference
from napkin_ir.attention_diagrams import NAMES, attention_diagram
from napkin_ir.compiler import compile_attention

pytestmark = pytest.mark.gpu

# ||out - ref|| / ||ref|| against float64: bf16 output rounding alone is ~2e-3, f16 ~3e-4
TOLERANCE = {"bf16": 1e-2, "f16": 2e-3}
SHAPES = [  # b, h, n queries, n keys
    (2, 4, 256, 256),
    (1, 3, 1000, 1000),
    (2, 2, 77, 77),
    (1, 2, 2048, 2048),
]


def run_attention(torch, kind, b, h, n, nj, d, t, seed=0, **config):
    dt = torch.bfloat16 if t == "bf16" else torch.float16
    ptx, cfg = compile_attention(attention_diagram(kind, b, h, n, d, t, n_keys=nj), **config)
    from napkin_ir.runtime import Param, load_ptx

    g = torch.Generator(device="cuda").manual_seed(seed)
    q = torch.randn(b, h, n, d, device="cuda", generator=g).to(dt)
    k = torch.randn(b, h, nj, d, device="cuda", generator=g).to(dt)
    v = torch.randn(b, h, nj, d, device="cuda", generator=g).to(dt)
    o = torch.full((b, h, n, d), float("nan"), device="cuda", dtype=dt)
    kernel = load_ptx(ptx).kernel(cfg["name"], [Param.pointer(t, (b, h, n, d)), Param.pointer(t, (b, h, nj, d)),
                                                Param.pointer(t, (b, h, nj, d)), Param.pointer(t, (b, h, n, d), out=True)])
    kernel.launch(grid=cfg["grid"], block=cfg["block"], smem=cfg["smem"], args=[q, k, v, o])
    torch.cuda.synchronize()
    out = o.float().cpu().numpy()
    ref = reference.REFERENCES[NAMES[kind]](*(x.float().cpu().numpy() for x in (q, k, v)))
    return out, ref


@pytest.mark.parametrize("t", ["bf16", "f16"])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("kind", ["softmax", "causal", "spherical"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_attention_sm80_matches_float64(shape, kind, d, t):
    torch = pytest.importorskip("torch")
    out, ref = run_attention(torch, kind, *shape, d, t)
    assert not np.isnan(out).any(), "some output was not written"
    assert reference.relative_error(out, ref) <= TOLERANCE[t]


@pytest.mark.parametrize("kind", ["softmax", "spherical"])
def test_attention_sm80_more_keys_than_queries(kind):
    torch = pytest.importorskip("torch")
    out, ref = run_attention(torch, kind, 1, 2, 200, 333, 128, "bf16")
    assert not np.isnan(out).any()
    assert reference.relative_error(out, ref) <= TOLERANCE["bf16"]


CONFIGS = [  # query rows per block, keys per tile, warps, stages, Q's fragments kept in registers
    (64, 64, 4, 3, True),
    (128, 64, 4, 2, False),
    (64, 32, 4, 4, True),
    (128, 128, 8, 2, False),
    (128, 32, 4, 3, False),
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "b{}s{}w{}st{}{}".format(*c[:4], "" if c[4] else "-qsmem"))
@pytest.mark.parametrize("kind", ["softmax", "causal"])
def test_attention_sm80_configs(kind, config):
    torch = pytest.importorskip("torch")
    block, stream, warps, stages, q_in_registers = config
    out, ref = run_attention(torch, kind, 1, 4, 1000, 1000, 128, "bf16", block=block, stream=stream, warps=warps, stages=stages,
                             q_in_registers=q_in_registers)
    assert not np.isnan(out).any()
    assert reference.relative_error(out, ref) <= TOLERANCE["bf16"]


@pytest.mark.sanitize
@pytest.mark.parametrize("kind", ["softmax", "causal", "spherical"])
def test_attention_sm80_small(kind):
    """Small enough for compute-sanitizer's memcheck, racecheck and synccheck: ragged
    queries and keys, so the zero-filled rows and the skipped tiles are exercised."""
    torch = pytest.importorskip("torch")
    out, ref = run_attention(torch, kind, 1, 1, 200, 200, 64, "bf16", block=64, stream=64, stages=3)
    assert not np.isnan(out).any()
    assert reference.relative_error(out, ref) <= TOLERANCE["bf16"]


@pytest.mark.parametrize("kind", ["softmax", "causal", "spherical"])
@pytest.mark.parametrize("r,n,d", [(4, 77, 64), (8, 1000, 128), (4, 256, 128)])
def test_gqa_attention_sm80_matches_float64(kind, r, n, d):
    """Grouped-query attention on napkin-sm80: a group's query heads packed into a block,
    a warp or two a head."""
    import napkin_ir
    from napkin_ir.attention_diagrams import GQA_NAMES, gqa_attention_diagram

    torch = pytest.importorskip("torch")
    b, g = 2, 2
    kernel = napkin_ir.compile(gqa_attention_diagram(kind, b, g, r, n, d), target="sm80", cache=False)
    gen = torch.Generator(device="cuda").manual_seed(0)
    q = torch.randn(b, g, r, n, d, device="cuda", generator=gen).to(torch.bfloat16)
    k = torch.randn(b, g, n, d, device="cuda", generator=gen).to(torch.bfloat16)
    v = torch.randn(b, g, n, d, device="cuda", generator=gen).to(torch.bfloat16)
    o = torch.full((b, g, r, n, d), float("nan"), device="cuda", dtype=torch.bfloat16)
    kernel(q=q, k=k, v=v, out=o, sync=True)
    out = o.float().cpu().numpy()
    ref = reference.REFERENCES[GQA_NAMES[kind]](*(x.double().cpu().numpy() for x in (q, k, v)))
    assert not np.isnan(out).any(), "some output was not written"
    assert reference.relative_error(out, ref) <= TOLERANCE["bf16"]
