"""`napkin-opt`: xDSL's opt driver with napkin's dialects, passes and targets.

Every xdsl-opt option works (`-p`, `-t`, `--split-input-file`, `--verify-diagnostics`,
`--print-op-generic` ...). Input comes from FILE, or stdin when FILE is `-` or missing.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.xdsl_opt_main import xDSLOptMain

from napkin_ir import registry
from napkin_ir.cli.diagnostics import guarded
from napkin_ir.errors import UserError
from napkin_ir.passmanager import run_passes


class NapkinOptMain(xDSLOptMain):
    def register_all_dialects(self):
        super().register_all_dialects()
        for name, factory in registry.napkin_dialects().items():
            self.ctx.register_dialect(name, factory)

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
        run_passes(self.ctx, prog, self.pipeline.passes, self.pipeline.callback)

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
