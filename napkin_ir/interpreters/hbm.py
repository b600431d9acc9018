"""Numpy implementations of the `hbm` ops, and running a kernel's grid on the CPU.

Global tensors are numpy arrays that `hbm.store` writes in place; the kernel's body is
interpreted once per block, in grid order, with xDSL's scf and arith interpreters for
the streaming loops and index arithmetic and napkin's ncd interpreter for the tiles.
A persistent kernel (`hbm.persistent`) runs as a few blocks (`PERSISTENT_BLOCKS`), each
looping over its tiles in reg-to-ptx's order with its shared memory, barrier phases and
ring positions carried from one tile to the next, so that the interpreters check its
protocol from tile to tile.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    ReturnedValues,
    impl,
    impl_terminator,
    register_impls,
)
from xdsl.interpreters.arith import ArithFunctions
from xdsl.interpreters.scf import ScfFunctions

from napkin_ir.dialects import hbm
from napkin_ir.interpreters.ncd import NcdFunctions
from napkin_ir.interpreters.tensors import NamedArray, round_to


class GlobalTensor:
    """A global tensor's storage (float32, values already rounded to its element type)."""

    def __init__(self, t: hbm.GlobalType, data: np.ndarray):
        self.type = t
        self.data = data


def overlap(g: GlobalTensor, offsets: Sequence[int], tile_dims: Sequence[int]):
    """The slices of the global and of the tile where they overlap."""
    src, dst = [], []
    for o, n, size in zip(offsets, tile_dims, g.data.shape):
        lo, hi = max(o, 0), min(o + n, size)
        hi = max(hi, lo)
        src.append(slice(lo, hi))
        dst.append(slice(lo - o, hi - o))
    return tuple(src), tuple(dst)


@register_impls
class UnsignedIndexFunctions(InterpreterFunctions):
    """The unsigned index arithmetic that xDSL's arith interpreter lacks (tile and stage
    numbers in the pipelines, the bounds of a causal stream)."""

    @impl(arith.DivUIOp)
    def run_divui(self, interpreter: Interpreter, op: arith.DivUIOp, args: tuple[Any, ...]):
        return (args[0] // args[1],)

    @impl(arith.RemUIOp)
    def run_remui(self, interpreter: Interpreter, op: arith.RemUIOp, args: tuple[Any, ...]):
        return (args[0] % args[1],)

    @impl(arith.MinUIOp)
    def run_minui(self, interpreter: Interpreter, op: arith.MinUIOp, args: tuple[Any, ...]):
        return (min(args[0], args[1]),)


def read_tile(g: GlobalTensor, offsets: Sequence[int], dims: Sequence[int]) -> np.ndarray:
    """The tile of `g` at `offsets`; elements past the edge are zero."""
    tile = np.zeros(dims, np.float32)
    src, dst = overlap(g, offsets, dims)
    tile[dst] = g.data[src]
    return tile


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
        g.data[src] = round_to(g.type.dtype, data[dst])
        return ()

    @impl(hbm.FillOp)
    def run_fill(self, interpreter: Interpreter, op: hbm.FillOp, args: tuple[Any, ...]):
        t = op.result.type
        return (NamedArray(t.axis_names, np.full(t.dims, op.value.value.data, np.float32)),)

    @impl_terminator(hbm.ReturnOp)
    def run_return(self, interpreter: Interpreter, op: hbm.ReturnOp, args: tuple[Any, ...]):
        return ReturnedValues(()), ()


def run_kernel(module: ModuleOp, kernel: hbm.KernelOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run every block of `kernel` on `inputs` (arrays in the globals' axis order); returns the outputs."""
    from napkin_ir.interpreters.reg import RegFunctions
    from napkin_ir.interpreters.smem import Roles, SmemFunctions

    globs = kernel.globals
    n_out = kernel.num_outputs.value.data
    tensors = []
    for k, g in enumerate(globs):
        t: hbm.GlobalType = g.type  # type: ignore[assignment]
        data = round_to(t.dtype, inputs[k]) if k < len(globs) - n_out else np.full(t.dims, np.nan, np.float32)
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
            interp = Interpreter(module)
            for fns in (HbmFunctions(), smem_fns, RegFunctions(), NcdFunctions(), ScfFunctions(), ArithFunctions(), UnsignedIndexFunctions()):
                interp.register_implementations(fns)
            smem_fns.roles, smem_fns.tile_position = Roles(), n
            origins = [i * grid[a] for i, a in zip(idx, grid)]
            interp.run_ssacfg_region(kernel.body, (*tensors, *origins), kernel.sym_name.data)
            smem_fns.roles.join()  # a producer role ends with the tile
            smem_fns.ring_position += smem_fns.tile_trips
    return [t.data for t in tensors[len(globs) - n_out :]]


PERSISTENT_BLOCKS = 3  # blocks a persistent kernel is run with: several tiles each, in turns of both parities


def persistent_tiles(kernel: hbm.KernelOp, nblocks: int) -> list[list[tuple[int, ...]]]:
    """Each of `nblocks` persistent blocks' tiles (block indices along the grid axes), in
    the order reg-to-ptx's loop takes them: turn t takes tile t x blocks + block in launch
    order (the first axis fastest, or bands of `hbm.group` rows: the model's
    `grouped_ids`); a longest-first launch (`hbm.order = "last"`) takes pairs of equal work
    along the last axis, the longer tile then the shorter."""
    from napkin_ir.model.space import grouped_ids

    counts = list(kernel.grid_shape().values())
    *others, last = counts
    pairs = -(-last // 2)
    if kernel.last_axis_fastest:
        order = []
        for pair in range(math.prod(others) * pairs):
            place, within = divmod(pair, pairs)
            rest = tuple(int(i) for i in np.unravel_index(place, others, order="F"))
            order.append([(*rest, last - 1 - within), *([(*rest, within)] if last - 1 - within != within else [])])
        return [[t for pair in order[b::nblocks] for t in pair] for b in range(nblocks)]
    if kernel.group_rows:
        by_launch = np.argsort(grouped_ids(*counts, kernel.group_rows).ravel())
        order = [tuple(int(i) for i in np.unravel_index(n, counts)) for n in by_launch]
    else:
        order = [tuple(int(i) for i in np.unravel_index(p, counts, order="F")) for p in range(math.prod(counts))]
    return [order[b::nblocks] for b in range(nblocks)]
