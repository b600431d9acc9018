"""`napkin-opt -t launch`: the launch contract of a module's one kernel, as JSON.

An xDSL `Target`, registered by `napkin_ir.registry`; here rather than beside the contract
(`napkin_ir.runtime.contract`), so that the runtime, which loads and launches what the
cache holds, imports no xDSL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO, Any

from xdsl.utils.target import Target

from napkin_ir.runtime.contract import launch_contract, napkin_version


@dataclass(frozen=True)
class LaunchTarget(Target):
    """`-t launch`: print the launch contract of the module's one kernel as JSON. Run from
    `napkin-opt`, which saw the diagram before lowering, it names each parameter's element
    type and shape; from `xdsl-opt`, which shows this target only the `ptx` level, it
    names what that level knows."""

    name = "launch"

    def emit(self, ctx: Any, module: Any, output: IO[str]) -> None:
        output.write(launch_contract(module, version=napkin_version()).to_json())


__all__ = ["LaunchTarget"]
