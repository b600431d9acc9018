"""mbarrier rings and the tensor memory accelerator (sm_90a).

- `smem.mbarrier_alloc`: a ring of 8-byte barriers in shared memory, initialised by
  thread 0 before the roles part (`kernel.init_barriers`) with one arrival per party: a
  producer or store role is its one issuing thread, the consumers one lane of every
  consumer warp (in a cluster, of both blocks).
- `smem.mbarrier_wait`: a spin on `mbarrier.try_wait.parity`; `smem.arrive_expect`:
  `mbarrier.arrive.expect_tx` with the stage's bytes; `smem.arrive`: the consumer warp's
  lanes meet and one lane arrives for the warp (in a cluster on this block's barrier and
  on the peer's, whose producer fills this block's stage too); a store role's one thread
  arrives for itself.
- `smem.tma_copy`: one `cp.async.bulk.tensor` per 128-byte panel of the tile (2-D, or one
  dimension more per outer axis: a head, a batch entry of one place, or a group's query
  heads, whose places the box's rows run over) (a tile a
  cluster shares: each block loads half the panels, multicast to both); the global is a
  tensor-map parameter whose box the kernel's `napkin.tma` lists for the runtime.
- `smem.tma_store` (with `accumulate`, the TMA's reduce-add, `cp.reduce.async.bulk.tensor
  .add`): every consumer's writes are fenced for the async proxy, the
  consumers meet at a named barrier, and one thread stores the stage panel by panel as
  one bulk group; `smem.tma_store_wait` is that thread's `cp.async.bulk.wait_group.read`
  and the consumers' barrier. In a store role (`smem.storer`: thread 32, lane 0 of the
  producer warpgroup's second warp) its thread stores and waits alone: the consumers
  fenced their writes before arriving on the stage's full barrier (`smem.arrive
  {async_proxy}`), and its own arrival on an empty barrier is one of one.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from napkin_ir.dialects import smem
from napkin_ir.dialects.ptx import ops as P
from napkin_ir.dialects.ptx import tensor_ops as T
from napkin_ir.dialects.ptx.attributes import TmaBoxAttr
from napkin_ir.lowering.ptx_rules.context import PANEL, Buffer, Global, KernelLowering, arg_name, lowers
from napkin_ir.lowering.ptx_rules.kernel import CONSUMER_BARRIER, by_store_issuer
from napkin_ir.lowering.shared_layout import ring_reserved


@lowers(smem.MbarrierAllocOp)
def _mbarrier_alloc(k: KernelLowering, op: smem.MbarrierAllocOp) -> None:
    t: smem.MbarrierType = op.result.type  # type: ignore[assignment]
    base = k.reserve(*ring_reserved(t))
    k.end_staging()
    consumer_side = any(isinstance(u.operation, smem.ArriveOp) and not u.operation.by_role for u in op.result.uses)
    per_party = k.cluster * k.consumer_threads // 32  # a lane of each consumer warp (of both blocks of a cluster)
    count = t.arrivals.data * (per_party if consumer_side else 1)
    k.barrier_rings.append((base, t.stages.data, count))
    k.vals[op.result] = base


def bar(k: KernelLowering, bars: SSAValue, stage: SSAValue) -> SSAValue:
    return k.add(k.vals[bars], k.mul(k.vals[stage], 8))


@lowers(smem.MbarrierWaitOp)
def _mbarrier_wait(k: KernelLowering, op: smem.MbarrierWaitOp) -> None:
    addr, parity = bar(k, op.bars, op.stage), k.vals[op.parity]
    spin = k.new_block()
    k.jump(spin)
    done = k.new_block()
    k.cur = spin
    ready = k.r(T.MbarrierTryWaitParityOp(addr, parity))
    k.emit(P.CondBraOp(ready, done, [], spin, []))
    k.cur = done


@lowers(smem.ArriveExpectOp)
def _arrive_expect(k: KernelLowering, op: smem.ArriveExpectOp) -> None:
    k.emit(T.MbarrierArriveOp(bar(k, op.bars, op.stage), k.u32(op.bytes.value.data)))


@lowers(smem.ArriveOp)
def _arrive(k: KernelLowering, op: smem.ArriveOp) -> None:
    if op.async_proxy is not None:
        k.emit(T.FenceOp("proxy.async.shared::cta"))
    addr = bar(k, op.bars, op.stage)
    if op.by_role:
        k.emit(T.MbarrierArriveOp(addr))
        return
    # the warp's lanes meet (what each read or wrote before is ordered before the arrival),
    # then one lane arrives for the warp: 256 arrivals on one barrier cost more than the
    # rest of a tile's bookkeeping (research/benchmarks.md, 2026-11-28)
    k.emit(P.BarWarpSyncOp())
    lane0, rest = k.branch(k.setp("eq", k.lane, 0, "u32"))
    k.cur = lane0
    k.emit(T.MbarrierArriveOp(addr))
    if k.cluster > 1:
        k.emit(T.MbarrierArriveClusterOp(k.r(T.MapaOp(addr, k.peer))))  # type: ignore[attr-defined]
    k.jump(rest)
    k.cur = rest


def _box(k: KernelLowering, g: SSAValue, buf: Buffer, rows: int | None = None) -> None:
    """The box one copy moves, outermost axis first: a panel of the tile (its places along
    every axis but the innermost, 1 along those of one place: a grouped-query tile's box is
    1 x 1 x heads x positions x 64). The TMA writes a box's rows one after another, the
    outer axes' places outermost: the buffer's rows, folded from its row axes. `rows`: a
    copy of the tile's first rows only (`smem.tma_copy`'s `rows`, a two-axis tile)."""
    if not buf.panels:  # a plain f32 vector (a stream's statistic): the whole tile, unswizzled
        box = TmaBoxAttr(arg_name(g, k.kernel.globals.index(g)), tuple(buf.type.dims), "none")
    else:
        outer = (rows,) if rows is not None else buf.type.dims[:-1]
        box = TmaBoxAttr(arg_name(g, k.kernel.globals.index(g)), (*outer, buf.element.elements(PANEL)), "128B")
    if box not in k.tma_boxes:
        k.tma_boxes.append(box)


def _outer(k: KernelLowering, g: Global, buf: Buffer, offsets) -> tuple[SSAValue, SSAValue, list[SSAValue]]:
    """(row, column, the outer axes' coordinates innermost first) of a tile's corner."""
    if g.type.axis_names != buf.type.axis_names:
        raise k.fail(f"a TMA copy moves a tile of the global's axes in its order: {g.type} and {buf.type}")
    *outer, o_r, o_c = (k.vals[o] for o in offsets)
    return o_r, o_c, outer[::-1]


@lowers(smem.TmaCopyOp)
def _tma_copy(k: KernelLowering, op: smem.TmaCopyOp) -> None:
    g: Global = k.vals[op.source]
    buf: Buffer = k.vals[op.dest]
    rows, cols = buf.rows, buf.cols
    panel_cols = buf.element.elements(PANEL)
    _box(k, op.source, buf, op.rows.value.data if op.rows is not None else None)
    o_r, o_c, outer = _outer(k, g, buf, op.offsets)
    base = k.stage_addr(buf, op.stage)
    mbar = bar(k, op.bars, op.bar_stage)
    if not buf.panels:  # a plain f32 vector: one copy of the whole tile
        k.emit(T.CpAsyncBulkTensorLoadOp(base, g.tmap, [o_c, o_r, *outer], mbar))
        return
    panels = cols // panel_cols
    first = list(k.kernel.grid_tiles)[0]
    if k.cluster > 1 and k.origin_args[first] not in op.offsets:  # type: ignore[attr-defined]
        if outer:
            raise k.fail(f"a tile shared by a cluster is a 2-D tensor's, got {g.type}")
        def multicast(p: SSAValue) -> None:
            dst = k.add(base, k.mul(p, rows * PANEL))
            col = k.add(o_c, k.mul(p, panel_cols))
            k.emit(T.CpAsyncBulkTensorLoadMulticastOp(dst, g.tmap, [col, o_r], mbar, k.cluster_mask))  # type: ignore[attr-defined]

        for j in range(panels // 2):  # this block loads panels 2j + rank, for both blocks
            multicast(k.add(k.rank, 2 * j))  # type: ignore[attr-defined]
        if panels % 2:  # an odd count's last panel: the first block's
            first_block, rest = k.branch(k.setp("eq", k.rank, 0, "u32"))  # type: ignore[attr-defined]
            k.cur = first_block
            multicast(k.u32(panels - 1))
            k.jump(rest)
            k.cur = rest
        return
    for p in range(panels):
        dst = k.add(base, p * rows * PANEL)
        k.emit(T.CpAsyncBulkTensorLoadOp(dst, g.tmap, [k.add(o_c, p * panel_cols), o_r, *outer], mbar))


@lowers(smem.TmaStoreOp)
def _tma_store(k: KernelLowering, op: smem.TmaStoreOp) -> None:
    g: Global = k.vals[op.dest]
    buf: Buffer = k.vals[op.source]
    rows, cols = buf.rows, buf.cols
    panel_cols = buf.element.elements(PANEL)
    _box(k, op.dest, buf)
    role = smem.in_store_role(op)  # its thread took the stage on an mbarrier the writers arrived on, fenced
    if not role:
        k.emit(T.FenceOp("proxy.async.shared::cta"))
        k.emit(P.BarSyncOp(CONSUMER_BARRIER, k.consumer_threads))
    o_r, o_c, outer = _outer(k, g, buf, op.offsets)
    base = k.stage_addr(buf, op.stage)

    def issue() -> None:
        for p in range(cols // panel_cols):
            src = k.add(base, p * rows * PANEL)
            k.emit(T.CpAsyncBulkTensorStoreOp(g.tmap, [k.add(o_c, p * panel_cols), o_r, *outer], src, add=op.accumulate is not None))
        k.emit(T.CpAsyncBulkCommitGroupOp())

    if role:
        issue()
    else:
        by_store_issuer(k, issue)


@lowers(smem.TmaStoreWaitOp)
def _tma_store_wait(k: KernelLowering, op: smem.TmaStoreWaitOp) -> None:
    """The issuer waits; the consumers meet so that each knows the stages are free; a
    store role's thread waits alone."""
    if smem.in_store_role(op):
        k.emit(T.CpAsyncBulkWaitGroupOp(op.pending.value.data, read=True))
        return
    by_store_issuer(k, lambda: k.emit(T.CpAsyncBulkWaitGroupOp(op.pending.value.data, read=True)))
    k.emit(P.BarSyncOp(CONSUMER_BARRIER, k.consumer_threads))
