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
