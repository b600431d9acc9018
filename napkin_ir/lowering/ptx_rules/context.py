"""The shared state of `reg-to-ptx` while it lowers one kernel, and the table of op rules.

A rule lowers one op class: `@lowers(smem.CommitOp) def commit(k, op): ...` registers it,
and `KernelLowering.lower` dispatches on the op's class. Rules meet only through what this
context holds:
- `vals`: what each register-level value became (a register, a list of a fragment's
  registers, a `Global`, a `Buffer`, or a pending `Scaled` or `Squared` fragment); index arithmetic
  goes through `convert-arith-to-ptx`'s rules and shares the map;
- the blocks of the kernel being built (`cur` is where instructions go), with `branch`,
  `jump` and `once` (a per-thread value computed once, where it dominates its uses);
- the thread's place: `tid`, `lane`, the lane's row group and quad in an m16n8 tile, and
  the warp's index along each `reg.warps` axis (counted among the consumer warps when a
  producer warpgroup runs beside them);
- the kernel-wide facts the IR carries: the grid and its launch order, the producer role,
  shared memory taken so far.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from xdsl.dialects import arith, builtin, scf
from xdsl.ir import Block, Operation, SSAValue
from xdsl.utils.exceptions import PassFailedException

from napkin_ir.dialects import hbm, reg, smem
from napkin_ir.dialects.ptx import ops as P
from napkin_ir.dialects.ptx.attributes import TmaBoxAttr
from napkin_ir.dialects.ptx.registers import RegType
from napkin_ir.dialects.utils import constant  # re-exported: the rules read constant bounds and stages
from napkin_ir.lowering.arith_to_ptx import ArithLowering, divide_by_constant
from napkin_ir.lowering.shared_layout import has_panels
from napkin_ir.target import Dtype, dtype

B32, B64, F32, PRED = RegType("b32"), RegType("b64"), RegType("f32"), RegType("pred")
SHARED = "napkin_smem"
PANEL = 128  # bytes of one row of a TMA-swizzled panel

Rule = Callable[["KernelLowering", Any], None]
RULES: dict[type[Operation], Rule] = {}


def lowers(*classes: type[Operation]) -> Callable[[Rule], Rule]:
    """Register a rule for the given op classes."""

    def register(rule: Rule) -> Rule:
        for c in classes:
            if c in RULES:
                raise AssertionError(f"two reg-to-ptx rules for {c.name}")
            RULES[c] = rule
        return rule

    return register


@dataclass
class Global:
    """A global tensor: its generic address (stored or copied with cp.async) or the
    generic address of its tensor-map parameter (TMA)."""

    type: hbm.GlobalType
    ptr: SSAValue | None = None
    tmap: SSAValue | None = None

    @property
    def esize(self) -> int:
        return dtype(self.type.dtype).bytes

    @property
    def strides(self) -> dict[str, int]:
        out, s = {}, 1
        for a, n in reversed(list(self.type.shape.items())):
            out[a] = s
            s *= n
        return out


@dataclass
class Buffer:
    """A shared-memory buffer: stage 0's address and how a tile lies in a stage. A plain
    buffer holds rows of `cols` elements (`row_bytes` apart: `layout=pad8` adds 16); a
    panel buffer (filled or read by the TMA and wgmma) holds 128-byte-wide panels of
    its innermost axis, one after the other, each row-major and 128-byte swizzled. The
    rows are the places of `row_axes` (the tile's axes of more than one place before the
    innermost), the first outermost: grouped-query attention's Q tile <r=4, i=32, d=64>
    is 128 rows, head by head; `rows_axis` is the last of them."""

    base: SSAValue
    type: smem.BufferType
    rows_axis: str
    cols_axis: str
    rows: int
    cols: int
    row_bytes: int
    stage_bytes: int
    panels: bool
    row_axes: tuple[str, ...] = ()

    @property
    def element(self) -> Dtype:
        """The element type of the buffer's tile."""
        return dtype(self.type.dtype)

    def row_stride(self, axis: str) -> int:
        """Rows between neighbouring places along one of `row_axes`."""
        axes = self.row_axes or (self.rows_axis,)
        return prod(self.type.shape[a] for a in axes[axes.index(axis) + 1 :])

    @property
    def key_rows(self) -> int:
        """Rows that share a swizzle key: those of one 128-byte line (2 for 64-byte rows)."""
        return max(1, 128 // self.row_bytes)

    def place(self, row: int, col_bytes: int) -> int:
        """Where byte `col_bytes` of row `row` lies in a stage of a row-major buffer."""
        plain = row * self.row_bytes + col_bytes
        return plain ^ (((row // self.key_rows) % 8) << 4) if self.type.layout.data == "swizzle" else plain


@dataclass
class Scaled:
    """A `c` fragment times a positive constant, not yet multiplied out."""

    regs: list[SSAValue]
    by: float


@dataclass
class Squared:
    """A `c` fragment times itself, not yet multiplied out (a row sum of it is fused
    multiply-adds)."""

    regs: list[SSAValue]


def prod(xs) -> int:
    out = 1
    for x in xs:
        out *= x
    return out




def arg_name(g: SSAValue, n: int) -> str:
    """The name of the kernel's `n`th global in its PTX parameter (after the kernel's name)
    and in the launch contract: its name in the IR, else `arg<n>`."""
    return g.name_hint or f"arg{n}"


class KernelLowering:
    """One kernel on its way to a `ptx.kernel` (see the module's docstring)."""

    def __init__(self, kernel: hbm.KernelOp):
        self.kernel = kernel
        self.name = kernel.sym_name.data
        self.blocks: list[Block] = [Block()]
        self.cur = self.entry = self.blocks[0]
        self.arith = ArithLowering()
        self.vals: dict[SSAValue, Any] = self.arith.values
        self.cache: dict[tuple, SSAValue] = {}
        self.packs: dict[tuple, tuple[Block, SSAValue]] = {}  # rounded pairs, by the block that made them
        self.stage_values: dict[tuple, SSAValue] = {}  # per stage value (a loop's): built at its first use, which dominates the rest
        self.warps = kernel.warp_grid
        producers = [o for o in kernel.body.block.ops if isinstance(o, smem.ProducerOp)]
        self.producer_warps = producers[0].warps.value.data if producers else 0
        self.consumer_threads = 32 * prod(self.warps.values())
        # a producer warpgroup runs beside the consumers (warp-specialised, sm_90a)
        self.nthreads = self.consumer_threads + (128 if producers else 0)
        self.panels = has_panels(kernel)
        self.smem_bytes = 0
        self.smem_base: SSAValue | None = None
        # where the first mbarrier ring or the first buffer a store role reads (its TMA may
        # still read it after the consumers' last tile) starts, whichever comes first: the
        # bytes below it are free for the consumers' own staging once past their reads
        self.staging_end: int | None = None
        self.last_reserved = 0  # the offset `reserve` gave last
        self.grid_args: dict[SSAValue, str] = {}
        self.persistent = kernel.persistent is not None
        self.group = kernel.group_rows
        # a cluster of the parts of split sums (each adds its share of the tile in shared memory:
        # `split_cluster`), or of two neighbouring blocks that multicast the tiles both load (`cluster`)
        self.split_cluster = kernel.split_cluster
        self.cluster = kernel.multicast_blocks
        self.exchanged = False  # the parts of a cluster of split sums met to sum an output (once a kernel)
        self.blocks_per_sm = kernel.resident_blocks
        self.tma_boxes: list[TmaBoxAttr] = []
        self.global_vars: list[tuple[str, int, int]] = []  # module-scope .global arrays (name, bytes, align), zero at load
        self.barrier_rings: list[tuple[SSAValue, int, int]] = []  # (address, stages, arrivals per barrier)
        self.wgmma_fence = True  # registers written since the last wgmma.fence
        self.finish: Block | None = None  # a cluster's common exit (no block leaves while its peer may arrive)
        self.tid: SSAValue = None  # type: ignore[assignment]  (%tid.x, read at the kernel's start)
        self.origin_args: dict[str, SSAValue] = {}  # grid axis -> the kernel's block argument for its origin
        self.ring_positions: list[SSAValue] = []  # smem.ring_position results, bound per tile when persistent
        self.tile_positions: list[SSAValue] = []  # smem.tile_position results, bound per tile when persistent
        self.affines: dict[SSAValue, Affine] = {}
        self.rank = self.peer = self.cluster_mask = None  # this block's and its peer's rank in a cluster, the multicast mask

    def fail(self, msg: str) -> PassFailedException:
        return PassFailedException(f"reg-to-ptx: @{self.name}: {msg}")

    # -- emitting -------------------------------------------------------------------------
    def emit(self, op: Operation) -> Operation:
        self.cur.add_op(op)
        return op

    def r(self, op: Operation) -> SSAValue:
        return self.emit(op).results[0]

    def lower(self, op: Operation) -> None:
        rule = RULES.get(type(op))
        if rule is None:
            raise self.fail(f"{op.name} has no lowering to PTX; lower it first (smem-to-reg)")
        rule(self, op)

    def lower_ops(self, ops) -> None:
        for op in ops:
            self.lower(op)

    def new_block(self, arg_types=()) -> Block:
        b = Block(arg_types=list(arg_types))
        self.blocks.append(b)
        return b

    def branch(self, cond: SSAValue) -> tuple[Block, Block]:
        """End the current block on `cond`; returns (taken, not taken), both new."""
        yes, no = Block(), Block()
        self.emit(P.CondBraOp(cond, yes, [], no, []))
        self.blocks += [yes, no]
        return yes, no

    def jump(self, to: Block, *args: SSAValue) -> None:
        self.emit(P.BraOp(to, *args))

    def once(self, key: tuple, make: Callable[[], SSAValue]) -> SSAValue:
        """A per-thread value computed once, at the end of `entry` (which dominates every
        block emitted after it: the kernel's start, or a role's)."""
        if key not in self.cache:
            saved, self.cur = self.cur, self.entry
            term = self.entry.last_op if isinstance(self.entry.last_op, P.BraOp | P.CondBraOp) else None
            if term is not None:
                self.entry.detach_op(term)
            self.cache[key] = make()
            if term is not None:
                self.entry.add_op(term)
            self.cur = saved
        return self.cache[key]

    # -- small builders -------------------------------------------------------------------
    def u32(self, v: int) -> SSAValue:
        return self.r(P.ConstOp("u32", v, B32))

    def s32(self, v: int) -> SSAValue:
        return self.r(P.ConstOp("s32", v, B32))

    def f32(self, v: float) -> SSAValue:
        return self.r(P.ConstOp("f32", v, F32))

    def op2(self, cls, ty: str, a: SSAValue, b: SSAValue | int, mods: str | None = None, result=B32) -> SSAValue:
        if cls in (P.DivOp, P.RemOp) and isinstance(b, int) and ty == "u32":
            reduced = divide_by_constant(a, b, ty, cls is P.RemOp)  # shifts and a high multiply
            if reduced is not None:
                for op in reduced[0]:
                    self.emit(op)
                return reduced[1]
        bv = self.u32(b) if isinstance(b, int) else b
        return self.r(cls(ty, a, bv, result=result, mods=mods))

    def add(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return a if isinstance(b, int) and b == 0 else self.op2(P.AddOp, "u32", a, b)

    def mul(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return self.op2(P.MulOp, "u32", a, b, mods="lo")

    def add64(self, a: SSAValue, b: int) -> SSAValue:
        return a if b == 0 else self.r(P.AddOp("s64", a, self.r(P.ConstOp("s64", b, B64)), result=B64))

    def module_array(self, name: str, size: int, align: int) -> SSAValue:
        """The address of the module-scope `.global` array `name` (`size` bytes, zero when the
        module loads), declared the first time it is asked for."""
        if not any(n == name for n, _, _ in self.global_vars):
            self.global_vars.append((name, size, align))
        return self.r(P.AddrOfOp(name, B64))

    def wide_address(self, ptr: SSAValue, elem: SSAValue, esize: int) -> SSAValue:
        """ptr + elem * esize, the index widened to 64 bits."""
        return self.r(P.AddOp("u64", ptr, self.op2(P.MulOp, "u32", elem, esize, mods="wide", result=B64), result=B64))

    def setp(self, cmp: str, a: SSAValue, b: SSAValue | int, ty: str = "s32") -> SSAValue:
        return self.r(P.SetpOp(cmp, ty, a, (self.s32(b) if ty == "s32" else self.u32(b)) if isinstance(b, int) else b))

    def both(self, p: SSAValue | None, q: SSAValue | None) -> SSAValue | None:
        if p is None or q is None:
            return p or q
        return self.r(P.AndOp("pred", p, q, result=PRED))

    def index(self, v: SSAValue) -> SSAValue:
        return self.arith.get(v)

    def pack(self, dt: str, lo: SSAValue, hi: SSAValue) -> SSAValue:
        """Two f32 values rounded into one register of two bf16 or f16 (lo in the low half).
        The same pair rounded again in the same block is the register rounded first: the
        attention gradient's dS, written by stmatrix and then dK's A operand from registers,
        holds 20 registers of pairs past the stmatrix rather than its 40 f32 values."""
        key = (dt, lo, hi)
        made = self.packs.get(key)
        if made is None or made[0] is not self.cur:
            made = self.packs[key] = (self.cur, self.r(P.CvtOp(f"{dt}x2", "f32", [hi, lo], RegType(f"{dt}x2"), mods="rn")))
        return made[1]

    # -- the thread's place -----------------------------------------------------------------
    @property
    def lane(self) -> SSAValue:
        return self.once(("lane",), lambda: self.op2(P.AndOp, "b32", self.tid, 31))

    @property
    def lane_row(self) -> SSAValue:
        """g: the lane's row in an m16n8 tile (lane / 4)."""
        return self.once(("lane_row",), lambda: self.op2(P.ShrOp, "u32", self.lane, 2))

    @property
    def lane_pair(self) -> SSAValue:
        """t: the lane's pair of columns in an m16n8 tile (lane mod 4)."""
        return self.once(("lane_pair",), lambda: self.op2(P.AndOp, "b32", self.lane, 3))

    def line_lane(self, t: reg.FragType) -> tuple[SSAValue | None, SSAValue]:
        """(the lane's row among the rows a `line` fragment of type `t` holds at a time, None
        where one row lies across the whole warp; the lane's place among its row's lanes)."""
        q = t.lanes_a_row
        if q == 32:
            return None, self.lane
        return (self.once(("line_slot", q), lambda: self.op2(P.ShrOp, "u32", self.lane, q.bit_length() - 1)),
                self.once(("line_place", q), lambda: self.op2(P.AndOp, "b32", self.lane, q - 1)))

    def warp_index(self, axis: str) -> SSAValue | None:
        """The warp's index along a `reg.warps` axis (the first axis varies slowest), among
        the consumer warps; None for an axis warps do not share."""
        if axis not in self.warps:
            return None
        if ("warp", axis) not in self.cache:
            self.once(("warps",), self._warp_indices)
        return self.cache[("warp", axis)]

    def warp_number(self) -> SSAValue:
        """The warp's index among the consumer warps (its index along the `reg.warps` axes
        taken together, the first slowest)."""
        self.once(("warps",), self._warp_indices)
        return self.cache[("warp_number",)]

    def held_places(self, t: reg.FragType, axes) -> dict[str, SSAValue]:
        """This warp's place along each `reg.warps` axis among `axes` that fragment type `t`
        lacks: every place of it has warps of its own, and a warp holds the one of its index
        (grouped-query attention's query heads)."""
        return {a: self.warp_index(a) for a in self.warps if a not in t.shape and a in axes}  # type: ignore[misc]

    def _warp_indices(self) -> SSAValue:
        # the warp's index broadcast from its lane 0 (CUTLASS's canonical_warp_idx_sync): the
        # same value, which ptxas then knows is uniform across the warp, so that what follows
        # from it (the warpgroup's part of a tile, its wgmma descriptors) lives in uniform registers
        rest = self.r(P.ShflSyncOp("idx", self.op2(P.ShrOp, "u32", self.tid, 5), 0))
        if self.producer_warps:
            rest = self.op2(P.SubOp, "u32", rest, 4)  # warpgroup 0 produces
        self.cache[("warp_number",)] = rest
        first = list(self.warps)[0]
        for a, count in reversed(list(self.warps.items())):
            if a == first:
                self.cache[("warp", a)] = rest
                break
            self.cache[("warp", a)] = self.op2(P.RemOp, "u32", rest, count)
            rest = self.op2(P.DivOp, "u32", rest, count)
        return rest

    def warp_place(self, axis: str, size: int) -> SSAValue | None:
        """Where this warp's part of `size` along `axis` starts in the block's tile."""
        w = self.warp_index(axis)
        return None if w is None else self.once(("warp_place", axis, size), lambda: self.mul(w, size))

    # -- shared memory ----------------------------------------------------------------------
    def reserve(self, nbytes: int, align: int) -> SSAValue:
        """`nbytes` of the dynamic shared array; its start is rounded up to 1024 bytes where
        panels live in it (a 128-byte swizzle repeats every 1024 bytes, and TMA and wgmma
        descriptors assume whole repeats)."""
        if self.smem_base is None:
            def make() -> SSAValue:
                raw = self.r(P.AddrOfOp(SHARED, B32))
                return self.op2(P.AndOp, "b32", self.add(raw, 1023), ~1023 & 0xFFFFFFFF) if self.panels else raw

            self.smem_base = self.once(("smem_base",), make)
        offset = -(-self.smem_bytes // align) * align
        self.smem_bytes = offset + nbytes
        self.last_reserved = offset
        return self.once(("smem", offset), lambda: self.add(self.smem_base, offset))  # type: ignore[arg-type]

    def end_staging(self) -> None:
        """What `reserve` gave last is the first that the consumers may not stage over (the
        buffers are placed in order: the first call marks the lowest)."""
        if self.staging_end is None:
            self.staging_end = self.last_reserved

    def placed(self, row: SSAValue, col_bytes: SSAValue, row_bytes: int, swizzled: bool) -> SSAValue:
        """A register holding where byte `col_bytes` of row `row` lies in rows of `row_bytes`,
        swizzled or not (`Buffer.place` with registers)."""
        plain = self.add(self.mul(row, row_bytes), col_bytes)
        if not swizzled:
            return plain
        key_rows = max(1, 128 // row_bytes)
        line = row if key_rows == 1 else self.op2(P.ShrOp, "u32", row, key_rows.bit_length() - 1)
        key = self.op2(P.ShlOp, "b32", self.op2(P.AndOp, "b32", line, 7), 4)
        return self.op2(P.XorOp, "b32", plain, key)

    def shared_start(self) -> SSAValue:
        """The start of the dynamic shared array (rounded as `reserve` says)."""
        if self.smem_base is None:
            self.reserve(0, 1)
        return self.smem_base  # type: ignore[return-value]

    @property
    def shared_size(self) -> int:
        return self.smem_bytes + (1024 if self.panels and self.smem_bytes else 0)

    def stage_addr(self, buf: Buffer, stage: SSAValue) -> SSAValue:
        if buf.type.stages.data == 1:
            return buf.base
        k = constant(stage)
        if k is not None:
            return self.add(buf.base, k * buf.stage_bytes)
        return self.add(buf.base, self.mul(self.index(stage), buf.stage_bytes))

    # -- fragments ----------------------------------------------------------------------------
    def carried(self, v: SSAValue):
        """What a loop carries for `v`: a fragment's registers, or an index register."""
        x = self.vals[v]
        return self.frag(v) if isinstance(x, list | Scaled | Squared) else x

    def frag(self, v: SSAValue) -> list[SSAValue]:
        """The registers of a fragment, a scaling or squaring left pending done now."""
        x = self.vals[v]
        if isinstance(x, Scaled):
            k = self.f32(x.by)
            x = self.vals[v] = [self.r(P.MulOp("f32", r, k)) for r in x.regs]
        elif isinstance(x, Squared):
            x = self.vals[v] = [self.r(P.MulOp("f32", r, r)) for r in x.regs]
        return x

    # -- global memory ------------------------------------------------------------------------
    def element(self, g: Global, offsets) -> SSAValue:
        """The element index (u32) of a tile's first element in `g`: one offset per axis."""
        lin = None
        for a, o in zip(g.type.axis_names, offsets):
            term = self.mul(self.index(o), g.strides[a])
            lin = term if lin is None else self.add(lin, term)
        assert lin is not None
        return lin

    def held_element(self, g: Global, t: reg.FragType, offsets) -> tuple[SSAValue, SSAValue | None]:
        """(the element index of this warp's part of a tile at `offsets` in `g`, the
        condition that it lies inside, or None where it always does): the tile's corner
        moved to the warp's place along the `reg.warps` axes fragment type `t` lacks (a
        group's query heads, one a warp), which lies past the global's edge where the
        tile may cross it."""
        lin = self.element(g, offsets)
        held = self.held_places(t, g.type.axis_names)
        for axis, w in held.items():
            lin = self.add(lin, self.mul(w, g.strides[axis]))
        ok = None
        for room in self.rooms(g, offsets, held, {a: self.warps[a] for a in held}).values():
            ok = self.both(ok, self.setp("gt", room, 0))
        return lin, ok

    def rooms(self, g: Global, offsets, lane_at: dict[str, SSAValue], tiles: dict[str, int]) -> dict[str, SSAValue]:
        """Per axis of `lane_at` along which the block's tile (of `tiles[axis]`, at `offsets`,
        one per axis of `g`) may cross the global's edge: the room left between this lane's
        first place (`lane_at[axis]`, in the tile) and the edge (s32)."""
        at = dict(zip(g.type.axis_names, offsets))
        rooms = {}
        for axis, first in lane_at.items():
            extent = g.type.shape[axis]
            if extent % tiles[axis] or not self.provably_inside(at[axis], extent):
                rooms[axis] = self.op2(P.SubOp, "s32", self.s32(extent), self.add(self.index(at[axis]), first))
        return rooms

    # -- index analysis -----------------------------------------------------------------------
    def affine(self, v: SSAValue) -> Affine:
        """`v` as constant + sum(coefficient x symbol): the symbols are values that are not
        affine arithmetic of others (grid origins, loop counters, anything else)."""
        if v in self.affines:
            return self.affines[v]
        op = v.owner
        out = Affine(0, ((v, 1),))
        if constant(v) is not None:
            out = Affine(constant(v))  # type: ignore[arg-type]
        elif isinstance(op, arith.AddiOp | arith.SubiOp | arith.MuliOp):
            a, b = self.affine(op.lhs), self.affine(op.rhs)
            if isinstance(op, arith.AddiOp):
                out = a + b
            elif isinstance(op, arith.SubiOp):
                out = a + b.scale(-1)
            elif not a.terms or not b.terms:
                out = b.scale(a.const) if not a.terms else a.scale(b.const)
        elif isinstance(op, arith.DivUIOp | arith.RemUIOp):
            a, b = self.affine(op.lhs), self.affine(op.rhs)
            if not a.terms and not b.terms and b.const > 0:
                out = Affine(a.const // b.const if isinstance(op, arith.DivUIOp) else a.const % b.const)
        self.affines[v] = out
        return out

    def span(self, v: SSAValue) -> tuple[int, int] | None:
        """The least and greatest value `v` takes, where its symbols' ranges are known: a
        grid origin (0 .. the last block's), a counter of a loop with constant bounds."""
        a = self.affine(v)
        lo = hi = a.const
        for sym, c in a.terms:
            r = self.symbol_span(sym)
            if r is None:
                return None
            lo, hi = lo + min(c * r[0], c * r[1]), hi + max(c * r[0], c * r[1])
        return lo, hi

    def symbol_span(self, sym: SSAValue) -> tuple[int, int] | None:
        if sym in self.grid_args:
            axis = self.grid_args[sym]
            tile = self.kernel.grid_tiles[axis]
            return 0, (self.kernel.grid_shape()[axis] - 1) * tile
        owner = sym.owner
        if isinstance(owner, Block) and isinstance(owner.parent_op(), scf.ForOp) and sym.index == 0:  # type: ignore[attr-defined]
            loop = owner.parent_op()
            lb, ub, step = (constant(x) for x in (loop.lb, loop.ub, loop.step))  # type: ignore[union-attr]
            if None not in (lb, ub, step) and step > 0 and ub > lb:  # type: ignore[operator]
                return lb, lb + (-(-(ub - lb) // step) - 1) * step  # type: ignore[operator]
        return None

    def provably_inside(self, v: SSAValue, extent: int, tile: int = 1) -> bool:
        """Whether a tile of `tile` at offset `v` lies wholly before `extent` everywhere."""
        r = self.span(v)
        return r is not None and r[0] >= 0 and r[1] + tile <= extent

    def symbolic(self, a: Affine) -> SSAValue | None:
        """The symbolic part of an index in a register (made once in the current block: a
        grid origin may change from tile to tile); None when it has none."""
        if not a.terms:
            return None
        key = ("symbolic", id(self.cur), a.terms)
        if key not in self.cache:
            out = None
            for sym, c in a.terms:
                term = self.index(sym) if c == 1 else self.mul(self.index(sym), c & 0xFFFFFFFF)
                out = term if out is None else self.add(out, term)
            self.cache[key] = out  # type: ignore[assignment]
        return self.cache[key]


@dataclass(frozen=True)
class Affine:
    """An index as `const + sum(coefficient x symbol)`."""

    const: int = 0
    terms: tuple[tuple[SSAValue, int], ...] = ()

    def __add__(self, other: Affine) -> Affine:
        terms = dict(self.terms)
        for s, c in other.terms:
            terms[s] = terms.get(s, 0) + c
        # the terms in the order they first appear: the same IR always gives the same PTX
        return Affine(self.const + other.const, tuple((s, c) for s, c in terms.items() if c))

    def scale(self, k: int) -> Affine:
        return Affine(self.const * k, tuple((s, c * k) for s, c in self.terms if c * k))
