"""A GEMM C[m, n] = A B computed with wgmma's rows over n (smem-to-reg{rows="n"}): B [k, n]
is wgmma's A, read M-major from its swizzled panels, and A's m-tile wgmma's N, any multiple
of 8 (152, 104, 80, 160). The output leaves through 128-byte panels of C with
stmatrix.trans (store=tma) or value by value (store=direct). The numbers survive the reg
level on the CPU interpreter against float64; the sm_90a PTX assembles without spills."""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

from napkin_ir import reference
from napkin_ir.diagrams import gemm
from napkin_ir.interpreters.ptx import HALF
from napkin_ir.interpreters.run import find_entry
from napkin_ir.model.ptxas import find_ptxas
from napkin_ir.passmanager import compile_to_ptx, run_pipeline


def _spec(bm: int, bn: int, store: str, to_ptx: bool = False) -> str:
    spec = (f'ncd-relabel{{grid="m:{bm},n:{bn}" stream="k:64"}},ncd-to-hbm,hbm-launch,hbm-to-smem{{stages=3 copy="tma" '
            f'store="{store}"}},smem-to-reg{{mma="wgmma" rows="n"}}')
    return spec + (',reg-hoist-loads,reg-reload-loads,reg-to-ptx{arch="sm_90a"}' if to_ptx else "")


@pytest.mark.parametrize("store", ["tma", "direct"])
@pytest.mark.parametrize("m, n, k, bm, bn", [(300, 256, 256, 152, 128), (100, 192, 200, 104, 64), (77, 128, 64, 80, 128),
                                             (500, 384, 128, 160, 192)])
def test_the_swapped_product_keeps_the_numbers(m, n, k, bm, bn, store):
    text = gemm(m, n, k, "bf16")
    rng = np.random.default_rng(m + n + k)
    a, b = (rng.standard_normal(s).astype(HALF["bf16"]) for s in ((m, k), (k, n)))
    want = reference.matmul(a.astype(np.float64), b.astype(np.float64))
    got = find_entry(run_pipeline(text, _spec(bm, bn, store))).run([a, b])[0]
    assert got.shape == (m, n) and not np.isnan(got.astype(np.float64)).any()
    assert reference.relative_error(got, want) <= reference.TOLERANCE["bf16"]


@pytest.mark.parametrize("bm, tiles", [(152, (9, 1)), (160, (10, 0)), (144, (9, 0))])
def test_the_swapped_product_stores_with_stmatrix_trans(tmp_path, bm, tiles):
    ptxas = find_ptxas()
    assert ptxas is not None, "ptxas (the test extra's nvidia-cuda-nvcc) is needed"
    ptx = compile_to_ptx(gemm(5000, 3000, 2056, "bf16"), _spec(bm, 128, "tma", to_ptx=True))
    assert f"wgmma.mma_async.sync.aligned.m64n{bm}k16" in ptx
    x4, x2 = tiles  # a panel of 64 of n a warpgroup: the m-tile's 8-row matrices four (two) at a time
    assert ptx.count("stmatrix.sync.aligned.m8n8.x4.trans") == 2 * x4 and ptx.count("stmatrix.sync.aligned.m8n8.x2.trans") == 2 * x2
    path = tmp_path / "s.ptx"
    path.write_text(ptx)
    report = subprocess.run([ptxas, "-v", "-arch=sm_90a", str(path), "-o", str(tmp_path / "s.cubin")], capture_output=True, text=True)
    assert report.returncode == 0, report.stderr
    assert re.search(r"\b0 bytes spill stores", report.stderr), report.stderr


def _plan(text: str, **options):
    from napkin_ir.pipelines import NapkinSm90Pass

    return NapkinSm90Pass(**options).plan(run_pipeline(text))


@pytest.mark.parametrize("m, n, k, options", [(300, 256, 256, {"block": "152,128,64"}), (500, 384, 128, {"block": "256,128,64", "swap": True}),
                                              (520, 256, 200, {"block": "136,128,64", "cluster": 2})])
def test_napkin_sm90_plans_a_swapped_tile_and_the_numbers_survive(m, n, k, options):
    """A block of rows not a multiple of 64 (or swap=true) is planned swapped: the plan's
    rows are the output's columns; the hbm and reg levels keep the numbers on the CPU."""
    from napkin_ir.pipelines import spec

    text = gemm(m, n, k, "bf16")
    plan = _plan(text, **options)
    assert plan.rows == "n" and plan.store.value == "tma"
    rng = np.random.default_rng(m * n + k)
    a, b = (rng.standard_normal(s).astype(HALF["bf16"]) for s in ((m, k), (k, n)))
    want = reference.matmul(a.astype(np.float64), b.astype(np.float64))
    for level in ("hbm", "reg"):
        got = find_entry(run_pipeline(text, spec(plan.passes(level)))).run([a, b])[0]
        assert not np.isnan(got.astype(np.float64)).any() and reference.relative_error(got, want) <= reference.TOLERANCE["bf16"], level


def test_the_model_swaps_only_a_gemm_alone_and_swap_false_keeps_rows_over_m():
    assert _plan(gemm(5000, 4096, 14336, "bf16")).rows == "n"  # the model's 152 x 128, 1056 tiles: 8.0 waves
    assert _plan(gemm(5000, 4096, 14336, "bf16")).stages == 5  # as many as fit beside the output's one panel stage
    kept = _plan(gemm(5000, 4096, 14336, "bf16"), swap=False)
    assert kept.rows == "" and dict(kept.grid)["m"] % 64 == 0
    assert _plan(gemm(4096, 4096, 4096, "bf16")).rows == ""  # 512 tiles of 128 x 256: 3.9 waves already


@pytest.mark.parametrize("options, message", [
    ({"block": "152,128,64", "split": 2}, "cannot be split"),
    ({"block": "152,128,64", "swap": False}, "the rows must be 64, 128, 192 or 256"),
])
def test_a_swapped_tile_that_cannot_be_honoured_is_refused_by_name(options, message):
    from xdsl.utils.exceptions import PassFailedException

    with pytest.raises(PassFailedException, match=message):
        compile_to_ptx(gemm(1000, 1024, 512, "bf16"), "napkin-sm90{" + " ".join(
            f'{k}="{v}"' if isinstance(v, str) else f"{k}={str(v).lower()}" for k, v in options.items()) + "}")


def test_a_batched_product_is_not_swapped():
    from xdsl.utils.exceptions import PassFailedException

    with pytest.raises(PassFailedException, match="swap=true computes one GEMM"):
        _plan(gemm(256, 256, 128, "bf16", batch=4), swap=True)
    with pytest.raises(PassFailedException, match="swap=true computes one GEMM"):
        _plan(gemm(256, 256, 128, "bf16", b_nk=True), block="152,128,64")


@pytest.mark.parametrize("shape, which", [((1000, 14336, 4096), 1), ((5000, 3000, 2056), 0), ((5000, 3000, 2056), 1),
                                          ((100, 4096, 1000), 0)])
def test_a_gradient_the_model_would_swap_plans_on_sm90_unswapped(shape, which):
    """dA = grad b^T reads b as [n, k] and dB = a^T grad reads a as [m, k] with m contracted:
    neither can be swapped, so the op's candidates after a swapped one carry an unswapped
    napkin-sm90 tile, taken before napkin-sm80."""
    from xdsl.utils.exceptions import PassFailedException

    from napkin_ir.pipelines import NapkinSm90Pass
    from napkin_ir.plan.recipes.product_targets import gemm_candidates

    m, n, k = shape
    derived = run_pipeline(gemm(m, n, k, "bf16"), f'ncd-grad,ncd-fold-casts,ncd-extract{{function="matmul_grad" result={which}}}')
    rows, cols, over = (m, k, n) if which == 0 else (k, n, m)
    candidates = gemm_candidates(rows, cols, over, (9, 0))
    assert candidates[0][1].get("swap"), "the model's first plan for this gradient's shape is swapped"
    for target, options in candidates:
        assert target == "sm90", "an unswapped napkin-sm90 tile should come before napkin-sm80"
        try:
            plan = NapkinSm90Pass(**{a: (",".join(map(str, v)) if isinstance(v, tuple) else v) for a, v in options.items()}).plan(derived)
        except PassFailedException as e:
            assert options.get("swap") and "swap=true computes one GEMM of A stored [m, k] and B [k, n]" in str(e)
            continue
        assert plan.rows == "" and not options.get("swap")
        break


def test_swap_is_refused_by_name_where_no_gemm_plan_takes_it():
    import napkin_ir
    from napkin_ir.errors import UserError

    with pytest.raises(UserError, match="swap=true cannot be honoured for attention on sm_90a"):
        napkin_ir.compile(napkin_ir.attention_diagram("causal", 1, 2, 128, 64), "sm90", cache=False, swap=True)
    with pytest.raises(UserError, match=r"swap=true cannot be honoured for autotile=true"):
        napkin_ir.compile(gemm(512, 512, 256), "sm90", cache=False, autotile=True, swap=True)
