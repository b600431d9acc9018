"""`guarded`: the input's faults are one diagnostic; napkin's own are called internal."""

from __future__ import annotations

import pytest

from napkin_ir.cli.diagnostics import guarded
from napkin_ir.errors import UserError


def _raise(e: Exception):
    def body():
        raise e

    return body


def test_a_user_error_is_its_message(capsys):
    with pytest.raises(SystemExit) as exit_:
        guarded("napkin-opt", _raise(UserError("a tile of 96 does not divide axis 'm' of size 100")))
    assert exit_.value.code == 1
    assert capsys.readouterr().err == "napkin-opt: error: a tile of 96 does not divide axis 'm' of size 100\n"


def test_an_internal_error_says_so_and_how_to_see_where(capsys, monkeypatch):
    monkeypatch.delenv("NAPKIN_TRACEBACK", raising=False)
    with pytest.raises(SystemExit) as exit_:
        guarded("napkin-opt", _raise(ValueError("bad stage")))
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("napkin-opt: error: internal error: ValueError: bad stage")
    assert "NAPKIN_TRACEBACK=1" in err and "Traceback" not in err


def test_the_traceback_option_prints_the_traceback(capsys, monkeypatch):
    monkeypatch.setenv("NAPKIN_TRACEBACK", "1")
    with pytest.raises(SystemExit):
        guarded("napkin-run", _raise(KeyError("q")))
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "napkin-run: error: internal error: KeyError: 'q'" in err


# -- issue 37: the input's, the user's and the system's errors are not napkin's ----------------

import errno  # noqa: E402
import importlib.metadata  # noqa: E402
from pathlib import Path  # noqa: E402

from napkin_ir import xdsl_fixes  # noqa: E402
from napkin_ir.cli import draw as draw_cli  # noqa: E402
from opt_exit import exit_code as _opt  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


@pytest.mark.parametrize("error,words", [
    (PermissionError(errno.EACCES, "Permission denied", "in.mlir"), "in.mlir: Permission denied"),
    (OSError(errno.EIO, "Input/output error", "/proc/version"), "/proc/version: Input/output error"),
    (MemoryError(), "out of memory"),
    (RecursionError("maximum recursion depth exceeded"), "nests too deeply"),
])
def test_the_systems_errors_are_not_internal(capsys, error, words):
    with pytest.raises(SystemExit) as exit_:
        guarded("napkin-opt", _raise(error))
    err = capsys.readouterr().err
    assert exit_.value.code == 1 and words in err and "internal error" not in err


def test_an_unreadable_input_is_named(capsys, monkeypatch, tmp_path):
    src = tmp_path / "in.mlir"
    src.write_text((EXAMPLES / "matmul.mlir").read_text())
    real_open = open

    def deny(path, *a, **k):
        if str(path) == str(src):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, *a, **k)

    monkeypatch.setattr("builtins.open", deny)
    assert _opt(str(src)) == 1
    err = capsys.readouterr().err
    assert f"{src}: Permission denied" in err and "internal error" not in err


def test_deeply_nested_modules_are_the_inputs_fault(capsys, tmp_path):
    src = tmp_path / "deep.mlir"
    src.write_text("builtin.module {\n" * 3000 + "}\n" * 3000)
    assert _opt(str(src)) == 1
    err = capsys.readouterr().err
    assert "nests too deeply" in err and "internal error" not in err


def test_an_unknown_pass_in_napkin_draw_is_the_users_error(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    with pytest.raises(SystemExit) as exit_:
        draw_cli.main([str(EXAMPLES / "matmul.mlir"), "-p", "nope", "-o", str(tmp_path / "x.svg")])
    err = capsys.readouterr().err
    assert exit_.value.code == 1 and "Unrecognized passes: ['nope']" in err and "internal error" not in err


def test_a_verifier_error_names_the_op_where_it_is_in_custom_form(capsys, tmp_path):
    src = tmp_path / "bad.mlir"
    src.write_text("func.func @f(%x: !ncd.tensor<i=4 : f32>, %y: !ncd.tensor<i=8 : f32>) {\n"
                   "  %0 = ncd.map add %x, %y : !ncd.tensor<i=4 : f32>, !ncd.tensor<i=8 : f32> -> !ncd.tensor<i=4 : f32>\n"
                   "  func.return\n}\n")
    assert _opt(str(src)) == 1
    err = capsys.readouterr().err
    first, second, *rest = err.splitlines()
    assert first == f"napkin-opt: error: {src}:2:3: ncd.map add: axis 'i' has size 4 in operand #0 but 8 in operand #1"
    assert second.strip().startswith("%0 = ncd.map add %x, %y :")
    assert rest == [] and '"builtin.module"' not in err


# -- a broken xdsl.universe plugin is named and skipped ------------------------------------------

@pytest.fixture
def broken_plugin(monkeypatch):
    real = importlib.metadata.entry_points

    def entry_points(**kw):
        found = list(real(**kw))
        if kw.get("group") == "xdsl.universe":
            found.append(importlib.metadata.EntryPoint("broken", "no_such_module_for_napkin_tests:UNIVERSE", "xdsl.universe"))
            found.append(importlib.metadata.EntryPoint("notone", "napkin_ir.registry:napkin_passes", "xdsl.universe"))
        return found

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    monkeypatch.setattr(xdsl_fixes, "_WARNED", set())


def test_a_broken_plugin_is_skipped_with_a_warning_by_napkin_opt(capsys, broken_plugin, tmp_path):
    assert _opt(str(EXAMPLES / "matmul.mlir"), "-p", 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm') == 0
    out = capsys.readouterr()
    assert "hbm.kernel" in out.out
    assert "napkin-opt: warning: the xdsl.universe plugin 'broken' (no_such_module_for_napkin_tests:UNIVERSE) is skipped: " \
           "ModuleNotFoundError" in out.err
    assert "plugin 'notone'" in out.err and "not an xdsl.universe.Universe" in out.err


def test_a_broken_plugin_does_not_break_compile(broken_plugin):
    import napkin_ir

    with pytest.warns(xdsl_fixes.PluginWarning, match="'broken'"):
        kernel = napkin_ir.compile(napkin_ir.gemm(128, 128, 64), target="sm80", cache=False)
    assert kernel.ptx
