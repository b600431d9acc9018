"""research/l2_stream.py: reading research/l2_stream.cu's output under ncu, and the replay of the same
accesses."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # research/
import l2_stream  # noqa: E402

from napkin_ir.model.hardware import hardware  # noqa: E402

HEADER = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"'


def _row(launch: int, kernel: str, metric: str, value: str) -> str:
    return (f'"{launch}","7","l2_stream","127.0.0.1","{kernel}(const float4 *)","1","7","(1024, 1, 1)","(132, 1, 1)","0","9.0",'
            f'"Command line profiler metrics","{metric}","byte","{value}"')


def test_the_launches_printed_are_paired_with_the_ones_profiled_in_order(tmp_path, capsys, monkeypatch):
    # R of 16 MiB read 4 times; the first launch streams nothing and keeps R (16.8 MB read, R
    # once), the second writes 8 MiB a pass and loses half of R in each later pass
    r = 16 << 20
    text = "\n".join([
        "SMs 132, L2 60 MiB, R 16 MiB, 4 passes; launches in order (kernel, streamed MiB a pass):",
        "launch reuse_read 0", "launch reuse_write 8", HEADER,
        _row(0, "reuse_read", "dram__bytes_read.sum", f"{r:,}"), _row(0, "reuse_read", "dram__bytes_write.sum", "0"),
        _row(1, "reuse_write", "dram__bytes_read.sum", f"{int(r * 2.5):,}"),
        _row(1, "reuse_write", "dram__bytes_write.sum", f"{4 * (8 << 20):,}"),
    ])
    r_mib, launches = l2_stream.measured(text)
    assert r_mib == 16
    assert launches == [("reuse_read", 0, r, 0.0), ("reuse_write", 8, r * 2.5, 4 * (8 << 20))]
    path = tmp_path / "ncu.txt"
    path.write_text(text)
    monkeypatch.setattr(sys, "argv", ["l2_stream.py", str(path)])
    assert l2_stream.main() == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-2].split()[4] == "0.00" and lines[-1].split()[4] == "0.50"


def test_a_profile_that_misses_launches_is_refused():
    text = "\n".join(["launch reuse_read 0", "launch reuse_write 0", HEADER,
                      _row(0, "reuse_read", "dram__bytes_read.sum", "1"), _row(0, "reuse_read", "dram__bytes_write.sum", "0")])
    with pytest.raises(SystemExit, match="2 launches printed but 1 profiled"):
        l2_stream.measured(text)


def test_the_replay_keeps_r_until_the_stream_fills_a_partition_written_or_read():
    # the H200's partitions of 30 MiB: R (16 MiB, in both) and three quarters of a pass's
    # stream (a partition's own SMs' half whole, the half homed in it of the others') fit up to
    # about 17 MiB streamed; 40 MiB push R out; written streams as read ones (as measured)
    hw = hardware("h200")
    for write in (False, True):
        assert l2_stream.modelled_loss(hw, 16, 8, write) == pytest.approx(0, abs=0.01)
        assert l2_stream.modelled_loss(hw, 16, 40, write) == pytest.approx(1, abs=0.01)
    assert l2_stream.modelled_loss(hw, 16, 24, False) == pytest.approx(l2_stream.modelled_loss(hw, 16, 24, True))
