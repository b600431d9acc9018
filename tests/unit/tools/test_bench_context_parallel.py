"""tools/bench_context_parallel.py's table: tokens per second from the slowest rank's
median, the scale against the same entry on one GPU, napkin's speed against each peer at
the same world size, and a peer that failed shown as failed, not timed."""

import sys
from argparse import Namespace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))
import bench_context_parallel as bench  # noqa: E402

ARGS = Namespace(seqs=[1000], worlds=[1, 2], kinds=["causal"], heads=16, dim=128, peers=["cudnn", "flash"])


def _row(world, entry, fwd, step, **more):
    return {"n": 1000, "kind": "causal", "world": world, "entry": entry, "fwd_ms": fwd, "step_ms": step, **more}


def _cells(lines, world, entry):
    found = [line for line in lines if line.startswith(f"| 1000 | causal | {world} | {entry} |")]
    assert len(found) == 1, lines
    return [c.strip() for c in found[0].strip("|").split("|")]


def test_the_table_reads_scale_and_ratios_from_the_times():
    rows = [_row(1, "napkin", 2.0, 8.0), _row(1, "cudnn", 2.5, 8.0, err=1e-4),
            _row(2, "napkin", 1.0, 5.0), _row(2, "cudnn", 1.5, 4.0, err=2e-4),
            {"n": 1000, "kind": "causal", "world": 2, "entry": "flash", "failed": "RuntimeError: no kernel"}]
    lines = bench.table(rows, ARGS, "2x GPU")
    napkin2 = _cells(lines, 2, "napkin")
    assert napkin2[4:7] == ["1.00", "0.20", "1.60x"]  # 1000 tokens in 1 ms: 1 M/s; in 5 ms: 0.2 M/s; 8 ms / 5 ms
    cudnn2 = _cells(lines, 2, "cudnn")
    assert cudnn2[6] == "2.00x" and cudnn2[7] == "1.50 / 0.80" and cudnn2[8] == "2.0e-04"  # napkin 1.5x faster forward, 0.8x the step
    assert _cells(lines, 1, "cudnn")[7] == "1.25 / 1.00"
    flash2 = _cells(lines, 2, "flash")
    assert flash2[4] == "failed: RuntimeError: no kernel" and not any(flash2[5:])
    assert "--worlds 1,2" in lines[1] and "--peers cudnn,flash" in lines[1]
