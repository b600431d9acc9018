"""research/backward_stalls.py's table: from each ncu raw-page CSV the kernel that ran
longest, the stalls side by side with their sum, figures a CSV lacks shown as nan."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # research/
import backward_stalls  # noqa: E402


def _csv(path: Path, kernels: list[tuple[str, float, dict[str, float]]]) -> Path:
    stall_names = [backward_stalls.STALL.format(s) for s in backward_stalls.STALLS]
    head = ["ID", "Kernel Name", "gpu__time_duration.sum", "smsp__inst_executed.sum", *stall_names]
    units = ",".join('""' if n in ("ID", "Kernel Name") else '"x"' for n in head)
    rows = ["==PROF== Connected", ",".join(f'"{h}"' for h in head), units]
    for i, (name, ns, stalls) in enumerate(kernels):
        values = [f"{ns:,.0f}", "1,000,000", *(str(stalls.get(s, 0.0)) for s in backward_stalls.STALLS)]
        rows.append(",".join(f'"{v}"' for v in [str(i), name, *values]))
    path.write_text("\n".join(rows) + "\n")
    return path


def test_the_longest_kernels_side_by_side(tmp_path):
    a = _csv(tmp_path / "napkin.csv", [("delta", 40_000, {"wait": 9.0}),
                                       ("attention_grad_q_k_v", 4_800_000, {"wait": 2.0, "gmma": 0.2})])
    b = _csv(tmp_path / "fa4.csv", [("flash_bwd", 4_500_000, {"wait": 1.5, "gmma": 0.5}), ("postprocess", 46_000, {})])
    text = backward_stalls.table(a, b)
    assert "attention_grad_q_k_v" in text and "flash_bwd" in text and "delta" not in text
    assert "| time (us) | 4800.0 | 4500.0 | +300.0 |" in text
    assert "| cycles a warp per issued instruction | 2.20 | 2.00 | +0.20 |" in text
    lines = text.splitlines()
    first = next(n for n, ln in enumerate(lines) if ln.startswith("| stalled:"))
    assert lines[first] == "| stalled: wait | 2.00 | 1.50 | +0.50 |"  # the largest difference first
    assert "| tensor pipe (%) | nan | nan | +nan |" in text  # not in these CSVs
