"""How napkin's command-line tools fail: one diagnostic on stderr, a non-zero exit.

Users pass IR that does not parse, axes that do not match, options a pass does not
know; each of those is a message for them, not a Python traceback. Set
`NAPKIN_TRACEBACK=1` to see the traceback of an internal error when debugging napkin.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable
from typing import NoReturn, TypeVar

from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError

from napkin_ir.errors import UserError

T = TypeVar("T")


def fail(tool: str, message: str, code: int = 1) -> NoReturn:
    sys.stdout.flush()
    print(f"{tool}: error: {message.rstrip()}", file=sys.stderr)
    raise SystemExit(code)


def guarded(tool: str, body: Callable[[], T]) -> T:
    """Run `body`, turning every failure into one diagnostic and exit status 1."""
    try:
        return body()
    except (SystemExit, KeyboardInterrupt):
        raise
    except ParseError as e:
        fail(tool, f"cannot parse the input:\n{e}")
    except DiagnosticException as e:
        notes = "".join(f"\n{n}" for n in getattr(e, "__notes__", []))
        fail(tool, f"{e}{notes}")
    except (ArgSpecParseError, UserError) as e:
        fail(tool, str(e))
    except UnicodeDecodeError as e:
        fail(tool, f"the input is not UTF-8 text (byte {e.start}: {e.reason})")
    except FileNotFoundError as e:
        fail(tool, f"no such file: {e.filename}")
    except IsADirectoryError as e:
        fail(tool, f"is a directory, not a file: {e.filename}")
    except Exception as e:  # noqa: BLE001 - the last line of defence, by design
        if os.environ.get("NAPKIN_TRACEBACK"):
            traceback.print_exc()
            fail(tool, f"internal error: {type(e).__name__}: {e}")
        fail(tool, f"internal error: {type(e).__name__}: {e} (a fault in napkin-ir, not in the input; "
                   "NAPKIN_TRACEBACK=1 shows where)")
