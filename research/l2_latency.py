"""Read research/l2_latency.cu's cycle counts: which lines are near each SM, and which SMs agree.

    python research/l2_latency.py OUT.bin [--lines 2048] [--json MAP.json]

For each SM it splits the lines' cold read latencies in two at the widest gap between the
clusters (a two-means split), calls the faster side its near lines, and compares that set
with SM 0's: SMs on SM 0's partition share most near lines with it, SMs on the other share
few. It prints one row per SM (quantiles of each state, the share of lines near to it, its
agreement with SM 0) and then the partition of each SM, in %smid order.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np


def two_means(values: np.ndarray) -> float:
    """The threshold of a two-cluster split of `values` (Lloyd's iteration from the quartiles)."""
    lo, hi = np.percentile(values, [25, 75])
    for _ in range(50):
        cut = (lo + hi) / 2
        low, high = values[values <= cut], values[values > cut]
        if len(low) == 0 or len(high) == 0:
            return cut
        lo, hi = low.mean(), high.mean()
    return (lo + hi) / 2


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data")
    ap.add_argument("--lines", type=int, default=2048)
    ap.add_argument("--json", help="write {'partition': [...]} here, one entry per SM")
    args = ap.parse_args(argv)
    raw = np.fromfile(args.data, dtype=np.uint32)
    if raw.size % (3 * args.lines):
        print(f"error: {args.data} holds {raw.size} counts, not a multiple of 3 x {args.lines}", file=sys.stderr)
        return 1
    cyc = raw.reshape(-1, 3, args.lines).astype(np.float64)
    sms = cyc.shape[0]
    cold, own, by0 = cyc[:, 0], cyc[:, 1], cyc[:, 2]
    near = np.zeros((sms, args.lines), dtype=bool)
    for sm in range(sms):
        near[sm] = cold[sm] <= two_means(cold[sm])
    agree = (near == near[0]).mean(axis=1)
    by0_slow = np.array([(by0[sm] > two_means(by0[sm])).mean() for sm in range(sms)])
    side = (agree < 0.5).astype(int)
    q = lambda a: "/".join(f"{v:.0f}" for v in np.percentile(a, [5, 50, 95]))  # noqa: E731
    print("SM  cold p5/p50/p95  near  own p5/p50/p95  by-SM0 p5/p50/p95  by-SM0 slow  agree  side")
    for sm in range(sms):
        print(
            f"{sm:3d}  {q(cold[sm]):>16}  {near[sm].mean():.2f}  {q(own[sm]):>14}  {q(by0[sm]):>17}"
            f"  {by0_slow[sm]:.2f}  {agree[sm]:.2f}  {side[sm]}"
        )
    print(f"agreement with SM 0: {np.sort(agree).round(2).tolist()}")
    print(f"side of each SM (0: SM 0's): {side.tolist()}")
    print(f"SMs on each side: {np.bincount(side, minlength=2).tolist()}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"partition": side.tolist(), "agree": agree.round(3).tolist()}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
