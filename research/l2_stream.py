#!/usr/bin/env python3
"""research/l2_stream.cu's readings beside the napkin model's L2 replay of the same accesses.

    python3 research/l2_stream.py NCU_OUTPUT [--hw h200]    (the probe's stdout and ncu's --csv table)
    python3 research/l2_stream.py --model R_MIB S_MIB... [--hw h200]   (the replay alone)

For each launch (reuse_read or reuse_write, S MiB streamed a pass): the share of the reused
buffer R lost between passes, from Nsight Compute's DRAM bytes read (R's first pass and the
streamed reads aside), and as the replay (`napkin_ir.model.l2.replay_partitioned`, one block
on each SM, the SMs' partitions and dispatch order from the hardware table) predicts it.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PASSES = 4  # as research/l2_stream.cu
MIB = 1 << 20
R_STEPS = 132  # the replay's steps a pass spends on R (each block a different 1/R_STEPS of it at a time)
S_STEPS = 33  # and on its streamed slice


def trace(hw, r_mib: float, s_mib: float, write: bool):
    """The probe's accesses as an L2 trace: pass p reads R (each block its tiles in turn,
    from its own start), then streams its slice of fresh bytes."""
    from napkin_ir.model import l2

    sms = hw.sms
    dispatch = np.asarray(hw.dispatch_order or range(sms))[:sms]
    r_tile, s_tile = r_mib * MIB / R_STEPS, s_mib * MIB / sms / S_STEPS
    steps, keys, sizes, tensors, writes, on = [], [], [], [], [], []
    b = np.arange(sms)
    for p in range(PASSES):
        base = p * (R_STEPS + S_STEPS)
        for t in range(R_STEPS):
            steps.append(np.full(sms, base + t))
            keys.append((b * R_STEPS // sms + t) % R_STEPS)
            sizes.append(np.full(sms, r_tile))
            tensors.append(np.zeros(sms, np.int64))
            writes.append(np.zeros(sms, bool))
            on.append(dispatch)
        if s_mib:
            for t in range(S_STEPS):
                steps.append(np.full(sms, base + R_STEPS + t))
                keys.append(R_STEPS + (p * sms + b) * S_STEPS + t)
                sizes.append(np.full(sms, s_tile))
                tensors.append(np.ones(sms, np.int64))
                writes.append(np.full(sms, write))
                on.append(dispatch)
    return l2.Trace(np.concatenate(steps), np.concatenate(keys), np.concatenate(sizes), np.concatenate(tensors),
                    np.concatenate(writes), ["r", "s"], np.concatenate(on), l2.L2_EDGE_SPREAD)


def modelled_loss(hw, r_mib: float, s_mib: float, write: bool) -> float:
    """The share of R the replay loses between passes."""
    from napkin_ir.model import l2

    tr = trace(hw, r_mib, s_mib, write)
    moved, _ = l2.replay_partitioned(tr, hw.l2_bytes / l2.L2_PARTITIONS, l2.partition_of(tr.sm, hw.sms, hw.l2_partition))
    return (moved[0] - r_mib * MIB) / ((PASSES - 1) * r_mib * MIB)


def measured(text: str) -> tuple[int, list[tuple[str, int, float, float]]]:
    """R's MiB and, per launch, (kernel, streamed MiB, DRAM bytes read, written)."""
    r_mib, launches = 16, []
    for line in text.splitlines():
        if line.startswith("SMs ") and " R " in line:
            r_mib = int(line.split(" R ")[1].split()[0])
        if line.startswith("launch "):
            _, kernel, mib = line.split()
            launches.append((kernel, int(mib)))
    rows: dict[str, dict[str, float]] = {}
    header: list[str] = []
    for cells in csv.reader(line for line in text.splitlines() if line.startswith('"')):
        if cells[0] == "ID":
            header = cells
            continue
        rec = dict(zip(header, cells))
        rows.setdefault(rec["ID"], {})[rec["Metric Name"]] = float(rec["Metric Value"].replace(",", ""))
    got = [rows[k] for k in sorted(rows, key=int)]
    if len(got) != len(launches):
        raise SystemExit(f"l2_stream: {len(launches)} launches printed but {len(got)} profiled")
    return r_mib, [(k, mib, g["dram__bytes_read.sum"], g["dram__bytes_write.sum"]) for (k, mib), g in zip(launches, got)]


def main() -> int:
    from napkin_ir.model.hardware import hardware

    ap = argparse.ArgumentParser()
    ap.add_argument("ncu_output", nargs="?", type=Path)
    ap.add_argument("--model", nargs="+", type=float, metavar="MIB", help="R_MIB then streamed MiB a pass: the replay alone")
    ap.add_argument("--hw", default="h200")
    args = ap.parse_args()
    hw = hardware(args.hw)
    if args.model:
        r_mib, streams = args.model[0], args.model[1:] or [0, 4, 8, 12, 16, 20, 24, 32]
        print(f"the replay on the {hw.name}: R {r_mib:g} MiB, share lost between passes")
        print(f"{'streamed MiB':>12} {'read':>8} {'written':>8}")
        for s in streams:
            print(f"{s:12g} {modelled_loss(hw, r_mib, s, False):8.2f} {modelled_loss(hw, r_mib, s, True):8.2f}")
        return 0
    if args.ncu_output is None:
        ap.error("give the probe's output under ncu, or --model")
    r_mib, launches = measured(args.ncu_output.read_text())
    r = r_mib * MIB
    print(f"R {r_mib} MiB, {PASSES} passes, on the {hw.name}: share of R lost between passes")
    print(f"{'kernel':<12} {'streamed MiB':>12} {'DRAM read MB':>12} {'written MB':>10} {'ncu':>6} {'replay':>7}")
    for kernel, mib, read, written in launches:
        write = kernel == "reuse_write"
        streamed = 0 if write else PASSES * mib * MIB
        lost = (read - r - streamed) / ((PASSES - 1) * r)
        print(f"{kernel:<12} {mib:12d} {read / 1e6:12.1f} {written / 1e6:10.1f} {lost:6.2f} {modelled_loss(hw, r_mib, mib, write):7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
