"""The napkin cost of a module: bytes through each memory level and work per unit.

At the `hbm`, `smem` and `reg` levels a kernel is analysed by walking its body over every
context it runs in (`napkin_ir.model.space`): each `hbm.load` or `smem.copy` from a
global reads its tile, clipped to the tensor's edge, once per context (so a GEMM's A is
re-read once per block column and B once per block row, and attention's K and V once per
query tile, by the same rule); each `hbm.store` or `reg.store` writes its tile once.
Shared-memory traffic is what copies write into buffers (a tile partly past the edge
whole, zero-filled; one wholly past it not at all, as reg-to-ptx skips it) and what
`smem.read`, `reg.ldmatrix`, `reg.wgmma` and `reg.wgmma_rs` (B alone: its A is in
registers) read out of them; work is counted per op (`napkin_ir.model.work`). At the `ncd` level, a function is costed unfused: every op
reads its operands from HBM and writes its result back, which is what fusing it into one
kernel saves.

`analyse_module(module)` is the entry point; `napkin_ir.model.timing` turns a kernel's
cost into occupancy and a predicted time on a given machine.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Operation, SSAValue

from napkin_ir.dialects import hbm, loop_facts, ncd, reg, smem
from napkin_ir.errors import UserError
from napkin_ir.interpreters.reg import warp_grid, warps_of
from napkin_ir.lowering.shared_layout import shared_bytes
from napkin_ir.model.hardware import check_fits
from napkin_ir.model.registers import RegisterEstimate, estimate_registers
from napkin_ir.model.space import Space, clipped_elements, kernel_space, walk
from napkin_ir.model.work import (
    ELEMENT_BYTES,
    WGMMA_DEPTH,
    Work,
    op_work,
    type_bytes,
)

# Above the reg level the number of warps is not decided yet: smem-to-reg's default.
ASSUMED_WARPS = 4
WARPGROUP = 4


@dataclass
class Access:
    """One op's traffic to a global tensor, over the contexts it runs in."""

    tensor: str
    write: bool
    tile: tuple[int, ...]
    sizes: tuple[int, ...]
    elem_bytes: int
    offsets: list[np.ndarray]
    space: Space
    bytes: float = 0.0

    def per_context_bytes(self) -> np.ndarray:
        return clipped_elements(self.offsets, self.tile, self.sizes) * self.elem_bytes


@dataclass
class KernelCost:
    name: str
    level: str
    grid: dict[str, int]
    blocks: dict[str, int]
    globals: dict[str, int]  # name -> bytes of the whole tensor
    warps: int  # per block, for occupancy
    warps_assumed: bool
    compute_warps: int  # those that share the tile's computation (`reg.warps`)
    producer_warps: int = 0  # a warp-specialised producer's, whose registers setmaxnreg gives the others
    blocks_per_sm: int = 1  # what the launch asks a multiprocessor to hold (`hbm.blocks_per_sm`)
    # how its products and the math between them run (`_schedule`): whether they wait on
    # one another, the stream loop software-pipelined, the warpgroups taking turns
    chained: bool = False
    overlapped: bool = False
    pingpong: bool = False
    tma_stores: bool = False  # its outputs leave through shared memory by the TMA (smem.tma_store, not a reduce-add)
    reductions: float = 0.0  # row reductions (reg.row_reduce) its blocks run: lanes exchanging a row's values
    work: Work = field(default_factory=Work)
    accesses: list[Access] = field(default_factory=list)
    smem_read: float = 0.0
    smem_written: float = 0.0
    smem_per_block: int = 0
    smem_assumed: bool = False  # above the smem level: each loaded tile staged once
    inflight_per_block: int = 0  # bytes of global tiles a block has in flight at once
    registers: RegisterEstimate | None = None
    instruction: str | None = None  # mma.sync or wgmma where the level decides it
    estimated_ops: dict[str, int] = field(default_factory=dict)

    @property
    def n_blocks(self) -> int:
        n = 1
        for b in self.blocks.values():
            n *= b
        return n

    def _traffic(self, write: bool) -> dict[str, float]:
        out = {name: 0.0 for name in self.globals}
        for a in self.accesses:
            if a.write == write:
                out[a.tensor] += a.bytes
        return {k: v for k, v in out.items() if v or not write}

    @property
    def hbm_read(self) -> dict[str, float]:
        return {k: v for k, v in self._traffic(False).items() if v}

    @property
    def hbm_written(self) -> dict[str, float]:
        return self._traffic(True)

    @property
    def hbm_bytes(self) -> float:
        return sum(a.bytes for a in self.accesses)


@dataclass
class OpCost:
    """One op of an ncd-level function, run as a kernel of its own."""

    name: str
    result: str
    read: int
    written: int
    work: Work
    estimated: bool


@dataclass
class FunctionCost:
    name: str
    ops: list[OpCost]
    inputs: int  # bytes of the function's arguments
    outputs: int  # bytes of its results

    @property
    def unfused_bytes(self) -> int:
        return sum(o.read + o.written for o in self.ops)

    @property
    def fused_bytes(self) -> int:
        """Arguments read once, results written once: the floor a fused kernel can reach."""
        return self.inputs + self.outputs

    @property
    def work(self) -> Work:
        total = Work()
        for o in self.ops:
            total = total + o.work
        return total


@dataclass
class ModuleCost:
    level: str
    kernels: list[KernelCost]
    functions: list[FunctionCost]


# --------------------------------------------------------------------------------------
# kernels (hbm, smem, reg)
# --------------------------------------------------------------------------------------


def kernel_level(kernel: hbm.KernelOp) -> str:
    names = {op.dialect_name() for op in kernel.walk()}
    return "reg" if "reg" in names else "smem" if "smem" in names else "hbm"


def _global_name(v: SSAValue, n: int) -> str:
    return v.name_hint or f"arg{n}"


class _Counter:
    """Visits the ops of a kernel with the contexts they run in and adds up their cost."""

    def __init__(self, kernel: hbm.KernelOp, cost: KernelCost):
        self.cost = cost
        self.names = {g: _global_name(g, n) for n, g in enumerate(kernel.globals)}

    def access(self, glob: SSAValue, offsets, tile: tuple[int, ...], space: Space, write: bool,
               shift: dict[str, int] | None = None) -> Access:
        g: hbm.GlobalType = glob.type  # type: ignore[assignment]
        offs = [space.require(o, f"an offset into '{self.names[glob]}'") + (shift or {}).get(a, 0)
                for o, a in zip(offsets, g.axis_names)]
        acc = Access(self.names[glob], write, tile, g.dims, ELEMENT_BYTES[g.dtype], offs, space)
        acc.bytes = space.total(acc.per_context_bytes())
        self.cost.accesses.append(acc)
        return acc

    def __call__(self, op: Operation, space: Space) -> None:
        if isinstance(op, hbm.LoadOp):
            self.access(op.source, op.offsets, op.result.type.dims, space, False)  # type: ignore[attr-defined]
        elif isinstance(op, hbm.StoreOp):
            self.access(op.dest, op.offsets, op.value.type.dims, space, True)  # type: ignore[attr-defined]
        elif (buf := copied_buffer(op)) is not None:  # smem.copy (cp.async), smem.tma_copy
            acc = self.access(op.source, op.offsets, buf.dims, space, False)  # type: ignore[attr-defined]
            # a tile partly inside lands whole (zero-filled), or a TMA copy's first `rows` only;
            # one wholly past the end is skipped
            landed = op.copied_bytes() if isinstance(op, smem.TmaCopyOp) else type_bytes(buf.tile)
            self.cost.smem_written += space.total((acc.per_context_bytes() > 0) * landed)
        elif isinstance(op, smem.ReadOp):
            self.cost.smem_read += space.count() * type_bytes(op.result.type)
        elif isinstance(op, reg.LdmatrixOp):
            self.cost.smem_read += space.count() * type_bytes(op.result.type) * self.cost.compute_warps
        elif isinstance(op, (reg.WgmmaOp, reg.WgmmaRsOp)):
            self.cost.smem_read += space.count() * _wgmma_smem_bytes(op, self.cost.compute_warps)
        elif isinstance(op, (reg.RowReduceOp, reg.ColReduceOp, reg.RowCombineOp)):  # the reductions that exchange across lanes
            self.cost.reductions += space.count()
        elif isinstance(op, reg.StoreOp):
            self._reg_store(op, space)
        elif isinstance(op, reg.LoadOp):  # the block's vector tile (warps sharing the other axis read it from the L1)
            frag: reg.FragType = op.result.type  # type: ignore[assignment]
            (axis,) = frag.axis_names
            n = frag.dims[0] * warp_grid(op).get(axis, 1)
            self.access(op.source, op.offsets, tuple(n if a == axis else 1 for a in op.source.type.axis_names), space, False)  # type: ignore[attr-defined]
        elif isinstance(op, smem.TmaStoreOp):  # the stage out to the global, clipped at its edge
            self.cost.tma_stores = self.cost.tma_stores or not op.accumulate
            buf: smem.BufferType = op.source.type  # type: ignore[assignment]
            acc = self.access(op.dest, op.offsets, buf.dims, space, True)
            self.cost.smem_read += space.total((acc.per_context_bytes() > 0) * type_bytes(buf.tile))
        elif isinstance(op, smem.WindowWriteOp):  # a window of the tile into a stage
            self.cost.smem_written += space.count() * type_bytes(op.dest.type.tile)  # type: ignore[attr-defined]
        self._work(op, space)

    def _reg_store(self, op: reg.StoreOp, space: Space) -> None:
        """Each warp writes its fragment, at its place in the block's tile; the global's
        axes the fragment lacks are those the grid cuts into tiles of one, and those whose
        every place has warps of its own (a group's query heads: one place a warp)."""
        frag: reg.FragType = op.value.type  # type: ignore[assignment]
        tile = tuple(frag.shape.get(a, 1) for a in op.dest.type.axis_names)  # type: ignore[attr-defined]
        for w in warps_of(op):
            shift = {a: i * frag.shape.get(a, 1) for a, i in w.items()}
            self.access(op.dest, op.offsets, tile, space, True, shift)

    def _work(self, op: Operation, space: Space) -> None:
        work, estimated = op_work(op, self.cost.compute_warps)
        if work.flops:
            self.cost.work = self.cost.work + work.scaled(space.count())
        if estimated:
            self.cost.estimated_ops[op.name] = self.cost.estimated_ops.get(op.name, 0) + 1


def copied_buffer(op: Operation) -> smem.BufferType | None:
    """The buffer an op fills from a global tensor (a copy's `source` and `dest`), or None."""
    src, dst = getattr(op, "source", None), getattr(op, "dest", None)
    if isinstance(src, SSAValue) and isinstance(src.type, hbm.GlobalType) and isinstance(dst, SSAValue) \
            and isinstance(dst.type, smem.BufferType):
        return dst.type
    return None


def _wgmma_smem_bytes(op: reg.WgmmaOp | reg.WgmmaRsOp, warps: int) -> int:
    """Shared memory a wgmma reads for the block: each warp's rows of the A slice (none
    where A comes from registers, `reg.wgmma_rs`), and the B slice once per warpgroup of
    four."""
    acc: reg.FragType = op.c.type  # type: ignore[assignment]
    b: smem.BufferType = op.b.type  # type: ignore[assignment]
    rows, cols = acc.dims
    per_warp = (rows * WGMMA_DEPTH if isinstance(op, reg.WgmmaOp) else 0) + WGMMA_DEPTH * cols / WARPGROUP
    return int(per_warp * warps * ELEMENT_BYTES[b.dtype])


def _smem_footprint(kernel: hbm.KernelOp) -> tuple[int, int, bool]:
    """(shared memory per block, bytes in flight per block, whether it is assumed: above the
    smem level, one tile of each input staged once)."""
    allocs = [op.result.type for op in kernel.walk() if isinstance(op, smem.AllocOp)]
    if allocs:
        copied = {copied_buffer(op) for op in kernel.walk()}
        inflight = sum((b.stages.data - 1 or 1) * type_bytes(b.tile) for b in allocs if b in copied)  # type: ignore[attr-defined]
        return shared_bytes(kernel), inflight, False
    staged: dict[SSAValue, int] = {}  # one tile of each input, the largest loaded
    for op in kernel.walk():
        if isinstance(op, hbm.LoadOp):
            staged[op.source] = max(staged.get(op.source, 0), type_bytes(op.result.type))
    return sum(staged.values()), sum(staged.values()), True


def _instruction(kernel: hbm.KernelOp) -> str | None:
    names = {op.name for op in kernel.walk()}
    if any("wgmma" in n for n in names):
        return "wgmma"
    return "mma.sync" if reg.MmaOp.name in names else None


def _producer_warps(kernel: hbm.KernelOp) -> int:
    """Warps of regions that run beside the body's warps (a warp-specialised producer)."""
    return sum(w.value.data for op in kernel.walk() if op.regions and isinstance(w := op.properties.get("warps"), IntegerAttr))


def _schedule(kernel: hbm.KernelOp) -> tuple[bool, bool, bool]:
    """(chained, overlapped, pingpong) of a kernel: whether a wgmma takes its A from
    fragments the kernel computed (`reg.wgmma_rs`: attention's P V on the softmax's
    probabilities), so that the products wait on the math between them; whether a stream
    loop runs a tile's second product under the next tile's math (`reg.overlapped`, from
    reg-wgmma-overlap); whether the consumer warpgroups take turns issuing products
    (`reg.turn_wait`, from reg-pingpong, which leaves a kernel of one warpgroup alone)."""
    ops = list(kernel.walk())
    return (any(isinstance(op, reg.WgmmaRsOp) for op in ops), any(loop_facts.overlapped(op) for op in ops),
            any(isinstance(op, reg.TurnWaitOp) for op in ops))


def analyse_kernel(kernel: hbm.KernelOp) -> KernelCost:
    warp_grid = kernel.warp_grid
    compute = 1
    for n in warp_grid.values():
        compute *= n
    smem_bytes, inflight, assumed = _smem_footprint(kernel)
    producer = _producer_warps(kernel) if warp_grid else 0
    chained, overlapped, pingpong = _schedule(kernel)
    cost = KernelCost(
        name=kernel.sym_name.data, level=kernel_level(kernel), grid=kernel.grid_tiles, blocks=kernel.grid_shape(),
        globals={_global_name(g, n): type_bytes(g.type) for n, g in enumerate(kernel.globals)},
        warps=compute + producer if warp_grid else ASSUMED_WARPS, warps_assumed=not warp_grid,
        compute_warps=compute, producer_warps=producer, blocks_per_sm=kernel.resident_blocks,
        chained=chained, overlapped=overlapped, pingpong=pingpong,
        smem_per_block=smem_bytes, smem_assumed=assumed, inflight_per_block=inflight,
        registers=estimate_registers(kernel), instruction=_instruction(kernel),
    )
    check_fits(cost.name, cost.globals)  # before the walk, whose block spaces grow with the grid
    walk(kernel.body.block, kernel_space(kernel), _Counter(kernel, cost))
    return cost


# --------------------------------------------------------------------------------------
# functions (ncd)
# --------------------------------------------------------------------------------------


def analyse_function(f: func.FuncOp) -> FunctionCost:
    ops = []
    for op in f.body.block.ops:
        if isinstance(op, func.ReturnOp):
            continue
        if not isinstance(op, ncd.NcdOp):
            raise UserError(f"@{f.sym_name.data} has a {op.name}; at the ncd level a function holds ncd ops")
        if isinstance(op, ncd.RenameOp):  # a view: no kernel, nothing moved
            continue
        work, estimated = op_work(op)
        read = sum(type_bytes(v.type) for v in op.operands if isinstance(v.type, ncd.TensorType))
        written = sum(type_bytes(r.type) for r in op.results)
        ops.append(OpCost(op.name, _ssa_name(op), read, written, work, estimated))
    ins = sum(type_bytes(t) for t in f.function_type.inputs.data if isinstance(t, ncd.TensorType))
    outs = sum(type_bytes(t) for t in f.function_type.outputs.data if isinstance(t, ncd.TensorType))
    return FunctionCost(f.sym_name.data, ops, ins, outs)


def _ssa_name(op: Operation) -> str:
    r = op.results[0] if op.results else None
    return f"%{r.name_hint}" if r is not None and r.name_hint else ""


# --------------------------------------------------------------------------------------
# modules
# --------------------------------------------------------------------------------------


def analyse_module(module: ModuleOp) -> ModuleCost:
    """The cost of every kernel (hbm, smem, reg level) and every ncd function in `module`."""
    kernels = [analyse_kernel(k) for k in module.walk() if isinstance(k, hbm.KernelOp)]
    funcs = [analyse_function(f) for f in module.walk() if isinstance(f, func.FuncOp) and f.body.blocks]
    if not kernels and not funcs and any(op.dialect_name() == "ptx" for op in module.walk()):
        raise UserError("the module is at the ptx level, below what the model reads (ncd, hbm, smem, "
                        "reg); model its reg level, with --ptxas to have ptxas count the registers")
    if not kernels and not funcs:
        raise UserError("nothing to model: the module has no function with a body and no hbm.kernel "
                        "(the model reads the ncd, hbm, smem and reg levels)")
    levels = [k.level for k in kernels] + ["ncd"] * len(funcs)
    return ModuleCost(levels[0] if len(set(levels)) == 1 else "mixed", kernels, funcs)
