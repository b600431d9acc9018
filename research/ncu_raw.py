"""ncu's raw page as CSV (`ncu --csv --page raw`): among ncu's own `==PROF==` lines, a header
row, a units row, then a row of values a profiled launch."""

from __future__ import annotations

import csv


def launches(text: str) -> list[dict[str, str]]:
    """Each profiled launch's cells by metric name, in the order ncu gave them."""
    rows = list(csv.reader(line for line in text.splitlines() if line.startswith('"')))
    return [dict(zip(rows[0], row)) for row in rows[2:]] if rows else []


def number(cell: str) -> float:
    """A cell's value, thousands separators dropped; nan where it is not a number."""
    try:
        return float(cell.replace(",", ""))
    except ValueError:
        return float("nan")
