"""What napkin-run's checks claim is what they checked (issue 37).

Without a GPU, `--gpu napkin-sm90 --check` compared the CPU interpretation with itself and
printed "ok"; `--check` picked its reference by the function's name; `--seed -1` and sizes
of terabytes were internal errors. Each test here failed on that code.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import napkin_ir.runtime as runtime
from napkin_ir import reference, reference_eval
from napkin_ir.cli import run as run_cli
from napkin_ir.diagrams import gemm
from napkin_ir.interpreters.run import find_entry, find_function
from napkin_ir.passmanager import run_pipeline
from napkin_ir.runtime.driver import DriverUnavailableError

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _run(capsys, *args: str) -> tuple[int, str, str]:
    try:
        code = run_cli.main(list(args))
    except SystemExit as e:
        code = e.code
    out = capsys.readouterr()
    return int(code or 0), out.out, out.err


@pytest.fixture
def no_gpu(monkeypatch):
    def none(device: int = 0):
        raise DriverUnavailableError("initialising the CUDA driver", "NO_DRIVER", "none in this test")

    monkeypatch.setattr(runtime, "get_context", none)


def test_sm90_without_a_gpu_says_the_code_did_not_run_and_check_fails(capsys, no_gpu):
    code, out, _ = _run(capsys, str(EXAMPLES / "matmul.mlir"), "--gpu", "napkin-sm90", "--random-inputs", "--check")
    assert code == 1
    assert "the compiled code did not run" in out and "check: FAILED" in out
    assert ": ok" not in out and "checking" not in out


def test_sm80_without_a_gpu_runs_the_ptx_in_the_emulator(capsys, no_gpu, tmp_path):
    src = tmp_path / "g.mlir"
    src.write_text(gemm(128, 128, 64, "bf16"))
    code, out, _ = _run(capsys, str(src), "--gpu", "napkin-sm80", "--random-inputs", "--check")
    assert code == 0, out
    assert "ran the compiled sm_80 PTX in the warp-level emulator" in out
    assert "checking the compiled sm_80 PTX in the emulator against the diagram evaluated in float64" in out


def test_the_emulator_catches_a_wrong_kernel(capsys, no_gpu, tmp_path, monkeypatch):
    """The check reads the emulator's outputs: a kernel that writes nothing fails."""
    import napkin_ir.interpreters.ptx as ptx_interp

    monkeypatch.setattr(ptx_interp, "run_kernel", lambda *a, **k: {})
    src = tmp_path / "g.mlir"
    src.write_text(gemm(128, 128, 64, "bf16"))
    code, out, _ = _run(capsys, str(src), "--gpu", "napkin-sm80", "--random-inputs", "--check")
    assert code == 1 and "FAILED" in out


def test_check_evaluates_the_diagram_whatever_its_name(capsys, tmp_path):
    src = tmp_path / "a.mlir"
    src.write_text((EXAMPLES / "attention.mlir").read_text().replace("@attention", "@matmul"))
    code, out, err = _run(capsys, str(src), "--random-inputs", "--check")
    assert code == 0, err
    assert "against the diagram evaluated in float64" in out and "ok" in out


@pytest.mark.parametrize("example", sorted(p.stem for p in EXAMPLES.glob("*.mlir")))
def test_the_float64_evaluation_agrees_with_the_named_references(example):
    module = run_pipeline((EXAMPLES / f"{example}.mlir").read_text())
    entry = find_entry(module)
    xs = entry.random_inputs(1)
    got = reference_eval.evaluate(find_function(module), xs)
    if entry.name in reference.REFERENCES:
        assert reference.relative_error(got[0], reference.REFERENCES[entry.name](*xs)) < 1e-12
    for out, want in zip(entry.run(xs), got):
        assert reference.relative_error(out, want) <= reference.TOLERANCE["bf16"]


def test_a_negative_seed_is_the_users_error(capsys):
    code, _, err = _run(capsys, str(EXAMPLES / "matmul.mlir"), "--random-inputs", "--seed", "-1")
    assert code == 2 and "a seed is a non-negative integer" in err and "internal error" not in err


def test_sizes_beyond_memory_are_refused_up_front_naming_the_size(capsys, tmp_path):
    src = tmp_path / "huge.mlir"
    src.write_text(gemm(2**22, 2**22, 2**20))
    code, _, err = _run(capsys, str(src), "--random-inputs")
    assert code == 1 and "TiB" in err and "internal error" not in err and "m=4194304" in err


GRADIENT = ('ncd-grad{residuals=true},ncd-fold-casts,ncd-sink-scales,'
            'ncd-extract{function="attention_grad" results="0,1,2" cut="delta"},ncd-widen-results{result=0}')


def test_an_f32_sum_of_rounded_products_is_checked_at_their_bound(capsys, tmp_path):
    """dQ widened to f32 is a sum of products of dS rounded to bf16: its error is bf16's,
    and --check bounds it so (it printed FAILED against f32's bound). A GEMM widened to f32
    from exact bf16 inputs keeps f32's bound. A factor left to the caller is named."""
    grad = tmp_path / "grad.mlir"
    grad.write_text(str(run_pipeline((EXAMPLES / "attention.mlir").read_text(), GRADIENT)))
    code, out, _ = _run(capsys, str(grad), "--random-inputs", "--check")
    assert code == 0, out
    assert "output #0: <b=2, h=4, i=256, d=64> f32" in out and "this times 0.125, left to the caller" in out
    assert "(bound 2e-02 for f32 computed through bf16): ok" in out
    wide = tmp_path / "wide.mlir"
    wide.write_text(str(run_pipeline((EXAMPLES / "matmul.mlir").read_text(), "ncd-widen-results")))
    code, out, _ = _run(capsys, str(wide), "--random-inputs", "--check")
    assert code == 0 and "(bound 1e-04 for f32): ok" in out and "left to the caller" not in out
