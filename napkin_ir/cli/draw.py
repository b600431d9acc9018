"""`napkin-draw`: a module drawn as a neural circuit diagram, at one level, with its numbers.

    napkin-draw examples/attention.mlir -o attention.svg                 # the diagram (ncd)
    napkin-draw examples/attention.mlir --level hbm -o attention.png     # tiles chosen by the model
    napkin-draw examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3}' -o m.svg
    napkin-draw examples/matmul.mlir -p napkin-sm90 --level reg -o m.pdf # stop napkin-sm90 above PTX

`-p` runs the passes named (xDSL's pipeline syntax) and draws the module they leave, or,
with `--level`, the module as the last pass that left it at that level left it. With
`--level` alone the napkin model chooses the labels, tiles, warps and stages for `--hw`
(`--target sm80`: cp.async and mma.sync; `sm90`: TMA and wgmma). The format follows the
output's name: .svg, .png or .pdf. Needs matplotlib (`pip install 'napkin-ir[draw]'`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from napkin_ir import registry
from napkin_ir.cli.diagnostics import fail, guarded, refuse_overwriting_inputs
from napkin_ir.draw.levels import DRAWN
from napkin_ir.model.hardware import HARDWARE

TOOL = "napkin-draw"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        fail(TOOL, f"{message} (see napkin-draw --help)", code=2)


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = _Parser(prog=TOOL, description="draw a module as a neural circuit diagram at one level, with the napkin model's numbers")
    p.add_argument("input_file", nargs="?", default="-", help="module to draw (stdin when '-' or missing)")
    p.add_argument("-p", "--passes", default="", help="pass pipeline to run first (xDSL syntax, e.g. napkin-sm80)")
    p.add_argument("--level", choices=list(DRAWN), help="the level to draw at (lowers as far, and no further)")
    p.add_argument("-o", "--output", required=True, help="the picture: OUT.svg, OUT.png or OUT.pdf")
    p.add_argument("--hw", choices=list(HARDWARE), default="h100", help="the GPU the numbers are for (default h100)")
    p.add_argument("--target", choices=["sm80", "sm90"], default="sm80",
                   help="with --level and no -p: what the model tiles for (default sm80)")
    return p.parse_args(argv)


def _read_module(path: str) -> ModuleOp:
    if path == "-":
        text, name = sys.stdin.buffer.read().decode(), "<stdin>"
    else:
        with open(path, "rb") as fh:
            text, name = fh.read().decode(), path
    module = Parser(registry.make_context(), text, name).parse_module()
    module.verify()
    return module


def _run(args: argparse.Namespace) -> int:
    from napkin_ir.draw.figure import draw_lowered
    from napkin_ir.draw.levels import prepare
    from napkin_ir.draw.style import output_format, pyplot

    refuse_overwriting_inputs([("-o", args.output)], [args.input_file])
    output_format(args.output)  # a bad name is refused before any work
    pyplot()  # and so is a missing matplotlib
    if args.passes:
        from napkin_ir.passmanager import parse_pipeline

        parse_pipeline(args.passes)  # and so is a pass nobody registered
    module = _read_module(args.input_file)
    lowered = prepare(module, args.passes or None, args.level, args.hw, args.target)
    draw_lowered(lowered, args.output, args.hw)
    return 0


def main(argv: Sequence[str] | None = None) -> None:
    args = _parse_args(argv)
    raise SystemExit(guarded(TOOL, lambda: _run(args)))


if __name__ == "__main__":
    main()
