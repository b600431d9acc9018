"""How napkin's command-line tools fail, and how they write their outputs.

Users pass IR that does not parse, axes that do not match, options a pass does not
know; each of those is one message for them, not a Python traceback, and so is the
system's refusal (a file that cannot be read or written, memory run out). Only a fault in
napkin-ir itself is called an internal error; set `NAPKIN_TRACEBACK=1` to see its
traceback when debugging napkin.

An output file is written whole or not at all (`napkin_ir.files.atomic_output`), and
`refuse_overwriting_inputs` stops `-o` naming an input before anything is read.
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
import warnings
from collections.abc import Callable, Sequence
from typing import NoReturn, TypeVar

from napkin_ir.errors import InternalError, UserError, as_napkin_error

T = TypeVar("T")


def fail(tool: str, message: str, code: int = 1) -> NoReturn:
    sys.stdout.flush()
    print(f"{tool}: error: {message.rstrip()}", file=sys.stderr)
    raise SystemExit(code)


def _warner(tool: str):
    def show(message, category, filename, lineno, file=None, line=None) -> None:
        print(f"{tool}: warning: {message}", file=sys.stderr)

    return show


def guarded(tool: str, body: Callable[[], T]) -> T:
    """Run `body`, turning every failure into one diagnostic and exit status 1."""
    old_show = warnings.showwarning
    warnings.showwarning = _warner(tool)
    try:
        return body()
    except (SystemExit, KeyboardInterrupt):
        raise
    except BrokenPipeError:  # the reader went away (`napkin-opt ... | head`): nothing more to say
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - so that the interpreter's final flush is quiet
        raise SystemExit(1) from None
    except BaseException as e:  # noqa: BLE001 - the last line of defence, by design
        error = as_napkin_error(e)
        if not isinstance(error, InternalError):
            fail(tool, str(error))
        if os.environ.get("NAPKIN_TRACEBACK"):
            traceback.print_exc()
            fail(tool, f"internal error: {type(e).__name__}: {e}")
        fail(tool, f"internal error: {type(e).__name__}: {e} (a fault in napkin-ir, not in the input; "
                   "NAPKIN_TRACEBACK=1 shows where)")
    finally:
        warnings.showwarning = old_show


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def refuse_overwriting_inputs(outputs: Sequence[tuple[str, str | None]], inputs: Sequence[str | None]) -> None:
    """Refuse, before anything is read, an output (option name, path) that is one of the
    inputs or another output: writing it would destroy what the run reads."""
    named = [(opt, path) for opt, path in outputs if path not in (None, "-")]
    for opt, path in named:
        for source in inputs:
            if source not in (None, "-") and _same_file(path, source):  # type: ignore[arg-type]
                raise UserError(f"{opt} {path} is the input file; writing it would destroy the input (name another output)")
    for i, (opt, path) in enumerate(named):
        for other_opt, other in named[i + 1 :]:
            if _same_file(path, other):  # type: ignore[arg-type]
                raise UserError(f"{opt} and {other_opt} name the same file {path}; each output needs its own")


__all__ = ["fail", "guarded", "refuse_overwriting_inputs"]
