"""napkin-opt run in-process, for the CLI tests: its exit status."""

from __future__ import annotations

from napkin_ir.cli import opt as opt_cli


def exit_code(*args: str) -> int:
    """napkin-opt's exit status for `args` (0 where it returns without exiting)."""
    try:
        opt_cli.main(list(args))
    except SystemExit as e:
        return int(e.code or 0)
    return 0
