"""What ptxas says a kernel uses: registers, spills, static shared memory (`ptxas -v`).

The model estimates registers from the `reg` level; where the PTX exists this is the
check. `ptxas_resources(ptx)` assembles the text and parses the report;
`parse_ptxas_verbose(report)` parses a report read elsewhere (the lines ptxas writes to
stderr with `-v`). ptxas comes from the nvidia-cuda-nvcc wheel (napkin's test extra),
else from PATH.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

from napkin_ir.errors import UserError

_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '([^']+)'")
_REGS = re.compile(r"Used (\d+) registers")
_SPILLS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_SMEM = re.compile(r"(\d+) bytes smem")
_SERIALIZED = re.compile(r"wgmma\.mma_async instructions are serialized.*? for the function '([\w$.]+)'")
_TARGET = re.compile(r"^\s*\.target\s+(\w+)", re.MULTILINE)


@dataclass(frozen=True)
class PtxasResources:
    kernel: str
    arch: str
    registers: int
    spill_stores: int = 0
    spill_loads: int = 0
    stack_bytes: int = 0
    static_smem: int = 0
    # ptxas waits for each wgmma before the next ("Potential Performance Loss: wgmma.mma_async
    # instructions are serialized", C7512): too few registers left to keep them in flight
    serialized_wgmma: bool = False

    @property
    def spills(self) -> bool:
        return bool(self.spill_stores or self.spill_loads)


def parse_ptxas_verbose(report: str) -> dict[str, PtxasResources]:
    """Per kernel, the resources in a `ptxas -v` report."""
    found: dict[str, dict] = {}
    current: dict | None = None
    serialized = set(_SERIALIZED.findall(report))
    for line in report.splitlines():
        if m := _ENTRY.search(line):
            current = found.setdefault(m.group(1), {"kernel": m.group(1), "arch": m.group(2), "registers": 0})
        elif current is None:
            continue
        elif m := _SPILLS.search(line):
            current.update(stack_bytes=int(m.group(1)), spill_stores=int(m.group(2)), spill_loads=int(m.group(3)))
        elif m := _REGS.search(line):
            current["registers"] = int(m.group(1))
            if s := _SMEM.search(line):
                current["static_smem"] = int(s.group(1))
    return {k: PtxasResources(**v, serialized_wgmma=k in serialized) for k, v in found.items()}


def find_ptxas() -> str | None:
    try:
        import nvidia

        for root in nvidia.__path__:
            for sub in ("cu13", "cuda_nvcc"):
                cand = os.path.join(root, sub, "bin", "ptxas")
                if os.path.exists(cand):
                    return cand
    except ImportError:
        pass
    return shutil.which("ptxas")


def ptxas_resources(ptx: str, arch: str | None = None, ptxas: str | None = None) -> dict[str, PtxasResources]:
    """Assemble `ptx` with `ptxas -v` for `arch` (default: the module's .target) and parse
    the report. Raises UserError when ptxas is missing or refuses the text."""
    exe = ptxas or find_ptxas()
    if exe is None:
        raise UserError("ptxas not found: install the nvidia-cuda-nvcc wheel (the test extra) or put ptxas on PATH")
    target = arch or (m.group(1) if (m := _TARGET.search(ptx)) else "sm_80")
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "kernel.ptx")
        with open(src, "w") as fh:
            fh.write(ptx)
        run = subprocess.run([exe, "-v", f"-arch={target}", src, "-o", os.path.join(tmp, "kernel.cubin")],
                             capture_output=True, text=True, check=False)
    if run.returncode != 0:
        first = next((ln for ln in run.stderr.splitlines() if "error" in ln), run.stderr.strip()[:200])
        raise UserError(f"ptxas refused the PTX for {target}: {first}")
    return parse_ptxas_verbose(run.stderr + run.stdout)
