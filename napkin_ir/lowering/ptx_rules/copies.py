"""Tiles in: shared-memory buffers and the copies into them with cp.async (sm_80 and
later), and vectors read straight from global memory into registers.

- `smem.alloc`: a part of the dynamic shared array (`napkin.smem_bytes`). A buffer the
  TMA or wgmma touches is stored as 128-byte swizzled panels (`Buffer.panels`), 1024-byte
  aligned; any other as rows of its innermost axis, 128-byte aligned, each row padded by
  16 bytes with `layout=pad8` (the 8 rows an ldmatrix reads then fall in different banks).
  `layout=swizzle` permutes each 128-byte line's 16-byte chunks by XOR with its row (its
  pair of rows, for 64-byte rows) mod 8: ldmatrix's 8 rows then lie in 8 bank groups, and
  a line copied whole stays in one line of shared memory.
- `smem.copy`: the tile in 16-byte chunks, g threads a row (`_chunk_threads`), each
  thread's chunks at fixed distances from its first: one base register per copy, the
  stage and the chunk in immediates. The buffer's rows run along the global's last axis
  (a multiple of 8 elements), and may fold several axes (a group's query heads by
  positions: row = head x positions + position), each row copied from its own place
  along each. What index analysis cannot place inside the global
  (`KernelLowering.span`) is checked: a tile that may start past an edge is not copied
  (its stage is never read), rows and chunks past an edge are zero-filled (a source size
  of 0, from the tensor's first element); a copy under `scf.if` takes its condition as a
  guard.
- `reg.load`: each lane reads the values of its own rows (g and g + 8 of each 16) or
  columns (2 t and 2 t + 1 of each 8), or of a `line` fragment of one axis the rows it
  holds (every 256 / span-th from its own), from one base register, the place an immediate: a
  column pair of an f32 vector is one `ld.global.v2.f32`, of a bf16 or f16 one a `.b32`
  unpacked and widened (`cvt.f32.bf16`). Where the tile may cross the global's edge each
  read is guarded and what it did not read is zero (`selp`).
- `reg.read`: a `line` fragment from a plain (unswizzled) buffer: each lane reads its 16
  bytes of every span of columns of each of the rows it holds with one `ld.shared.v4.b32`
  (the 32 lanes of a warp read 512 adjacent bytes of one row, or 128 of each of 4 rows of
  span 64: no bank conflicts), from one base register (the lane's place in its row, and
  its row among the 256 / span a warp holds at a time, and its first column where warps
  split the columns), the row and the span in immediates, and widens the pairs to f32; an
  f32 buffer's 32 bytes a lane are two `ld.shared.v4.f32` (two lanes to a bank group: a
  two-way conflict, once a value, in a kernel bound by memory). A
  `c` fragment (a staged tile in the accumulators' lanes) is read with ldmatrix, as
  `products` loads operands (`read_accumulator_layout`).
- `smem.commit`, `smem.wait`: `cp.async.commit_group`, `cp.async.wait_group`;
  `smem.barrier`: `bar.sync 0`.
"""

from __future__ import annotations

from xdsl.dialects import scf
from xdsl.ir import SSAValue

from napkin_ir.dialects import reg, smem
from napkin_ir.dialects.ptx import ops as P
from napkin_ir.dialects.ptx import tensor_ops as T
from napkin_ir.dialects.ptx.registers import RegType
from napkin_ir.lowering.ptx_rules.context import B32, F32, PANEL, Buffer, Global, KernelLowering, constant, lowers, prod
from napkin_ir.lowering.ptx_rules.kernel import consumers_meet
from napkin_ir.lowering.ptx_rules.products import read_accumulator_layout
from napkin_ir.lowering.shared_layout import padded_row_bytes, panel_buffer, reserved, vector_row_bytes, vector_stage_bytes
from napkin_ir.target import dtype


@lowers(smem.AllocOp)
def _alloc(k: KernelLowering, op: smem.AllocOp) -> None:
    t: smem.BufferType = op.result.type  # type: ignore[assignment]
    d = dtype(t.dtype)
    panels = panel_buffer(op.result)
    if t.vector:  # a statistic the TMA brings with a stream's tiles: a plain f32 row, 128-byte aligned
        axis, row_bytes = vector_row_bytes(t)
        k.vals[op.result] = Buffer(k.reserve(*reserved(t, False)), t, axis, axis, 1, t.shape[axis], row_bytes,
                                   vector_stage_bytes(t), False, (axis,))
        return
    rows_read = t.layout.data != "swizzle" and all(  # filled by copies, read only as `line` fragments (a rows kernel)
        isinstance(u.operation, smem.CopyOp) or isinstance(u.operation, reg.ReadOp) and u.operation.result.type.role.data == "line"
        for u in op.result.uses)
    if not d.is_half and not (t.dtype == "f32" and (panels or rows_read)):
        raise k.fail(f"shared buffers hold bf16 or f16 tiles (f32 ones only in panels a TMA reduce-add reads, or rows a "
                     f"kernel with no product reads as they lie), got {t}")
    if panels:
        tiled = reg.tile_axes(t)
        if len(tiled) < 2 or tiled[-1] != t.axis_names[-1] or t.layout.data != "swizzle":
            raise k.fail(f"a buffer the TMA or wgmma reads is a tile of rows and its innermost axis (its axes of one place "
                         f"anywhere before that) with layout=swizzle, got {t}")
        *row_axes, cols_axis = tiled
        if d.size(t.shape[cols_axis]) % PANEL:
            raise k.fail(f"a swizzled tile's rows are whole 128-byte panels, got {t}")
        stage_bytes = t.bytes() // t.stages.data
        k.vals[op.result] = Buffer(k.reserve(*reserved(t, True)), t, row_axes[-1], cols_axis, prod(t.shape[a] for a in row_axes),
                                   t.shape[cols_axis], PANEL, stage_bytes, True, tuple(row_axes))
        if smem.stored_by_role(op.result):
            k.end_staging()
        return
    *lead, cols_axis = t.axis_names
    row_axes = [a for a in lead if t.shape[a] > 1] or lead[-1:]
    rows_axis = row_axes[-1]
    rows, cols = prod(t.shape[a] for a in row_axes), t.shape[cols_axis]
    if cols % d.elements(16):
        raise k.fail(f"a buffer's rows must be a multiple of {d.elements(16)} elements (16 bytes), got {cols}")
    if t.layout.data == "swizzle" and not smem.swizzle_fits(d.size(cols)):
        raise k.fail(f"layout=swizzle permutes 16-byte chunks within 128-byte lines: a buffer's rows must be 64 bytes or "
                     f"a multiple of 128 bytes, got {d.size(cols)} ({t}); use layout=pad8")
    row_bytes = padded_row_bytes(t)
    base = k.reserve(*reserved(t, False))
    k.vals[op.result] = Buffer(base, t, rows_axis, cols_axis, rows, cols, row_bytes, rows * row_bytes, False, tuple(row_axes))


@lowers(smem.CopyOp)
def _copy(k: KernelLowering, op: smem.CopyOp) -> None:
    cp_async_copy(k, op, None)


LINE_CHUNKS = 8  # 16-byte chunks in a 128-byte L2 line


def _chunk_threads(k: KernelLowering, rows: int, per_row: int) -> int:
    """g, the threads that share a row, each taking every g-th chunk. A warp's copy then
    reads runs of 16 g bytes: g = 8 (whole 128-byte lines, or whole rows when shorter) asks
    the L2 for the fewest lines; a larger g only costs more rows (pointers) per thread. Where
    no g splits the tile evenly, a row a thread group, the last pass predicated."""
    threads = k.nthreads
    choices = [g for g in range(1, per_row + 1) if per_row % g == 0 and threads % g == 0 and (rows * g) % threads == 0]
    if choices:
        line = min(per_row, LINE_CHUNKS)
        return min([g for g in choices if g >= line] or [max(choices)])
    if threads % per_row:
        raise k.fail(f"{threads} threads cannot share rows of {per_row} 16-byte chunks")
    return per_row


def _phase_rows(g: int, row_bytes: int) -> list[int] | None:
    """An order of 8 rows in which each 8 neighbouring threads, writing 8 / g rows of g
    16-byte chunks, hit 8 different bank groups (a shared-memory store of 16 bytes a thread
    is served 8 threads at a time; a row starts row_bytes / 16 groups after the last).
    None where no reordering is needed (g >= 8) or none helps (an even stride)."""
    per_phase, stride = 8 // g, (row_bytes // 16) % 8
    if g >= 8 or stride % 2 == 0:
        return None
    inverse = next(x for x in range(8) if x * stride % 8 == 1)
    # phase k takes the rows that start at groups k, k + g, k + 2g ...
    return [(b // per_phase + b % per_phase * g) * inverse % 8 for b in range(8)]


def _aligned(k: KernelLowering, v: SSAValue, n: int) -> bool:
    """Whether an offset is a multiple of n everywhere: its constant, and each symbol's
    coefficient times the symbol's step (a grid origin's tile, a loop counter's step where
    the loop starts at a multiple of n)."""
    a = k.affine(v)
    if a.const % n:
        return False
    for sym, c in a.terms:
        grain = k.kernel.grid_tiles[k.grid_args[sym]] if sym in k.grid_args else None
        owner = sym.owner
        if grain is None and hasattr(owner, "parent_op") and isinstance(owner.parent_op(), scf.ForOp):  # type: ignore[union-attr]
            loop = owner.parent_op()  # type: ignore[union-attr]
            lb, step = constant(loop.lb), constant(loop.step)
            # a loop from a computed start (a split's part, a causal stream's first tile) steps from an aligned one
            start_aligned = lb % n == 0 if lb is not None else _aligned(k, loop.lb, n)
            grain = step if step is not None and start_aligned else None
        if grain is None or (c * grain) % n:
            return False
    return True


def _may_straddle(k: KernelLowering, offset: SSAValue, extent: int, tile: int) -> bool:
    """Whether a tile at `offset` may cross the edge at `extent` (partly inside, partly
    past it): not where it lies inside everywhere, nor where tiles start at multiples of
    their length and the extent is a whole number of them (a tile is then wholly inside
    or wholly past, which the copy's guard decides)."""
    if k.provably_inside(offset, extent, tile):
        return False
    return not (extent % tile == 0 and _aligned(k, offset, tile))


def cp_async_copy(k: KernelLowering, op: smem.CopyOp, guard: SSAValue | None) -> None:
    """The tile in 16-byte chunks: thread t takes rows t / g, t / g + T / g, ... and in each
    the chunks t mod g, t mod g + g, ...; each chunk's address is one base register per
    copy (the symbolic part of the tile's place, and the thread's) plus an immediate."""
    g: Global = k.vals[op.source]
    buf: Buffer = k.vals[op.dest]
    gt = g.type
    last = gt.axis_names[-1]
    if buf.cols_axis != last:
        raise k.fail(f"a copy from {gt} into {buf.type} transposes; a buffer's rows run along the global's last axis")
    per_chunk = buf.element.elements(16)  # elements of one 16-byte cp.async
    if gt.shape[last] % per_chunk:
        raise k.fail(f"cp.async copies 16 bytes: the rows of {gt} must be a multiple of {per_chunk} elements")
    offsets = dict(zip(gt.axis_names, op.offsets))
    if not _aligned(k, offsets[last], per_chunk):
        raise k.fail(f"a copy from {gt} must start its rows at a multiple of {per_chunk} elements (16 bytes)")
    strides = g.strides
    rows, per_row = buf.rows, buf.cols // per_chunk
    row_axes = buf.row_axes or (buf.rows_axis,)
    gk = _chunk_threads(k, rows, per_row)
    row_pass, width = k.nthreads // gk, per_row // gk
    passes = -(-rows // row_pass)

    def digits(row: int) -> dict[str, int]:
        """A buffer row's place along each of its row axes (the rows fold them, the first
        outermost; the outermost is not wrapped)."""
        out = {}
        for n, a in enumerate(reversed(row_axes)):
            last_digit = n == len(row_axes) - 1
            out[a] = row if last_digit else row % buf.type.shape[a]
            row = row if last_digit else row // buf.type.shape[a]
        return out

    # each thread's rows lie at fixed distances from its first along every row axis (rows
    # folded from several axes: the passes move by whole places of the outer ones or
    # within one of the inner): its place and the pass's add up
    if any(digits(rt + p * row_pass)[a] != digits(rt)[a] + digits(p * row_pass)[a]
           for p in range(passes) for rt in range(min(row_pass, rows - p * row_pass)) for a in row_axes):
        raise k.fail(f"a tile of rows {' x '.join(row_axes)} ({buf.type}) copied {row_pass} rows a pass does not keep each "
                     "thread's rows at fixed distances")

    def row_place(row: int) -> int:
        return sum(digits(row)[a] * strides[a] for a in row_axes)

    swizzled = buf.type.layout.data == "swizzle"
    perm = _phase_rows(gk, buf.row_bytes) if row_pass % 8 == 0 and not swizzled else None

    def thread_row() -> SSAValue:
        row_t = k.op2(P.DivOp, "u32", k.tid, gk)
        if perm is not None:  # row 8a + b is copied by the threads of row 8a + perm[b]
            table = k.u32(sum(r << (4 * b) for b, r in enumerate(perm)))
            shift = k.op2(P.ShlOp, "b32", k.op2(P.AndOp, "b32", row_t, 7), 2)
            picked = k.op2(P.AndOp, "b32", k.op2(P.ShrOp, "u32", table, shift), 7)
            row_t = k.op2(P.OrOp, "b32", k.op2(P.AndOp, "b32", row_t, ~7 & 0xFFFFFFFF), picked)
        return row_t

    row_t = k.once(("row_t", gk, tuple(perm or ())), thread_row)
    chunk_t = k.once(("chunk_t", gk), lambda: k.op2(P.RemOp, "u32", k.tid, gk))
    if swizzled:  # each thread's chunks must lie at fixed distances from its first
        for t in range(k.nthreads):
            r, c = divmod(t, gk)
            first = buf.place(r, 16 * c)
            if any(buf.place(r + p * row_pass, 16 * (c + i * gk)) - first != p * row_pass * buf.row_bytes + 16 * i * gk
                   for p in range(passes) for i in range(width)):
                raise k.fail(f"a {rows} x {buf.cols} tile copied by {k.nthreads} threads, {gk} a row, does not keep its "
                             f"swizzle at fixed offsets; use layout=pad8")
    dst_lane = k.once(("copy_dst", buf.row_bytes, swizzled, gk, tuple(perm or ())),
                      lambda: k.placed(row_t, k.mul(chunk_t, 16), buf.row_bytes, swizzled))
    dst = k.add(buf.base, dst_lane)
    stage = constant(op.stage)
    if stage is None:
        dst = k.add(dst, k.mul(k.index(op.stage), buf.stage_bytes))
    dst_imm = (stage or 0) * buf.stage_bytes
    # the source: the tile's place (symbolic part in a register, the rest immediate) plus the thread's
    place = None
    for a, o in offsets.items():
        term = k.affine(o).scale(strides[a])
        place = term if place is None else place + term
    assert place is not None and g.ptr is not None

    def thread_place() -> SSAValue:
        return k.add(_folded(k, row_t, row_axes, buf.type.shape, strides), k.mul(chunk_t, per_chunk))

    fold = (strides[row_axes[-1]], *((a, buf.type.shape[a], strides[a]) for a in row_axes[:-1]))
    # the elements a 16-byte chunk holds key the thread's element too: tiles of f32 and of bf16 differ there
    thread = k.once(("copy_elem", fold, gk, per_chunk, tuple(perm or ())), thread_place)
    key = ("copy_src", id(k.cur), op.source, place.terms, fold, gk, per_chunk, tuple(perm or ()))
    if key not in k.cache:  # copies of one block whose places differ by a constant share it
        sym = k.symbolic(place)
        k.cache[key] = k.wide_address(g.ptr, thread if sym is None else k.add(sym, thread), g.esize)
    src = k.cache[key]
    src_imm = place.const * g.esize
    # bounds: a tile that may start past an edge is not copied; rows and chunks past it are zero-filled
    for a, o in offsets.items():
        r = k.span(o)
        if r is None or r[1] >= gt.shape[a]:
            guard = k.both(guard, k.setp("lt", k.index(o), gt.shape[a]))
    col_room = None
    row_rooms = {}  # per row axis along which the tile may cross the edge: the room left past the thread's first row
    for a in row_axes:
        if _may_straddle(k, offsets[a], gt.shape[a], buf.type.shape[a] if len(row_axes) > 1 else rows):
            first = row_t if len(row_axes) == 1 else _digit(k, row_t, row_axes, buf.type.shape, a)
            row_rooms[a] = k.op2(P.SubOp, "s32", k.s32(gt.shape[a]), k.add(k.index(offsets[a]), first))
    extent_c = gt.shape[last]
    if _may_straddle(k, offsets[last], extent_c, buf.cols):
        col_room = k.op2(P.SubOp, "s32", k.s32(extent_c), k.add(k.index(offsets[last]), k.mul(chunk_t, per_chunk)))
    for p in range(passes):
        pred = guard
        if (p + 1) * row_pass > rows:  # a last pass that not every thread has a row in
            pred = k.both(pred, k.setp("lt", row_t, rows - p * row_pass))
        row_in = None
        for a, room in row_rooms.items():
            row_in = k.both(row_in, k.setp("gt", room, digits(p * row_pass)[a]))
        for i in range(width):
            s_off = src_imm + (row_place(p * row_pass) + per_chunk * i * gk) * g.esize
            d_off = dst_imm + p * row_pass * buf.row_bytes + 16 * i * gk
            inside = k.both(row_in, k.setp("gt", col_room, per_chunk * i * gk) if col_room is not None else None)
            if inside is None:
                k.emit(T.CpAsyncOp(dst, src, 16, dst_offset=d_off, src_offset=s_off, guard=pred))
                continue
            size = k.r(P.SelpOp("b32", k.u32(16), k.u32(0), inside))
            at = k.r(P.SelpOp("b64", k.add64(src, s_off), g.ptr, inside))
            k.emit(T.CpAsyncOp(dst, at, 16, dst_offset=d_off, src_size=size, guard=pred))


def _digit(k: KernelLowering, row: SSAValue, row_axes: tuple[str, ...], shape: dict[str, int], axis: str) -> SSAValue:
    """A register holding buffer row `row`'s place along `axis`, one of the row axes it
    folds (the first outermost)."""
    n = row_axes.index(axis)
    inner = prod(shape[a] for a in row_axes[n + 1 :])
    place = row if inner == 1 else k.op2(P.DivOp, "u32", row, inner)
    return place if n == 0 else k.op2(P.RemOp, "u32", place, shape[axis])


def _folded(k: KernelLowering, row: SSAValue, row_axes: tuple[str, ...], shape: dict[str, int], strides: dict[str, int]) -> SSAValue:
    """The element offset of buffer row `row` in a global: its place along each row axis
    times that axis's stride."""
    if len(row_axes) == 1:
        return k.mul(row, strides[row_axes[0]])
    out = None
    for a in row_axes:
        term = k.mul(_digit(k, row, row_axes, shape, a), strides[a])
        out = term if out is None else k.add(out, term)
    return out  # type: ignore[return-value]


@lowers(reg.LoadOp)
def _load_vector(k: KernelLowering, op: reg.LoadOp) -> None:
    t: reg.FragType = op.result.type  # type: ignore[assignment]
    g: Global = k.vals[op.source]
    if g.ptr is None:
        raise k.fail(f"a load from {g.type}, which the TMA copies, has no lowering")
    (axis,) = t.axis_names
    col = t.role.data == "col"
    line = t.role.data == "line"
    # the lane's first row (column); a `line` fragment's row among those the warp holds at a
    # time (none where a row lies across the whole warp)
    first: SSAValue | None = k.line_lane(t)[0] if line else k.mul(k.lane_pair, 2) if col else k.lane_row
    w = k.warp_place(axis, t.dims[0])
    first = first if w is None else w if first is None else k.add(first, w)
    stride = g.strides[axis]
    lin, held_ok = k.held_element(g, t, op.offsets)
    if held_ok is not None:
        raise k.fail(f"a vector read for warps that each hold a place of an axis may lie past the edge of {g.type}")
    base = k.wide_address(g.ptr, lin if first is None else k.add(lin, k.mul(first, stride)), g.esize)
    room = k.rooms(g, op.offsets, {axis: first if first is not None else k.u32(0)}, {axis: t.dims[0] * k.warps.get(axis, 1)}).get(axis)
    # (distance from the lane's first place, adjacent values there) of each read
    if line:
        reads = [(t.rows_a_step * v, 1) for v in range(t.values_per_lane())]
    elif col and stride == 1 and g.type.shape[axis] % 2 == 0:  # a pair lies wholly inside or wholly past the edge
        reads = [(8 * n, 2) for n in range(t.dims[0] // 8)]
    elif col:
        reads = [(8 * n + j, 1) for n in range(t.dims[0] // 8) for j in range(2)]
    else:
        reads = [(16 * m + 8 * h, 1) for m in range(t.dims[0] // 16) for h in range(2)]
    out: list = []
    for d, n in reads:
        inside = k.setp("gt", room, d) if room is not None else None
        out += _read_f32(k, g, base, d * stride * g.esize, n, inside)
    k.vals[op.result] = out


def _read_f32(k: KernelLowering, g: Global, base, offset: int, n: int, inside) -> list:
    """`n` adjacent values of `g` (1 or 2) at base + offset, widened to f32; zero where
    `inside` does not hold (the load sets its registers to zero before it reads: a guarded
    load's registers would otherwise carry their last trip's values, and ptxas keeps those
    alive around the loop, spilling them)."""
    dt = g.type.dtype
    fill = inside is not None
    if dt == "f32":
        return list(k.emit(P.LdOp("global", "f32", base, [F32] * n, offset=offset, guard=inside, zero=fill)).results)
    half = RegType(dt)
    if n == 2:
        pair = k.r(P.LdOp("global", "b32", base, [B32], offset=offset, guard=inside, zero=fill))
        halves = list(k.emit(P.MovOp("b32", [pair], [half, half])).results)
    else:
        halves = [k.r(P.LdOp("global", "b16", base, [half], offset=offset, guard=inside, zero=fill))]
    return [k.r(P.CvtOp("f32", dt, [x], F32)) for x in halves]


@lowers(reg.ReadOp)
def _read(k: KernelLowering, op: reg.ReadOp) -> None:
    t: reg.FragType = op.result.type  # type: ignore[assignment]
    if t.role.data == "c":
        read_accumulator_layout(k, op)
    elif t.role.data in ("row", "col"):
        _read_vector(k, op)
    else:
        _read_lines(k, op)


def _read_vector(k: KernelLowering, op: reg.ReadOp) -> None:
    """A `row` or `col` fragment of a staged f32 vector: the values `reg.load` would read from
    global memory, from the stage (pairs of columns as one 8-byte read)."""
    t: reg.FragType = op.result.type  # type: ignore[assignment]
    buf: Buffer = k.vals[op.source]
    (axis,) = t.axis_names
    col = t.role.data == "col"
    first = k.mul(k.lane_pair, 2) if col else k.lane_row
    w = k.warp_place(axis, t.dims[0])
    first = first if w is None else k.add(first, w)
    base = k.add(k.stage_addr(buf, op.stage), k.mul(first, 4))
    reads = [(8 * n, 2) for n in range(t.dims[0] // 8)] if col else [(16 * m + 8 * h, 1) for m in range(t.dims[0] // 16) for h in range(2)]
    out: list = []
    for d, n in reads:
        out += list(k.emit(P.LdOp("shared", "f32", base, [F32] * n, offset=4 * d)).results)
    k.vals[op.result] = out


def _read_lines(k: KernelLowering, op: reg.ReadOp) -> None:
    t: reg.FragType = op.result.type  # type: ignore[assignment]
    buf: Buffer = k.vals[op.source]
    rows_axis, _ = t.axis_names
    if buf.panels or buf.type.layout.data == "swizzle":
        raise k.fail(f"reg.read reads rows as they lie; {buf.type} is swizzled")
    dt = buf.type.dtype
    half = RegType(dt)
    chunk = reg.LINE_CHUNK * dtype(dt).bytes  # a lane's 8 columns: 16 bytes of bf16, 32 of f32
    first = k.warp_place(rows_axis, t.dims[0])
    slot, place = k.line_lane(t)
    if slot is None:
        lane_bytes = k.once(("line_lane_bytes", chunk), lambda: k.mul(k.lane, chunk))
    else:  # a lane's chunk of its row, which lies row_bytes further per row a warp holds at a time
        lane_bytes = k.once(("line_lane_bytes", t.lanes_a_row, buf.row_bytes, chunk),
                            lambda: k.add(k.mul(place, chunk), k.mul(slot, buf.row_bytes)))
    start = lane_bytes if first is None else k.add(lane_bytes, k.mul(first, buf.row_bytes))
    wc = k.warp_place(t.axis_names[1], t.dims[1])  # warps that split the columns (a sum down them)
    start = start if wc is None else k.add(start, k.mul(wc, dtype(dt).bytes))
    base = k.add(k.stage_addr(buf, op.stage), start)
    out: list = []
    span = t.span.data
    for r in range(0, t.dims[0], t.rows_a_step):
        for c in range(t.dims[1] // span):
            at = r * buf.row_bytes + dtype(dt).bytes * span * c
            if dt == "f32":  # 8 f32 values: two 16-byte reads
                out += [x for h in range(2) for x in k.emit(P.LdOp("shared", "f32", base, [F32] * 4, offset=at + 16 * h)).results]
                continue
            words = k.emit(P.LdOp("shared", "b32", base, [B32] * 4, offset=at)).results
            for w in words:
                halves = k.emit(P.MovOp("b32", [w], [half, half])).results
                out += [k.r(P.CvtOp("f32", dt, [x], F32)) for x in halves]
    k.vals[op.result] = out


@lowers(smem.CommitOp)
def _commit(k: KernelLowering, op: smem.CommitOp) -> None:
    k.emit(T.CpAsyncCommitGroupOp())


@lowers(smem.WaitOp)
def _wait(k: KernelLowering, op: smem.WaitOp) -> None:
    k.emit(T.CpAsyncWaitGroupOp(op.pending.value.data))


@lowers(smem.BarrierOp)
def _barrier(k: KernelLowering, op: smem.BarrierOp) -> None:
    """`bar.sync 0`, or beside a producer warpgroup the consumers' named barrier; with
    `async_proxy`, each thread's shared-memory writes fenced for wgmma and the TMA first."""
    if op.async_proxy is not None:
        k.emit(T.FenceOp("proxy.async.shared::cta"))
    consumers_meet(k)
