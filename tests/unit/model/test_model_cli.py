"""napkin-model on good and bad input: a report or a JSON dict, else one diagnostic on
stderr and a non-zero exit, never a traceback."""

import io
import json
import sys
from pathlib import Path

import pytest

from napkin_ir.cli.model import main
from napkin_ir.model.ptxas import find_ptxas
from napkin_ir.passmanager import run_pipeline
from napkin_ir.pipelines import sm80_gemm_pipeline

EXAMPLES = Path(__file__).parents[3] / "examples"


def _run(argv, capsys, stdin: str | None = None):
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()))
    try:
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
    finally:
        sys.stdin = sys.__stdin__
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def _one_error_line(err: str) -> str:
    """The diagnostic: one `napkin-model: error:` line (a parse error adds the place after it)."""
    lines = err.strip().splitlines()
    assert "Traceback" not in err and sum("error:" in ln for ln in lines) == 1, err
    assert lines[0].startswith("napkin-model: error: ")
    return err


def _reg_level_text() -> str:
    return str(run_pipeline((EXAMPLES / "matmul.mlir").read_text(), sm80_gemm_pipeline(to="reg")))


def test_json_at_the_ncd_level(capsys):
    code, out, _ = _run([str(EXAMPLES / "attention.mlir"), "--json", "--hw", "h200"], capsys)
    assert code == 0
    report = json.loads(out)
    assert report["hardware"]["key"] == "h200" and report["level"] == "ncd"
    (f,) = report["functions"]
    assert f["saving_bytes"] == f["unfused_bytes"] - f["fused_bytes"] > 0


def test_json_at_the_reg_level_from_stdin(capsys):
    code, out, _ = _run(["-", "--json"], capsys, stdin=_reg_level_text())
    assert code == 0
    (k,) = json.loads(out)["kernels"]
    assert k["level"] == "reg" and k["work"]["instruction"] == "mma.sync" and not k["work"]["instruction_assumed"]
    assert k["occupancy"]["limiter"] == "registers" and k["bound"] in k["times_s"]


@pytest.mark.skipif(find_ptxas() is None, reason="ptxas not installed")
def test_ptxas_registers_replace_the_estimate(capsys):
    code, out, _ = _run(["-", "--json", "--ptxas"], capsys, stdin=_reg_level_text())
    assert code == 0
    (k,) = json.loads(out)["kernels"]
    assert k["registers"]["ptxas"] == k["registers"]["used"] and k["registers"]["estimate"] is not None
    assert k["registers"]["ptxas_spill_bytes"] == 0 and k["registers"]["ptxas_serialized_wgmma"] is False


def test_ptxas_spills_and_serialized_wgmma_are_reported():
    """`--ptxas` shows what ptxas did beside its register count: the bytes it spilled a
    thread and whether it serialized the kernel's wgmma (C7512)."""
    from napkin_ir import registry
    from napkin_ir.model.hardware import H200
    from napkin_ir.model.ptxas import PtxasResources
    from napkin_ir.model.report import format_report, model_report
    from xdsl.parser import Parser

    module = Parser(registry.make_context(), _reg_level_text()).parse_module()
    (name,) = [k.cost.name for k in model_report(module, H200).kernels]
    found = PtxasResources(name, "sm_90a", 240, spill_stores=16, spill_loads=16, serialized_wgmma=True)
    text = format_report(model_report(module, H200, ptxas={name: found}))
    assert "ptxas: 240 (used), 16 bytes spilled a thread, its wgmma serialized for want of registers (C7512)" in text
    clean = format_report(model_report(module, H200, ptxas={name: PtxasResources(name, "sm_90a", 200)}))
    assert "ptxas: 200 (used)" in clean and "spilled" not in clean and "C7512" not in clean


@pytest.mark.parametrize("argv,stdin,message", [
    (["-"], "func.func @f(%a: !ncd.tensor<m=4", "cannot parse the input"),
    (["/no/such/file.mlir"], None, "no such file: /no/such/file.mlir"),
    (["-", "--hw", "b200"], "", "argument --hw: invalid choice: 'b200'"),
    (["-"], "builtin.module {}", "nothing to model"),
    (["-", "--hw", "a100", "--mma", "wgmma"], "builtin.module {}", "has no wgmma"),
    (["-", "--ptxas"], (EXAMPLES / "matmul.mlir").read_text(), "--ptxas needs a module at the reg level"),
])
def test_bad_input_gets_one_line(capsys, argv, stdin, message):
    code, _, err = _run(argv, capsys, stdin=stdin)
    assert code != 0
    assert message in _one_error_line(err)


def test_ptx_level_is_named(capsys):
    from napkin_ir.passmanager import compile_to_ptx  # noqa: F401 - the ptx dialect's printer

    ptx_module = str(run_pipeline((EXAMPLES / "matmul.mlir").read_text(), "napkin-sm80"))
    code, _, err = _run(["-"], capsys, stdin=ptx_module)
    assert code == 1 and "the module is at the ptx level" in _one_error_line(err)
