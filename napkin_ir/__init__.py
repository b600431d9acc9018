"""napkin-ir: neural circuit diagrams lowered to PTX, one memory level at a time.

The public API, imported on first use so that `import napkin_ir` stays quick:

    import napkin_ir
    text = napkin_ir.gemm(4096, 4096, 4096)                      # or attention_diagram(...), or your own
    kernel = napkin_ir.compile(text, target="sm90", block=(128, 256, 64))   # cached, in memory and on disk
    kernel(a=a, b=b, out=c, stream=torch.cuda.current_stream())  # checked against the diagram's types
    kernel.save("matmul")                                        # matmul.ptx and matmul.json for other programs

Every diagnostic the API raises is a `napkin_ir.NapkinError` (its subclasses say whose
fault it is: `UserError` and `InvalidIR`, `PipelineError`, `CompileError`, `SizeError`;
`SystemFault`; `InternalError`). `napkin_ir.torch` (the `torch` extra) registers `torch.ops.napkin.matmul` and
`torch.ops.napkin.attention`. docs/guide.md walks through it all.
"""

from __future__ import annotations

import importlib
from typing import Any

from napkin_ir import xdsl_fixes

xdsl_fixes.apply()

# public name -> the module that defines it
_API = {
    "compile": "napkin_ir.compiler",
    "parse": "napkin_ir.compiler",
    "pipeline_spec": "napkin_ir.compiler",
    "gemm": "napkin_ir.diagrams",
    "attention_diagram": "napkin_ir.attention_diagrams",
    "gqa_attention_diagram": "napkin_ir.attention_diagrams",
    "CompiledKernel": "napkin_ir.runtime.compiled",
    "LaunchContract": "napkin_ir.runtime.contract",
    "CompileCache": "napkin_ir.cache",
    "default_cache": "napkin_ir.cache",
    "ArgumentError": "napkin_ir.runtime.driver",
    "CudaError": "napkin_ir.runtime.driver",
    "NapkinError": "napkin_ir.errors",
    "UserError": "napkin_ir.errors",
    "BadArgument": "napkin_ir.errors",
    "InvalidIR": "napkin_ir.errors",
    "PipelineError": "napkin_ir.errors",
    "CompileError": "napkin_ir.errors",
    "SizeError": "napkin_ir.errors",
    "SystemFault": "napkin_ir.errors",
    "InternalError": "napkin_ir.errors",
}

__all__ = sorted([*_API, "__version__"])


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from napkin_ir.runtime.contract import napkin_version

        return napkin_version()
    if name in _API:
        value = getattr(importlib.import_module(_API[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'napkin_ir' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
