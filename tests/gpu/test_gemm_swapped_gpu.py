"""GEMMs computed swapped on the GPU (napkin-sm90, `swap`): wgmma's rows over the output's
columns, its N over the rows, so that the rows' tile is any multiple of 8; the output
leaves through stmatrix.trans and TMA stores (or from registers with store=direct).

Fresh random inputs, a NaN-poisoned output, a float64 reference; ragged M, N and K, persistent
and plain grids, clusters of two sharing B, and the torch op on the shapes where the model
picks a swapped tile.
"""

import pytest
from checks import expect_close
from test_gemm_sm90_gpu import _need_sm90, run_compiled

pytestmark = pytest.mark.gpu

CASES = [  # (m, n, k), options
    ((1000, 744, 520), {"block": (152, 128, 64)}),
    ((300, 264, 120), {"block": (104, 128, 64)}),
    ((77, 200, 64), {"block": (80, 64, 64)}),
    ((2100, 1024, 1000), {"block": (176, 128, 64), "cluster": 2}),
    ((1000, 744, 520), {"block": (256, 128, 64), "swap": True}),
    ((1000, 744, 520), {"block": (232, 128, 64), "persistent": False}),
    ((1000, 744, 520), {"block": (152, 128, 64), "store": "direct"}),
    ((513, 384, 136), {"block": (160, 192, 64)}),
]


@pytest.mark.parametrize("shape, options", CASES, ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else
                         "-".join(f"{k}{'x'.join(map(str, x)) if isinstance(x, tuple) else x}" for k, x in v.items()))
def test_gemm_swapped_matches_float64(shape, options):
    torch = pytest.importorskip("torch")
    _need_sm90()
    expect_close(*run_compiled(torch, *shape, **options), "bf16")


@pytest.mark.sanitize
@pytest.mark.parametrize("options", [{"block": (104, 128, 64)}, {"block": (136, 128, 64), "cluster": 2},
                                     {"block": (152, 128, 64), "store": "direct", "persistent": False}],
                         ids=["persistent", "cluster", "direct"])
def test_gemm_swapped_small_for_the_sanitizer(options):
    """Small enough for compute-sanitizer: ragged rows (a last row tile 20 of 104, 56 of
    136, 8 of 152), columns past the last 128 and a contraction past the last stream tile."""
    torch = pytest.importorskip("torch")
    _need_sm90()
    expect_close(*run_compiled(torch, 520 if "cluster" in options else 312, 392, 200, **options), "bf16")


@pytest.mark.parametrize("shape", [(1000, 14336, 4096), (3000, 7000, 1000), (5000, 3000, 2056), (100, 4096, 1000), (72, 14336, 4096)])
def test_the_torch_op_on_shapes_the_model_swaps(shape):
    torch = pytest.importorskip("torch")
    _need_sm90()
    import napkin_ir.torch as nt

    m, n, k = shape
    assert nt.gemm_candidates(m, n, k, torch.cuda.get_device_capability())[0][1].get("swap")
    a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    b = torch.randn(k, n, device="cuda").to(torch.bfloat16)
    out = nt.matmul(a, b)
    want = a.double() @ b.double()
    err = float((out.double() - want).norm() / want.norm())
    assert not out.isnan().any() and err < 1e-2, err
