"""A progress line on stderr for long work, such as the napkin model's search for tiles.

The line is rewritten in place (a carriage return, no newline) at most every
`min_interval` seconds, and wiped when the work is done, so that what the work prints
afterwards starts on a clean line. Where the stream is not a terminal (a log, CI, a pipe
into another tool) it prints nothing at all.
"""

from __future__ import annotations

import shutil
import sys
import time
from typing import IO


def is_terminal(stream: IO[str]) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or closed
        return False


class ProgressLine:
    """`what (N s): TEXT` on one line of `stream` (stderr by default), while it is a terminal."""

    def __init__(self, what: str, stream: IO[str] | None = None, *, min_interval: float = 0.2) -> None:
        self.what, self.min_interval = what, min_interval
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = is_terminal(self.stream)
        self.start = time.monotonic()
        self._shown = float("-inf")
        self._width = 0

    def update(self, text: str, *, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._shown < self.min_interval:
            return
        self._shown = now
        line = f"{self.what} ({now - self.start:.0f} s): {text}"[: max(shutil.get_terminal_size().columns - 1, 20)]
        self.stream.write("\r" + line + " " * max(self._width - len(line), 0))
        self.stream.flush()
        self._width = len(line)

    def close(self) -> None:
        """Wipe the line."""
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0

    def __enter__(self) -> ProgressLine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
