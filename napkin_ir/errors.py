"""The errors napkin-ir reports, and how a failure of any kind becomes one of them.

Every diagnostic the Python API raises is a `NapkinError`, so `except napkin_ir.NapkinError`
catches them all. `UserError` and its subclasses are the input's or the caller's fault (text
that does not parse or verify, a pipeline spec, a pass that refuses the diagram, sizes that
cannot fit in memory); `SystemFault` is the machine's (a file that cannot be read or
written, memory run out); `InternalError` is napkin-ir's own. `as_napkin_error` sorts an
exception from xDSL, the passes or the system into one of them, with the original as its
`__cause__`; the command-line tools print the same messages (`napkin_ir.cli.diagnostics`).
"""

from __future__ import annotations

import os


class NapkinError(Exception):
    """A diagnostic from napkin-ir; its message is for people and names the cause."""


class UserError(NapkinError):
    """An error in the user's input or options; its message is reported as is."""


class BadArgument(UserError, ValueError):
    """An argument of an API function of the wrong type or value, named in the message (a
    ValueError too, for callers that caught the builders' ValueError before)."""


class InvalidIR(UserError):
    """Text that does not parse, or IR that does not verify (xDSL's ParseError, VerifyException)."""


class PipelineError(UserError):
    """A pipeline spec that does not parse or names a pass or option nobody registered."""


class CompileError(UserError):
    """A pass, lowering or the PTX printer refused the module (xDSL's PassFailedException,
    napkin's PtxEmissionError and LoweringError), with its reason."""


class SizeError(NapkinError):
    """Sizes that cannot fit in memory, refused before any is allocated. The input's fault,
    but not a `UserError`: a search that sets aside candidates a pass refuses (`UserError`)
    must stop at once on this, which no candidate escapes."""


class SystemFault(NapkinError):
    """The system's fault: a file that cannot be read or written, memory run out."""


class InternalError(NapkinError):
    """A fault in napkin-ir itself, not in the input: please report it."""


def as_napkin_error(e: BaseException, *, pipeline: str | None = None) -> NapkinError:
    """`e` as the NapkinError that names its cause (a NapkinError as it is)."""
    from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError, PassFailedException, VerifyException

    from napkin_ir.xdsl_fixes import failing_op_text

    if isinstance(e, NapkinError):
        return e
    if isinstance(e, ParseError):
        return InvalidIR(f"cannot parse the input:\n{e}")
    if isinstance(e, ArgSpecParseError):
        return PipelineError(f"in the pipeline {pipeline!r}: {e}" if pipeline is not None else f"in a pipeline spec: {e}")
    if isinstance(e, VerifyException):
        return InvalidIR(failing_op_text(e))
    if isinstance(e, PassFailedException):
        return CompileError(failing_op_text(e))
    if isinstance(e, DiagnosticException):  # napkin's PtxEmissionError, LoweringError ...
        return CompileError(failing_op_text(e))
    if isinstance(e, UnicodeDecodeError):
        return InvalidIR(f"the input is not UTF-8 text (byte {e.start}: {e.reason})")
    if isinstance(e, RecursionError):
        return InvalidIR("the input nests too deeply to read (more levels of regions than Python's recursion limit)")
    if isinstance(e, MemoryError):
        return SystemFault("out of memory: the sizes asked for need more memory than this machine has"
                           + (f" ({e})" if str(e) else ""))
    if isinstance(e, OSError):
        return SystemFault(os_error_message(e))
    return InternalError(f"internal error: {type(e).__name__}: {e} (a fault in napkin-ir, not in the input)")


def os_error_message(e: OSError) -> str:
    """`cannot read FILE: Permission denied`, from what the OSError says of itself."""
    reason = e.strerror or (os.strerror(e.errno) if e.errno else str(e))
    if isinstance(e, FileNotFoundError) and e.filename is not None:
        return f"no such file: {e.filename}"
    if isinstance(e, IsADirectoryError) and e.filename is not None:
        return f"is a directory, not a file: {e.filename}"
    if e.filename is not None:
        return f"{e.filename}: {reason}"
    return reason


def check_size(what: str, elements: int, element_bytes: int, *, limit: int | None = None) -> None:
    """Refuse up front an array of `elements` that cannot fit in memory (this machine's, or
    `limit` bytes), naming `what` and its size."""
    need = elements * element_bytes
    have = limit if limit is not None else memory_bytes()
    if have is not None and need > have:
        raise SizeError(f"{what} needs {format_bytes(need)} ({elements:,} elements of {element_bytes} bytes); "
                        f"this machine has {format_bytes(have)} of memory")


def memory_bytes() -> int | None:
    """The machine's physical memory in bytes (None where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def format_bytes(n: int) -> str:
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


__all__ = ["BadArgument", "CompileError", "InternalError", "InvalidIR", "NapkinError", "PipelineError", "SizeError", "SystemFault",
           "UserError", "as_napkin_error", "check_size", "format_bytes", "memory_bytes", "os_error_message"]
