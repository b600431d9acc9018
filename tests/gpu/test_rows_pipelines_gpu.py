"""The rows recipe through the front door on both targets: `napkin_ir.compile(text,
target=...)` plans a diagram with no product (a row softmax, a row L2 norm over a batch axis,
a row sum, the attention backward's D = rowsum(dO * O)) with napkin-sm80's and napkin-sm90's
defaults and options, rows of 64 and 128 columns (several rows a warp at a time) as well as
multiples of 256, and the kernel it returns runs on fresh random inputs into a NaN-poisoned
output, checked against float64. sm_80 PTX runs on Hopper too, so one GPU checks both
targets' plans."""

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
    ("softmax", "i=2000", (2000,), 64, {}),
    ("softmax", "b=2, i=333", (2, 333), 128, {}),
    ("l2norm", "i=1000", (1000,), 128, {"block": "32", "warps": "4"}),
    ("sum", "i=1000", (1000,), 64, {}),
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


@pytest.mark.parametrize("target", ["sm80", "sm90"])
@pytest.mark.parametrize("d", [64, 128, 256])
def test_the_attention_delta_matches_float64(d, target):
    """examples/attention_delta.mlir at head dims 64, 128 and 256, over a ragged row count."""
    torch = pytest.importorskip("torch")
    from pathlib import Path

    import napkin_ir

    if target == "sm90" and torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a kernels need a Hopper GPU")
    text = (Path(__file__).resolve().parents[2] / "examples" / "attention_delta.mlir").read_text()
    text = text.replace("d=64", f"d={d}").replace("i=256", "i=1000")
    kernel = napkin_ir.compile(text, target=target, cache=False)
    o, d_o = ((3 * torch.randn(2, 4, 1000, d, device="cuda")).to(torch.bfloat16) for _ in range(2))  # fresh: no seed
    out = torch.full((2, 4, 1000), float("nan"), device="cuda", dtype=torch.float32)
    kernel(o=o, d_o=d_o, out=out, sync=True)
    got = out.double().cpu().numpy()
    want = (o.double() * d_o.double()).sum(-1).cpu().numpy()
    assert np.isfinite(got).all(), "some output was not written"
    assert reference.relative_error(got, want) <= reference.TOLERANCE["f32"]


@pytest.mark.parametrize("target", ["sm80", "sm90"])
@pytest.mark.parametrize("rows,cols", [(4096, 1024), (1000, 768), (333, 64)])
def test_f32_rows_beside_bf16_rows_match_float64(rows, cols, target):
    """An f32 input staged and read as it lies beside a bf16 one: a row softmax of their
    product, out in bf16, and the f32 input's row sums."""
    torch = pytest.importorskip("torch")
    import napkin_ir

    if target == "sm90" and torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a kernels need a Hopper GPU")
    x32, x16, r = (f"!ncd.tensor<i={rows}, j={cols} : f32>", f"!ncd.tensor<i={rows}, j={cols} : bf16>",
                   f"!ncd.tensor<i={rows} : f32>")
    text = (f"func.func @f32_rows(%x: {x32}, %y: {x16}) -> ({x16}, {r}) {{\n"
            f"  %y32 = ncd.map cast %y : {x16} -> {x32}\n  %z = ncd.map mul %x, %y32 : {x32}, {x32} -> {x32}\n"
            f"  %p = ncd.softmax %z along j scale 0.5 : {x32} -> {x32}\n  %o = ncd.map cast %p : {x32} -> {x16}\n"
            f"  %s = ncd.reduce sum %x along [j] : {x32} -> {r}\n  func.return %o, %s : {x16}, {r}\n}}\n")
    kernel = napkin_ir.compile(text, target=target, cache=False)
    x = torch.randn(rows, cols, device="cuda")  # fresh: no seed
    y = torch.randn(rows, cols, device="cuda").to(torch.bfloat16)
    out = torch.full((rows, cols), float("nan"), device="cuda", dtype=torch.bfloat16)
    sums = torch.full((rows,), float("nan"), device="cuda")
    kernel(x=x, y=y, out0=out, out1=sums, sync=True)
    z = x.double() * y.double()
    want = torch.softmax(0.5 * z, -1)
    assert torch.isfinite(out).all() and torch.isfinite(sums).all()
    assert reference.relative_error(out.double().cpu().numpy(), want.cpu().numpy()) <= reference.TOLERANCE["bf16"]
    assert reference.relative_error(sums.double().cpu().numpy(), x.double().sum(-1).cpu().numpy()) <= reference.TOLERANCE["f32"]
