"""`napkin-opt`: xDSL's opt driver with napkin's dialects, passes and targets.

Every xdsl-opt option works (`-p`, `-t`, `--split-input-file`, `--verify-diagnostics`,
`--print-op-generic` ...). Input comes from FILE, or stdin when FILE is `-` or missing.
`--dump-pass-pipeline` prints on stderr the passes a named pipeline chose, every option
written out, as a spec that `-p` reruns. `-t launch` prints the compiled kernel's launch contract as JSON, and `--launch-json FILE`
writes it beside whatever `-t` prints (`-t ptx -o k.ptx --launch-json k.json`): the two
files another program needs to launch the kernel (docs/launch.md). The contract names each
parameter's element type and shape as the input diagram had them, read before the passes.
"""

from __future__ import annotations

import sys
from argparse import ArgumentParser
from collections.abc import Sequence
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import parse_spec
from xdsl.xdsl_opt_main import xDSLOptMain

from napkin_ir import registry
from napkin_ir.cli.diagnostics import guarded, refuse_overwriting_inputs
from napkin_ir.errors import UserError
from napkin_ir.files import AtomicFile, is_special, write_atomically
from napkin_ir.passmanager import run_passes
from napkin_ir.runtime.contract import ArgSignature, diagram_signature, followed_signature, launch_contract, napkin_version


class NapkinOptMain(xDSLOptMain):
    _signature: list[ArgSignature]
    _contracts_written = 0
    _output: AtomicFile | None = None
    _contract: str | None = None

    def run(self):
        """xDSL's run, its outputs written whole or not at all: `-o` and `--launch-json` go
        to temporary files renamed over their targets only when every module succeeded,
        and neither may name the input."""
        refuse_overwriting_inputs([("-o", self.args.output_file), ("--launch-json", self.args.launch_json)],
                                  [self.args.input_file])
        try:
            super().run()
            if self._contract is not None:
                write_atomically(self.args.launch_json, self._contract)
            if self._output is not None:
                self._output.commit()
        finally:
            if self._output is not None:
                self._output.discard()  # nothing left to discard once committed

    def prepare_output(self) -> IO[str]:
        if self.args.output_file is None or is_special(self.args.output_file):
            return super().prepare_output()
        self._output = AtomicFile(self.args.output_file)
        return self._output.stream

    def register_all_dialects(self):
        super().register_all_dialects()  # napkin's too where its xdsl.universe entry point is installed
        for name, factory in registry.napkin_dialects().items():
            if name not in self.ctx.registered_dialect_names:
                self.ctx.register_dialect(name, factory)

    def register_all_arguments(self, arg_parser: ArgumentParser):
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument("--dump-pass-pipeline", action="store_true",
                                help="print on stderr the passes that ran, named pipelines expanded into the passes they "
                                     "chose, every option written out: a pipeline spec to rerun by hand with -p")
        arg_parser.add_argument("--launch-json", metavar="FILE",
                                help="also write the compiled kernel's launch contract (grid, block, shared memory, cluster, "
                                     "tensor maps, parameter types) to FILE as JSON")

    def register_all_passes(self):
        super().register_all_passes()
        for name, factory in registry.napkin_passes().items():
            self.register_pass(name, factory)

    def register_all_targets(self):
        super().register_all_targets()
        self.available_targets.update(registry.napkin_targets())

    def setup_pipeline(self) -> None:
        try:
            super().setup_pipeline()
        except ValueError as e:  # xDSL's word for a spec it cannot read: the user's error
            raise UserError(f"in the pipeline '{self.args.passes}': {e}") from None

    def apply_passes(self, prog: ModuleOp) -> None:
        """xDSL's pass manager, but a named pipeline (`napkin-sm80`, `napkin-sm90`) spliced
        into it as the passes it chooses, so that `--print-between-passes` and
        `--time-passes` see every level."""
        self._signature = diagram_signature(prog)
        ran: list[ModulePass] = []

        def callback(previous: ModulePass | None, module: ModuleOp, following: ModulePass | None) -> None:
            if previous is not None:
                ran.append(previous)
                # the contract describes the function lowering began with (a gradient's, not
                # the forward's the input held)
                self._signature = followed_signature(module, self._signature)
            if self.pipeline.callback is not None:
                self.pipeline.callback(previous, module, following)

        run_passes(self.ctx, prog, self.pipeline.passes, callback)
        if self.args.dump_pass_pipeline:
            print(",".join(str(p.pipeline_pass_spec(include_default=True)) for p in ran), file=sys.stderr)

    def output_resulting_program(self, prog: ModuleOp) -> str:
        launch = parse_spec(self.args.target).name == "launch"
        if not launch and not self.args.launch_json:
            return super().output_resulting_program(prog)
        contract = launch_contract(prog, self._signature, version=napkin_version(), pipeline=self.args.passes).to_json()
        if self.args.launch_json:
            if self._contracts_written:
                raise UserError("--launch-json writes the contract of one kernel; the input holds several modules")
            self._contract = contract  # written when the whole run has succeeded
            self._contracts_written += 1
        return contract if launch else super().output_resulting_program(prog)

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        if self.args.input_file == "-":
            return sys.stdin.buffer, "mlir"
        return super().get_input_stream()

    def prepare_input(self, *args, **kwargs):
        try:
            return super().prepare_input(*args, **kwargs)
        except ValueError as e:  # an extension xDSL does not know
            raise UserError(f"{e}; napkin-opt reads MLIR (.mlir), or say so with -f mlir") from None


def main(argv: Sequence[str] | None = None) -> None:
    guarded("napkin-opt", lambda: NapkinOptMain(description="napkin-ir optimizer driver", args=argv).run())


if __name__ == "__main__":
    main()
