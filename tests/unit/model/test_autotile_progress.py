"""The tile search says how far it is on stderr, where stderr is a terminal, and nothing elsewhere."""

from __future__ import annotations

import io
import re
import sys

from napkin_ir.diagrams import gemm
from napkin_ir.plan.autotile import SearchSpace, autotile, axis_roles, count_candidates
from napkin_ir.progress import ProgressLine

SPACE = SearchSpace(block_sizes=(64, 128), stream_sizes=(32,), stages=(2, 3), warp_counts=(4,))
TEXT = gemm(256, 256, 128)


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_callback_sees_every_candidate():
    seen: list[tuple[int, int]] = []
    result = autotile(TEXT, space=SPACE, progress=lambda n, at_most, c: seen.append((n, at_most)))
    assert [n for n, _ in seen] == list(range(1, len(result.candidates) + 1))
    assert len({m for _, m in seen}) == 1 and all(n <= m for n, m in seen)


def test_the_count_bounds_the_search(parse):
    from napkin_ir.interpreters.run import find_function

    roles = axis_roles(find_function(parse(TEXT)))
    result = autotile(TEXT, space=SPACE, progress=lambda *_: None)
    assert 0 < len(result.candidates) <= count_candidates(roles, SPACE)


def test_a_terminal_gets_a_progress_line_wiped_at_the_end(monkeypatch):
    tty = Terminal()
    monkeypatch.setattr(sys, "stderr", tty)
    monkeypatch.setattr(ProgressLine, "__init__", _eager(ProgressLine.__init__))
    autotile(TEXT, space=SPACE)
    text = tty.getvalue()
    # the elapsed seconds depend on the machine's load: any count of them
    assert re.match(r"\rautotile \(\d+ s\): 1 of at most \d+ candidates judged", text), text[:80]
    assert "fastest so far grid" in text
    assert text.endswith("\r") and text.rsplit("\r", 2)[-2].strip() == ""  # the last write blanks the line


def test_no_terminal_no_output(monkeypatch):
    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stderr", pipe)
    autotile(TEXT, space=SPACE)
    assert pipe.getvalue() == ""


def test_the_line_is_rewritten_at_most_every_interval():
    tty = Terminal()
    line = ProgressLine("work", tty, min_interval=3600)
    line.update("one")
    line.update("two")
    line.update("three", force=True)
    line.close()
    assert tty.getvalue() == "\rwork (0 s): one\rwork (0 s): three\r" + " " * 17 + "\r"


def _eager(init):
    def __init__(self, *args, **kwargs):
        init(self, *args, **{**kwargs, "min_interval": 0.0})
    return __init__
