"""ncd-sink-scales keeps the numbers: attention's gradient with dS's softmax scale moved past
dQ's and dK's products gives the same cotangents in float64, and the same within a rounding
through the bf16 interpreter; dQ widened with its scale left to the caller, multiplied by
the `ncd.scale` its result carries (and its launch contract's `scale`), is the diagram's."""

from __future__ import annotations

import numpy as np
import pytest

from napkin_ir.attention_diagrams import NAMES, RESIDUAL_GRADIENT, attention_diagram
from napkin_ir.dialects import ncd
from napkin_ir.interpreters.run import find_function, random_inputs, run_function
from napkin_ir.passes.widen_results import result_scales
from napkin_ir.passmanager import run_pipeline
from napkin_ir.reference import TOLERANCE, relative_error
from napkin_ir.reference_eval import evaluate
from napkin_ir.runtime.contract import LaunchContract, diagram_signature

WITHOUT = RESIDUAL_GRADIENT.replace(",ncd-sink-scales", "")


def _grad(kind: str, passes: str, n: int = 160, d: int = 64, extra: str = ""):
    text = attention_diagram(kind, b=1, h=2, n=n, d=d)
    module = run_pipeline(text, passes + f',ncd-extract{{function="{NAMES[kind]}_grad" results="0,1,2" cut="delta"}}' + extra)
    return module, find_function(module)


def _scales_on_products(f) -> int:
    return sum(isinstance(op, ncd.MapOp) and op.fn.data == "scale" and isinstance(op.inputs[0].owner, ncd.ContractOp)
               for op in f.walk())


@pytest.mark.parametrize("kind", ["softmax", "causal"])
def test_sunk_scales_keep_the_gradient(kind):
    assert "ncd-sink-scales" in RESIDUAL_GRADIENT
    _, before = _grad(kind, WITHOUT)
    module, after = _grad(kind, RESIDUAL_GRADIENT)
    assert _scales_on_products(after) - _scales_on_products(before) == 2  # dQ's and dK's (S's scale was one already)
    inputs = random_inputs(before, seed=3)
    for want, got in zip(evaluate(before, inputs), evaluate(after, inputs), strict=True):
        assert np.abs(got - want).max() <= 1e-12 * np.abs(want).max()
    # through the interpreter's bf16 roundings: dS rounds before its scale, not after
    for want, got in zip(run_function(_grad(kind, WITHOUT)[0], before, inputs), run_function(module, after, inputs), strict=True):
        assert relative_error(got, want) <= TOLERANCE["bf16"]


def test_short_rows_keep_the_scale_on_ds():
    """Where dQ and dK together hold more elements than dS (keys fewer than twice the head
    dim), the multiply stays where it is: on dS."""
    _, f = _grad("softmax", RESIDUAL_GRADIENT, n=96, d=64)
    assert _scales_on_products(f) == _scales_on_products(_grad("softmax", WITHOUT, n=96, d=64)[1])


def test_dq_left_unscaled_for_the_caller():
    _, plain = _grad("softmax", WITHOUT)
    module, wide = _grad("softmax", RESIDUAL_GRADIENT, extra=",ncd-widen-results{result=0}")
    scale = result_scales(wide)[0]
    assert scale == pytest.approx(64 ** -0.5) and result_scales(wide)[1:] == [None, None]
    inputs = random_inputs(plain, seed=5)
    want, got = evaluate(plain, inputs)[0], evaluate(wide, inputs)[0]
    assert np.abs(got * scale - want).max() <= 1e-6 * np.abs(want).max()  # the constant is f32
    assert np.abs(got - want).max() > 0.5 * np.abs(want).max()  # unscaled: not the diagram's dQ
    (sig,) = [s for s in diagram_signature(module) if s.name == "out0"]
    assert sig.scale == scale and sig.dtype == "f32"
    text = run_pipeline(str(module))  # printed and parsed, the attribute stays
    assert result_scales(find_function(text))[0] == scale


def test_a_contracts_scale_survives_json():
    from napkin_ir.runtime.contract import ParamContract

    c = LaunchContract("k", "sm_90a", (ParamContract("k_out", "out", "pointer", "accumulate", "f32", ("i", "d"), (4, 8),
                                                     None, 0.125),), (1, 1, 1), (128, 1, 1), 0)
    back = LaunchContract.from_json(c.to_json())
    assert back.param("out").scale == 0.125 and back == c
    plain = LaunchContract("k", "sm_90a", (ParamContract("k_out", "out", "pointer", "out", "f32", ("i", "d"), (4, 8)),),
                           (1, 1, 1), (128, 1, 1), 0)
    assert '"scale"' not in plain.to_json() and LaunchContract.from_json(plain.to_json()).param("out").scale is None
