"""Products over A's rows on the GPU (C = A^T B, A stored [k, m], as a gradient's dB = A^T dC):
napkin-sm80 (ldmatrix.trans for A) and napkin-sm90 (A M-major, imm-trans-a) against float64
on fresh random inputs into a NaN-poisoned output, square and ragged, B either way."""

from __future__ import annotations

import numpy as np
import pytest

from napkin_ir import reference

pytestmark = pytest.mark.gpu


def _diagram(m: int, n: int, k: int, b_nk: bool) -> str:
    a = f"!ncd.tensor<k={k}, m={m} : bf16>"
    b = f"!ncd.tensor<n={n}, k={k} : bf16>" if b_nk else f"!ncd.tensor<k={k}, n={n} : bf16>"
    c = f"!ncd.tensor<m={m}, n={n} : bf16>"
    return (f"func.func @matmul_at(%a: {a}, %b: {b}) -> {c} {{\n  %c = ncd.contract %a, %b over [k] : {a}, {b} -> {c}\n"
            f"  func.return %c : {c}\n}}\n")


@pytest.mark.parametrize("b_nk", [False, True])
@pytest.mark.parametrize("shape", [(1024, 1024, 512), (2048, 768, 1024), (520, 264, 200)], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("target,options", [("sm80", {}), ("sm90", {}), ("sm90", {"block": (128, 128, 64)}),
                                            ("sm90", {"persistent": False, "store": "direct"})],
                         ids=["sm80", "sm90", "sm90-128x128", "sm90-direct"])
def test_a_transposed_matches_float64(target, options, shape, b_nk):
    torch = pytest.importorskip("torch")
    import napkin_ir

    if target == "sm90" and torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a kernels need a Hopper GPU")
    m, n, k = shape
    kernel = napkin_ir.compile(_diagram(m, n, k, b_nk), target=target, cache=False, **options)
    a = torch.randn(k, m, device="cuda").to(torch.bfloat16)  # fresh: no seed
    b = torch.randn(*((n, k) if b_nk else (k, n)), device="cuda").to(torch.bfloat16)
    out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    kernel(a=a, b=b, out=out, sync=True)
    a64, b64 = a.double().cpu().numpy(), b.double().cpu().numpy()
    want = a64.T @ (b64.T if b_nk else b64)
    got = out.double().cpu().numpy()
    assert np.isfinite(got).all(), "some output was not written"
    assert reference.relative_error(got, want) <= reference.TOLERANCE["bf16"]
