"""research/tensor_busy.py reads ncu's raw CSV: each metric from the last row of values,
thousands separators dropped, and a clear stop where ncu profiled nothing or a metric is
missing."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # research/
import tensor_busy  # noqa: E402


def _csv(values: dict[str, str]) -> str:
    names = ["ID", "Kernel Name", *values]
    units = ["", "", *("" for _ in values)]
    row = ["0", "attention", *values.values()]
    quote = lambda cells: ",".join(f'"{c}"' for c in cells)  # noqa: E731
    return "\n".join(["==PROF== Connected to process 1", quote(names), quote(units), quote(row), "==PROF== Disconnected"])


def test_each_metric_is_read_from_the_values_row():
    values = {m: str(10 + i) for i, m in enumerate(tensor_busy.METRICS.values())}
    values[tensor_busy.METRICS["elapsed"]] = "1,105,725"
    got = tensor_busy.read_metrics(_csv(values))
    assert got["elapsed"] == 1105725.0
    assert got["active"] == float(values[tensor_busy.METRICS["active"]])
    assert set(got) == set(tensor_busy.METRICS)


def test_a_missing_metric_stops_with_its_name():
    values = {m: "1" for m in list(tensor_busy.METRICS.values())[1:]}
    with pytest.raises(SystemExit, match=list(tensor_busy.METRICS.values())[0]):
        tensor_busy.read_metrics(_csv(values))


def test_no_profiled_launch_stops():
    with pytest.raises(SystemExit, match="profiled no launch"):
        tensor_busy.read_metrics("==PROF== Connected to process 1\n==PROF== Disconnected")
