"""Accumulators out: straight to global memory, or into shared memory for a TMA store.

- `reg.store {accumulate}`: each value added to the f32 global with `red.global.add.f32`
  (the blocks that split a contraction each add their part), otherwise as below. In a
  kernel whose sums are ordered (`hbm.ordered_sums`), a block waits for its turn instead:
  a counter per output tile (a zero-initialised `.global` array of the module) holds the
  part whose turn it is; the block's first consumer warp spins on it (`ld.acquire.gpu`),
  the block writes its values (the first part) or adds them to what is there
  (`ld.global.cg`, the parts before it), fences, and passes the turn on (`st.release.gpu`;
  the last part sets it back to zero for the next launch).
- `reg.store {accumulate}` into a 16-bit global: each part writes its f32 values to its own
  slice of a `.global` scratch of the module, and the warp that arrives last at its piece of
  the tile (`atom.acq_rel.gpu` on a counter per tile and warp) reads every part back, adds
  them in the parts' order, rounds the sum into the global and sets the counter back to
  zero (`_sum_in_the_last`).
- `reg.store`: a 16-bit output whose fragment rows are whole 128-byte lines goes through
  shared memory and leaves in whole lines (`_store_through_shared`); otherwise each lane's
  pairs of values (rounded with `cvt.rn.bf16x2.f32`, or as they are for an f32 output) go
  to global memory from one base register per lane, the value's place an immediate. Rows
  (columns) past the global's edge are not stored where a tile may cross it. A warp's
  place along a `reg.warps` axis its fragment lacks (a query head of a group) moves its
  base: each row is stored at its own place along every axis.
- `reg.store` of a fragment whose rows are the global's last axis (a product computed
  transposed): each value on its own, at its place (`_store_transposed`).
- `reg.store` of a `line` fragment: each lane's 8 values of every span of columns of a
  row, rounded and packed (or as they are, for an f32 output), with one 16-byte
  `st.global.v4` (two for f32) from one base register per lane (at its row among the
  256 / span the warp holds at a time, and its place in the row), the row and the span
  immediates; rows (spans) past the global's edge are not stored. Of a `line` fragment of
  one axis (a row's sum or max), the first lane of each row stores the row's value; of a
  `line_col` fragment (a sum down the columns), the lanes of the first row slot store
  their 8 columns of every span, 16 bytes at a time.
- `reg.store` of a `row` fragment (attention's log-sum-exp): the first lane of each quad
  stores the values of its two rows of every 16 (the quad's other lanes hold the same),
  rows past the global's edge not stored.
- `reg.write`: each lane's f32 values into a stage of 128-byte swizzled panels (a tile a
  TMA reduce-add takes), one `st.shared.f32` each at its place by axis name.
- `reg.stmatrix`: each warp's 16 rows, rounded, into a 128-byte swizzled panel: one
  `stmatrix.x4` per two 8-column tiles (the rows 0-7 and 8-15 of each); lane l gives the
  address of row l mod 8 of matrix l / 8. A warp that holds one place of an axis its
  fragment lacks (a query head of a group) writes the rows of that place.
"""

from __future__ import annotations

import math

from xdsl.ir import SSAValue

from napkin_ir.dialects import hbm, reg
from napkin_ir.dialects.ptx import ops as P
from napkin_ir.dialects.ptx import tensor_ops as T
from napkin_ir.dialects.ptx.registers import RegType
from napkin_ir.lowering.ptx_rules.context import B32, B64, F32, PANEL, Buffer, Global, KernelLowering, lowers
from napkin_ir.lowering.ptx_rules.kernel import consumers_meet
from napkin_ir.target import dtype


@lowers(reg.StoreOp)
def _store(k: KernelLowering, op: reg.StoreOp) -> None:
    t: reg.FragType = op.value.type  # type: ignore[assignment]
    g: Global = k.vals[op.dest]
    gt = g.type
    if g.ptr is None:
        raise k.fail(f"a store to {gt}, which the TMA also writes, has no lowering")
    x = k.frag(op.value)
    if t.role.data == "line":
        _store_lines(k, op, x)
        return
    if t.role.data == "line_col":
        _store_line_cols(k, op, x)
        return
    if t.role.data == "row":
        _store_rows(k, op, x)
        return
    r_axis, c_axis = t.axis_names
    strides = g.strides
    if strides[r_axis] == 1 and strides[c_axis] != 1:
        if op.accumulate is not None and k.kernel.ordered_sums is not None:
            raise k.fail(f"accumulators stored transposed into {gt} are added value by value; an ordered sum of them is not lowered")
        _store_transposed(k, op, x)
        return
    if strides[c_axis] != 1:
        raise k.fail(f"the fragment's columns ({c_axis}) or its rows ({r_axis}) must be the last axis of {gt}")
    if gt.shape[c_axis] % 2:
        raise k.fail(f"the output's rows must have an even length, got {gt.shape[c_axis]}")
    tiles = _tile_sizes(k, t)
    lin, held_ok = k.held_element(g, t, op.offsets)
    row, col = _lane_place(k, t)
    assert g.ptr is not None
    d = dtype(gt.dtype)
    rounded = op.accumulate is not None and gt.dtype != "f32"  # a split sum, rounded into `gt` by the last part to arrive
    if d.is_half and not rounded and gt.shape[c_axis] % d.elements(16) == 0 and d.size(t.dims[1]) % 128 == 0 \
            and _staging_room(k, t, gt, t.dims[0] * d.size(t.dims[1])):
        _store_through_shared(k, op, x, lin, held_ok)
        return
    elem = k.add(lin, k.add(k.mul(row, strides[r_axis]), col))  # type: ignore[arg-type]
    base = k.wide_address(g.ptr, elem, g.esize)
    # how many rows (columns) lie between this lane's first and the edge, where a tile may cross it
    rooms = k.rooms(g, op.offsets, {r_axis: row, c_axis: col}, tiles)
    nt = t.dims[1] // 8
    col_ok = {dc: k.setp("gt", rooms[c_axis], dc) for dc in range(0, t.dims[1], 8)} if c_axis in rooms else {}
    pairs = []  # (the pair's first value in x, its byte offset from base, whether it lies inside)
    for tm in range(t.dims[0] // 16):
        for h in range(2):
            dr = 16 * tm + 8 * h
            row_ok = k.both(held_ok, k.setp("gt", rooms[r_axis], dr) if r_axis in rooms else None)
            for tn in range(nt):
                pairs.append((4 * (tm * nt + tn) + 2 * h, (dr * strides[r_axis] + 8 * tn) * g.esize, k.both(row_ok, col_ok.get(8 * tn))))
    if rounded and k.split_cluster > 1:
        _sum_in_the_cluster(k, g, x, base, pairs)
        return
    if rounded:
        _sum_in_the_last(k, op, g, x, elem, base, pairs)
        return
    turn = _wait_turn(k) if op.accumulate is not None and k.kernel.ordered_sums is not None else None
    for i, off, inside in pairs:
        if turn is not None:  # this block's turn: the first part written, the others added
            old = k.emit(P.LdOp("global", "f32", base, [F32, F32], offset=off, cache="cg", guard=k.both(inside, turn.later)))
            sums = [k.r(P.SelpOp("f32", x[i + n], k.r(P.AddOp("f32", old.dsts[n], x[i + n])), turn.first)) for n in range(2)]
            k.emit(P.StOp("global", "f32", base, sums, offset=off, guard=inside))
        elif op.accumulate is not None and k.panels:  # sm_90: the pair added atomically at once
            k.emit(P.RedOp("global", "f32", base, [x[i], x[i + 1]], offset=off, guard=inside))
        elif op.accumulate is not None:  # a part of a split sum: added, each value atomically
            for n in range(2):
                k.emit(P.RedOp("global", "f32", base, x[i + n], offset=off + 4 * n, guard=inside))
        elif gt.dtype == "f32":
            k.emit(P.StOp("global", "f32", base, [x[i], x[i + 1]], offset=off, guard=inside))
        else:
            k.emit(P.StOp("global", "b32", base, [k.pack(gt.dtype, x[i], x[i + 1])], offset=off, guard=inside))
    if turn is not None:
        turn.pass_on()


# the values (pairs of f32) the last part loads together, of all the parts, before it adds them:
# its reads wait on the L2's latency, so the more in flight the sooner it is done. 32 (64
# registers, free once the part's own values are written) against 8: 0.98x-0.94x the time of
# split GEMMs of 64-row tiles at decode sizes (1x8192x8192, 1x4096x14336, 64x4096x4096;
# H200, 2026-11-29, CUDA graphs), no slower elsewhere, and 64 no faster than 32
LOADS_IN_FLIGHT = 32


def _sum_in_the_last(k: KernelLowering, op: reg.StoreOp, g: Global, x: list, elem: SSAValue, base: SSAValue,
                     pairs: list[tuple[int, int, SSAValue | None]]) -> None:
    """A split sum rounded into the 16-bit `g`: each part writes its f32 values to its own
    slice of the module's scratch (`.global` `<kernel>_<out>_parts`, the parts' sums side by
    side, each as large as `g` in f32), and each warp then counts its arrival at its piece
    of the tile (a counter per tile and warp, `<kernel>_<out>_arrivals`, zero at load).
    The warp that arrives last (it finds the count of the others) reads every part's values
    back (its own as it wrote them), adds them in the parts' order (the same bits whichever
    part comes last), rounds the sum into `g` and sets the counter back to zero for the next
    launch. No part waits for another, and nothing is zeroed before the launch."""
    tile, n_tiles, part, parts = _tile_and_part(k)
    size, warps = math.prod(g.type.shape.values()), k.consumer_threads // 32
    where = op.dest.name_hint or "out"
    first = k.wide_address(k.module_array(f"{k.name}_{where}_parts", 4 * size * parts, 16), elem, 4)  # in the first part's slice
    mine = k.r(P.AddOp("u64", first, k.r(P.CvtOp("u64", "u32", [k.mul(part, 4 * size)], B64)), result=B64))
    for i, off, inside in pairs:
        k.emit(P.StOp("global", "f32", mine, [x[i], x[i + 1]], offset=off // g.esize * 4, guard=inside))
    k.emit(T.FenceOp("acq_rel.gpu"))  # this lane's values are in before its warp is counted
    k.emit(P.BarWarpSyncOp())
    counter = k.wide_address(k.module_array(f"{k.name}_{where}_arrivals", 4 * n_tiles * warps, 4),
                             k.add(k.mul(tile, warps), k.warp_number()), 4)
    leader = k.setp("eq", k.lane, 0, "u32")
    seen = k.emit(P.AtomOp("global", "u32", counter, k.u32(1), B32, guard=leader, sem="acq_rel.gpu")).dsts[0]
    last = k.setp("eq", k.r(P.ShflSyncOp("idx", seen, 0)), parts - 1, "u32")
    k.emit(P.BarWarpSyncOp())  # the lanes' reads after the first lane's count (which acquired the other parts' values)
    k.emit(T.FenceOp("acq_rel.gpu"))
    step = max(1, LOADS_IN_FLIGHT // parts)
    for c in range(0, len(pairs), step):  # every part's values, this warp's own among them (as it wrote them)
        chunk = [(i, off, k.both(inside, last)) for i, off, inside in pairs[c:c + step]]
        loaded = [[k.emit(P.LdOp("global", "f32", first, [F32, F32], offset=j * 4 * size + off // g.esize * 4, cache="cg",
                                 guard=guard)).dsts for j in range(parts)] for _, off, guard in chunk]
        for (i, off, guard), values in zip(chunk, loaded):
            _store_sum(k, g, base, values, off, guard)
    k.emit(P.StOp("global", "u32", counter, [k.u32(0)], guard=k.both(leader, last)))


def _sum_in_the_cluster(k: KernelLowering, g: Global, x: list, base: SSAValue, pairs: list[tuple[int, int, SSAValue | None]]) -> None:
    """A split sum rounded into the 16-bit `g` by the parts of its tile, a cluster (a
    block's rank its part): the thread's pairs of values are shared out among the parts,
    pair p to part p mod parts. Each part sends every pair it does not add up to the part
    that does (`mapa`, `st.shared::cluster`), into a buffer of that part's shared memory
    with a slot for each other part, each thread's values side by side. The cluster meets
    (release, acquire); each part then adds its own pairs in the parts' order (the same
    bits as `_sum_in_the_last`), from its registers and its slots, rounds them and stores
    them. Nothing goes through global memory but the output, and no part waits for more
    than the cluster's meeting."""
    if k.exchanged:
        raise k.fail("the parts of a cluster meet once, to sum one output; this kernel rounds split sums into two")
    k.exchanged = True
    parts, threads = k.split_cluster, k.consumer_threads
    rank = k.rank
    assert rank is not None  # kernel._join_cluster
    share = -(-len(pairs) // parts)  # pairs a part adds up
    slot_bytes = share * threads * 8  # one other part's pairs for it, a thread's pairs side by side
    mine = k.add(k.reserve((parts - 1) * slot_bytes, 16), k.mul(k.op2(P.SubOp, "u32", k.tid, 128), 8))  # warpgroup 0 produces
    owns = [k.setp("eq", rank, o, "u32") for o in range(parts)]
    others = [k.setp("ne", rank, o, "u32") for o in range(parts)]
    # this part's slot in part o's buffer: (rank - o - 1) mod parts, the parts after o first
    sent = [k.r(T.MapaOp(k.add(mine, k.mul(k.op2(P.RemOp, "u32", k.add(rank, parts - o - 1), parts), slot_bytes)), k.u32(o)))
            for o in range(parts)]
    for p, (i, _, _) in enumerate(pairs):
        o = p % parts
        k.emit(P.StOp("shared::cluster", "f32", sent[o], [x[i], x[i + 1]], offset=(p // parts) * threads * 8, guard=others[o]))
    k.emit(T.BarrierClusterOp("arrive"))  # release: the sums sent are seen by the parts that acquire
    k.emit(T.BarrierClusterOp("wait"))
    for p, (i, off, inside) in enumerate(pairs):
        o, at = p % parts, (p // parts) * threads * 8
        values = [(x[i], x[i + 1]) if j == o else
                  k.emit(P.LdOp("shared", "f32", mine, [F32, F32], offset=((j - o - 1) % parts) * slot_bytes + at, guard=owns[o])).dsts
                  for j in range(parts)]
        _store_sum(k, g, base, values, off, inside, owns[o])


def _store_sum(k: KernelLowering, g: Global, base: SSAValue, values: list, off: int, guard: SSAValue | None,
               also: SSAValue | None = None) -> None:
    """One pair of a split sum: each part's pair of f32 values (`values`, in the parts'
    order) added in that order, so that the same bits come whichever way the parts met,
    rounded into the 16-bit `g` and stored at `off` from `base` where `guard` and `also`
    (None: always) hold."""
    total = []
    for n in range(2):
        acc = values[0][n]
        for v in values[1:]:
            acc = k.r(P.AddOp("f32", acc, v[n]))
        total.append(acc)
    k.emit(P.StOp("global", "b32", base, [k.pack(g.type.dtype, *total)], offset=off, guard=k.both(guard, also)))


class _Turn:
    """A block's turn to add its part of an ordered sum: `first` holds where it is the first
    part; `pass_on()` hands the turn to the next part once every value is in."""

    def __init__(self, k: KernelLowering, counter: SSAValue, part: SSAValue, parts: int, leader: SSAValue):
        self.k, self.counter, self.part, self.parts, self.leader = k, counter, part, parts, leader
        self.first = k.setp("eq", part, 0, "u32")
        self.later = k.setp("ne", part, 0, "u32")  # a part after the first: it adds to what the parts before left

    def pass_on(self) -> None:
        k = self.k
        k.emit(T.FenceOp("acq_rel.gpu"))  # this thread's values are in before the turn moves
        consumers_meet(k)
        nxt = k.r(P.SelpOp("b32", k.u32(0), k.add(self.part, 1), k.setp("eq", self.part, self.parts - 1, "u32")))
        k.emit(P.StOp("global", "u32", self.counter, [nxt], guard=self.leader, sem="release.gpu"))


def _tile_and_part(k: KernelLowering) -> tuple[SSAValue, int, SSAValue, int]:
    """(this block's output tile, how many there are, its part of the tile's sum, how many
    parts): its place among the grid axes that are not split, and among the split ones."""
    kernel = k.kernel
    counts, tiles = kernel.grid_shape(), kernel.grid_tiles
    split = kernel.split_axes()
    place = {a: k.op2(P.DivOp, "u32", k.vals[k.origin_args[a]], tiles[a]) for a in tiles}
    tile, part, parts, n_tiles = k.u32(0), k.u32(0), 1, 1
    for a in tiles:
        if a in split:
            part, parts = k.add(k.mul(part, counts[a]), place[a]), parts * counts[a]
        else:
            tile, n_tiles = k.add(k.mul(tile, counts[a]), place[a]), n_tiles * counts[a]
    return tile, n_tiles, part, parts


def _wait_turn(k: KernelLowering) -> _Turn:
    """Wait until this block's part of the ordered sum may go in: the counter of its output
    tile (the tile's place among the non-split grid axes) reaches its part (its place among
    the split axes, launched last)."""
    tile, n_tiles, part, parts = _tile_and_part(k)
    turns = k.module_array(f"{k.name}_turns", 4 * n_tiles, 4)
    counter = k.r(P.AddOp("u64", turns, k.r(P.CvtOp("u64", "u32", [k.mul(tile, 4)], B64))))
    first_warp = k.setp("eq", k.warp_number(), 0, "u32")  # spins as a whole (its lanes read one word): no divergence
    leader = k.both(first_warp, k.setp("eq", k.lane, 0, "u32"))
    assert leader is not None
    spin, done = k.branch(first_warp)
    k.cur = spin
    seen = k.r(P.LdOp("global", "u32", counter, [B32], sem="acquire.gpu"))  # strong: read anew each trip
    k.emit(P.CondBraOp(k.setp("ne", seen, part, "u32"), spin, [], done, []))
    k.cur = done
    k.emit(T.FenceOp("acq_rel.gpu"))  # the parts before this one, seen by the leader, before its block reads them
    consumers_meet(k)
    return _Turn(k, counter, part, parts, leader)


def _store_transposed(k: KernelLowering, op: reg.StoreOp, x: list) -> None:
    """A fragment whose rows are the global's last axis (a product computed transposed, so
    that its A is a tile computed in registers: the MLP's dW1 [k, h] as h x k): each value
    on its own, rounded (or as it is, for an f32 output), at its place; the 8 lanes that
    share a column hold 8 consecutive rows, so each store writes 16 (32) contiguous bytes
    four times; with `accumulate`, each is added (`red.global.add.f32`). Rows (columns)
    past the global's edge are not stored."""
    t: reg.FragType = op.value.type  # type: ignore[assignment]
    g: Global = k.vals[op.dest]
    gt, strides = g.type, g.strides
    assert g.ptr is not None
    r_axis, c_axis = t.axis_names
    lin, held_ok = k.held_element(g, t, op.offsets)
    row, col = _lane_place(k, t)
    base = k.wide_address(g.ptr, k.add(lin, k.add(row, k.mul(col, strides[c_axis]))), g.esize)  # type: ignore[arg-type]
    rooms = k.rooms(g, op.offsets, {r_axis: row, c_axis: col}, _tile_sizes(k, t))
    nt = t.dims[1] // 8
    col_ok = {dc: k.setp("gt", rooms[c_axis], dc) for dc in range(0, t.dims[1]) if dc % 8 < 2} if c_axis in rooms else {}
    for tm in range(t.dims[0] // 16):
        for h in range(2):
            dr = 16 * tm + 8 * h
            row_ok = k.both(held_ok, k.setp("gt", rooms[r_axis], dr) if r_axis in rooms else None)
            for tn in range(nt):
                for e in range(2):
                    dc = 8 * tn + e
                    v = x[4 * (tm * nt + tn) + 2 * h + e]
                    off, guard = (dr + dc * strides[c_axis]) * g.esize, k.both(row_ok, col_ok.get(dc))
                    if op.accumulate is not None:  # a part of a split sum: added
                        k.emit(P.RedOp("global", "f32", base, v, offset=off, guard=guard))
                        continue
                    v = v if gt.dtype == "f32" else k.r(P.CvtOp(gt.dtype, "f32", [v], RegType(gt.dtype), mods="rn"))
                    k.emit(P.StOp("global", "f32" if gt.dtype == "f32" else "b16", base, [v], offset=off, guard=guard))


@lowers(reg.WriteOp)
def _write(k: KernelLowering, op: reg.WriteOp) -> None:
    """Each lane's f32 values into a stage of 128-byte swizzled panels (32 values a panel
    row), one `st.shared.f32` each at its place by axis name: byte 4 c of row r of a panel
    lies at 128 r + (4 c XOR 16 (r mod 8)). The values whose places differ by 8 rows and
    whole panels share a base register (the rest is an immediate): per lane one base for
    each place mod 8 rows and mod 32 columns it holds, its offset in a stage computed once
    where the consumers start. dQ^T's lanes (8 head dims by 4 queries a store) then fall in
    32 distinct banks."""
    t: reg.FragType = op.value.type  # type: ignore[assignment]
    buf: Buffer = k.vals[op.dest]
    x = k.frag(op.value)
    if not buf.panels or buf.element.size(32) != PANEL:
        raise k.fail(f"reg.write writes f32 values into 128-byte swizzled panels, got {buf.type}")
    r_axis, c_axis = t.axis_names
    stage = k.stage_addr(buf, op.stage)
    bases: dict[tuple[int, int], SSAValue] = {}

    def offset(dr: int, dc: int) -> SSAValue:
        """Where in a stage the lane's place moved dr (< 8) rows and dc (< 32) columns lies:
        its panel, then its byte in the panel's swizzled rows (`placed`)."""
        place = dict(zip((r_axis, c_axis), k.once(("lane_place", t), lambda: _lane_place(k, t))))  # type: ignore[arg-type, return-value]
        r, c = k.add(place[buf.rows_axis], dr), k.add(place[buf.cols_axis], dc)  # along the buffer's
        panel = k.mul(k.op2(P.ShrOp, "u32", c, 5), buf.rows * PANEL)
        return k.add(panel, k.placed(r, k.mul(k.op2(P.AndOp, "b32", c, 31), 4), PANEL, True))

    def base(dr: int, dc: int) -> SSAValue:
        """The address of the lane's place moved dr rows and dc columns in this stage: the
        offset computed once, where the consumers start (a tile's writes then wait on no
        arithmetic of their own), plus the stage's address."""
        if (dr, dc) not in bases:
            key = ("stage_write", t, buf.rows, buf.rows_axis, buf.cols_axis, dr, dc)
            bases[(dr, dc)] = k.add(stage, k.once(key, lambda: offset(dr, dc)))
        return bases[(dr, dc)]

    nt = t.dims[1] // 8
    for tm in range(t.dims[0] // 16):
        for h in range(2):
            for tn in range(nt):
                for e in range(2):
                    moved = {r_axis: 16 * tm + 8 * h, c_axis: 8 * tn + e}
                    dr, dc = moved[buf.rows_axis], moved[buf.cols_axis]
                    imm = (dr - dr % 8) * PANEL + (dc - dc % 32) // 32 * buf.rows * PANEL
                    k.emit(P.StOp("shared", "f32", base(dr % 8, dc % 32), [x[4 * (tm * nt + tn) + 2 * h + e]], offset=imm))


def _tile_sizes(k: KernelLowering, t: reg.FragType) -> dict[str, int]:
    """The block's tile along a fragment's rows and columns: the warps' parts together."""
    r_axis, c_axis = t.axis_names
    if t.split.data > 1:  # `split` warps of 16 rows each, each further `split` warps the next columns
        return {r_axis: 16 * t.split.data, c_axis: t.shape[c_axis] * (k.consumer_threads // 32 // t.split.data)}
    return {r_axis: t.shape[r_axis] * k.warps.get(r_axis, 1), c_axis: t.shape[c_axis] * k.warps.get(c_axis, 1)}


def _lane_place(k: KernelLowering, t: reg.FragType) -> tuple[SSAValue, SSAValue]:
    """This lane's first row and column of accumulators in the block's tile: its place in
    an m16n8 tile (lane / 4, 2 (lane mod 4)) moved to its warp's place along each axis."""
    r_axis, c_axis = t.axis_names
    row, col = k.lane_row, k.mul(k.lane_pair, 2)
    if t.split.data > 1:  # 16 rows a warp of `split`, each further `split` warps the next columns (`FragType.split_place`)
        warp, split = k.warp_number(), t.split.data
        grouped = k.consumer_threads // 32 > split
        row = k.add(row, k.mul(k.op2(P.RemOp, "u32", warp, split) if grouped else warp, 16))
        if grouped:
            col = k.add(col, k.mul(k.op2(P.DivOp, "u32", warp, split), t.shape[c_axis]))
        return row, col
    w = k.warp_place(r_axis, t.shape[r_axis])
    row = row if w is None else k.add(row, w)
    w = k.warp_place(c_axis, t.shape[c_axis])
    col = col if w is None else k.add(col, w)
    return row, col


def _store_rows(k: KernelLowering, op: reg.StoreOp, x: list) -> None:
    """A `row` fragment: the 4 lanes of a quad hold the same rows (g and g + 8 of each 16),
    so the first of them stores each row's value; rows past the global's edge, or of a
    place past it along an axis the warp holds, are not stored."""
    t: reg.FragType = op.value.type  # type: ignore[assignment]
    g: Global = k.vals[op.dest]
    gt, strides = g.type, g.strides
    assert g.ptr is not None
    (r_axis,) = t.axis_names
    lin, held_ok = k.held_element(g, t, op.offsets)
    row = k.lane_row
    w = k.warp_place(r_axis, t.dims[0])
    row = row if w is None else k.add(row, w)
    quad_first = k.once(("lane_pair_is_0",), lambda: k.setp("eq", k.lane_pair, 0, "u32"))
    rooms = k.rooms(g, op.offsets, {r_axis: row}, {r_axis: t.dims[0] * k.warps.get(r_axis, 1)})
    base = k.wide_address(g.ptr, k.add(lin, k.mul(row, strides[r_axis])), g.esize)
    writer = k.both(quad_first, held_ok)
    for m in range(t.dims[0] // 16):
        for h in range(2):
            dr = 16 * m + 8 * h
            ok = k.both(writer, k.setp("gt", rooms[r_axis], dr) if r_axis in rooms else None)
            v = x[2 * m + h]
            v = v if gt.dtype == "f32" else k.r(P.CvtOp(gt.dtype, "f32", [v], RegType(gt.dtype), mods="rn"))
            k.emit(P.StOp("global", "f32" if gt.dtype == "f32" else "b16", base, [v], offset=dr * strides[r_axis] * g.esize, guard=ok))


def _lane_cols(k: KernelLowering, t: reg.FragType, place):
    """The lane's first column of a `line` (`line_col`) fragment in the block's tile: 8 a
    lane of its row, past the warp's first where warps split the columns."""
    if t.lanes_a_row == 32:
        col = k.once(("line_lane_cols",), lambda: k.mul(k.lane, reg.LINE_CHUNK))
    else:
        col = k.once(("line_lane_cols", t.lanes_a_row), lambda: k.mul(place, reg.LINE_CHUNK))
    c_axis = t.axis_names[-1]
    wc = k.warp_place(c_axis, t.dims[-1])
    return col if wc is None else k.add(col, wc)


def _store_line_cols(k: KernelLowering, op: reg.StoreOp, x: list) -> None:
    """A `line_col` fragment (a sum down the columns): the lanes of the first row slot each
    store their 8 values of every span, 16 bytes (two stores of f32) at a time; spans past
    the global's edge are not stored."""
    t: reg.FragType = op.value.type  # type: ignore[assignment]
    g: Global = k.vals[op.dest]
    gt, strides = g.type, g.strides
    assert g.ptr is not None
    (c_axis,) = t.axis_names
    if strides[c_axis] != 1 or gt.shape[c_axis] % reg.LINE_CHUNK:
        raise k.fail(f"a 'line_col' fragment's columns ({c_axis}) must be the last axis of {gt}, a multiple of {reg.LINE_CHUNK} long")
    lin, held_ok = k.held_element(g, t, op.offsets)
    slot, place = k.line_lane(t)
    col = _lane_cols(k, t, place)
    first = None if slot is None else k.once(("line_slot_is_0", t.lanes_a_row), lambda: k.setp("eq", slot, 0, "u32"))
    rooms = k.rooms(g, op.offsets, {c_axis: col}, {c_axis: t.dims[0] * k.warps.get(c_axis, 1)})
    base = k.wide_address(g.ptr, k.add(lin, col), g.esize)
    span = t.span.data
    for s in range(t.dims[0] // span):
        vals = x[reg.LINE_CHUNK * s : reg.LINE_CHUNK * (s + 1)]
        ok = k.both(k.both(first, held_ok), k.setp("gt", rooms[c_axis], span * s) if c_axis in rooms else None)
        _store_chunk(k, gt.dtype, base, vals, span * s * g.esize, ok)


def _store_chunk(k: KernelLowering, dtype: str, base, vals: list, off: int, ok) -> None:
    """A lane's LINE_CHUNK (8) values of a span at `base` + `off` bytes: 16 bytes a store
    (two of f32, one of 16-bit values packed in pairs), under `ok`."""
    if dtype == "f32":
        for h in range(2):
            k.emit(P.StOp("global", "f32", base, vals[4 * h : 4 * h + 4], offset=off + 16 * h, guard=ok))
    else:
        packed = [k.pack(dtype, vals[2 * i], vals[2 * i + 1]) for i in range(4)]
        k.emit(P.StOp("global", "b32", base, packed, offset=off, guard=ok))


def _store_lines(k: KernelLowering, op: reg.StoreOp, x: list) -> None:
    t: reg.FragType = op.value.type  # type: ignore[assignment]
    g: Global = k.vals[op.dest]
    gt, strides = g.type, g.strides
    assert g.ptr is not None
    r_axis = t.axis_names[0]
    lin, held_ok = k.held_element(g, t, op.offsets)
    row = k.warp_place(r_axis, t.dims[0])
    slot, place = k.line_lane(t)
    if slot is not None:  # the lane's row among those the warp holds at a time
        row = slot if row is None else k.add(row, slot)
    step = t.rows_a_step
    if len(t.dims) == 1:  # one value per row, in each lane of the row: the row's first lane writes it
        if slot is None:
            first = k.once(("lane_is_0",), lambda: k.setp("eq", k.lane, 0, "u32"))
        else:
            first = k.once(("line_place_is_0", t.lanes_a_row), lambda: k.setp("eq", place, 0, "u32"))
        rooms = k.rooms(g, op.offsets, {r_axis: row if row is not None else k.u32(0)}, {r_axis: t.dims[0] * k.warps.get(r_axis, 1)})
        base = k.wide_address(g.ptr, lin if row is None else k.add(lin, k.mul(row, strides[r_axis])), g.esize)
        for v, r in enumerate(range(0, t.dims[0], step)):
            ok = k.both(k.both(first, held_ok), k.setp("gt", rooms[r_axis], r) if r_axis in rooms else None)
            val = x[v] if gt.dtype == "f32" else k.r(P.CvtOp(gt.dtype, "f32", [x[v]], RegType(gt.dtype), mods="rn"))
            k.emit(P.StOp("global", "f32" if gt.dtype == "f32" else "b16", base, [val], offset=r * strides[r_axis] * g.esize, guard=ok))
        return
    c_axis = t.axis_names[1]
    if strides[c_axis] != 1 or gt.shape[c_axis] % reg.LINE_CHUNK:
        raise k.fail(f"a 'line' fragment's columns ({c_axis}) must be the last axis of {gt}, a multiple of {reg.LINE_CHUNK} long")
    col = _lane_cols(k, t, place)
    lane_at = {r_axis: row if row is not None else k.u32(0), c_axis: col}
    rooms = k.rooms(g, op.offsets, lane_at, {r_axis: t.dims[0] * k.warps.get(r_axis, 1), c_axis: t.dims[1] * k.warps.get(c_axis, 1)})
    elem = k.add(lin, col) if row is None else k.add(lin, k.add(k.mul(row, strides[r_axis]), col))
    base = k.wide_address(g.ptr, elem, g.esize)
    span = t.span.data
    per = t.dims[1] // t.lanes_a_row
    spans = t.dims[1] // span
    span_ok = {s: k.setp("gt", rooms[c_axis], span * s) for s in range(spans)} if c_axis in rooms else {}
    for n, r in enumerate(range(0, t.dims[0], step)):
        row_ok = k.both(held_ok, k.setp("gt", rooms[r_axis], r) if r_axis in rooms else None)
        for s in range(spans):
            vals = x[n * per + reg.LINE_CHUNK * s : n * per + reg.LINE_CHUNK * (s + 1)]
            _store_chunk(k, gt.dtype, base, vals, (r * strides[r_axis] + span * s) * g.esize, k.both(row_ok, span_ok.get(s)))


def _staging_room(k: KernelLowering, t: reg.FragType, gt: hbm.GlobalType, region: int) -> bool:
    """Whether each consumer warp's `region` bytes fit at the start of the block's shared
    memory once the consumers are past their last reads of it. Without a producer
    warpgroup, anywhere (the region grows the block's shared memory where it must).
    Beside one, only in a block that takes one tile (a persistent block's producer is
    loading its next tiles' stages by then), for a fragment every warp holds a part of
    (not one place each of a group's heads), and only below the mbarrier rings and the
    first buffer a store role reads (its TMA may still be reading the last tile's)."""
    if not k.producer_warps:
        return True
    if k.persistent or k.held_places(t, gt.axis_names):
        return False
    end = k.staging_end if k.staging_end is not None else k.smem_bytes
    return (k.consumer_threads // 32) * region <= end


def _store_through_shared(k: KernelLowering, op: reg.StoreOp, x: list, lin, held_ok) -> None:
    """The tile through shared memory, so that it leaves in whole lines: each warp writes
    its rounded values into its own swizzled region of the block's shared memory (once
    every warp is past its last read of it: a barrier, of the consumers beside a producer
    warpgroup), then each 8 (or 16) lanes read a row's 128 (256) bytes back 16 at a time
    and store them with one `st.global.v4`, where from registers a warp would write 4
    bytes to each of 8 rows a store. A warp reads back only what it wrote: a warp's own
    barrier between (`bar.warp.sync`: its lanes' writes seen by its lanes)."""
    t: reg.FragType = op.value.type  # type: ignore[assignment]
    g: Global = k.vals[op.dest]
    r_axis, c_axis = t.axis_names
    rows, cols = t.dims
    row_bytes = dtype(g.type.dtype).size(cols)
    region = rows * row_bytes
    warps = k.consumer_threads // 32
    smem_base = k.shared_start()  # the block's buffers are done with: the region reuses them
    k.smem_bytes = max(k.smem_bytes, warps * region)
    dt, gcols = g.type.dtype, g.strides[r_axis]
    consumers_meet(k)  # every warp has read the shared memory it held before
    warp = k.warp_number() if k.producer_warps else k.op2(P.ShrOp, "u32", k.tid, 5)  # among the consumer warps
    mine = k.add(smem_base, k.mul(warp, region))
    # a lane holds rows g + 8h + 16tm (one swizzle key: rows 8 apart share it) at bytes
    # 16tn + 4t: one register per 8-column tile tn, the rows in immediates
    pair = k.mul(k.lane_pair, 4)
    nt = cols // 8
    chunk = [k.add(mine, k.placed(k.lane_row, k.add(pair, 16 * tn), row_bytes, True)) for tn in range(nt)]
    for tm in range(rows // 16):
        for tn in range(nt):
            i = 4 * (tm * nt + tn)
            for h in (0, 1):
                k.emit(P.StOp("shared", "b32", chunk[tn], [k.pack(dt, x[i + 2 * h], x[i + 2 * h + 1])], offset=(16 * tm + 8 * h) * row_bytes))
    k.emit(P.BarWarpSyncOp() if k.producer_warps else P.BarSyncOp(0))
    # read back: lane l takes chunk l mod L of row l / L, L = the lanes a row needs; reads
    # rows_per rows apart differ in their key until 8 rows on, so each of the first few
    # has its own base register and the rest are immediates from them
    lanes_row = min(row_bytes // 16, 32)
    rows_per = 32 // lanes_row
    r_l = k.op2(P.DivOp, "u32", k.lane, lanes_row)
    c_l = k.op2(P.RemOp, "u32", k.lane, lanes_row)
    variants = max(1, 8 // rows_per)
    bases = [k.add(mine, k.placed(k.add(r_l, v * rows_per), k.mul(c_l, 16), row_bytes, True)) for v in range(variants)]
    row, col = r_l, k.mul(c_l, 8)
    w = k.warp_place(r_axis, rows)
    row = row if w is None else k.add(row, w)
    w = k.warp_place(c_axis, cols)
    col = col if w is None else k.add(col, w)
    gptr = k.wide_address(g.ptr, k.add(lin, k.add(k.mul(row, gcols), col)), g.esize)  # type: ignore[arg-type]
    rooms = k.rooms(g, op.offsets, {r_axis: row, c_axis: col}, {a: t.shape[a] * k.warps.get(a, 1) for a in (r_axis, c_axis)})
    col_ok = k.setp("gt", rooms[c_axis], 0) if c_axis in rooms else None
    for it in range(rows // rows_per):
        v = it % variants
        vals = k.emit(P.LdOp("shared", "b32", bases[v], [B32] * 4, offset=(it - v) * rows_per * row_bytes)).results
        row_ok = k.both(held_ok, k.setp("gt", rooms[r_axis], it * rows_per) if r_axis in rooms else None)
        k.emit(P.StOp("global", "b32", gptr, list(vals), offset=it * rows_per * gcols * g.esize, guard=k.both(row_ok, col_ok)))


@lowers(reg.StmatrixOp)
def _stmatrix(k: KernelLowering, op: reg.StmatrixOp) -> None:
    t: reg.FragType = op.value.type  # type: ignore[assignment]
    buf: Buffer = k.vals[op.dest]
    rows_axis, cols = t.axis_names
    if t.dims[0] != 16 or buf.element.size(buf.cols) % PANEL or not buf.panels:
        raise k.fail(f"stmatrix writes wgmma accumulators (16 rows a warp) into 128-byte swizzled panels, got {t} into {buf.type}")
    if op.transposed:
        _stmatrix_transposed(k, op, t, buf)
        return
    c0 = hbm.parse_labels(op.at).get(cols, 0)
    x = k.frag(op.value)
    dt = buf.type.dtype
    lane = k.lane
    held = tuple((a, buf.row_stride(a)) for a in k.held_places(t, buf.row_axes))  # a head of a group: its positions' rows

    def make_row():  # at the entry, as every value `once` makes
        matrix = k.op2(P.ShrOp, "u32", lane, 3)
        row = k.add(k.op2(P.AndOp, "b32", lane, 7), k.mul(k.op2(P.AndOp, "b32", matrix, 1), 8))
        warp_rows = k.warp_place(rows_axis, 16)
        for a, stride in held:
            place = k.mul(k.warp_index(a), stride)
            warp_rows = place if warp_rows is None else k.add(warp_rows, place)
        return k.mul(row if warp_rows is None else k.add(row, warp_rows), PANEL)

    row_bytes = k.once(("stmatrix_row", rows_axis, held), make_row)
    swz = k.once(("stmatrix_swizzle",), lambda: k.op2(P.AndOp, "b32", lane, 7))  # row mod 8: the XOR of the 16-byte chunks
    half = k.once(("stmatrix_half",), lambda: k.op2(P.ShrOp, "u32", lane, 4))  # matrices 2, 3: the second 8-column tile
    row_addr = k.add(k.stage_addr(buf, op.stage), row_bytes)
    per_panel = PANEL // 16  # 16-byte chunks of a panel's row
    for chunk in range(0, buf.cols // 8, 2):
        tn = c0 // 8 + chunk
        panel, within = divmod(chunk, per_panel)  # panels lie `rows` rows of 128 bytes apart
        col_chunk = k.op2(P.XorOp, "b32", k.add(half, within), swz)
        addr = k.add(k.add(row_addr, panel * buf.rows * PANEL) if panel else row_addr, k.op2(P.ShlOp, "b32", col_chunk, 4))
        regs = [k.pack(dt, x[4 * n + 2 * h], x[4 * n + 2 * h + 1]) for n in (tn, tn + 1) for h in (0, 1)]
        k.emit(T.StmatrixOp(addr, regs))


def _stmatrix_transposed(k: KernelLowering, op: reg.StmatrixOp, t: reg.FragType, buf: Buffer) -> None:
    """`stmatrix.trans`: the fragment's rows (16 a warp) are the panels' columns, its
    columns the panels' rows. The warps whose rows lie in the window `at` (the buffer's
    columns from there on) write: each 8 x 8 matrix of the fragment (8 of its rows by 8 of
    its columns) lands as 8 of a panel's rows, each 8 of its columns (16 bytes, swizzled by
    the row: the row's place mod 8 is the lane's), in the panel of the warp's rows (64
    16-bit columns a panel, `rows` rows of 128 bytes apart). Matrices 0 and 1 are the
    warp's rows 0-7 and 8-15 of a column tile, 2 and 3 those of the next, as the
    non-transposed store orders them."""
    rows_axis, cols = t.axis_names
    width = buf.element.size(buf.cols)
    if width % PANEL:
        raise k.fail(f"stmatrix.trans writes 128-byte panels, got {buf.type}")
    per_panel = PANEL // buf.element.size(1)  # columns a panel
    r0 = hbm.parse_labels(op.at).get(rows_axis, 0)
    warp_rows = k.warp_place(rows_axis, 16)
    place = k.u32(0) if warp_rows is None else warp_rows
    every = r0 == 0 and buf.cols >= t.shape[rows_axis] * k.warps.get(rows_axis, 1)  # each warp's rows in the window
    if not every:
        yes, no = k.branch(k.both(k.setp("ge", place, r0, "u32"), k.setp("lt", place, r0 + buf.cols, "u32")))
        k.cur = yes
    dt = buf.type.dtype
    x = k.frag(op.value)
    lane = k.lane
    matrix = k.op2(P.ShrOp, "u32", lane, 3)
    row_in = k.op2(P.AndOp, "b32", lane, 7)  # the panel row this lane addresses, within its matrix
    local = k.op2(P.SubOp, "u32", place, k.u32(r0))
    within = local if width == PANEL else k.op2(P.AndOp, "b32", local, per_panel - 1)
    col_chunk0 = k.add(k.op2(P.ShrOp, "u32", within, 3), k.op2(P.AndOp, "b32", matrix, 1))
    col_bytes = k.op2(P.ShlOp, "b32", k.op2(P.XorOp, "b32", col_chunk0, row_in), 4)
    second = k.op2(P.ShrOp, "u32", matrix, 1)  # matrices 2 and 3: the next 8 of the fragment's columns
    base = k.add(k.stage_addr(buf, op.stage), k.add(col_bytes, k.mul(k.add(row_in, k.mul(second, 8)), PANEL)))
    if width > PANEL:  # the panel of the warp's rows
        panel = k.op2(P.ShrOp, "u32", local, per_panel.bit_length() - 1)
        base = k.add(base, k.mul(panel, buf.rows * PANEL))
    tiles = t.dims[1] // 8
    for tn in range(0, tiles, 2):
        pairs = [(tn, 0), (tn, 1)] + ([(tn + 1, 0), (tn + 1, 1)] if tn + 1 < tiles else [])
        regs = [k.pack(dt, x[4 * n + 2 * h], x[4 * n + 2 * h + 1]) for n, h in pairs]
        addr = k.add(base, tn * 8 * PANEL) if tn else base
        k.emit(T.StmatrixOp(addr, regs, trans=True))
    if not every:
        k.jump(no)
        k.cur = no
