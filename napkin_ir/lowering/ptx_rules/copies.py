"""Shared-memory buffers and the copies into them with cp.async (sm_80 and later).

- `smem.alloc`: a part of the dynamic shared array (`napkin.smem_bytes`). A buffer the
  TMA or wgmma touches is stored as 128-byte swizzled panels (`Buffer.panels`), 1024-byte
  aligned; any other as rows of its innermost axis, 128-byte aligned, each row padded by
  16 bytes with `layout=pad8` (the 8 rows an ldmatrix reads then fall in different banks).
- `smem.copy`: the tile in 16-byte chunks: thread t copies chunk t mod C of rows t / C,
  t / C + T / C, ... (C chunks a row, T threads). The tile takes whole rows of its global
  (the last axis from 0, a multiple of 8 elements); rows past the global's edge are
  zero-filled (a source size of 0, from the tensor's first element), a tile that starts
  past the edge is not copied at all (its stage is never read), and a copy under `scf.if`
  takes its condition as a guard.
- `smem.commit`, `smem.wait`: `cp.async.commit_group`, `cp.async.wait_group`;
  `smem.barrier`: `bar.sync 0`.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from napkin_ir.dialects import reg, smem
from napkin_ir.dialects.ptx import ops as P
from napkin_ir.dialects.ptx import tensor_ops as T
from napkin_ir.lowering.ptx_rules.context import PANEL, Buffer, Global, KernelLowering, lowers


def _has_panels(buf: SSAValue) -> bool:
    return any(isinstance(u.operation, smem.TmaCopyOp | smem.TmaStoreOp | reg.WgmmaOp | reg.StmatrixOp) for u in buf.uses)


@lowers(smem.AllocOp)
def _alloc(k: KernelLowering, op: smem.AllocOp) -> None:
    t: smem.BufferType = op.result.type  # type: ignore[assignment]
    if t.dtype not in ("bf16", "f16"):
        raise k.fail(f"shared buffers hold bf16 or f16 tiles, got {t}")
    if _has_panels(op.result):
        if len(t.dims) != 2 or t.layout.data != "swizzle":
            raise k.fail(f"a buffer the TMA or wgmma reads is a 2-D tile with layout=swizzle, got {t}")
        if (2 * t.dims[1]) % PANEL:
            raise k.fail(f"a swizzled tile's rows are whole 128-byte panels, got {t}")
        stage_bytes = t.bytes() // t.stages.data
        rows_axis, cols_axis = t.axis_names
        k.vals[op.result] = Buffer(k.reserve(t.bytes(), 1024), t, rows_axis, cols_axis, t.dims[0], t.dims[1], PANEL, stage_bytes, True)
        return
    if t.layout.data == "swizzle":
        raise k.fail(f"a swizzled buffer filled by cp.async is lowered only in a GEMM's stream pipeline for now; use layout=pad8 ({t})")
    *lead, cols_axis = t.axis_names
    big = [a for a in lead if t.shape[a] > 1]
    if len(big) > 1:
        raise k.fail(f"a buffer has one axis of rows (and its columns), got {t}")
    rows_axis = big[0] if big else lead[-1]
    rows, cols = t.shape[rows_axis], t.shape[cols_axis]
    if cols % 8:
        raise k.fail(f"a buffer's rows must be a multiple of 8 elements (16 bytes), got {cols}")
    row_bytes = 2 * cols + (16 if t.layout.data == "pad8" else 0)
    base = k.reserve(t.stages.data * rows * row_bytes, 128)
    k.vals[op.result] = Buffer(base, t, rows_axis, cols_axis, rows, cols, row_bytes, rows * row_bytes, False)


@lowers(smem.CopyOp)
def _copy(k: KernelLowering, op: smem.CopyOp) -> None:
    cp_async_copy(k, op, None)


def cp_async_copy(k: KernelLowering, op: smem.CopyOp, guard: SSAValue | None) -> None:
    g: Global = k.vals[op.source]
    buf: Buffer = k.vals[op.dest]
    gt = g.type
    last = gt.axis_names[-1]
    col_off = op.offsets[-1].owner
    if buf.cols_axis != last or buf.cols != gt.shape[last] or not (isinstance(col_off, arith.ConstantOp) and col_off.value.value.data == 0):  # type: ignore[union-attr]
        raise k.fail(f"a copy into {buf.type} takes whole rows of {gt} (its last axis from 0)")
    chunks = buf.cols // 8
    if k.nthreads % chunks:
        raise k.fail(f"{k.nthreads} threads cannot share rows of {chunks} 16-byte chunks")
    per_pass = k.nthreads // chunks
    passes = -(-buf.rows // per_pass)
    row_t = k.once(("row_t", chunks), lambda: k.op2(P.DivOp, "u32", k.tid, chunks))
    chunk_t = k.once(("chunk_t", chunks), lambda: k.op2(P.RemOp, "u32", k.tid, chunks))
    strides = g.strides
    d_rows = gt.axis_names.index(buf.rows_axis)
    # this thread's first element: the tile's origin plus its row and chunk
    lin = None
    for a, o in zip(gt.axis_names, op.offsets):
        if a == last:
            continue
        term = k.mul(k.index(o), strides[a])
        lin = term if lin is None else k.add(lin, term)
    thread = k.once(("copy_elem", strides[buf.rows_axis], chunks), lambda: k.add(k.mul(row_t, strides[buf.rows_axis]), k.mul(chunk_t, 8)))
    elem = thread if lin is None else k.add(lin, thread)
    assert g.ptr is not None
    src = k.wide_address(g.ptr, elem, g.esize)
    dst_lane = k.once(("copy_dst", buf.row_bytes, chunks), lambda: k.add(k.mul(row_t, buf.row_bytes), k.mul(chunk_t, 16)))
    dst = k.add(k.stage_addr(buf, op.stage), dst_lane)
    # rows past the global's edge read nothing (zeros); a tile wholly past it is not copied
    extent = gt.dims[d_rows]
    row_off = op.offsets[d_rows]
    if not k.provably_inside(row_off, extent):
        guard = k.both(guard, k.setp("lt", k.index(row_off), extent))
    row_pos = k.add(k.index(row_off), row_t) if extent % buf.rows else None
    for p in range(passes):
        pred = guard
        if (p + 1) * per_pass > buf.rows:  # a last pass that not every thread has a row in
            pred = k.both(pred, k.setp("lt", row_t, buf.rows - p * per_pass))
        src_off = p * per_pass * strides[buf.rows_axis] * g.esize
        dst_off = p * per_pass * buf.row_bytes
        if row_pos is None:
            k.emit(T.CpAsyncOp(dst, src, 16, dst_offset=dst_off, src_offset=src_off, guard=pred))
            continue
        inside = k.setp("lt", row_pos, extent - p * per_pass)
        size = k.r(P.SelpOp("b32", k.u32(16), k.u32(0), inside))
        at = k.r(P.SelpOp("b64", k.add64(src, src_off), g.ptr, inside))
        k.emit(T.CpAsyncOp(dst, at, 16, dst_offset=dst_off, src_size=size, guard=pred))


@lowers(smem.CommitOp)
def _commit(k: KernelLowering, op: smem.CommitOp) -> None:
    k.emit(T.CpAsyncCommitGroupOp())


@lowers(smem.WaitOp)
def _wait(k: KernelLowering, op: smem.WaitOp) -> None:
    k.emit(T.CpAsyncWaitGroupOp(op.pending.value.data))


@lowers(smem.BarrierOp)
def _barrier(k: KernelLowering, op: smem.BarrierOp) -> None:
    k.emit(P.BarSyncOp(0))
