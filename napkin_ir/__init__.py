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
import sys
from typing import Any


class _XdslFixesOnImport:
    """napkin-ir's fixes to xDSL (`napkin_ir.xdsl_fixes`) applied the moment xDSL is first
    imported, by anyone, rather than here: `import napkin_ir` and a compile that the cache
    answers import no xDSL at all, and no xDSL text is parsed before the fixes are in
    place. A meta path finder that answers for the `xdsl` package alone, once: it finds
    xDSL's own spec, and runs the fixes right after the package's `__init__`."""

    @classmethod
    def find_spec(cls, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "xdsl":
            return None
        sys.meta_path[:] = [f for f in sys.meta_path if f is not cls]
        for finder in sys.meta_path:
            spec = finder.find_spec(name, path, target) if hasattr(finder, "find_spec") else None
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _FixingLoader(spec.loader)
        return spec


class _FixingLoader:
    """xDSL's own loader, with the fixes applied once its package has run."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader

    def create_module(self, spec: Any) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self.loader.exec_module(module)
        module.__spec__.loader = module.__loader__ = self.loader  # the package keeps its own (resources, reloads)
        importlib.import_module("napkin_ir.xdsl_fixes")  # applies them (at its end, once it is whole)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.loader, name)


if "xdsl" in sys.modules:
    importlib.import_module("napkin_ir.xdsl_fixes")
elif _XdslFixesOnImport not in sys.meta_path:
    sys.meta_path.insert(0, _XdslFixesOnImport)

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
