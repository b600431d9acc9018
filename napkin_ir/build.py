"""Compiling a diagram into a kernel object, without the cache: parse, run the pipeline,
print PTX, write the launch contract. The front door's own step (`napkin_ir.compile` adds
the cache; `napkin-run --gpu` calls it); the runtime only loads and launches what it makes.
"""

from __future__ import annotations

import io

from xdsl.dialects.builtin import ModuleOp

from napkin_ir.runtime.compiled import CompiledKernel
from napkin_ir.runtime.contract import diagram_signature, followed_signature, launch_contract, napkin_version


def compile_kernel(text: str, pipeline: str) -> CompiledKernel:
    """Compile a diagram (or a module at any level) with `pipeline` and get its one kernel;
    no cache (`napkin_ir.compile` has one)."""
    return compile_module(text, pipeline)[1]


def compile_module(text: str, pipeline: str, *, name: str = "<input>") -> tuple[ModuleOp, CompiledKernel]:
    """`compile_kernel`, and the module at the ptx level it printed (what the PTX emulator runs)."""
    from napkin_ir import registry
    from napkin_ir.dialects.ptx.printer import print_ptx
    from napkin_ir.passmanager import parse_pipeline, run_passes, run_pipeline

    passes = parse_pipeline(pipeline).passes  # a bad spec is refused before the text is read
    module = run_pipeline(text, name=name)  # parsed and verified: the diagram's types, before lowering loses them
    signature = diagram_signature(module)

    def follow(previous, now, following) -> None:
        # passes at the diagram level may change the function (ncd-grad, ncd-extract): the
        # kernel's parameters are those of the one function left when lowering begins
        nonlocal signature
        if previous is not None:
            signature = followed_signature(now, signature)

    run_passes(registry.make_context(), module, passes, follow)
    module.verify()
    out = io.StringIO()
    print_ptx(module, out)
    return module, CompiledKernel(out.getvalue(), launch_contract(module, signature, version=napkin_version(), pipeline=pipeline))


__all__ = ["compile_kernel", "compile_module"]
