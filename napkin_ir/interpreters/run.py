"""Running a function of a module on the CPU: pick it, make or check its inputs, call it.

`napkin-run` and the tests share this; the interpreters registered here cover every
level above `ptx` as they land.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from napkin_ir.errors import UserError
from napkin_ir.dialects import hbm, ncd
from napkin_ir.interpreters.ncd import make_interpreter
from napkin_ir.interpreters.tensors import NamedArray, round_to


def find_function(module: ModuleOp, name: str | None = None) -> func.FuncOp:
    funcs = [op for op in module.walk() if isinstance(op, func.FuncOp) and op.body.blocks]
    if name is not None:
        for f in funcs:
            if f.sym_name.data == name:
                return f
        raise UserError(f"no function @{name} with a body; the module has: {', '.join('@' + f.sym_name.data for f in funcs) or 'none'}")
    if len(funcs) != 1:
        names = ", ".join("@" + f.sym_name.data for f in funcs) or "none"
        raise UserError(f"expected exactly one function with a body, found {len(funcs)} ({names}); pick one with --function")
    return funcs[0]


def argument_types(f: func.FuncOp) -> list[ncd.TensorType]:
    types = list(f.function_type.inputs.data)
    for n, t in enumerate(types):
        if not isinstance(t, ncd.TensorType):
            raise UserError(f"@{f.sym_name.data}: argument #{n} has type {t}; napkin-run takes !ncd.tensor arguments")
    return types  # type: ignore[return-value]


def random_inputs(f: func.FuncOp, seed: int) -> list[np.ndarray]:
    """Standard-normal inputs, rounded to each argument's element type."""
    rng = np.random.default_rng(seed)
    return [round_to(t.dtype, rng.standard_normal(t.dims, dtype=np.float32)) for t in argument_types(f)]


def run_function(module: ModuleOp, f: func.FuncOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Interpret `f` on arrays laid out as its argument types say; returns float32 arrays."""
    types = argument_types(f)
    if len(inputs) != len(types):
        raise UserError(f"@{f.sym_name.data} takes {len(types)} arguments, got {len(inputs)}")
    args = []
    for n, (x, t) in enumerate(zip(inputs, types)):
        if tuple(x.shape) != t.dims:
            raise UserError(f"@{f.sym_name.data}: argument #{n} should have shape {t.dims}, got {tuple(x.shape)}")
        args.append(NamedArray(t.axis_names, round_to(t.dtype, x)))
    results = make_interpreter(module).call_op(f.sym_name.data, tuple(args))
    return [r.aligned(t.axis_names) for r, t in zip(results, f.function_type.outputs.data)]


@dataclass
class Entry:
    """Something runnable at any level: its name, input and output types, and how to run it."""

    name: str
    inputs: list[ncd.NamedAxesType]
    outputs: list[ncd.NamedAxesType]
    run: Callable[[Sequence[np.ndarray]], list[np.ndarray]]

    def random_inputs(self, seed: int) -> list[np.ndarray]:
        rng = np.random.default_rng(seed)
        return [round_to(t.dtype, rng.standard_normal(t.dims, dtype=np.float32)) for t in self.inputs]


def find_entry(module: ModuleOp, name: str | None = None) -> Entry:
    """The function (ncd level) or kernel (hbm level) to run."""
    from napkin_ir.interpreters.hbm import run_kernel

    kernels = [op for op in module.walk() if isinstance(op, hbm.KernelOp)]
    if not kernels:
        f = find_function(module, name)
        outs = list(f.function_type.outputs.data)
        return Entry(f.sym_name.data, argument_types(f), outs, lambda xs: run_function(module, f, xs))  # type: ignore[arg-type]
    if name is not None:
        kernels = [k for k in kernels if k.sym_name.data == name] or kernels[:0]
    if len(kernels) != 1:
        names = ", ".join("@" + k.sym_name.data for k in module.walk() if isinstance(k, hbm.KernelOp))
        raise UserError(f"expected exactly one hbm.kernel{' named @' + name if name else ''}, found {len(kernels)} ({names})")
    k = kernels[0]
    n_out = k.num_outputs.value.data
    types = [g.type for g in k.globals]
    return Entry(k.sym_name.data, types[:-n_out], types[-n_out:], lambda xs: run_kernel(module, k, xs))  # type: ignore[arg-type]
