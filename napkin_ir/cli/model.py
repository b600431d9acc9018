"""`napkin-model`: the napkin cost report (not yet implemented; see the performance-model issue)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from napkin_ir.cli.diagnostics import fail


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="napkin-model", description="napkin performance model (not yet available)")
    parser.add_argument("input_file", nargs="?")
    parser.add_argument("--hw", choices=["h100", "h200", "a100"], default="h100")
    parser.add_argument("--json", action="store_true")
    parser.parse_args(argv)
    fail("napkin-model", "the performance model is not implemented yet", code=2)


if __name__ == "__main__":
    main()
