"""The rows recipe through the front door on both targets: `napkin_ir.compile(text,
target=...)` plans a diagram with no product (a row softmax, a row L2 norm over a batch axis,
a row sum) with napkin-sm80's and napkin-sm90's defaults and options, and the kernel it
returns runs on fresh random inputs into a NaN-poisoned output, checked against float64.
sm_80 PTX runs on Hopper too, so one GPU checks both targets' plans."""

from __future__ import annotations

import numpy as np
import pytest

from napkin_ir import reference

pytestmark = pytest.mark.gpu


def _diagram(op: str, lead: str, cols: int, out_dtype: str = "bf16") -> str:
    x, x32 = f"!ncd.tensor<{lead}, j={cols} : bf16>", f"!ncd.tensor<{lead}, j={cols} : f32>"
    if op == "sum":
        out = f"!ncd.tensor<{lead} : f32>"
        body = f"  %o = ncd.reduce sum %a along [j] : {x32} -> {out}\n"
    else:
        out = f"!ncd.tensor<{lead}, j={cols} : {out_dtype}>"
        by = " scale 0.5" if op == "softmax" else ""
        body = f"  %p = ncd.{op} %a along j{by} : {x32} -> {x32}\n  %o = ncd.map cast %p : {x32} -> {out}\n"
    return f"func.func @row_{op}(%x: {x}) -> {out} {{\n  %a = ncd.map cast %x : {x} -> {x32}\n{body}  func.return %o : {out}\n}}\n"


CASES = [  # op, leading axes, their shape, columns, options
    ("softmax", "i=4096", (4096,), 1024, {}),
    ("softmax", "i=1000", (1000,), 768, {"block": "16", "warps": "4"}),
    ("softmax", "i=333", (333,), 4096, {}),
    ("softmax", "i=2048", (2048,), 256, {}),
    ("l2norm", "b=3, i=100", (3, 100), 2048, {}),
    ("sum", "i=1000", (1000,), 512, {}),
]


@pytest.mark.parametrize("target", ["sm80", "sm90"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{'x'.join(map(str, c[2]))}x{c[3]}")
def test_rows_through_the_named_pipelines_match_float64(case, target):
    torch = pytest.importorskip("torch")
    import napkin_ir

    op, lead, shape, cols, options = case
    if target == "sm90" and torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a kernels need a Hopper GPU")
    kernel = napkin_ir.compile(_diagram(op, lead, cols), target=target, cache=False, **options)
    x = (3 * torch.randn(*shape, cols, device="cuda")).to(torch.bfloat16)  # fresh: no seed
    reduced = op == "sum"
    out = torch.full(shape if reduced else (*shape, cols), float("nan"), device="cuda",
                     dtype=torch.float32 if reduced else torch.bfloat16)
    kernel(x=x, out=out, sync=True)
    got, x64 = out.double().cpu().numpy(), x.double().cpu().numpy()
    want = {"softmax": lambda a: reference.row_softmax(0.5 * a), "l2norm": reference.row_l2norm, "sum": lambda a: a.sum(-1)}[op](x64)
    assert np.isfinite(got).all(), "some output was not written"
    assert reference.relative_error(got, want) <= reference.TOLERANCE["f32" if reduced else "bf16"]
