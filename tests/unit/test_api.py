"""The public API in `napkin_ir`: imported on first use, a diagram to a kernel in one call."""

from __future__ import annotations

import subprocess
import sys

import pytest

import napkin_ir
from napkin_ir.compiler import option_text, pipeline_spec
from napkin_ir.errors import UserError


def test_import_is_quick_and_lazy():
    """`import napkin_ir` loads neither the compiler nor the runtime nor torch."""
    code = ("import sys, napkin_ir; heavy = [m for m in ('napkin_ir.compiler', 'napkin_ir.runtime', 'napkin_ir.pipelines', "
            "'napkin_ir.dialects.ncd', 'torch', 'numpy') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_public_names():
    assert {"compile", "parse", "gemm", "attention_diagram", "CompiledKernel", "LaunchContract", "CompileCache"} <= set(dir(napkin_ir))
    assert napkin_ir.gemm is __import__("napkin_ir.diagrams").diagrams.gemm
    assert napkin_ir.__version__
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        napkin_ir.nope  # noqa: B018


def test_options_become_the_named_pipeline():
    assert pipeline_spec("sm90", {"block": (128, 256, 64), "stages": 4, "persistent": False, "hw": "h200", "group": None}) == \
        'napkin-sm90{block="128,256,64" stages=4 persistent=false hw="h200"}'
    assert pipeline_spec("sm80", {}) == "napkin-sm80"
    assert option_text([2, 2]) == '"2,2"'
    with pytest.raises(UserError, match="unknown target 'sm70'"):
        pipeline_spec("sm70", {})


def test_compile_a_diagram_to_a_kernel():
    k = napkin_ir.compile(napkin_ir.gemm(256, 256, 64), "sm80", cache=False, block=(128, 128, 32), warps=(2, 2))
    assert k.arg_names() == ["a", "b", "out"] and ".target sm_80" in k.ptx and k.grid == [2, 2]
    att = napkin_ir.compile(napkin_ir.attention_diagram("causal", 1, 2, 128, 64), "sm80", cache=False)
    assert att.arg_names() == ["q", "k", "v", "out"] and att.contract.params[0].shape == (1, 2, 128, 64)
    parsed = napkin_ir.parse(napkin_ir.gemm(256, 256, 64))
    assert napkin_ir.compile(parsed, "napkin-sm80", cache=False).ptx == napkin_ir.compile(napkin_ir.gemm(256, 256, 64), "sm80",
                                                                                           cache=False).ptx


def test_compile_errors_say_what_is_wrong():
    with pytest.raises(Exception, match="the rows must be 64, 128, 192 or 256"):
        napkin_ir.compile(napkin_ir.gemm(128, 128, 64), "sm90", cache=False, block="100,256,64")
    with pytest.raises(UserError, match="napkin-sm80"):
        napkin_ir.compile(napkin_ir.gemm(128, 128, 64), "sm80", cache=False, nonsense=1)
    with pytest.raises(UserError, match="either pipeline= or a target"):
        napkin_ir.compile(napkin_ir.gemm(128, 128, 64), "sm80", pipeline="napkin-sm80")


def test_auto_target_without_a_gpu_asks_for_one(monkeypatch):
    from napkin_ir.runtime import driver

    def no_gpu(device: int = 0):
        raise driver.DriverUnavailableError("initialising the CUDA driver (cuInit)", "NVIDIA driver not found")

    monkeypatch.setattr(driver, "get_context", no_gpu)
    with pytest.raises(UserError, match="name the target: target='sm80' or target='sm90'"):
        napkin_ir.compile(napkin_ir.gemm(128, 128, 64), cache=False)
