"""Running a function of a module on the CPU: pick it, make or check its inputs, call it.

`napkin-run` and the tests share this; the interpreters registered here cover every
level above `ptx` as they land.

A kernel (`hbm.kernel`, at the hbm level or below) runs block by block: its body is
interpreted once per block, in grid order, with the hbm, smem and reg interpreters for
the tiles, napkin's ncd interpreter for the math on them, and xDSL's scf and arith
interpreters for the streaming loops and index arithmetic. A persistent kernel
(`hbm.persistent`) runs as a few blocks (`PERSISTENT_BLOCKS`), each looping over its tiles
in reg-to-ptx's order with its shared memory, barrier phases and ring positions carried
from one tile to the next, so that the interpreters check its protocol from tile to tile.
This module sits above the level interpreters, which do not import one another for it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter
from xdsl.interpreters.arith import ArithFunctions
from xdsl.interpreters.scf import ScfFunctions

from napkin_ir.errors import UserError
from napkin_ir.dialects import hbm, ncd
from napkin_ir.interpreters.hbm import HbmFunctions, UnsignedIndexFunctions
from napkin_ir.interpreters.ncd import NcdFunctions, make_interpreter
from napkin_ir.interpreters.reg import RegFunctions
from napkin_ir.interpreters.smem import Roles, SmemFunctions
from napkin_ir.interpreters.tensors import NamedArray, round_to
from napkin_ir.interpreters.tiles import GlobalTensor


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
    input_names: list[str | None] = field(default_factory=list)  # the inputs' SSA names, where they have one

    def random_inputs(self, seed: int) -> list[np.ndarray]:
        rng = np.random.default_rng(seed)
        return [round_to(t.dtype, rng.standard_normal(t.dims, dtype=np.float32)) for t in self.inputs]


def find_entry(module: ModuleOp, name: str | None = None) -> Entry:
    """The function (ncd level) or kernel (hbm level) to run."""
    kernels = [op for op in module.walk() if isinstance(op, hbm.KernelOp)]
    if not kernels:
        f = find_function(module, name)
        outs = list(f.function_type.outputs.data)
        return Entry(f.sym_name.data, argument_types(f), outs, lambda xs: run_function(module, f, xs),  # type: ignore[arg-type]
                     [a.name_hint for a in f.body.block.args])
    if name is not None:
        kernels = [k for k in kernels if k.sym_name.data == name] or kernels[:0]
    if len(kernels) != 1:
        names = ", ".join("@" + k.sym_name.data for k in module.walk() if isinstance(k, hbm.KernelOp))
        raise UserError(f"expected exactly one hbm.kernel{' named @' + name if name else ''}, found {len(kernels)} ({names})")
    k = kernels[0]
    n_out = k.num_outputs.value.data
    types = [g.type for g in k.globals]
    return Entry(k.sym_name.data, types[:-n_out], types[-n_out:], lambda xs: run_kernel(module, k, xs),  # type: ignore[arg-type]
                 [g.name_hint for g in k.globals][:-n_out])


def run_kernel(module: ModuleOp, kernel: hbm.KernelOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run every block of `kernel` on `inputs` (arrays in the globals' axis order); returns the outputs."""
    globs = kernel.globals
    n_out = kernel.num_outputs.value.data
    tensors = []
    accumulated = kernel.accumulated()  # zeroed, as the launch zeroes them (or the first part writes); others poisoned
    for k, g in enumerate(globs):
        t: hbm.GlobalType = g.type  # type: ignore[assignment]
        data = round_to(t.dtype, inputs[k]) if k < len(globs) - n_out else np.full(t.dims, 0.0 if g in accumulated else np.nan, np.float32)
        tensors.append(GlobalTensor(t, data))
    grid = kernel.grid_tiles
    blocks = kernel.grid_shape()
    if kernel.persistent is None:  # a block a tile
        tiles_of = [[idx] for idx in itertools.product(*(range(blocks[a]) for a in grid))]
    else:  # PERSISTENT_BLOCKS blocks, each looping over its tiles as reg-to-ptx orders them
        tiles_of = persistent_tiles(kernel, min(PERSISTENT_BLOCKS, math.prod(blocks.values())))
    for tiles in tiles_of:
        # each block starts with its own shared memory and no copies in flight; a persistent
        # one keeps them, and its barriers' phases, from tile to tile
        smem_fns = SmemFunctions()
        for n, idx in enumerate(tiles):
            reg_fns = RegFunctions()
            interp = Interpreter(module, listeners=(reg_fns.listener(),))
            for fns in (HbmFunctions(), smem_fns, reg_fns, NcdFunctions(), ScfFunctions(), ArithFunctions(), UnsignedIndexFunctions()):
                interp.register_implementations(fns)
            smem_fns.roles, smem_fns.tile_position = Roles(), n
            origins = [i * grid[a] for i, a in zip(idx, grid)]
            interp.run_ssacfg_region(kernel.body, (*tensors, *origins), kernel.sym_name.data)
            smem_fns.roles.join()  # a producer role ends with the tile
            smem_fns.ring_position += smem_fns.tile_trips
    for g, t in zip(globs, tensors):  # a 16-bit output's sum, whole: rounded once, as its last part does
        if g in accumulated and t.type.dtype != "f32":
            t.data[...] = round_to(t.type.dtype, t.data)
    return [t.data for t in tensors[len(globs) - n_out :]]


PERSISTENT_BLOCKS = 3  # blocks a persistent kernel is run with: several tiles each, in turns of both parities


def persistent_tiles(kernel: hbm.KernelOp, nblocks: int) -> list[list[tuple[int, ...]]]:
    """Each of `nblocks` persistent blocks' tiles (block indices along the grid axes), in
    the order reg-to-ptx's loop takes them: turn t takes tile t x blocks + block in launch
    order (the first axis fastest, or bands of `hbm.group` rows: the model's
    `grouped_ids`); a longest-first launch (`hbm.order = "last"`, or `"last_from_start"`
    where the streams shrink along the last axis) takes pairs of equal work along it, the
    longer tile then the shorter."""
    from napkin_ir.model.space import grouped_ids

    counts = list(kernel.grid_shape().values())
    *others, last = counts
    pairs = -(-last // 2)
    if kernel.last_axis_fastest:
        order = []
        for pair in range(math.prod(others) * pairs):
            place, within = divmod(pair, pairs)
            rest = tuple(int(i) for i in np.unravel_index(place, others, order="F"))
            longer, shorter = (last - 1 - within, within) if kernel.last_from_end else (within, last - 1 - within)
            order.append([(*rest, longer), *([(*rest, shorter)] if longer != shorter else [])])
        return [[t for pair in order[b::nblocks] for t in pair] for b in range(nblocks)]
    if kernel.group_rows:
        by_launch = np.argsort(grouped_ids(*counts, kernel.group_rows).ravel())
        order = [tuple(int(i) for i in np.unravel_index(n, counts)) for n in by_launch]
    else:
        order = [tuple(int(i) for i in np.unravel_index(p, counts, order="F")) for p in range(math.prod(counts))]
    return [order[b::nblocks] for b in range(nblocks)]
