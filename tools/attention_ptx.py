#!/usr/bin/env python3
"""Compile an attention diagram to sm_80 PTX with chosen tiles.

    python3 tools/attention_ptx.py examples/attention.mlir [--block 128] [--stream 64]
        [--warps 8] [--stages 3] [--q-in-shared] [--blocks-per-sm 1] [-o out.ptx]

What `napkin-opt FILE -p napkin-sm80 -t ptx` does for attention, with the tiles as
options. Reads stdin for `-`. Prints the launch configuration on stderr with --launch.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    from xdsl.utils.exceptions import DiagnosticException

    from napkin_ir.compiler import compile_attention

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", nargs="?", default="-")
    ap.add_argument("--block", type=int, default=128, help="query rows per block")
    ap.add_argument("--stream", type=int, default=64, help="keys per stream tile")
    ap.add_argument("--warps", type=int, default=None, help="warps sharing the rows (block / 16 by default)")
    ap.add_argument("--stages", type=int, default=3, help="shared-memory stages of the K/V pipeline")
    ap.add_argument("--q-in-shared", action="store_true", help="load Q's fragments at each product (fewer registers)")
    ap.add_argument("--blocks-per-sm", type=int, default=1, help="blocks a multiprocessor should hold (.minnctapersm)")
    ap.add_argument("-o", "--output", default="-")
    ap.add_argument("--launch", action="store_true", help="print the launch configuration on stderr")
    args = ap.parse_args()
    text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text()
    try:
        ptx, cfg = compile_attention(text, block=args.block, stream=args.stream, warps=args.warps, stages=args.stages,
                                     q_in_registers=not args.q_in_shared, blocks_per_sm=args.blocks_per_sm)
    except DiagnosticException as e:
        print(f"attention_ptx: error: {e}", file=sys.stderr)
        return 1
    if args.output == "-":
        sys.stdout.write(ptx)
    else:
        Path(args.output).write_text(ptx)
    if args.launch:
        print(cfg, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
