"""The out-of-package pass of `examples/plugin` reaches napkin's tools through its
`xdsl.universe` entry point (docs/guide.md, "A pass in your own package"). Nothing is
installed: the entry point is added in-process, as an installed package would add it."""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

import pytest

PLUGIN = Path(__file__).resolve().parents[2] / "examples" / "plugin"
DIAGRAM = """func.func @f(%x: !ncd.tensor<i=4 : f32>) -> !ncd.tensor<i=4 : f32> {
  %y = ncd.map scale %x by 1.0 : !ncd.tensor<i=4 : f32> -> !ncd.tensor<i=4 : f32>
  %z = ncd.map scale %y by 2.0 : !ncd.tensor<i=4 : f32> -> !ncd.tensor<i=4 : f32>
  func.return %z : !ncd.tensor<i=4 : f32>
}
"""


@pytest.fixture
def plugin_installed(monkeypatch):
    monkeypatch.syspath_prepend(str(PLUGIN))
    real = importlib.metadata.entry_points

    def entry_points(**kw):
        found = list(real(**kw))
        if kw.get("group") == "xdsl.universe":
            found.append(importlib.metadata.EntryPoint("napkin-example", "napkin_example_plugin:UNIVERSE", "xdsl.universe"))
        return found

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    yield
    for name in [m for m in sys.modules if m.startswith("napkin_example_plugin")]:
        del sys.modules[name]


def test_the_entry_point_names_what_pyproject_says():
    text = (PLUGIN / "pyproject.toml").read_text()
    assert '[project.entry-points."xdsl.universe"]' in text and 'napkin-example = "napkin_example_plugin:UNIVERSE"' in text


def test_the_plugins_pass_runs_through_napkins_pass_manager(plugin_installed):
    from napkin_ir.passmanager import run_pipeline

    module = run_pipeline(DIAGRAM, "ncd-drop-unit-scale")
    text = str(module)
    assert "by 1.0" not in text and "ncd.map scale %x by 2.0" in text


def test_napkin_opt_runs_it(plugin_installed, capsys):
    from napkin_ir.cli.opt import main

    src = PLUGIN / ".." / "matmul.mlir"
    main([str(src), "-p", "ncd-drop-unit-scale"])
    assert "ncd.contract" in capsys.readouterr().out


def test_without_the_entry_point_the_pass_is_unknown():
    from napkin_ir.errors import PipelineError
    from napkin_ir.passmanager import parse_pipeline

    with pytest.raises(PipelineError, match="ncd-drop-unit-scale"):
        parse_pipeline("ncd-drop-unit-scale")
