"""`napkin-model`: the napkin cost report for a module at the ncd, hbm, smem or reg level.

    napkin-model examples/attention.mlir                     # ncd: the unfused cost
    napkin-opt examples/matmul.mlir -p '...,smem-to-reg' | napkin-model - --hw h200
    napkin-model kernel.mlir --json                          # the same as a JSON dict
    napkin-model kernel.mlir --plot roofline.svg             # and the kernel on the roofline

At the reg level `--ptxas` lowers the kernel on to PTX, assembles it with `ptxas -v` and
uses ptxas' register count in place of the estimate (both are shown), with the bytes it
spilled and whether it serialized the kernel's wgmma for want of registers.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import NoReturn

from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from napkin_ir import registry
from napkin_ir.cli.diagnostics import fail, guarded, refuse_overwriting_inputs
from napkin_ir.errors import UserError
from napkin_ir.model.hardware import HARDWARE, hardware
from napkin_ir.model.report import format_report, model_report, report_dict

TOOL = "napkin-model"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        fail(TOOL, f"{message} (see napkin-model --help)", code=2)


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = _Parser(prog=TOOL, description="the napkin performance model: bytes, FLOPs, occupancy and predicted time")
    p.add_argument("input_file", nargs="?", default="-", help="module to model (stdin when '-' or missing)")
    p.add_argument("--hw", choices=list(HARDWARE), default="h100", help="the GPU to predict for (default h100)")
    p.add_argument("--json", action="store_true", help="print a JSON dict instead of tables")
    p.add_argument("--mma", choices=["mma.sync", "wgmma"],
                   help="tensor-core instruction where the level has not decided it (default: the fastest the GPU has)")
    p.add_argument("--ptxas", action="store_true", help="at the reg level, count registers (and spills) with ptxas -v")
    p.add_argument("--plot", metavar="OUT", help="also draw the roofline to OUT.svg, .png or .pdf (needs matplotlib)")
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


def _ptxas_resources(module: ModuleOp) -> dict:
    """Lower a copy of a reg-level module to PTX and read ptxas' report of its kernels
    (registers, spills, serialized wgmma)."""
    import io

    from napkin_ir.dialects.ptx.printer import print_ptx
    from napkin_ir.lowering.reg_to_ptx import RegToPtxPass
    from napkin_ir.model.ptxas import ptxas_resources

    lowered = module.clone()
    RegToPtxPass().apply(registry.make_context(), lowered)
    out = io.StringIO()
    print_ptx(lowered, out, None)
    return ptxas_resources(out.getvalue())


def _run(args: argparse.Namespace) -> int:
    if args.plot:
        from napkin_ir.draw.style import output_format, pyplot

        refuse_overwriting_inputs([("--plot", args.plot)], [args.input_file])
        output_format(args.plot)  # refused before any work: a name with no picture format, no matplotlib
        pyplot()
    module = _read_module(args.input_file)
    hw = hardware(args.hw)
    if args.mma == "wgmma" and not hw.wgmma_flops:
        raise UserError(f"the {hw.name} has no wgmma; --mma wgmma needs an H100 or H200")
    report = model_report(module, hw, args.mma)
    if args.ptxas:
        if not any(k.cost.level == "reg" for k in report.kernels):
            raise UserError(f"--ptxas needs a module at the reg level; this one is at the {report.level} level")
        report = model_report(module, hw, args.mma, _ptxas_resources(module))
    sys.stdout.write(json.dumps(report_dict(report), indent=2) + "\n" if args.json else format_report(report))
    if args.plot:
        from napkin_ir.draw.roofline import plot_roofline

        plot_roofline(report, args.plot)
    return 0


def main(argv: Sequence[str] | None = None) -> None:
    args = _parse_args(argv)
    raise SystemExit(guarded(TOOL, lambda: _run(args)))


if __name__ == "__main__":
    main()
