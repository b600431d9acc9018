"""One exception base for the Python API, and its arguments checked by name (issue 37).

`compile(text, pipeline="napkin-sm80{")` raised xDSL's ArgSpecParseError, which escapes
`except Exception`; other failures came as ParseError, VerifyException, PtxEmissionError,
ValueError or ZeroDivisionError; `compile(None)` parsed the text "None"; `gemm(0, 1, 1)`,
`gemm(64.5, ...)` and `gemm(..., "f64")` returned text; `attention_diagram(..., d=0)` raised
ZeroDivisionError. Each test here failed on that code.
"""

from __future__ import annotations

import pytest

import napkin_ir
from napkin_ir.errors import BadArgument, CompileError, InternalError, InvalidIR, NapkinError, PipelineError, UserError

GEMM = napkin_ir.gemm(128, 128, 64)


def test_the_base_is_exported_and_an_exception():
    assert napkin_ir.NapkinError is NapkinError and issubclass(NapkinError, Exception)
    assert all(issubclass(c, NapkinError) for c in (UserError, InvalidIR, PipelineError, CompileError, InternalError, BadArgument))


def test_a_spec_that_does_not_parse_is_a_pipeline_error_caught_by_except_exception():
    try:
        napkin_ir.compile(GEMM, pipeline="napkin-sm80{", cache=False)
    except Exception as e:  # noqa: BLE001 - the point: it is an Exception
        assert isinstance(e, PipelineError) and "napkin-sm80{" in str(e)
    else:
        pytest.fail("no error")


@pytest.mark.parametrize("text,kind,words", [
    ("func.func @f(", InvalidIR, "cannot parse"),
    (GEMM.replace("-> !ncd.tensor<m=128, n=128 : bf16>\n", "-> !ncd.tensor<m=128, n=64 : bf16>\n", 1)
         .replace("func.return %c : !ncd.tensor<m=128, n=128 : bf16>", "func.return %c : !ncd.tensor<m=128, n=64 : bf16>"),
     InvalidIR, "<input>:2:3: ncd.contract: axis 'n'"),
])
def test_bad_text_is_invalid_ir_naming_the_cause(text, kind, words):
    with pytest.raises(kind, match=words) as info:
        napkin_ir.compile(text, target="sm80", cache=False)
    assert info.value.__cause__ is not None


def test_a_pipeline_that_stops_above_ptx_is_a_compile_error():
    with pytest.raises(CompileError, match="no ptx.kernel") as info:
        napkin_ir.compile(GEMM, pipeline='ncd-relabel{grid="m:64,n:64" stream="k:32"}', cache=False)
    assert type(info.value.__cause__).__name__ == "PtxEmissionError"


@pytest.mark.parametrize("args,kwargs,words", [
    ((None,), {"target": "sm80"}, "diagram must be"),
    ((42,), {"target": "sm80"}, "diagram must be"),
    (("",), {"target": "sm80"}, "diagram is empty"),
    ((GEMM,), {"target": 80}, "target must be"),
    ((GEMM,), {"target": "sm80", "device": -1}, "device must be"),
])
def test_compile_checks_its_arguments_by_name(args, kwargs, words):
    with pytest.raises(BadArgument, match=words):
        napkin_ir.compile(*args, **kwargs)


@pytest.mark.parametrize("build,words", [
    (lambda: napkin_ir.gemm(0, 1, 1), "gemm: m must be a positive integer"),
    (lambda: napkin_ir.gemm(64.5, 64, 64), "gemm: m must be an integer, found float 64.5"),
    (lambda: napkin_ir.gemm(64, 64, 64, "f64"), "gemm: dtype must be one of"),
    (lambda: napkin_ir.gemm(64, 64, 64, batch=-1), "gemm: batch must be a non-negative integer"),
    (lambda: napkin_ir.gemm(2**63, 64, 64), "fits in int64"),
    (lambda: napkin_ir.gemm(64, 64, 64, name="a b"), "gemm: name must be a function name"),
    (lambda: napkin_ir.attention_diagram("softmax", b=1, h=1, n=64, d=0), "attention_diagram: d must be a positive integer"),
    (lambda: napkin_ir.attention_diagram("softmax", b=1, h=1, n=64, d=64, scale=float("inf")), "scale must be a finite number"),
    (lambda: napkin_ir.attention_diagram("softmax", b=1, h=1, n=64, d=64, dtype="f8"), "dtype must be one of"),
    (lambda: napkin_ir.attention_diagram("sparse", b=1, h=1, n=64, d=64), "unknown attention kind"),
    (lambda: napkin_ir.gqa_attention_diagram("softmax", b=1, g=0, r=2, n=64, d=64), "gqa_attention_diagram: g must be"),
])
def test_the_builders_name_the_bad_argument(build, words):
    with pytest.raises(BadArgument, match=words):
        build()


def test_the_builders_take_numpy_integers():
    np = pytest.importorskip("numpy")
    assert "m=64" in napkin_ir.gemm(np.int64(64), 64, 64)


def test_a_cuda_failure_is_a_napkin_error_of_the_system():
    from napkin_ir.errors import SystemFault
    from napkin_ir.runtime.driver import CudaError, DriverUnavailableError

    e = CudaError("launching kernel 'k'", "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure")
    assert isinstance(e, napkin_ir.NapkinError) and isinstance(e, SystemFault) and isinstance(e, RuntimeError)
    assert issubclass(DriverUnavailableError, napkin_ir.NapkinError)
    assert str(e) == "launching kernel 'k' failed: CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)"
