"""Numpy implementations of the `hbm` ops.

Global tensors (`tiles.GlobalTensor`) are numpy arrays that `hbm.store` writes in place;
`hbm.load` reads a tile of one, zero past its edges. Running a kernel's grid, with these
and the smem, reg, ncd, scf and arith interpreters together, is `run.run_kernel`'s job.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects import arith
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    ReturnedValues,
    impl,
    impl_terminator,
    register_impls,
)

from napkin_ir.dialects import hbm
from napkin_ir.interpreters.tensors import NamedArray, round_to
from napkin_ir.interpreters.tiles import overlap, read_tile


@register_impls
class UnsignedIndexFunctions(InterpreterFunctions):
    """The unsigned index arithmetic that xDSL's arith interpreter lacks (tile and stage
    numbers in the pipelines, the bounds of a causal stream, either way)."""

    @impl(arith.DivUIOp)
    def run_divui(self, interpreter: Interpreter, op: arith.DivUIOp, args: tuple[Any, ...]):
        return (args[0] // args[1],)

    @impl(arith.RemUIOp)
    def run_remui(self, interpreter: Interpreter, op: arith.RemUIOp, args: tuple[Any, ...]):
        return (args[0] % args[1],)

    @impl(arith.MinUIOp)
    def run_minui(self, interpreter: Interpreter, op: arith.MinUIOp, args: tuple[Any, ...]):
        return (min(args[0], args[1]),)

    @impl(arith.MaxUIOp)
    def run_maxui(self, interpreter: Interpreter, op: arith.MaxUIOp, args: tuple[Any, ...]):
        return (max(args[0], args[1]),)


@register_impls
class HbmFunctions(InterpreterFunctions):
    @impl(hbm.LoadOp)
    def run_load(self, interpreter: Interpreter, op: hbm.LoadOp, args: tuple[Any, ...]):
        g, *offsets = args
        t = op.result.type
        return (NamedArray(t.axis_names, read_tile(g, offsets, t.dims)),)

    @impl(hbm.StoreOp)
    def run_store(self, interpreter: Interpreter, op: hbm.StoreOp, args: tuple[Any, ...]):
        value, g, *offsets = args
        data = value.aligned(g.type.axis_names)
        src, dst = overlap(g, offsets, data.shape)
        if op.accumulate is not None:  # a block's part of a split contraction
            g.data[src] += data[dst].astype(np.float32)
        else:
            g.data[src] = round_to(g.type.dtype, data[dst])
        return ()

    @impl(hbm.FillOp)
    def run_fill(self, interpreter: Interpreter, op: hbm.FillOp, args: tuple[Any, ...]):
        t = op.result.type
        return (NamedArray(t.axis_names, np.full(t.dims, op.value.value.data, np.float32)),)

    @impl_terminator(hbm.ReturnOp)
    def run_return(self, interpreter: Interpreter, op: hbm.ReturnOp, args: tuple[Any, ...]):
        return ReturnedValues(()), ()
