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


def _source_page(name: str, rows: list[tuple[str, str, int, dict[str, int]]]) -> str:
    """ncu's source page of one kernel (`--page source --csv --print-source sass`): address,
    instruction, samples, and the samples by reason."""
    reasons = ["stall_long_sb", "stall_short_sb", "stall_wait"]
    head = ["Address", "Source", "Warp Stall Sampling (All Samples)", "Warp Stall Sampling (Not-issued Samples)", *reasons,
            *(f"{r} (Not Issued)" for r in reasons)]
    lines = [f'"Kernel Name","{name}",', ",".join(f'"{h}"' for h in head)]
    for address, source, samples, by in rows:
        cells = [address, source, str(samples), str(samples), *(str(by.get(r, 0)) for r in reasons), *("0" for _ in reasons)]
        lines.append(",".join(f'"{c}"' for c in cells))
    return "\n".join(lines) + "\n"


def test_the_hottest_instructions_of_the_kernel_with_most_samples(tmp_path):
    path = tmp_path / "napkin_sass.csv"
    path.write_text(_source_page("attention_grad_q_k_v", [
        ("0x10", "      LDS.64 R14, [R10]", 10, {"stall_wait": 10}),
        ("0x20", "      FFMA R12, R184, 0.5, -R14", 600, {"stall_short_sb": 590, "stall_wait": 10}),
        ("0x30", "@!P0  BRA 0x90", 390, {"stall_long_sb": 390})])
        + _source_page("delta", [("0x10", "      FADD R1, R2, R3", 50, {"stall_wait": 50})]))
    text = backward_stalls.hottest(path)
    lines = text.splitlines()
    assert lines[0] == "attention_grad_q_k_v: 1000 samples"  # not the row kernel, which has fewer
    assert lines[2].split() == ["stall_short_sb", "59.00%"]
    assert "  FFMA         60.00%  short_sb 59.00%, wait 1.00%" in lines
    assert "  BRA          39.00%  long_sb 39.00%" in lines  # a predicated instruction counted under its opcode
    first = lines.index("hottest instructions:") + 1
    assert lines[first].split()[:3] == ["0x20", "60.00%", "FFMA"]
    assert "delta: 50 samples" in backward_stalls.hottest(path, kernel="delta")


def test_the_forward_is_profiled_at_the_batch_asked():
    """`--forward` and `--batch` reach the profiled call's command line; the backward's stays
    as it was (b=1, no flag)."""
    cmd = backward_stalls._run("fa4", True, 256, 4096, forward=True, batch=4)
    assert cmd[cmd.index("--batch") + 1] == "4" and "--forward" in cmd and "--causal" in cmd
    plain = backward_stalls._run("napkin", False, 128, 16384)
    assert plain[plain.index("--batch") + 1] == "1" and "--forward" not in plain
