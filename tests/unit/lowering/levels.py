"""What the attention gradient's level tests share: a kernel plan's levels, each run on
the CPU interpreter, against what the diagram computes."""

from __future__ import annotations

import numpy as np

from napkin_ir import reference
from napkin_ir.interpreters.run import find_entry
from napkin_ir.passes.composite import spec
from napkin_ir.passmanager import run_pipeline


def every_level_keeps(module, kernel_plan, inputs, want, levels=("hbm", "smem", "reg")) -> None:
    """Each of `levels` of `kernel_plan` on `module`, run on `inputs`, gives every output of
    `want` (all written, within bf16's bound)."""
    for level in levels:
        got = find_entry(run_pipeline(str(module), spec(kernel_plan.passes(level)))).run(inputs)
        for n, (g, w) in enumerate(zip(got, want)):
            assert not np.isnan(g).any(), f"{level}: some of output {n} was not written"
            assert reference.relative_error(g, w) <= reference.TOLERANCE["bf16"], (level, n)
