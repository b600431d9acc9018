"""Every example's derived gradient that is not attention's (those have a file of their
own), each result a kernel of its own, on the GPU through both pipelines: a GEMM's dA
and dB, the bias's column sums, the GEMM-with-exp's gradients (a staged tile read into
the accumulators' lanes), two products' sum, the MLP's dX, dW1 and dW2 (a product
computed transposed; an M-major A from shared memory), a row softmax's dX, and the
gradients of D = rowsum(dO * O). Fresh random inputs (scaled where an exp would
overflow), a NaN-poisoned output, against the extracted diagram on the CPU interpreter
(f32 sums of the same bf16 values)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from napkin_ir import reference
from napkin_ir.interpreters.run import find_function, run_function
from napkin_ir.interpreters.tensors import round_to
from napkin_ir.passmanager import run_pipeline

pytestmark = pytest.mark.gpu

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CASES = [("matmul", 2), ("gemm_bias", 3), ("gemm_exp", 2), ("two_products", 3), ("mlp", 3), ("row_softmax", 1),
         ("attention_delta", 2)]
SCALE = {"gemm_exp": 0.2}  # exp(0.5 A B) of unscaled normal inputs reaches 1e11


@pytest.mark.parametrize("pipeline", ["napkin-sm80", "napkin-sm90"])
@pytest.mark.parametrize("example,result", [(e, r) for e, n in CASES for r in range(n)])
def test_each_example_gradient_matches_the_diagram(example, result, pipeline):
    torch = pytest.importorskip("torch")
    from napkin_ir.build import compile_kernel

    if pipeline == "napkin-sm90" and torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a kernels need a Hopper GPU")
    text = (EXAMPLES / f"{example}.mlir").read_text()
    whole = run_pipeline(text, "ncd-grad")
    name = next(op.sym_name.data for op in whole.body.ops if getattr(op, "sym_name", None) and op.sym_name.data.endswith("_grad"))
    derive = f'ncd-grad,ncd-fold-casts,ncd-extract{{function="{name}" result={result}}}'
    part = run_pipeline(text, derive)
    g = find_function(part)
    rng = np.random.default_rng()  # fresh
    inputs = [round_to(a.type.dtype, SCALE.get(example, 1.0) * rng.standard_normal(a.type.dims, dtype=np.float32))
              for a in g.body.block.args]
    (want,) = run_function(part, g, inputs)
    kernel = compile_kernel(text, f"{derive},{pipeline}")
    torch_dtype = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
    arrays = {a.name_hint: torch.tensor(x.astype(np.float32)).to(torch_dtype[a.type.dtype]).cuda()
              for a, x in zip(g.body.block.args, inputs)}
    (out_type,) = g.function_type.outputs.data
    out = torch.full(out_type.dims, float("nan"), device="cuda", dtype=torch_dtype[out_type.dtype])
    kernel(**arrays, out=out, sync=True)
    got = out.double().cpu().numpy()
    assert np.isfinite(got).all(), "some output was not written"
    assert reference.relative_error(got, want) <= reference.TOLERANCE[out_type.dtype]
