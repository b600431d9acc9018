"""`napkin-opt`: xDSL's opt driver with napkin's dialects, passes and targets.

Every xdsl-opt option works (`-p`, `-t`, `--split-input-file`, `--verify-diagnostics`,
`--print-op-generic` ...). Input comes from FILE, or stdin when FILE is `-` or missing.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import IO

from xdsl.xdsl_opt_main import xDSLOptMain

from napkin_ir import registry
from napkin_ir.cli.diagnostics import guarded


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

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        if self.args.input_file == "-":
            return sys.stdin.buffer, "mlir"
        return super().get_input_stream()


def main(argv: Sequence[str] | None = None) -> None:
    guarded("napkin-opt", lambda: NapkinOptMain(description="napkin-ir optimizer driver", args=argv).run())


if __name__ == "__main__":
    main()
