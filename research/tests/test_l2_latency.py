"""research/l2_latency.py, the reader of research/l2_latency.cu's cycle counts, on counts made up
to have two partitions: it must find which SMs share SM 0's."""

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # research/
import l2_latency  # noqa: E402


def test_sms_that_agree_with_sm_0_on_their_near_lines_are_on_its_partition(tmp_path, capsys):
    # 6 SMs, 64 lines: lines of even index are homed on partition 0, odd on 1. A cold read
    # through the near home takes about 600 cycles, through the far one 800; a read after SM 0
    # read the line, 270 when the reader's partition has it (all of them for SM 0's side),
    # 470 when only the far home does (the lines homed on the other side, for SM 0's).
    rng = np.random.default_rng(0)
    side = [0, 0, 1, 1, 0, 1]
    home = np.arange(64) % 2
    counts = []
    for s in side:
        cold = np.where(home == s, 600, 800) + rng.integers(0, 40, 64)
        own = 270 + rng.integers(0, 20, 64)
        by0 = np.where((s == 0) | (home == 1), 270, 470) + rng.integers(0, 20, 64)
        counts += [cold, own, by0]
    path = tmp_path / "lat.bin"
    np.array(counts, np.uint32).tofile(path)
    out = tmp_path / "map.json"
    assert l2_latency.main([str(path), "--lines", "64", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["partition"] == side
    assert "SMs on each side: [3, 3]" in capsys.readouterr().out


def test_a_file_of_the_wrong_size_is_refused(tmp_path, capsys):
    path = tmp_path / "lat.bin"
    np.zeros(100, np.uint32).tofile(path)
    assert l2_latency.main([str(path), "--lines", "64"]) == 1
    assert "not a multiple of 3 x 64" in capsys.readouterr().err
