"""The kernel around the ops: parameters, where each block's tile lies, and warp roles.

- Each global tensor is a parameter: a tensor map (`.param .align 64 .b8 [128]`) where
  the TMA copies it, else a `.u64` generic address.
- Grid origins follow the launch order `hbm-launch` chose (the kernel's properties): a
  plain grid maps the grid axes to %ctaid.x, .y, .z in order; `order = "last"` maps them
  from the last, walked from its end (a causal forward's longest streams first), or from
  its start with `order = "last_from_start"` (the causal gradient's key blocks); beyond
  three axes, axes of one block take no %ctaid and the slowest others share .z; grouped
  (`hbm.group`) and persistent launches number tiles along %ctaid.x alone.
- `smem.producer` splits the warps: warpgroup 0 runs its region on one thread, after
  `setmaxnreg` gives its registers to the consumers, which run the rest of the kernel
  body. That thread first prefetches every tensor map, so that no copy waits for its
  descriptor. The consumers' last TMA stores need only have read their shared memory
  when the block leaves (`.read`): the grid's end makes their writes visible, and the
  next block on the multiprocessor starts without waiting for them. With
  `hbm.persistent` each role loops over tiles p = block, block + blocks, ...; the rings'
  positions (`smem.ring_position`) count on from tile to tile.
"""

from __future__ import annotations

from xdsl.dialects import builtin, scf
from xdsl.ir import Attribute, Block, Region, SSAValue

from napkin_ir.dialects import hbm, reg, smem
from napkin_ir.dialects.ptx import ops as P
from napkin_ir.dialects.ptx import tensor_ops as T
from napkin_ir.dialects.ptx.attributes import SharedAttr
from napkin_ir.dialects.ptx.registers import RegType
from napkin_ir.lowering.shared_layout import placing_order
from napkin_ir.lowering.ptx_rules.context import B32, B64, SHARED, Global, KernelLowering, arg_name, constant, lowers, prod
from napkin_ir.target import SM90

CONSUMER_BARRIER = 1  # the named barrier the consumer warpgroups meet at (0 is the whole block's)
STORER_THREAD = 32  # the store role's thread: lane 0 of the producer warpgroup's second warp


def consumer_registers(threads: int, blocks_per_sm: int = 1) -> int:
    """Registers per consumer thread once the producer warpgroup drops to its share
    (`Target.consumer_registers` of sm_90a)."""
    return SM90.consumer_registers(threads, blocks_per_sm)


def build_kernel(k: KernelLowering) -> P.KernelOp:
    kernel = k.kernel
    body = kernel.body.block
    globs = kernel.globals
    grid = kernel.grid_tiles
    tma = {o.source for o in kernel.walk() if isinstance(o, smem.TmaCopyOp)} | {o.dest for o in kernel.walk() if isinstance(o, smem.TmaStoreOp)}
    params = []
    for n, g in enumerate(globs):
        t: hbm.GlobalType = g.type  # type: ignore[assignment]
        if prod(t.dims) >= 1 << 31:
            raise k.fail(f"{t} has 2^31 elements or more; indices are 32-bit")
        pname = f"{k.name}_{arg_name(g, n)}"
        if g in tma:
            params.append((pname, "tensormap"))
            k.vals[g] = Global(t, tmap=k.r(P.CvtaOp("param", k.r(P.AddrOfOp(pname, B64)), to=False)))
        else:
            params.append((pname, "u64"))
            k.vals[g] = Global(t, ptr=k.r(P.CvtaOp("global", k.r(P.LdParamOp(pname, "u64", B64)))))
    k.origin_args = dict(zip(grid, body.args[len(globs):]))
    for arg, axis in zip(body.args[len(globs):], grid):
        k.grid_args[arg] = axis
    last = kernel.last_axis_fastest
    counts = kernel.grid_shape()
    dims = launch_dims(kernel)
    if k.split_cluster > 1 and not k.producer_warps:
        raise k.fail("a cluster of split sums' parts is lowered for a warp-specialised kernel (smem.producer); this one has none")
    if k.persistent:
        if not k.producer_warps:
            raise k.fail("a persistent launch loops over tiles in a warp-specialised kernel (smem.producer); this one has none")
    elif k.group:
        set_origins(k, k.r(P.SregOp("ctaid.x")))
    else:
        for axis in grid:
            if not any(axis in dim for dim in dims):  # one block along it: at the axis's start
                k.vals[k.origin_args[axis]] = k.u32(0)
        for n, dim in enumerate(dims):
            cta = k.r(P.SregOp(f"ctaid.{'xyz'[n]}"))
            for m, axis in enumerate(dim):  # axes folded into %ctaid.z: the first fastest
                block = cta
                if m + 1 < len(dim):
                    block, cta = k.op2(P.RemOp, "u32", cta, counts[axis]), k.op2(P.DivOp, "u32", cta, counts[axis])
                if last and kernel.last_from_end and n == 0 and counts[axis] > 1:  # the last blocks first: a causal stream's longest
                    block = k.op2(P.SubOp, "u32", k.u32(counts[axis] - 1), block)
                k.vals[k.origin_args[axis]] = k.mul(block, grid[axis])
    k.tid = k.r(P.SregOp("tid.x"))
    # the buffers first, then the mbarriers, as `shared_layout` places them
    ops = sorted(body.ops, key=placing_order)
    varying = set(k.origin_args.values())  # values that differ from tile to tile
    per_tile_ops: list = []  # a persistent block's ops before the roles that depend on its tile
    for n, op in enumerate(ops):
        if isinstance(op, smem.ProducerOp):
            roles(k, op, [o for o in ops[n + 1:] if not isinstance(o, hbm.ReturnOp)], per_tile_ops)
            break
        if isinstance(op, smem.RingPositionOp | smem.TilePositionOp):
            varying.update(op.results)
        elif k.persistent and any(v in varying for v in op.operands):
            varying.update(op.results)
            per_tile_ops.append(op)
            continue
        k.lower(op)

    budget = SM90.smem_per_block(k.blocks_per_sm)  # the most any GPU napkin targets gives a block
    if k.shared_size > budget:
        raise k.fail(f"needs {k.shared_size} bytes of shared memory (its buffers, aligned, and its mbarriers), over the {budget} "
                     f"a block may take{f' with {k.blocks_per_sm} a multiprocessor' if k.blocks_per_sm > 1 else ''}; "
                     "use fewer stages or smaller tiles")
    if k.producer_warps:
        out = P.KernelOp(k.name, params, Region(k.blocks), dynamic_shared=SHARED if k.smem_bytes else None, maxntid=[k.nthreads],
                         minnctapersm=k.blocks_per_sm)
    else:
        out = P.KernelOp(k.name, params, Region(k.blocks), dynamic_shared=SHARED if k.smem_bytes else None, reqntid=[k.nthreads],
                         minnctapersm=k.blocks_per_sm if k.blocks_per_sm > 1 else None)
    launch = [prod(counts[a] for a in dim) for dim in dims]
    if k.group or k.persistent:
        launch = [prod(launch)]
    facts: dict[str, Attribute] = {}
    if k.cluster > 1:
        facts["napkin.cluster"] = builtin.ArrayAttr([builtin.IntegerAttr(k.cluster, 32)])
    elif k.split_cluster > 1:  # the parts of a tile's sums: neighbours along the launch axis of the split
        along = split_launch_axis(k, dims)
        facts["napkin.cluster"] = builtin.ArrayAttr([builtin.IntegerAttr(k.split_cluster if n == along else 1, 32)
                                                     for n in range(len(launch))])
    if k.persistent:  # the launch takes min(tiles, multiprocessors x blocks_per_sm) blocks
        facts["napkin.persistent"] = builtin.IntegerAttr(k.blocks_per_sm, 32)
    facts["napkin.grid"] = builtin.ArrayAttr([builtin.IntegerAttr(n, 32) for n in launch])
    facts["napkin.block"] = builtin.ArrayAttr([builtin.IntegerAttr(k.nthreads, 32)])
    facts["napkin.smem_bytes"] = builtin.IntegerAttr(k.shared_size, 32)
    if k.tma_boxes:
        facts["napkin.tma"] = builtin.ArrayAttr(k.tma_boxes)
    # f32 outputs the blocks add their parts into: zeroed before the launch (ordered sums write
    # their first part; a 16-bit output is written once, by the part that finishes last)
    zeroed = [g for g in kernel.accumulated() if g.type.dtype == "f32"] if kernel.ordered_sums is None else []  # type: ignore[attr-defined]
    if zeroed:
        facts["napkin.zeroed"] = builtin.ArrayAttr([builtin.StringAttr(f"{k.name}_{arg_name(g, globs.index(g))}") for g in zeroed])
    if k.split_cluster > 1 and not k.exchanged:
        raise k.fail("its blocks form a cluster of split sums' parts, but no store rounds a split sum into a 16-bit output")
    out.properties.update(facts)
    if k.global_vars:
        out.properties["global_vars"] = builtin.ArrayAttr([SharedAttr(n, size, a) for n, size, a in k.global_vars])
    return out


def launch_dims(kernel: hbm.KernelOp) -> list[tuple[str, ...]]:
    """The grid axes on %ctaid.x, .y and .z of a plain launch, the one on x varying fastest
    (the first grid axis, or the last with `hbm.order = "last"`). Beyond three axes, those
    of one block take none (their origin is 0) and the slowest of the rest share .z (the
    first of them fastest): grouped-query attention's grid b, g, r, i."""
    grid = kernel.grid_tiles
    counts = kernel.grid_shape()
    order = list(reversed(grid)) if kernel.last_axis_fastest else list(grid)
    if len(order) > 3:
        order = [a for a in order if counts[a] > 1] or order[:1]
    return [(a,) for a in order[:2]] + ([tuple(order[2:])] if len(order) > 2 else [])


def split_launch_axis(k: KernelLowering, dims: list[tuple[str, ...]]) -> int:
    """Which of %ctaid.x, .y, .z holds the split axes of a kernel whose parts form a
    cluster: they must be that launch axis's only ones, so that the parts of one output
    tile are neighbours along it and a block's rank in its cluster is its part."""
    split = tuple(k.kernel.split_axes())
    for n, dim in enumerate(dims):
        if dim == split:
            return n
    raise k.fail(f"a cluster takes the parts of split sums along one launch axis of their own; the split axes {list(split)} "
                 f"share the launch axes {[list(d) for d in dims]}")


@lowers(hbm.ReturnOp)
def _return(k: KernelLowering, op: hbm.ReturnOp) -> None:
    k.emit(P.RetOp())


def grouped_tile(k: KernelLowering, rows: int, cols: int, group: int, p: SSAValue) -> tuple[SSAValue, SSAValue]:
    """(row block, column block) of linear block p of a `rows` x `cols` grid launched in
    groups (`hbm.group`): bands of `group` row blocks (the last band may be shorter), each
    swept column by column, `group` rows at a time."""
    band_blocks = group * cols
    band = k.op2(P.DivOp, "u32", p, band_blocks)
    first = k.mul(band, group)
    height = k.r(P.MinOp("u32", k.u32(group), k.op2(P.SubOp, "u32", k.u32(rows), first), result=B32))
    within = k.op2(P.RemOp, "u32", p, band_blocks)
    row = k.add(first, k.op2(P.RemOp, "u32", within, height))
    col = k.op2(P.DivOp, "u32", within, height)
    return row, col


def set_origins(k: KernelLowering, p: SSAValue, pairs: bool = False) -> None:
    """The grid origins of linear tile p: grouped, or the first axis fastest. With `pairs`
    (a persistent cluster of 2), p numbers pairs of neighbouring blocks along the first
    axis, as the grid's tiles are numbered with that axis halved (a group of `group` block
    rows, `group` / 2 pairs), and the block takes the pair's first or second by its rank
    in the cluster."""
    grid = k.kernel.grid_tiles
    counts = dict(k.kernel.grid_shape())
    first = next(iter(grid))
    if pairs:
        counts[first] //= 2
    if k.group:
        if len(grid) != 2:
            raise k.fail(f"a grouped launch orders a two-axis grid, got {list(grid)}")
        rows, cols = counts.values()
        blocks = list(grouped_tile(k, rows, cols, max(1, k.group // 2) if pairs else k.group, p))
    else:
        blocks = _digits(k, p, [counts[a] for a in grid])
    if pairs:
        blocks[0] = k.add(k.mul(blocks[0], 2), k.rank)
    bind_origins(k, blocks)


def bind_origins(k: KernelLowering, blocks: list[SSAValue]) -> None:
    """Each grid axis's origin: its block (one per axis, in order) times its tile."""
    for (axis, tile), b in zip(k.kernel.grid_tiles.items(), blocks):
        k.vals[k.origin_args[axis]] = k.mul(b, tile)


def _digits(k: KernelLowering, n: SSAValue, bases: list[int]) -> list[SSAValue]:
    """`n` in the mixed radix `bases`, the first fastest (the last digit takes the rest)."""
    out, rest = [], n
    for m, base in enumerate(bases):
        final = m == len(bases) - 1
        out.append(rest if final else k.op2(P.RemOp, "u32", rest, base))
        rest = rest if final else k.op2(P.DivOp, "u32", rest, base)
    return out


@lowers(smem.RingPositionOp)
def _ring_position(k: KernelLowering, op: smem.RingPositionOp) -> None:
    """How many ring steps this block took before its tile: 0, or (persistent) bound by
    each role's tile loop."""
    k.ring_positions.append(op.result)
    if not k.persistent:
        k.vals[op.result] = k.u32(0)


@lowers(smem.TilePositionOp)
def _tile_position(k: KernelLowering, op: smem.TilePositionOp) -> None:
    """How many tiles this block computed before its current one: 0, or (persistent) the
    tile loop's count in each role."""
    k.tile_positions.append(op.result)
    if not k.persistent:
        k.vals[op.result] = k.u32(0)


# -- warp roles ----------------------------------------------------------------------------
def roles(k: KernelLowering, producer: smem.ProducerOp, consumer_ops: list, per_tile_ops: list) -> None:
    """Warpgroup 0 produces (one thread issues its region; with a store role, one thread
    of its second warp runs that), the others consume. A persistent block's roles each
    loop over its tiles, computing `per_tile_ops` (the index math of the tile's origin) for
    each; the consumers' turn rotation starts once."""
    if k.producer_warps != 4:
        raise k.fail(f"a producer here is one warpgroup (4 warps), got {k.producer_warps}")
    if k.consumer_threads % 128:
        raise k.fail(f"{k.consumer_threads // 32} consumer warps are not whole warpgroups of 4")
    storers = [o for o in consumer_ops if isinstance(o, smem.StorerOp)]
    consumer_ops = [o for o in consumer_ops if not isinstance(o, smem.StorerOp)]
    if len(storers) > 1:
        raise k.fail(f"one store role runs beside the producer, found {len(storers)}")
    if storers and k.cluster > 1:
        raise k.fail("a store role's barriers are its block's own; clusters of blocks do not take one")
    stream = stream_loop(k, producer) if k.persistent else None
    init_barriers(k)
    if k.cluster > 1:
        start_cluster(k)
    elif k.split_cluster > 1:  # the parts of split sums (a block's rank its part) meet again where they exchange their sums
        _join_cluster(k)      # (`_sum_in_the_cluster`), the producers at `finish`
    produce, consume = k.branch(k.setp("lt", k.tid, 128, "u32"))
    k.cur = produce
    k.emit(T.SetmaxnregOp("dec", SM90.producer_registers))
    issuer, idle = k.branch(k.setp("eq", k.tid, 0, "u32"))
    k.cur = idle
    if storers:  # before the consumers: what it computes once goes to the kernel's entry, which dominates every role
        store, idle = k.branch(k.setp("eq", k.tid, STORER_THREAD, "u32"))
        k.cur = store
        per_tile(k, stream, lambda: k.lower_ops([*per_tile_ops, *storers[0].body.block.ops]))
        leave(k)
        k.cur = idle
    leave(k)
    k.cur = issuer
    for g in k.kernel.globals:  # each tensor map fetched at once, not at its first copy
        if isinstance(k.vals.get(g), Global) and k.vals[g].tmap is not None:
            k.emit(T.PrefetchTensormapOp(k.vals[g].tmap))
    per_tile(k, stream, lambda: k.lower_ops([*per_tile_ops, *producer.body.block.ops]))
    leave(k)

    k.cur = k.entry = consume  # per-thread values of the consumers are made here
    k.emit(T.SetmaxnregOp("inc", consumer_registers(k.nthreads, k.blocks_per_sm)))
    check_registers(k)
    if k.persistent:  # one rotation of turns runs on from tile to tile
        starts = [o for o in consumer_ops if isinstance(o, reg.TurnStartOp)]
        k.lower_ops(starts)
        consumer_ops = [o for o in consumer_ops if o not in starts]
    per_tile(k, stream, lambda: k.lower_ops([*per_tile_ops, *consumer_ops]))
    if any(isinstance(o, smem.TmaStoreOp) and not smem.in_store_role(o) for o in k.kernel.walk()):  # the stores must have read their stages before the block goes
        by_store_issuer(k, lambda: k.emit(T.CpAsyncBulkWaitGroupOp(0, read=True)))
    # the parts of split sums met the cluster in their stores (`_sum_in_the_cluster`): only the producers go to `finish`
    k.emit(P.RetOp()) if k.split_cluster > 1 else leave(k)
    if k.finish is not None:  # no CTA leaves while a peer may still arrive on its barriers
        k.blocks.append(k.finish)
        k.cur = k.finish
        k.emit(T.BarrierClusterOp("arrive"))
        k.emit(T.BarrierClusterOp("wait"))
        k.emit(P.RetOp())


def leave(k: KernelLowering) -> None:
    k.emit(P.BraOp(k.finish) if k.finish is not None else P.RetOp())


def consumers_meet(k: KernelLowering) -> None:
    """Every thread that computes meets here: beside a producer warpgroup, the consumers at
    their named barrier (the producer goes on), otherwise the whole block (`bar.sync 0`)."""
    if k.producer_warps:
        k.emit(P.BarSyncOp(CONSUMER_BARRIER, k.consumer_threads))
    else:
        k.emit(P.BarSyncOp(0))


def by_store_issuer(k: KernelLowering, body) -> None:
    """`body` on the first consumer thread alone (it issues the TMA stores)."""
    issuer = k.once(("store_issuer",), lambda: k.setp("eq", k.tid, 128, "u32"))
    then, join = k.branch(issuer)
    k.cur = then
    body()
    k.jump(join)
    k.cur = join


def stream_loop(k: KernelLowering, producer: smem.ProducerOp) -> scf.ForOp | None:
    """The producer's loop over the stream, whose trips move the rings on from tile to tile
    (None: it copies only once per tile)."""
    loops = [o for o in producer.body.block.ops if isinstance(o, scf.ForOp)]
    if len(loops) > 1:
        raise k.fail(f"a persistent block streams one loop per tile, found {len(loops)}")
    if loops and (constant(loops[0].step) or 0) <= 0:
        raise k.fail("a persistent block's stream loop needs a constant positive step")
    return loops[0] if loops else None


def trips(k: KernelLowering, loop: scf.ForOp | None) -> SSAValue | int:
    """How many trips `loop` takes in this tile: a constant, or computed from the bounds as
    this role lowered them (a causal tile streams as many keys as its rows reach)."""
    if loop is None:
        return 0
    lb, ub, step = (constant(v) for v in (loop.lb, loop.ub, loop.step))
    assert step is not None
    if lb is not None and ub is not None:
        return max(0, -(-(ub - lb) // step))
    first, end = k.index(loop.lb), k.index(loop.ub)
    span = k.op2(P.SubOp, "u32", k.r(P.MaxOp("u32", end, first, result=B32)), first)
    return k.op2(P.DivOp, "u32", k.add(span, step - 1), step)


def per_tile(k: KernelLowering, stream: scf.ForOp | None, body) -> None:
    """`body` once (for this block's tile) or, persistent, for the block's tiles, each
    counting its ring steps on from the last (`stream`'s trips). Turn t of a plain launch
    takes tile t x blocks + block. A longest-first launch (`hbm.order = "last"`: the
    streams grow along the last axis, as a causal forward's do; `"last_from_start"`: they
    shrink, as the causal gradient's key blocks' do) takes its tiles in pairs of equal work
    along that axis, its last block with its first, the second last with the second, ...:
    a block takes pair t x blocks + block's longer tile, then its shorter (the middle block
    of an odd count pairs with none), the other axes' blocks slowest."""
    if not k.persistent:
        body()
        return
    block = k.r(P.SregOp("ctaid.x"))
    blocks = k.r(P.SregOp("nctaid.x"))
    counts = k.kernel.grid_shape()
    *others, last = counts
    pairs = -(-counts[last] // 2)
    paired = k.kernel.last_axis_fastest
    clustered = k.cluster > 1  # a cluster's two blocks take the two tiles of one pair along the first axis, turn by turn
    if clustered:
        block, blocks = k.op2(P.ShrOp, "u32", block, 1), k.op2(P.ShrOp, "u32", blocks, 1)
    head = k.new_block([B32, B32, B32])  # the block's turn, the ring steps taken before it, the tiles computed before it
    k.emit(P.BraOp(head, k.u32(0), k.u32(0), k.u32(0)))
    k.cur = head
    turn, taken, before = head.args
    if paired:
        p = k.add(k.mul(k.op2(P.ShrOp, "u32", turn, 1), blocks), block)  # the pair
        total = prod(counts[a] for a in others) * pairs
    else:
        p = k.add(k.mul(turn, blocks), block)
        total = prod(counts.values()) // (2 if clustered else 1)
    work, done = k.branch(k.setp("lt", p, total, "u32"))
    k.cur = work
    nxt = k.add(turn, 1)
    if paired:
        within = k.op2(P.RemOp, "u32", p, pairs)
        second = k.setp("ne", k.op2(P.AndOp, "b32", turn, 1), 0, "u32")
        mirror = k.op2(P.SubOp, "u32", k.u32(counts[last] - 1), within)
        shorter, longer = (within, mirror) if k.kernel.last_from_end else (mirror, within)
        along = k.r(P.SelpOp("u32", shorter, longer, second))
        if counts[last] % 2:  # the middle block has no partner: the pair's second turn is skipped
            middle = k.both(second, k.setp("eq", within, pairs - 1, "u32"))
            assert middle is not None
            skip, work = k.branch(middle)
            k.cur = skip
            k.jump(head, nxt, taken, before)
            k.cur = work
        bind_origins(k, [*_digits(k, k.op2(P.DivOp, "u32", p, pairs), [counts[a] for a in others]), along])
    else:
        set_origins(k, p, clustered)
    for pos in k.ring_positions:
        k.vals[pos] = taken
    for pos in k.tile_positions:
        k.vals[pos] = before
    body()
    k.jump(head, nxt, k.add(taken, trips(k, stream)), k.add(before, 1))
    k.cur = done


def check_registers(k: KernelLowering) -> None:
    """ptxas compiles the whole kernel within the cap at entry, wgmma's accumulators too."""
    at_entry = SM90.registers_at_entry(k.nthreads, k.blocks_per_sm)
    wgmmas = [o for o in k.kernel.walk() if isinstance(o, (reg.WgmmaOp, reg.WgmmaRsOp))]
    need = max((o.c.type.dims[1] // 2 for o in wgmmas), default=0) + 24  # type: ignore[attr-defined]
    if need > at_entry:
        raise k.fail(f"{k.blocks_per_sm} blocks of {k.nthreads} threads per multiprocessor leave {at_entry} registers "
                     f"per thread at entry, but the wgmma accumulators need about {need}; use fewer blocks per "
                     "multiprocessor, fewer warpgroups or fewer columns per block")


def init_barriers(k: KernelLowering) -> None:
    """Thread 0 initialises every mbarrier ring, fences the initialisation for the async
    proxy (and the cluster), and the whole block meets before anyone uses them."""
    first, rest = k.branch(k.setp("eq", k.tid, 0, "u32"))
    k.cur = first
    for base, stages, count in k.barrier_rings:
        c = k.u32(count)
        for s in range(stages):
            k.emit(T.MbarrierInitOp(k.add(base, 8 * s), c))
    k.emit(T.FenceOp("mbarrier_init.release.cluster"))
    k.jump(rest)
    k.cur = rest
    k.emit(P.BarSyncOp(0))


def _join_cluster(k: KernelLowering) -> None:
    """Every thread meets its cluster (no block reads or writes another's shared memory
    before that one runs), reads its block's rank, and leaves through `finish`."""
    k.emit(T.BarrierClusterOp("arrive"))
    k.emit(T.BarrierClusterOp("wait"))
    k.rank = k.r(P.SregOp("cluster_ctarank"))
    k.finish = Block()


def start_cluster(k: KernelLowering) -> None:
    """Blocks of a cluster are neighbours along the first grid axis; they share the tiles
    whose offsets do not move with it, which each loads half of, for both. Persistent,
    each cluster takes a pair of such neighbours a turn (`per_tile`), both blocks the same
    number of turns, so that their rings stay in step."""
    counts = k.kernel.grid_shape()
    first = list(k.kernel.grid_tiles)[0]
    if k.cluster != 2 or len(counts) != 2 or k.kernel.last_axis_fastest or (k.group and not k.persistent):
        raise k.fail("clusters are pairs of blocks of a two-axis grid, the first axis fastest (grouped only when persistent) for now")
    if counts[first] % 2:
        raise k.fail(f"a cluster of 2 along '{first}' needs an even number of blocks along it, got {counts[first]}")
    _join_cluster(k)
    k.peer = k.op2(P.XorOp, "b32", k.rank, 1)
    k.cluster_mask = k.r(P.ConstOp("b16", 3, RegType("b16")))


__all__ = ["CONSUMER_BARRIER", "split_launch_axis", "build_kernel", "by_store_issuer", "consumer_registers", "grouped_tile"]
