"""Files written whole or not at all.

Every file napkin-ir writes for a user (`napkin-opt -o`, `--launch-json`, `napkin-draw -o`,
`kernel.save`) goes to a temporary file beside the target and is renamed over it only
when all of it was written, so a run that fails at any stage leaves the previous file as
it was and never a partial one. The rename is atomic within a file system, which a
temporary file in the target's own directory shares.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from napkin_ir.errors import SystemFault


class AtomicFile:
    """A file written beside `target` and renamed over it by `commit`; `discard` removes it."""

    def __init__(self, target: str | os.PathLike[str], mode: str = "w") -> None:
        self.target = Path(target)
        directory = self.target.parent
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{self.target.name}.", suffix=".tmp", dir=directory)
        except OSError as e:  # named by the target, not by the temporary file
            raise SystemFault(f"cannot write {self.target}: {e.strerror or e}") from e
        self.path = Path(tmp)
        self.stream: IO = os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"}))
        self.committed = False

    def commit(self) -> None:
        if not self.stream.closed:
            self.stream.flush()
            os.fsync(self.stream.fileno())
            self.stream.close()
        mode = 0o666 & ~_umask()
        if self.target.exists():
            with contextlib.suppress(OSError):
                mode = self.target.stat().st_mode & 0o7777
        os.chmod(self.path, mode)
        try:
            os.replace(self.path, self.target)
        except OSError as e:
            raise SystemFault(f"cannot write {self.target}: {e.strerror or e}") from e
        self.committed = True

    def discard(self) -> None:
        if self.committed:
            return
        with contextlib.suppress(OSError):
            self.stream.close()
        with contextlib.suppress(OSError):
            self.path.unlink()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def is_special(target: str | os.PathLike[str]) -> bool:
    """A target that exists and is no regular file (`/dev/null`, a pipe): written in place,
    since renaming a file over it would replace the device."""
    return os.path.exists(target) and not os.path.isfile(target) and not os.path.isdir(target)


@contextlib.contextmanager
def atomic_output(target: str | os.PathLike[str], mode: str = "w") -> Iterator[IO]:
    """A stream whose text becomes `target` only when the block ends without an exception."""
    if is_special(target):
        with open(target, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as stream:
            yield stream
        return
    f = AtomicFile(target, mode)
    try:
        yield f.stream
    except BaseException:
        f.discard()
        raise
    try:
        f.commit()
    except BaseException:
        f.discard()
        raise


def write_atomically(target: str | os.PathLike[str], text: str) -> None:
    with atomic_output(target) as out:
        out.write(text)


__all__ = ["AtomicFile", "atomic_output", "is_special", "write_atomically"]
