"""Accumulators out: straight to global memory, or into shared memory for a TMA store.

- `reg.store`: each lane's pairs of values (rounded with `cvt.rn.bf16x2.f32`, or as they
  are for an f32 output) go to global memory from one base register per lane, the value's
  place an immediate; rows (columns) past the global's edge are not stored where the
  extent is not a whole number of tiles (one predicate per 8 rows, per 8 columns).
- `reg.stmatrix`: each warp's 16 rows, rounded, into a 128-byte swizzled panel: one
  `stmatrix.x4` per two 8-column tiles (the rows 0-7 and 8-15 of each); lane l gives the
  address of row l mod 8 of matrix l / 8.
"""

from __future__ import annotations

from napkin_ir.dialects import hbm, reg
from napkin_ir.dialects.ptx import ops as P
from napkin_ir.dialects.ptx import tensor_ops as T
from napkin_ir.lowering.ptx_rules.context import PANEL, Buffer, Global, KernelLowering, lowers


@lowers(reg.StoreOp)
def _store(k: KernelLowering, op: reg.StoreOp) -> None:
    t: reg.FragType = op.value.type  # type: ignore[assignment]
    g: Global = k.vals[op.dest]
    gt = g.type
    if g.ptr is None:
        raise k.fail(f"a store to {gt}, which the TMA also writes, has no lowering")
    x = k.frag(op.value)
    r_axis, c_axis = t.axis_names
    strides = g.strides
    if strides[c_axis] != 1:
        raise k.fail(f"the fragment's columns ({c_axis}) must be the last axis of {gt}")
    if gt.shape[c_axis] % 2:
        raise k.fail(f"the output's rows must have an even length, got {gt.shape[c_axis]}")
    offsets = dict(zip(gt.axis_names, op.offsets))
    tiles = {a: t.shape[a] * k.warps.get(a, 1) for a in (r_axis, c_axis)}
    lin = None
    for a, o in offsets.items():
        term = k.mul(k.index(o), strides[a])
        lin = term if lin is None else k.add(lin, term)
    row, col = k.lane_row, k.mul(k.lane_pair, 2)
    w = k.warp_place(r_axis, t.shape[r_axis])
    row = row if w is None else k.add(row, w)
    w = k.warp_place(c_axis, t.shape[c_axis])
    col = col if w is None else k.add(col, w)
    elem = k.add(lin, k.add(k.mul(row, strides[r_axis]), col))  # type: ignore[arg-type]
    assert g.ptr is not None
    base = k.wide_address(g.ptr, elem, g.esize)
    # how many rows (columns) lie between this lane's first and the edge, where a tile may cross it
    rooms = {}
    for axis, lane_at in ((r_axis, row), (c_axis, col)):
        extent = gt.shape[axis]
        if extent % tiles[axis] or not k.provably_inside(offsets[axis], extent):
            rooms[axis] = k.op2(P.SubOp, "s32", k.s32(extent), k.add(k.index(offsets[axis]), lane_at))
    nt = t.dims[1] // 8
    col_ok = {dc: k.setp("gt", rooms[c_axis], dc) for dc in range(0, t.dims[1], 8)} if c_axis in rooms else {}
    for tm in range(t.dims[0] // 16):
        for h in range(2):
            dr = 16 * tm + 8 * h
            row_ok = k.setp("gt", rooms[r_axis], dr) if r_axis in rooms else None
            for tn in range(nt):
                i = 4 * (tm * nt + tn) + 2 * h
                inside = k.both(row_ok, col_ok.get(8 * tn))
                off = (dr * strides[r_axis] + 8 * tn) * g.esize
                if gt.dtype == "f32":
                    k.emit(P.StOp("global", "f32", base, [x[i], x[i + 1]], offset=off, guard=inside))
                else:
                    k.emit(P.StOp("global", "b32", base, [k.pack(gt.dtype, x[i], x[i + 1])], offset=off, guard=inside))


@lowers(reg.StmatrixOp)
def _stmatrix(k: KernelLowering, op: reg.StmatrixOp) -> None:
    t: reg.FragType = op.value.type  # type: ignore[assignment]
    buf: Buffer = k.vals[op.dest]
    rows_axis, cols = t.axis_names
    if t.dims[0] != 16 or buf.cols * 2 != PANEL or not buf.panels:
        raise k.fail(f"stmatrix writes wgmma accumulators (16 rows a warp) into one 128-byte swizzled panel, got {t} into {buf.type}")
    c0 = hbm.parse_labels(op.at).get(cols, 0)
    x = k.frag(op.value)
    dt = buf.type.dtype
    lane = k.lane
    warp_rows = k.warp_place(rows_axis, 16)

    def make_row():
        matrix = k.op2(P.ShrOp, "u32", lane, 3)
        row = k.add(k.op2(P.AndOp, "b32", lane, 7), k.mul(k.op2(P.AndOp, "b32", matrix, 1), 8))
        return k.mul(row if warp_rows is None else k.add(row, warp_rows), PANEL)

    row_bytes = k.once(("stmatrix_row",), make_row)
    swz = k.once(("stmatrix_swizzle",), lambda: k.op2(P.AndOp, "b32", lane, 7))  # row mod 8: the XOR of the 16-byte chunks
    half = k.once(("stmatrix_half",), lambda: k.op2(P.ShrOp, "u32", lane, 4))  # matrices 2, 3: the second 8-column tile
    row_addr = k.add(k.stage_addr(buf, op.stage), row_bytes)
    for chunk in range(0, buf.cols // 8, 2):
        tn = c0 // 8 + chunk
        col_chunk = k.op2(P.XorOp, "b32", k.add(half, chunk), swz)
        addr = k.add(row_addr, k.op2(P.ShlOp, "b32", col_chunk, 4))
        regs = [k.pack(dt, x[4 * n + 2 * h], x[4 * n + 2 * h + 1]) for n in (tn, tn + 1) for h in (0, 1)]
        k.emit(T.StmatrixOp(addr, regs))
