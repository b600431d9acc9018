"""napkin-draw and napkin-model --plot on the command line: a picture, else one diagnostic
on stderr and a non-zero exit, never a traceback."""

from __future__ import annotations

import io
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from napkin_ir.cli import draw as draw_cli
from napkin_ir.cli import model as model_cli
from napkin_ir.passmanager import run_pipeline

EXAMPLES = Path(__file__).parents[3] / "examples"
SVG = "{http://www.w3.org/2000/svg}"
GEMM_REG = 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3},smem-to-reg{warps="m:2,n:2"}'


def run(main, argv, capsys, stdin: str | None = None):
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()))
    try:
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
    finally:
        sys.stdin = sys.__stdin__
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def one_diagnostic(err: str, tool: str = "napkin-draw") -> str:
    lines = err.strip().splitlines()
    assert "Traceback" not in err and sum("error:" in ln for ln in lines) == 1, err
    assert lines[0].startswith(f"{tool}: error: ")
    return err


def texts(path: Path) -> list[str]:
    return ["".join(e.itertext()) for e in ET.parse(path).getroot().iter(f"{SVG}text")]


def test_draws_an_example(tmp_path, capsys):
    out = tmp_path / "attention.svg"
    code, _, err = run(draw_cli.main, [str(EXAMPLES / "attention.mlir"), "-o", str(out)], capsys)
    assert code == 0 and err == ""
    assert "softmax" in texts(out)


def test_draws_a_lowered_module_from_stdin(tmp_path, capsys):
    out = tmp_path / "matmul.svg"
    reg = str(run_pipeline((EXAMPLES / "matmul.mlir").read_text(), GEMM_REG))
    code, _, _ = run(draw_cli.main, ["-", "-o", str(out)], capsys, stdin=reg)
    assert code == 0
    assert "@matmul at the reg level" in texts(out)


@pytest.mark.parametrize("argv, says", [
    (["-o", "{out}.svg"], "cannot parse the input"),
    ([str(EXAMPLES / "matmul.mlir"), "-o", "{out}.gif"], "name it .svg, .png or .pdf"),
    ([str(EXAMPLES / "matmul.mlir"), "-p", "no-such-pass", "-o", "{out}.svg"], "no-such-pass"),
    ([str(EXAMPLES / "matmul.mlir"), "-p", 'ncd-relabel{grid="m:0"}', "-o", "{out}.svg"], "tiles are 1 or more"),
    ([str(EXAMPLES / "matmul.mlir"), "-p", 'ncd-relabel{grid="m:128,n:128" stream="k:32"}', "--level", "smem",
      "-o", "{out}.svg"], "never leaves the module at the smem level"),
    ([str(EXAMPLES / "matmul.mlir"), "-p", "napkin-sm80", "-o", "{out}.svg"], "add --level reg"),
    ([str(EXAMPLES / "nothing-here.mlir"), "-o", "{out}.svg"], "no such file"),
])
def test_bad_input_gets_one_diagnostic(argv, says, tmp_path, capsys):
    out = str(tmp_path / "x")
    argv = [a.replace("{out}", out) for a in argv]
    stdin = "func.func @f( {" if argv[0] == "-o" else None
    code, _, err = run(draw_cli.main, argv, capsys, stdin=stdin)
    assert code == 1
    assert says in one_diagnostic(err), err
    assert not list(tmp_path.iterdir())  # no picture half written


def test_a_level_above_the_module_is_refused(tmp_path, capsys):
    reg = str(run_pipeline((EXAMPLES / "matmul.mlir").read_text(), GEMM_REG))
    code, _, err = run(draw_cli.main, ["-", "--level", "hbm", "-o", str(tmp_path / "x.svg")], capsys, stdin=reg)
    assert code == 1 and "it does not raise" in one_diagnostic(err)


def test_an_unknown_level_is_a_usage_error(tmp_path, capsys):
    code, _, err = run(draw_cli.main, [str(EXAMPLES / "matmul.mlir"), "--level", "ptx", "-o", str(tmp_path / "x.svg")], capsys)
    assert code == 2 and "--level" in one_diagnostic(err)


@pytest.mark.parametrize("level_spec", [None, GEMM_REG])
def test_napkin_model_plots_the_roofline(level_spec, tmp_path, capsys):
    out = tmp_path / "roofline.svg"
    text = (EXAMPLES / "matmul.mlir").read_text()
    stdin = str(run_pipeline(text, level_spec)) if level_spec else text
    code, report, _ = run(model_cli.main, ["-", "--plot", str(out)], capsys, stdin=stdin)
    assert code == 0 and "predicted" in report  # the report is still printed
    found = texts(out)
    assert any("FLOP per byte" in t for t in found)
    if level_spec:
        assert any(t.startswith("tensor cores:") for t in found) and any(t.startswith("HBM ") for t in found)
        assert any(t.startswith("shared memory ") for t in found) and any(t.startswith("special functions") for t in found)
        assert any("bound by tensor cores" in t or "bound by shared memory" in t for t in found)
    else:
        assert any("fused (one kernel" in t for t in found)


def test_the_roofline_of_sm90_attention_draws_its_chain(tmp_path, capsys):
    from napkin_ir.plan.recipes.attention import sm90_passes
    from napkin_ir.passmanager import spec

    text = (EXAMPLES / "attention.mlir").read_text()
    out = tmp_path / "roofline.svg"
    stdin = str(run_pipeline(text, spec(sm90_passes(run_pipeline(text))[:-1])))
    code, report, _ = run(model_cli.main, ["-", "--hw", "h200", "--plot", str(out)], capsys, stdin=stdin)
    assert code == 0 and "bound by the products and the math between them, in turn" in report
    assert any(t.startswith("the products and the math between them, in turn:") for t in texts(out))


def test_napkin_model_plot_with_a_bad_name_is_refused(tmp_path, capsys):
    code, _, err = run(model_cli.main, [str(EXAMPLES / "matmul.mlir"), "--plot", str(tmp_path / "r.bmp")], capsys)
    assert code == 1 and "name it .svg, .png or .pdf" in one_diagnostic(err, "napkin-model")


def test_without_matplotlib_the_diagnostic_says_how_to_get_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    code, _, err = run(draw_cli.main, [str(EXAMPLES / "matmul.mlir"), "-o", str(tmp_path / "x.svg")], capsys)
    assert code == 1 and "pip install 'napkin-ir[draw]'" in one_diagnostic(err)
