"""The sm_90a half of `reg-to-ptx`: a warp-specialised kernel (TMA, mbarriers, wgmma).

A kernel whose stream loop was built by `hbm-to-smem{copy=tma}` and `smem-to-reg{mma=wgmma}`
becomes one `ptx.kernel` of 1 + W warpgroups: warpgroup 0 produces, the W after it consume
(W = the consumer warps in `reg.warps` / 4). The pieces:
- shared memory: one dynamic array, its start rounded up to 1024 bytes (a 128-byte swizzle
  repeats every 8 rows of 128 bytes, and wgmma's descriptors assume whole repeats); the
  buffers, then the mbarrier rings (8 bytes a barrier). A `layout=swizzle` tile is stored
  as panels 64 elements (128 bytes) wide along its innermost axis, each panel row-major
  with its 16-byte chunks XOR-swizzled by the row mod 8, as the TMA writes it.
- set-up: thread 0 initialises the barriers (`full`: one arrival, the producer's, plus the
  bytes; `empty`: one arrival per consumer thread), fences the initialisation and the
  whole block meets at a barrier; then the warpgroups part: `setmaxnreg` gives registers
  from the producer to the consumers.
- the producer region runs on one thread of warpgroup 0: `smem.mbarrier_wait` spins on
  `mbarrier.try_wait.parity`, `smem.arrive_expect` is `mbarrier.arrive.expect_tx`, and a
  `smem.tma_copy` is one `cp.async.bulk.tensor.2d` per 128-byte panel; the globals it
  reads are tensor-map parameters (the kernel's `napkin.tma` attribute gives each one's
  box for the runtime).
- the consumers: `reg.wgmma` is `wgmma.mma_async` m64nNk16 with both operands from
  shared-memory descriptors (A K-major; B K-major or, for a [k, n] tile, N-major with
  `imm-trans-b`), the warpgroup's rows chosen by its index; `reg.wgmma_commit` and
  `reg.wgmma_wait` are the group ops; `smem.arrive` is each consumer thread's arrival;
  `reg.store` converts pairs of accumulators and stores them straight to global memory;
  or, after `hbm-to-smem{store=tma}`, `reg.stmatrix` rounds them into a swizzled panel
  (`stmatrix.x4`), `smem.tma_store` fences them for the async proxy, meets the other
  consumers at a named barrier and has one thread store the panel
  (`cp.async.bulk.tensor` global <- shared, one bulk group), and `smem.tma_store_wait` is
  that thread's `cp.async.bulk.wait_group.read` and the consumers' barrier; before the
  consumers leave, that thread waits for all its stores.
- a stream loop is emitted bottom-tested (it runs at least once, its bounds being
  constants), so the accumulators keep their registers from one iteration to the next.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, builtin, scf
from xdsl.ir import Block, Operation, Region, SSAValue

from napkin_ir.dialects import hbm, reg, smem
from napkin_ir.dialects.ptx import ops as P
from napkin_ir.dialects.ptx import tensor_ops as T
from napkin_ir.dialects.ptx.registers import RegType
from napkin_ir.lowering.reg_to_ptx import PtxBuilder

B32, B64, F32, PRED = RegType("b32"), RegType("b64"), RegType("f32"), RegType("pred")
SHARED = "napkin_smem"
PANEL = 128  # bytes of one swizzled panel row
PRODUCER_REGS = 40
REGISTER_FILE = 65536
CONSUMER_BARRIER = 1  # the named barrier the consumer warpgroups meet at (0 is the whole block's)


@dataclass
class _Buffer:
    base: SSAValue  # shared address of stage 0 (b32)
    type: smem.BufferType
    stage_bytes: int

    @property
    def rows(self) -> int:
        return self.type.dims[0]


@dataclass
class _Global:
    type: hbm.GlobalType
    ptr: SSAValue | None = None  # generic address (stored globals)
    tmap: SSAValue | None = None  # generic address of the tensor-map parameter (TMA sources)


def _constant(v: SSAValue) -> int | None:
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, builtin.IntegerAttr):
        return op.value.value.data
    return None


def _prod(xs) -> int:
    out = 1
    for x in xs:
        out *= x
    return out


def uses_wgmma(kernel: hbm.KernelOp) -> bool:
    """Whether a register-level kernel is the warp-specialised sm_90a kind."""
    return any(isinstance(o, reg.WgmmaOp | smem.ProducerOp) for o in kernel.walk())


def consumer_registers(threads: int, blocks_per_sm: int = 1) -> int:
    """Registers per consumer thread once the producer warpgroup drops to PRODUCER_REGS.

    `setmaxnreg` moves registers within the block's pool, which is what the launch gave
    it: `threads` times the count at entry, the cap `.maxntid` and `.minnctapersm 1`
    impose (the register file over the threads, in steps of 8, at most 255). What the
    producer frees is shared by the consumers, in steps of 8, at most 256.
    """
    at_entry = min(255, REGISTER_FILE // blocks_per_sm // threads) // 8 * 8
    pool = threads * at_entry - 128 * PRODUCER_REGS
    return min(256, pool // (threads - 128) // 8 * 8)


class Sm90Emitter(PtxBuilder):
    def __init__(self, kernel: hbm.KernelOp):
        super().__init__(kernel)
        warps = hbm.parse_labels(kernel.attributes.get("reg.warps"))  # type: ignore[arg-type]
        if len(warps) != 1:
            raise self.fail(f"wgmma consumers split one axis (the rows), got reg.warps = {warps}")
        (self.row_axis, self.consumer_warps), = warps.items()
        if self.consumer_warps % 4:
            raise self.fail(f"{self.consumer_warps} consumer warps are not whole warpgroups of 4")
        self.consumers = self.consumer_warps // 4
        self.nthreads = 128 * (1 + self.consumers)
        self.smem_bytes = 0
        self.barrier_rings: list[tuple[SSAValue, int, int]] = []  # (value, stages, count per barrier)
        self.tma: list[str] = []
        self.need_fence = True
        attr = kernel.attributes.get("hbm.group")
        self.group = attr.value.data if isinstance(attr, builtin.IntegerAttr) else 0
        attr = kernel.attributes.get("hbm.blocks_per_sm")
        self.blocks_per_sm = attr.value.data if isinstance(attr, builtin.IntegerAttr) else 1
        self.persistent = isinstance(kernel.attributes.get("hbm.persistent"), builtin.UnitAttr)
        attr = kernel.attributes.get("hbm.cluster")
        self.cluster = attr.value.data if isinstance(attr, builtin.IntegerAttr) else 1
        self.late_release: SSAValue | None = None  # persistent: the empty ring whose last stage is released after the stream

    # -- small builders ----------------------------------------------------------------------
    def setp(self, cmp: str, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return self.emit(P.SetpOp(cmp, "u32", a, self.u32(b) if isinstance(b, int) else b)).results[0]

    def branch(self, cond: SSAValue) -> tuple[Block, Block]:
        """End the current block on `cond`; returns (taken, not taken), both new."""
        yes, no = Block(), Block()
        self.emit(P.CondBraOp(cond, yes, [], no, []))
        self.blocks += [yes, no]
        return yes, no

    # -- the kernel --------------------------------------------------------------------------
    def build(self) -> P.KernelOp:
        body = self.kernel.body.block
        globs = self.kernel.globals
        producers = [o for o in body.ops if isinstance(o, smem.ProducerOp)]
        if len(producers) != 1:
            raise self.fail(f"expects one smem.producer region (from hbm-to-smem{{copy=tma}}), found {len(producers)}")
        tma_sources = {o.source for o in producers[0].walk() if isinstance(o, smem.TmaCopyOp)}
        tma_sources |= {o.dest for o in body.walk() if isinstance(o, smem.TmaStoreOp)}
        self.tma_stores = any(isinstance(o, smem.TmaStoreOp) for o in body.walk())
        params = []
        for n, g in enumerate(globs):
            t: hbm.GlobalType = g.type  # type: ignore[assignment]
            if len(t.dims) != 2:
                raise self.fail(f"global tensors must be 2-D for now, got {t}")
            pname = f"{self.name}_{g.name_hint or f'arg{n}'}"
            if g in tma_sources:
                params.append((pname, "tensormap"))
                addr = self.emit(P.AddrOfOp(pname, B64)).results[0]
                self.vals[g] = _Global(t, tmap=self.emit(P.CvtaOp("param", addr, to=False)).results[0])
            else:
                params.append((pname, "u64"))
                raw = self.emit(P.LdParamOp(pname, "u64", B64)).results[0]
                self.vals[g] = _Global(t, ptr=self.emit(P.CvtaOp("global", raw)).results[0])
        grid = self.kernel.grid_tiles
        if len(grid) > 3:
            raise self.fail("at most 3 grid axes")
        args = body.args
        counts = self.kernel.grid_shape()
        self.origin_args = {a: args[len(globs) + n] for n, a in enumerate(grid)}
        if self.persistent:
            self.check_persistent()
        elif self.group:
            self.set_origins(self.emit(P.SregOp("ctaid.x")).results[0])
        else:
            for n, (axis, tile) in enumerate(grid.items()):
                cta = self.emit(P.SregOp(f"ctaid.{'xyz'[n]}")).results[0]
                self.vals[self.origin_args[axis]] = self.mul(cta, tile)
        self.tid = self.emit(P.SregOp("tid.x")).results[0]
        self.lane = self.op2(P.AndOp, "b32", self.tid, 31)
        raw = self.emit(P.AddrOfOp(SHARED, B32)).results[0]
        self.smem_base = self.op2(P.AndOp, "b32", self.add(raw, 1023), ~1023 & 0xFFFFFFFF)

        # constants and shared memory first: both roles use them
        setup = [o for o in body.ops if isinstance(o, smem.AllocOp | smem.MbarrierAllocOp | arith.ConstantOp)]
        for op in setup:
            self.lower(op)
        self.init_barriers()
        if not self.persistent:
            self.bind_ring_position(self.u32(0))
        self.finish: Block | None = None
        if self.cluster > 1:
            self.start_cluster(counts)
        is_producer = self.setp("lt", self.tid, 128)
        produce, consume = self.branch(is_producer)

        self.cur = produce
        self.emit(T.SetmaxnregOp("dec", PRODUCER_REGS))
        issuer, idle = self.branch(self.setp("eq", self.tid, 0))
        self.cur = idle
        self.leave()
        self.cur = issuer
        self.per_tile(lambda: [self.lower(op) for op in producers[0].body.block.ops])
        self.leave()

        self.cur = consume
        self.emit(T.SetmaxnregOp("inc", consumer_registers(self.nthreads, self.blocks_per_sm)))
        self.check_registers()
        self.warp_row = self.op2(P.SubOp, "u32", self.op2(P.ShrOp, "u32", self.tid, 5), 4)  # consumer warp 0..W*4-1
        self.warpgroup = self.op2(P.ShrOp, "u32", self.warp_row, 2)
        self.store_issuer = self.setp("eq", self.tid, 128)  # the first consumer thread starts the TMA stores
        consumer_ops = [op for op in body.ops if op not in setup and op is not producers[0]
                        and not isinstance(op, hbm.ReturnOp | smem.RingPositionOp)]
        self.per_tile(lambda: [self.lower(op) for op in consumer_ops])
        if self.tma_stores:  # the stores must have read their stages before the block's shared memory goes
            self.by_store_issuer(lambda: self.emit(T.CpAsyncBulkWaitGroupOp(0)))
        self.leave()
        if self.finish is not None:  # no CTA leaves while a peer may still arrive on its barriers
            self.blocks.append(self.finish)
            self.cur = self.finish
            self.emit(T.BarrierClusterOp("arrive"))
            self.emit(T.BarrierClusterOp("wait"))
            self.emit(P.RetOp())

        shared_end = self.smem_bytes + 1024  # the slack for rounding the start up
        kernel = P.KernelOp(self.name, params, Region(self.blocks), dynamic_shared=SHARED, maxntid=[self.nthreads],
                            minnctapersm=self.blocks_per_sm)
        launch = [counts[a] for a in grid]
        if self.group or self.persistent:
            launch = [_prod(launch)]
        if self.cluster > 1:
            kernel.attributes["napkin.cluster"] = builtin.ArrayAttr([builtin.IntegerAttr(self.cluster, 32)])
        if self.persistent:  # the launch takes min(tiles, multiprocessors x blocks_per_sm) blocks
            kernel.attributes["napkin.persistent"] = builtin.IntegerAttr(self.blocks_per_sm, 32)
        kernel.attributes["napkin.grid"] = builtin.ArrayAttr([builtin.IntegerAttr(n, 32) for n in launch])
        kernel.attributes["napkin.block"] = builtin.ArrayAttr([builtin.IntegerAttr(self.nthreads, 32)])
        kernel.attributes["napkin.smem_bytes"] = builtin.IntegerAttr(shared_end, 32)
        kernel.attributes["napkin.tma"] = builtin.ArrayAttr([builtin.StringAttr(s) for s in self.tma])
        return kernel

    # -- clusters ------------------------------------------------------------------------------
    def start_cluster(self, counts: dict[str, int]) -> None:
        """Blocks of a cluster are neighbours along the first grid axis; they share the
        tiles whose offsets do not move with it, which each loads half of, for both."""
        first = list(self.kernel.grid_tiles)[0]
        if self.cluster != 2 or self.group or self.persistent or len(counts) != 2:
            raise self.fail("clusters are pairs of blocks of a plain two-axis grid (no group, no persistence) for now")
        if counts[first] % 2:
            raise self.fail(f"a cluster of 2 along '{first}' needs an even number of blocks along it, got {counts[first]}")
        self.emit(T.BarrierClusterOp("arrive"))
        self.emit(T.BarrierClusterOp("wait"))
        self.rank = self.emit(P.SregOp("cluster_ctarank")).results[0]
        self.peer = self.op2(P.XorOp, "b32", self.rank, 1)
        self.mask = self.emit(P.ConstOp("b16", 3, RegType("b16"))).results[0]
        self.finish = Block()

    def shared_by_cluster(self, op: smem.TmaCopyOp) -> bool:
        return self.cluster > 1 and self.origin_args[list(self.kernel.grid_tiles)[0]] not in op.offsets

    def leave(self) -> None:
        self.emit(P.BraOp(self.finish) if self.finish is not None else P.RetOp())

    def check_registers(self) -> None:
        """ptxas compiles the whole kernel within the cap at entry, wgmma's accumulators too."""
        at_entry = min(255, REGISTER_FILE // self.blocks_per_sm // self.nthreads) // 8 * 8
        wgmmas = [o for o in self.kernel.walk() if isinstance(o, reg.WgmmaOp)]
        need = max((o.c.type.dims[1] // 2 for o in wgmmas), default=0) + 24  # type: ignore[attr-defined]
        if need > at_entry:
            raise self.fail(f"{self.blocks_per_sm} blocks of {self.nthreads} threads per multiprocessor leave {at_entry} registers "
                            f"per thread at entry, but the wgmma accumulators need about {need}; use fewer blocks per "
                            "multiprocessor or fewer columns per block")

    # -- the order of tiles ----------------------------------------------------------------
    def set_origins(self, p: SSAValue) -> None:
        """The grid origins of linear tile p: grouped, or the first axis fastest."""
        grid = self.kernel.grid_tiles
        counts = self.kernel.grid_shape()
        if self.group:
            rows, cols = counts.values()
            blocks = list(self.grouped_tile(rows, cols, self.group, p))
        else:
            blocks, rest = [], p
            for n, axis in enumerate(grid):
                last = n == len(grid) - 1
                blocks.append(rest if last else self.op2(P.RemOp, "u32", rest, counts[axis]))
                rest = rest if last else self.op2(P.DivOp, "u32", rest, counts[axis])
        for (axis, tile), b in zip(grid.items(), blocks):
            self.vals[self.origin_args[axis]] = self.mul(b, tile)

    def bind_ring_position(self, value: SSAValue) -> None:
        for op in self.kernel.walk():
            if isinstance(op, smem.RingPositionOp):
                self.vals[op.result] = value

    def per_tile(self, body) -> None:
        """Emit `body` once (for this block's tile) or, persistent, for tiles p = block,
        block + blocks, ... below the tile count."""
        if not self.persistent:
            body()
            return
        total = _prod(self.kernel.grid_shape().values())
        first = self.emit(P.SregOp("ctaid.x")).results[0]
        step = self.emit(P.SregOp("nctaid.x")).results[0]
        head = Block(arg_types=[B32, B32])  # the tile, and the ring steps taken before it
        self.emit(P.BraOp(head, first, self.u32(0)))
        self.blocks.append(head)
        self.cur = head
        p, taken = head.args
        work, done = self.branch(self.setp("lt", p, total))
        self.cur = work
        self.set_origins(p)
        self.bind_ring_position(taken)
        body()
        self.emit(P.BraOp(head, self.op2(P.AddOp, "u32", p, step), self.add(taken, self.trips)))
        self.cur = done

    def check_persistent(self) -> None:
        """A persistent block runs tile after tile through the same rings: each tile's steps
        count on from the last's (`smem.ring_position`), and the stage its last step used is
        released after its stream, for the next tile's producer."""
        loops = [o for o in self.kernel.body.block.ops if isinstance(o, scf.ForOp)]
        if len(loops) != 1:
            raise self.fail(f"a persistent block streams one loop per tile, found {len(loops)}")
        loop = loops[0]
        lb, ub, step = (_constant(v) for v in (loop.lb, loop.ub, loop.step))
        self.trips = -(-(ub - lb) // step)  # type: ignore[operator]
        self.stages = loop.attributes["smem.stages"].value.data  # type: ignore[union-attr]
        arrives = [o for o in loop.walk() if isinstance(o, smem.ArriveOp)]
        if arrives:
            self.late_release = arrives[0].bars

    def init_barriers(self) -> None:
        first, rest = self.branch(self.setp("eq", self.tid, 0))
        self.cur = first
        for base, stages, count in self.barrier_rings:
            c = self.u32(count)
            for s in range(stages):
                self.emit(T.MbarrierInitOp(self.add(base, 8 * s), c))
        self.emit(T.FenceOp("mbarrier_init.release.cluster"))
        self.emit(P.BraOp(rest))
        self.cur = rest
        self.emit(P.BarSyncOp(0))

    def lower(self, op: Operation) -> None:
        if isinstance(op, arith.ConstantOp | arith.AddiOp | arith.MuliOp | arith.DivUIOp | arith.RemUIOp | arith.SubiOp | arith.CmpiOp):
            for new in self.arith.lower_op(op):
                self.emit(new)
        elif isinstance(op, smem.AllocOp):
            self.alloc(op)
        elif isinstance(op, smem.MbarrierAllocOp):
            self.mbarrier_alloc(op)
        elif isinstance(op, smem.MbarrierWaitOp):
            self.mbarrier_wait(op)
        elif isinstance(op, smem.ArriveExpectOp):
            self.emit(T.MbarrierArriveOp(self.bar(op.bars, op.stage), self.u32(op.bytes.value.data)))
        elif isinstance(op, smem.ArriveOp):
            self.release(op)
        elif isinstance(op, smem.TmaCopyOp):
            self.tma_copy(op)
        elif isinstance(op, reg.ZerosOp):
            z = self.emit(P.ConstOp("f32", 0.0, F32)).results[0]
            self.vals[op.result] = [z] * op.result.type.values_per_lane()  # type: ignore[attr-defined]
        elif isinstance(op, reg.WgmmaOp):
            self.wgmma(op)
        elif isinstance(op, reg.WgmmaCommitOp):
            self.emit(T.WgmmaCommitGroupOp())
            self.need_fence = True
        elif isinstance(op, reg.WgmmaWaitOp):
            self.emit(T.WgmmaWaitGroupOp(op.pending.value.data))
            if self.late_release and op.pending.value.data == 0 and isinstance(op.prev_op, scf.ForOp):
                # persistent: the next tile's producer waits for the stage of this tile's last step too
                ring = self.late_release
                (position,) = [o.result for o in self.kernel.walk() if isinstance(o, smem.RingPositionOp)]
                last = self.op2(P.RemOp, "u32", self.add(self.vals[position], self.trips - 1), self.stages)
                self.emit(T.MbarrierArriveOp(self.add(self.vals[ring], self.mul(last, 8))))
        elif isinstance(op, reg.StoreOp):
            self.store(op)
        elif isinstance(op, smem.TmaStoreWaitOp):
            self.by_store_issuer(lambda: self.emit(T.CpAsyncBulkWaitGroupOp(op.pending.value.data, read=True)))
            self.emit(P.BarSyncOp(CONSUMER_BARRIER, 128 * self.consumers))
        elif isinstance(op, reg.StmatrixOp):
            self.stmatrix(op)
        elif isinstance(op, smem.TmaStoreOp):
            self.tma_store(op)
        elif isinstance(op, scf.ForOp):
            self.loop(op)
        elif isinstance(op, scf.IfOp):
            self.if_(op)
        elif isinstance(op, hbm.ReturnOp):
            self.emit(P.RetOp())
        else:
            raise self.fail(f"{op.name} has no sm_90a lowering here; lower it first (smem-to-reg{{mma=wgmma}})")

    # -- shared memory and barriers ----------------------------------------------------------
    def reserve(self, nbytes: int, align: int) -> SSAValue:
        offset = -(-self.smem_bytes // align) * align
        self.smem_bytes = offset + nbytes
        return self.add(self.smem_base, offset)

    def alloc(self, op: smem.AllocOp) -> None:
        t: smem.BufferType = op.result.type  # type: ignore[assignment]
        if len(t.dims) != 2 or t.dtype not in ("bf16", "f16") or t.layout.data != "swizzle":
            raise self.fail(f"wgmma buffers are 2-D bf16 or f16 tiles with layout=swizzle, got {t}")
        if (2 * t.dims[1]) % PANEL:
            raise self.fail(f"a swizzled tile's rows are whole 128-byte panels, got {t}")
        stage_bytes = t.bytes() // t.stages.data
        self.vals[op.result] = _Buffer(self.reserve(t.bytes(), 1024), t, stage_bytes)

    def mbarrier_alloc(self, op: smem.MbarrierAllocOp) -> None:
        t: smem.MbarrierType = op.result.type  # type: ignore[assignment]
        base = self.reserve(8 * t.stages.data, 8)
        # a consumer party is every consumer thread; a producer party is its one thread
        consumer_side = any(isinstance(u.operation, smem.ArriveOp) for u in op.result.uses)
        per_party = (self.cluster * 4 * self.consumers) if self.cluster > 1 else 128 * self.consumers  # warps or threads
        count = t.arrivals.data * (per_party if consumer_side else 1)
        self.barrier_rings.append((base, t.stages.data, count))
        self.vals[op.result] = base

    def bar(self, bars: SSAValue, stage: SSAValue) -> SSAValue:
        return self.add(self.vals[bars], self.mul(self.vals[stage], 8))

    def release(self, op: smem.ArriveOp) -> None:
        """A consumer's release: every thread arrives, or in a cluster one lane per warp
        arrives on this block's barrier and on the peer's (whose producer fills this
        block's stage too)."""
        addr = self.bar(op.bars, op.stage)
        if self.cluster == 1:
            self.emit(T.MbarrierArriveOp(addr))
            return
        lane0, rest = self.branch(self.setp("eq", self.lane, 0))
        self.cur = lane0
        self.emit(T.MbarrierArriveOp(addr))
        self.emit(T.MbarrierArriveClusterOp(self.emit(T.MapaOp(addr, self.peer)).results[0]))
        self.emit(P.BraOp(rest))
        self.cur = rest

    def mbarrier_wait(self, op: smem.MbarrierWaitOp) -> None:
        addr, parity = self.bar(op.bars, op.stage), self.vals[op.parity]
        spin, done = Block(), Block()
        self.emit(P.BraOp(spin))
        self.blocks += [spin, done]
        self.cur = spin
        ready = self.emit(T.MbarrierTryWaitParityOp(addr, parity)).results[0]
        self.emit(P.CondBraOp(ready, done, [], spin, []))
        self.cur = done

    def stage_base(self, buf: _Buffer, stage: SSAValue) -> SSAValue:
        return self.add(buf.base, self.mul(self.vals[stage], buf.stage_bytes))

    def tma_copy(self, op: smem.TmaCopyOp) -> None:
        g: _Global = self.vals[op.source]
        buf: _Buffer = self.vals[op.dest]
        rows, cols = buf.type.dims
        panel_cols = PANEL // 2
        box = f"{op.source.name_hint}:{rows}x{panel_cols}:128B"
        if box not in self.tma:
            self.tma.append(box)
        o_r, o_c = (self.vals[o] for o in op.offsets)
        base = self.stage_base(buf, op.stage)
        mbar = self.bar(op.bars, op.bar_stage)
        panels = cols // panel_cols
        if self.shared_by_cluster(op):
            if panels % 2:
                raise self.fail(f"a tile shared by a cluster of 2 is split by 128-byte panels; {buf.type} has {panels}")
            for j in range(panels // 2):  # this block loads panels 2j + rank, for both blocks
                p = self.add(self.rank, 2 * j)
                dst = self.add(base, self.mul(p, rows * PANEL))
                col = self.add(o_c, self.mul(p, panel_cols))
                self.emit(T.CpAsyncBulkTensorLoadMulticastOp(dst, g.tmap, [col, o_r], mbar, self.mask))
            return
        for p in range(panels):
            dst = self.add(base, p * rows * PANEL)
            self.emit(T.CpAsyncBulkTensorLoadOp(dst, g.tmap, [self.add(o_c, p * panel_cols), o_r], mbar))

    # -- warpgroup products --------------------------------------------------------------------
    def descriptor(self, addr: SSAValue, lbo: int, sbo: int) -> SSAValue:
        return self.emit(T.WgmmaDescOp(addr, lbo, sbo, "128B")).results[0]

    def wgmma(self, op: reg.WgmmaOp) -> None:
        rows, cols, k = op.axes()
        a: _Buffer = self.vals[op.a]
        b: _Buffer = self.vals[op.b]
        kk = hbm.parse_labels(op.at)[k]
        n = op.c.type.dims[1]  # type: ignore[attr-defined]
        if a.type.axis_names != (rows, k):
            raise self.fail(f"A must be laid out [{rows}, {k}] (K-major) for wgmma from shared memory, got {list(a.type.axis_names)}")
        # A, K-major: 8-row groups 1024 bytes apart; the slice's panel and its offset in it
        a_addr = self.stage_base(a, op.a_stage)
        a_addr = self.add(a_addr, self.mul(self.warpgroup, 64 * PANEL))
        a_addr = self.add(a_addr, (kk // 64) * a.rows * PANEL + (kk % 64) * 2)
        adesc = self.descriptor(a_addr, 16, 1024)
        b_addr = self.stage_base(b, op.b_stage)
        if b.type.axis_names == (cols, k):  # K-major as A
            bdesc = self.descriptor(self.add(b_addr, (kk // 64) * b.rows * PANEL + (kk % 64) * 2), 16, 1024)
            trans_b = False
        else:  # [k, n]: N-major; panels of 64 columns are LBO apart, 8-row groups SBO
            bdesc = self.descriptor(self.add(b_addr, kk * PANEL), b.rows * PANEL, 1024)
            trans_b = True
        if self.need_fence:
            self.emit(T.WgmmaFenceOp())
            self.need_fence = False
        true = self.emit(P.SetpOp("eq", "u32", self.u32(0), self.u32(0))).results[0]
        acc = self.vals[op.c]
        mma = self.emit(T.WgmmaMmaAsyncOp(n, a.type.dtype, acc, [adesc], bdesc, true, trans_b=trans_b))
        self.vals[op.result] = list(mma.results)

    # -- the epilogue ----------------------------------------------------------------------------
    def element_address(self, g: _Global, row: SSAValue, col: SSAValue) -> SSAValue:
        idx = self.add(self.mul(row, g.type.dims[1]), col)
        size = 4 if g.type.dtype == "f32" else 2
        off = self.op2(P.MulOp, "u32", idx, size, mods="wide", result=B64)
        assert g.ptr is not None
        return self.emit(P.AddOp("u64", g.ptr, off, result=B64)).results[0]

    def store(self, op: reg.StoreOp) -> None:
        t: reg.FragType = op.value.type  # type: ignore[assignment]
        g: _Global = self.vals[op.dest]
        if g.ptr is None:
            raise self.fail("stores to a global that TMA also reads are not supported")
        regs = self.vals[op.value]
        grows, gcols = g.type.dims
        dt = g.type.dtype
        if gcols % 2:
            raise self.fail(f"the output's rows must have an even length, got {gcols}")
        o_r, o_c = (self.vals[o] for o in op.offsets)
        r0 = self.add(self.add(o_r, self.mul(self.warp_row, 16)), self.op2(P.ShrOp, "u32", self.lane, 2))
        c0 = self.add(o_c, self.mul(self.op2(P.AndOp, "b32", self.lane, 3), 2))
        in_rows = [self.setp("lt", self.add(r0, 8 * h), grows) for h in (0, 1)]
        for tn in range(t.dims[1] // 8):
            col = self.add(c0, 8 * tn)
            in_col = self.setp("lt", col, gcols)
            for h in (0, 1):
                row = self.add(r0, 8 * h)
                inside = self.emit(P.AndOp("pred", in_rows[h], in_col, result=PRED)).results[0]
                addr = self.element_address(g, row, col)
                lo, hi = regs[4 * tn + 2 * h], regs[4 * tn + 2 * h + 1]
                if dt == "f32":
                    self.emit(P.StOp("global", "f32", addr, [lo, hi], guard=inside))
                else:
                    packed = self.emit(P.CvtOp(f"{dt}x2", "f32", [hi, lo], RegType(f"{dt}x2"), mods="rn")).results[0]
                    self.emit(P.StOp("global", "b32", addr, [packed], guard=inside))

    # -- the epilogue through shared memory and TMA stores ---------------------------------------
    def by_store_issuer(self, body) -> None:
        then, join = self.branch(self.store_issuer)
        self.cur = then
        body()
        self.emit(P.BraOp(join))
        self.cur = join

    def stmatrix(self, op: reg.StmatrixOp) -> None:
        """Each warp's 16 rows, rounded, into the 128-byte swizzled stage: one stmatrix.x4 per
        two 8-column tiles (the rows 0-7 and 8-15 of each); lane l gives the address of row
        l mod 8 of matrix l div 8."""
        t: reg.FragType = op.value.type  # type: ignore[assignment]
        buf: _Buffer = self.vals[op.dest]
        cols = t.axis_names[1]
        if t.dims[0] != 16 or buf.type.dims[1] * 2 != PANEL:
            raise self.fail(f"stmatrix here writes wgmma accumulators (16 rows a warp) into one 128-byte panel, got {t} into {buf.type}")
        c0 = hbm.parse_labels(op.at).get(cols, 0)
        regs = self.vals[op.value]
        dt = buf.type.dtype
        matrix = self.op2(P.ShrOp, "u32", self.lane, 3)
        row = self.add(self.add(self.mul(self.warp_row, 16), self.op2(P.AndOp, "b32", self.lane, 7)),
                       self.mul(self.op2(P.AndOp, "b32", matrix, 1), 8))
        row_addr = self.add(self.stage_base(buf, op.stage), self.mul(row, PANEL))
        swz = self.op2(P.AndOp, "b32", self.lane, 7)  # row mod 8: the XOR of the 16-byte chunks
        half = self.op2(P.ShrOp, "u32", matrix, 1)  # matrices 2, 3: the second 8-column tile

        def packed(tn: int, h: int) -> SSAValue:
            lo, hi = regs[4 * tn + 2 * h], regs[4 * tn + 2 * h + 1]
            return self.emit(P.CvtOp(f"{dt}x2", "f32", [hi, lo], RegType(f"{dt}x2"), mods="rn")).results[0]

        for chunk in range(0, buf.type.dims[1] // 8, 2):
            tn = c0 // 8 + chunk
            col_chunk = self.op2(P.XorOp, "b32", self.add(half, chunk), swz)
            addr = self.add(row_addr, self.op2(P.ShlOp, "b32", col_chunk, 4))
            self.emit(T.StmatrixOp(addr, [packed(tn, 0), packed(tn, 1), packed(tn + 1, 0), packed(tn + 1, 1)]))

    def tma_store(self, op: smem.TmaStoreOp) -> None:
        """Every consumer thread's writes are made visible to the async proxy, the consumers
        meet, and one thread stores the stage panel by panel, as one bulk group."""
        g: _Global = self.vals[op.dest]
        buf: _Buffer = self.vals[op.source]
        rows, cols = buf.type.dims
        box = f"{op.dest.name_hint}:{rows}x{PANEL // 2}:128B"
        if box not in self.tma:
            self.tma.append(box)
        self.emit(T.FenceOp("proxy.async.shared::cta"))
        self.emit(P.BarSyncOp(CONSUMER_BARRIER, 128 * self.consumers))
        o_r, o_c = (self.vals[o] for o in op.offsets)
        base = self.stage_base(buf, op.stage)

        def issue() -> None:
            for p in range(cols // (PANEL // 2)):
                src = self.add(base, p * rows * PANEL)
                self.emit(T.CpAsyncBulkTensorStoreOp(g.tmap, [self.add(o_c, p * PANEL // 2), o_r], src))
            self.emit(T.CpAsyncBulkCommitGroupOp())

        self.by_store_issuer(issue)

    def if_(self, op: scf.IfOp) -> None:
        if op.results or op.false_region.blocks and any(not isinstance(o, scf.YieldOp) for o in op.false_region.block.ops):
            raise self.fail("only scf.if without results or else branch is lowered here")
        cond = self.arith.values[op.cond]
        then, join = self.branch(cond)
        self.cur = then
        for inner in op.true_region.block.ops:
            if not isinstance(inner, scf.YieldOp):
                self.lower(inner)
        self.emit(P.BraOp(join))
        self.cur = join

    # -- stream loops ------------------------------------------------------------------------------
    def loop(self, op: scf.ForOp) -> None:
        """Bottom-tested: body(iv, carried...) ... iv' = iv + step; iv' < ub ? body : exit."""
        consts = [_constant(v) for v in (op.lb, op.ub, op.step)]
        if None in consts or consts[0] >= consts[1]:  # type: ignore[operator]
            raise self.fail("a stream loop needs constant bounds and at least one iteration")
        lb, ub, step = (self.vals[v] for v in (op.lb, op.ub, op.step))
        inits = [self.vals[v] for v in op.iter_args]
        flat_init = [r for regs in inits for r in (regs if isinstance(regs, list) else [regs])]
        body = Block(arg_types=[B32] + [r.type for r in flat_init])
        self.emit(P.BraOp(body, lb, *flat_init))
        self.blocks.append(body)
        iv, *flat = body.args
        carried, k = [], 0
        for v in inits:
            size = len(v) if isinstance(v, list) else 1
            carried.append(list(flat[k : k + size]) if isinstance(v, list) else flat[k])
            k += size
        self.cur = body
        block = op.body.block
        self.vals[block.args[0]] = iv
        for arg, v in zip(block.args[1:], carried):
            self.vals[arg] = v
        results = carried
        for inner in block.ops:
            if not isinstance(inner, scf.YieldOp):
                self.lower(inner)
                continue
            results = [self.vals[v] for v in inner.operands]
            nxt = self.emit(P.AddOp("s32", iv, step, result=B32)).results[0]
            more = self.emit(P.SetpOp("lt", "s32", nxt, ub)).results[0]
            flat_next = [r for v in results for r in (v if isinstance(v, list) else [v])]
            exit_ = Block()
            self.emit(P.CondBraOp(more, body, [nxt, *flat_next], exit_, []))
            self.blocks.append(exit_)
            self.cur = exit_
        for res, v in zip(op.results, results):
            self.vals[res] = v
