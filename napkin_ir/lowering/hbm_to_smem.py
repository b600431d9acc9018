"""`hbm-to-smem`: stream the tiles of a streaming loop through multi-stage shared memory.

Every `hbm.load` inside an `scf.for` marked `hbm.stream` whose offsets move with the loop
becomes a `stages`-deep `!smem.buffer` fed by asynchronous copies `stages - 1` iterations
ahead: a prologue fills stages 0 .. stages-2; iteration i waits until its own tile's
group has landed (`smem.wait {pending = stages - 2}`), meets the block at a barrier,
reads stage i mod stages, and at once starts the copy of tile i + stages - 1 into the
stage that iteration i - 1 read (every thread has passed the barrier, so none still
reads it). Copies past the end read zeros and are never read; a final wait drains them.
The buffers must fit the shared memory a block may use (`smem_bytes`, by default the
227 KiB of an H100 or H200).

Stream loops in a row over the same axis, each starting where the last one ends and
carrying on its results (attention's unmasked tiles, then its masked ones), are one
stream: their tiles are numbered from where the first starts, so the copies that a loop
starts ahead land in the next loop's stages, and one prologue and one final wait serve
them all. Where the stream's start or end is not a constant (a causal stream ends where
the block's rows end) the copies are guarded by `offset < end`, so that a block copies no
tile past its end; every iteration still commits its group, to keep the count. A tile
loaded outside the stream (attention's Q) is copied once, into a one-stage buffer, in a
group of its own, and read after a wait and a barrier just before its first use. A
vector that only elementwise maps use (a GEMM's bias; the attention gradient's
log-sum-exp and D, per query row, loaded once or per streamed tile; with a group's query
heads packed, a statistic of r x i rows) stays an `hbm.load`: `smem-to-reg` reads it
straight from global memory into registers where it is used, without a copy, a wait and
a barrier (`read_in_registers`).

With `copy=tma` (sm_90a) the copies are the tensor memory accelerator's and the pipeline
is split between roles that meet only at two rings of mbarriers: a `smem.producer`
region loops over the stream, waits until the consumers have released a stage
(`empty`), announces the stage's bytes and starts the copies into it (`full`); the loop
left in the kernel body (the consumers') waits for `full`, reads, computes and arrives on
`empty`. Step i of the rings (the tile's step plus `smem.ring_position`, the steps
taken before this tile) uses stage i mod stages in round r = i div stages; it waits for
phase r of `full` (parity r mod 2) and for phase r - 1 of `empty` (parity (r + 1) mod 2:
a fresh barrier's phase before the first counts as done, so round 0 does not wait). Tiles
first used apart (attention's K, by the scores, then V, by P V) arrive on full rings of
their own, each waited for just before its first use, so the scores do not wait for V.
Likewise tiles last used apart are released on empty rings of their own, each just after
its last use (a product accumulated by an `add` counts as used there): K's part of a stage
is free once the scores are made, so the producer refills it while P V still reads the V of
that step, and two stages keep a load in flight under a consumer that holds two steps.
Buffers are 128-byte swizzled (`layout=swizzle`).
A chain of stream loops (causal attention's) has one producer loop over the whole stream.
A tile loaded outside the stream (attention's Q) is copied by the producer before its
stream, into a one-stage buffer on a one-stage barrier of its own; the consumers wait for
its phase 0 just before its first use. In a persistent kernel (`hbm.persistent`: a block
loops over tiles) that buffer is refilled for each tile: its rings take one step a tile
(`smem.tile_position`, the tiles the block computed before), the consumers release it on
an empty barrier after its last use, and the producer waits for that before the next
tile's copy, so the copy runs while the consumers finish the last tile.

With `store=tma` as well, a bf16 or f16 tile stored after the stream leaves through shared
memory: a two-stage buffer of one 128-byte panel of columns (64 elements) by the tile's
rows; for each panel, `smem.tma_store_wait {pending = 1}` (the store two panels back has
read the stage; pending 0 for the first of an odd count, whose stage the last panel's
store reads), `smem.write` of the panel into the stage and `smem.tma_store` of the stage.
Where two stages do not fit beside the other buffers, one does, each panel waiting for
every store before it (pending 0). Where not even one fits and the tile has the shape and
type of a tile loaded once and read for the last time before the store (attention's O and
Q), it leaves from that tile's room: the consumers meet (`smem.tma_store_wait {pending =
0}`), write it there whole and store it; a persistent block then waits for the store to
have read the room before it releases it to the producer for the next tile's copy. The
stores run on while the block goes on (a persistent block, to its next tile). An f32
vector stored beside it (attention's log-sum-exp, one value per row) is stored straight
from registers.

With `copy=tma`, a 16-bit tile computed in a stream loop that a product contracts along
the block's rows (the attention gradient's dS, for dQ^T = K^T dS^T in blocks that hold
keys: the warps split the keys, so none holds a whole sum) goes through a buffer of
128-byte panels (of the streamed queries, or, where they fill none, as at 80 queries a
tile, of the keys, which the product then reads K-major): the consumers write it
(`smem.write`), meet with the writes fenced for the tensor cores (`smem.barrier
{async_proxy}`), and the product reads it from there; two stages where they fit beside
the rest (dQ's two first), tile t in stage t mod 2, else one, which the consumers meet
before writing too. An f32 tile added into a global inside
a stream loop (dQ's part of each key block) leaves through 128-byte swizzled f32 panels,
two stages where they fit, by the TMA's reduce-add (`smem.tma_store {accumulate}`),
which a store role beside the producer issues (`smem.storer`: the consumers hand it each
stage on a full mbarrier ring and take it back on an empty one, never meeting for it).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, builtin, scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from napkin_ir.dialects import hbm, loop_facts, ncd, smem
from napkin_ir.dialects.utils import constant
from napkin_ir.target import SM90, dtype


def _const(v: int) -> arith.ConstantOp:
    return arith.ConstantOp.from_int_and_width(v, IndexType())


def _constant_value(v: SSAValue, what: str) -> int:
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, builtin.IntegerAttr):
        return op.value.value.data
    raise PassFailedException(f"hbm-to-smem: the stream loop's {what} must be a constant")


def _load_key(load: hbm.LoadOp, loop: scf.ForOp) -> tuple:
    """What a streamed load reads, up to the loop's counter: its source, offsets and tile."""
    iv = loop.body.block.args[0]
    t = load.result.type
    return (load.source, tuple(None if o is iv else o for o in load.offsets), t.shape, t.element_type)  # type: ignore[attr-defined]


def stream_chains(loops: list[scf.ForOp]) -> list[list[scf.ForOp]]:
    """The stream loops grouped into chains: a loop that starts where the previous one over
    the same axis ends and carries on its results continues that loop's stream."""
    chains: list[list[scf.ForOp]] = []
    for loop in loops:
        prev = chains[-1][-1] if chains else None
        if (prev is not None and loop.parent is prev.parent and loop.lb is prev.ub
                and loop_facts.stream_axis(loop) == loop_facts.stream_axis(prev)
                and list(loop.iter_args) == list(prev.results)):
            chains[-1].append(loop)
        else:
            chains.append([loop])
    return chains


def _first_use_groups(loop: scf.ForOp, loads: list[hbm.LoadOp]) -> list[list[int]]:
    """The loads (by position) grouped by the op of the loop's body that first uses each,
    in the order of those ops: tiles first used together arrive on one barrier. A vector
    (`tma_vector`: a statistic of the streamed rows) rides with the tiles first used last
    before it (the attention gradient's log-sum-exp with Q, D with dO), or with the first."""
    body = loop.body.block
    at = [body.get_operation_index(f) if (f := first_use(body, load)) is not None else len(body.ops) for load in loads]
    tiles = [n for n in range(len(loads)) if not tma_vector(loads[n])]
    order = sorted({at[n] for n in tiles})
    groups = [[n for n in tiles if at[n] == k] for k in order]
    for n in range(len(loads)):
        if n not in tiles and groups:
            before = [g for g, k in enumerate(order) if k <= at[n]]
            groups[before[-1] if before else 0].append(n)
    return groups


def first_use(block: Block, load: hbm.LoadOp) -> Operation | None:
    """The op of `block` that holds the first use of the tile `load` reads, if any."""
    users = [u.operation for u in load.result.uses]
    return min((block_ancestor(block, u) for u in users), key=block.get_operation_index, default=None)


def accumulating_add(product: Operation) -> ncd.MapOp | None:
    """The `add` that is the only use of `product` (a contraction), if any: the register
    levels issue the product there, onto the add's other operand (`smem-to-reg`)."""
    users = [u.operation for u in product.results[0].uses] if isinstance(product, ncd.ContractOp) else []
    return users[0] if len(users) == 1 and isinstance(users[0], ncd.MapOp) and users[0].fn.data == "add" else None


def _released_after(block: Block, tiles: list[SSAValue]) -> Operation:
    """The op of `block` after which the stage `tiles` were read from may be released: the
    last that uses them, a product counting as used at its accumulating add (where the
    register levels issue it); the block's terminator where none is used."""
    ends = []
    for tile in tiles:
        for use in tile.uses:
            op = block_ancestor(block, use.operation)
            add = accumulating_add(op)
            ends.append(add if add is not None and add.parent_block() is block else op)
    assert block.last_op is not None
    return max(ends, key=block.get_operation_index, default=block.last_op)


def block_ancestor(block: Block, op: Operation) -> Operation:
    """The op of `block` that holds `op` (op itself if it is in the block)."""
    while op.parent is not block:
        parent = op.parent_op()
        assert parent is not None, "the op is not inside the block"
        op = parent
    return op


def read_in_registers(load: hbm.LoadOp) -> bool:
    """Whether a loaded tile is a vector (one axis of more than one place) that only
    elementwise maps use, as a bias is: it goes straight into registers, outside the stream
    or in it (the attention gradient's log-sum-exp and D, one value per streamed query)."""
    t: ncd.TensorType = load.result.type  # type: ignore[assignment]
    uses = [u.operation for u in load.result.uses]
    if not uses or not all(isinstance(u, ncd.MapOp) for u in uses):
        return False
    if sum(n > 1 for n in t.dims) == 1:
        return True
    # a statistic of the rows of a block that packs a group's query heads (r x i): each map
    # broadcasts it along an axis it lacks, so it is one value a row of the tiles it meets
    return all(any(a not in t.shape and n > 1 for a, n in u.result.type.shape.items()) for u in uses)  # type: ignore[attr-defined]


def tma_vector(load: hbm.LoadOp) -> bool:
    """Whether a vector read into registers (`read_in_registers`: a statistic of the streamed
    rows) can come with a TMA pipeline's tiles instead: f32, its one axis of more than one
    place the global's innermost, whose rows, like the vector, are whole 16 bytes."""
    t: ncd.TensorType = load.result.type  # type: ignore[assignment]
    g: hbm.GlobalType = load.source.type  # type: ignore[assignment]
    wide = [a for a, n in t.shape.items() if n > 1]
    return (read_in_registers(load) and t.dtype == "f32" and wide == [g.axis_names[-1]]
            and dtype(g.dtype).size(g.dims[-1]) % 16 == 0 and dtype(t.dtype).size(t.shape[wide[0]]) % 16 == 0)


def _sink_maps(block: Block, value: SSAValue, at: Operation) -> None:
    """Move each elementwise map of `value` that stands before `at` (the producer that
    copies the tile `value` is) down to just before its first use: a tile loaded once and
    used only past the stream (a GEMM's residual, added to the sums) is then read where it
    is used, after its buffer and barrier, not before them. A map nothing reads is
    dropped."""
    for use in list(value.uses):
        op = use.operation
        if not (isinstance(op, ncd.MapOp) and op.parent is block
                and block.get_operation_index(op) < block.get_operation_index(at)):
            continue
        _sink_maps(block, op.result, at)
        target = min((block_ancestor(block, u.operation) for u in op.result.uses), key=block.get_operation_index, default=None)
        if target is None:  # read by nothing: gone
            Rewriter.erase_op(op)
            continue
        if block.get_operation_index(target) < block.get_operation_index(at):
            continue  # used before the producer too: left where it is
        op.detach()
        Rewriter.insert_op([op], InsertPoint.before(target))


def _staged_once(block: Block) -> list[hbm.LoadOp]:
    """The tiles loaded outside the stream that are copied into shared memory once."""
    return [o for o in block.ops if isinstance(o, hbm.LoadOp) and not read_in_registers(o)]


def _hoist_before(value: SSAValue, op: Operation) -> None:
    """Move the index arithmetic that computes `value` (a stream's end, computed between
    its loops) before `op`, where the producer's loop needs it."""
    owner = value.owner
    if not isinstance(owner, Operation) or owner.parent is not op.parent:
        return
    block = op.parent
    assert block is not None
    if block.get_operation_index(owner) < block.get_operation_index(op):
        return
    if not isinstance(owner, arith.ConstantOp | arith.AddiOp | arith.SubiOp | arith.MuliOp | arith.DivUIOp | arith.MinUIOp):
        raise PassFailedException(f"hbm-to-smem: the stream's end is computed by {owner.name} between its loops; "
                                  "the producer needs it before the first")
    for v in owner.operands:
        _hoist_before(v, op)
    owner.detach()
    Rewriter.insert_op([owner], InsertPoint.before(op))


def _block_rows(kernel: hbm.KernelOp) -> set[str]:
    """The axes the grid cuts into tiles of more than one place: the block's rows."""
    return {a for a, n in hbm.parse_labels(kernel.grid).items() if n > 1}


def _contracted_rows(kernel: hbm.KernelOp) -> list[tuple[ncd.ContractOp, SSAValue]]:
    """(product, operand) for each operand computed in a stream loop (rounded to 16 bits in
    registers) that its product contracts along the block's rows: the warps split those
    rows, so no warp holds what the product sums, and the tile goes through shared memory."""
    rows = _block_rows(kernel)
    return [(op, v) for loop in loop_facts.stream_loops(kernel) for op in loop.body.block.ops if isinstance(op, ncd.ContractOp)
            for v in op.operands if isinstance(v.owner, ncd.MapOp) and v.owner.parent_block() is loop.body.block
            and set(op.over_axes) & rows & set(v.type.axis_names)]  # type: ignore[attr-defined]


def _refuse_contracted_rows(kernel: hbm.KernelOp) -> None:
    """cp.async kernels have no staging of a computed tile for a product over its rows."""
    for op, v in _contracted_rows(kernel)[:1]:
        raise PassFailedException(f"hbm-to-smem: @{kernel.sym_name.data}: {v.name_hint or 'a tile'} is computed in the stream "
                                  f"and contracted along the block's rows ({', '.join(sorted(set(op.over_axes) & _block_rows(kernel)))}), "
                                  "which the warps split: it goes through shared memory by stmatrix for wgmma, on "
                                  "sm_90a (copy=tma); with cp.async it is not lowered")


def _contracted_rows_bytes(kernel: hbm.KernelOp) -> int:
    """The shared memory one stage of each of `_stage_contracted_rows`'s buffers takes."""
    shapes = {(tuple(_staged_shape(kernel, op, v.type).items()), v.type.element_type)  # type: ignore[arg-type, attr-defined]
              for op, v in _contracted_rows(kernel)}
    return sum(smem.BufferType(dict(shape), et, 1, "swizzle").bytes() for shape, et in shapes)


def _stage_contracted_rows(kernel: hbm.KernelOp, room: int) -> list[smem.BufferType]:
    """A tile computed in a stream loop that a product contracts along the block's rows
    (the attention gradient's dS in dQ^T = K^T dS^T, in blocks that hold keys) goes through
    shared memory: each consumer writes its rows (`smem.write`), they meet with their
    writes fenced for the tensor cores (`smem.barrier {async_proxy}`), and the product
    reads the stage (`smem.read`). Each product from the stage is complete before its
    warp goes on. Two stages where they fit in `room`: tile t in stage t mod 2, where the
    products of tile t - 2 read last, and every warp has met since (tile t - 1's meeting,
    which no warp reaches before its products of tile t - 2 are done), so the tile is
    written with no meeting before it; the consumers meet once before the loop instead (a
    persistent block's last tile may have read either stage). With one stage they meet
    before writing too (no warp still reads the stage)."""
    types: list[smem.BufferType] = []
    staged: dict[tuple, smem.AllocOp] = {}
    met: set[Operation] = set()
    two = 2 * _contracted_rows_bytes(kernel) <= room
    for op, v in _contracted_rows(kernel):
        t: ncd.TensorType = v.type  # type: ignore[assignment]
        shape = _staged_shape(kernel, op, t)
        inner = dtype(t.dtype).size(list(shape.values())[-1])
        if not dtype(t.dtype).is_half or inner % 128:
            raise PassFailedException(f"hbm-to-smem: @{kernel.sym_name.data}: {v.name_hint or 'a tile'} {t} is contracted "
                                      "along the block's rows, which the warps split: it goes through shared memory by "
                                      "stmatrix, as 128-byte panels of 16-bit columns (64 columns each), of the stream "
                                      "tile (64 or 128) or else of the contracted rows; this one has "
                                      f"{inner}-byte rows of {t.dtype}")
        key = (tuple(shape.items()), t.element_type)
        if key not in staged:
            buf_t = smem.BufferType(shape, t.element_type, 2 if two else 1, "swizzle")
            staged[key] = smem.AllocOp(buf_t)
            Rewriter.insert_op([staged[key]], InsertPoint.at_start(kernel.body.block))
            types.append(buf_t)
        alloc = staged[key]
        if two:
            loop = op.parent_op()
            assert isinstance(loop, scf.ForOp)  # _contracted_rows: a product in a stream loop's body
            if loop not in met:
                met.add(loop)
                Rewriter.insert_op(smem.BarrierOp(), InsertPoint.before(loop))
            step, count = _const(_constant_value(loop.step, "step")), _const(2)
            tile = arith.DivUIOp(loop.body.block.args[0], step.result)
            stage = arith.RemUIOp(tile.result, count.result)
            ops: list[Operation] = [step, count, tile, stage]
        else:
            stage = _const(0)
            ops = [stage, smem.BarrierOp()]
        read = smem.ReadOp(alloc.result, stage.result)
        ops += [smem.WriteOp(v, alloc.result, stage.result, {}), smem.BarrierOp(async_proxy=True), read]
        Rewriter.insert_op(ops, InsertPoint.before(op))
        op.operands[list(op.operands).index(v)] = read.result
    return types


def _staged_shape(kernel: hbm.KernelOp, op: ncd.ContractOp, t: ncd.TensorType) -> dict[str, int]:
    """The shape of the buffer a tile contracted along the block's rows goes through: the
    tile's own (its stream axis innermost: the product reads it MN-major), or, where that
    axis does not fill 128-byte panels (80 queries a tile of the attention gradient's dS),
    the contracted rows moved innermost (the product reads it K-major; the consumers
    write it by `stmatrix.trans`)."""
    shape = dict(t.shape)
    last = t.dims[-1]
    rows = [a for a in op.over_axes if a in _block_rows(kernel) and a in shape]
    if dtype(t.dtype).size(last) % 128 and len(rows) == 1 and dtype(t.dtype).size(shape[rows[0]]) % 128 == 0:
        n = shape.pop(rows[0])
        shape[rows[0]] = n
    return shape


def _ring_round(iv: SSAValue, lb0: SSAValue, step: int, stages: int, position: SSAValue) -> tuple[list[Operation], SSAValue, SSAValue]:
    """(ops, stage, parity of the round) of a ring of `stages` at stream position `iv`: the
    steps count from where the chain starts (`lb0`), on from the ring steps of the block's
    tiles before (`position`)."""
    c_step, c_stages, c2 = _const(step), _const(stages), _const(2)
    ops: list[Operation] = [c_step, c_stages, c2]
    if constant(lb0) != 0:
        rel = arith.SubiOp(iv, lb0)
        ops.append(rel)
        iv = rel.result
    k = arith.DivUIOp(iv, c_step.result)
    i = arith.AddiOp(k.result, position)
    s = arith.RemUIOp(i.result, c_stages.result)
    r = arith.DivUIOp(i.result, c_stages.result)
    p = arith.RemUIOp(r.result, c2.result)
    return [*ops, k, i, s, r, p], s.result, p.result


def _accumulated_stores(loop: scf.ForOp) -> list[hbm.StoreOp]:
    return [o for o in loop.body.block.ops if isinstance(o, hbm.StoreOp) and o.accumulate is not None]


def _storable_by_role(chain: list[scf.ForOp]) -> bool:
    """Whether a store role can add the chain's tiles: every loop adds into the same
    globals, at offsets that are its position or values from outside it."""
    first = _accumulated_stores(chain[0])
    first_iv = chain[0].body.block.args[0]
    for loop in chain:
        stores = _accumulated_stores(loop)
        if [st.dest for st in stores] != [st.dest for st in first]:
            return False
        for st, f in zip(stores, first):
            for o, fo in zip(st.offsets, f.offsets):
                if fo is first_iv:
                    if o is not loop.body.block.args[0]:
                        return False
                elif o is not fo or isinstance(o.owner, Operation) and any(c.is_ancestor(o.owner) for c in chain):
                    return False
    return True


def _tma_adds_in_stream(kernel: hbm.KernelOp, room: int, producers: list[smem.ProducerOp]) -> list[smem.BufferType]:
    """An f32 tile added into a global inside a stream loop (`hbm.store {accumulate}`: the
    attention gradient's dQ, a block's part over its keys, tile by tile of the streamed
    queries) leaves through 128-byte swizzled f32 panels in the global's axis order, by the
    TMA's reduce-add (`smem.tma_store {accumulate}`). Each lane's own atomic adds took as
    long as the rest of the kernel; a row-major stage cost 4-way bank conflicts
    (research/benchmarks.md, 2026-11-27). Two stages where they fit in the `room` the other
    buffers leave, tile t in stage t mod 2 (across a chain of loops too), so that a tile's
    add drains while the next is computed.

    A store role beside the producer (`smem.storer`) adds them, handed over on two mbarrier
    rings of the stages' count (full and empty): per tile the consumers wait until the
    stage is empty (its last add has read it), write the tile and arrive on its full
    barrier with their writes fenced for the TMA; the store role, in a loop over the same
    stream, waits for the full barrier, adds the stage, waits until the add has read it and
    arrives on its empty barrier. The consumers neither meet nor wait for an add."""
    types: list[smem.BufferType] = []
    allocs: dict[SSAValue, smem.AllocOp] = {}  # one buffer a global, for every loop of a chain (causal attention's two)

    def stage_of(store: hbm.StoreOp) -> smem.AllocOp:
        nonlocal room
        t: ncd.TensorType = store.value.type  # type: ignore[assignment]
        g: hbm.GlobalType = store.dest.type  # type: ignore[assignment]
        shape = {a: t.shape[a] for a in g.axis_names}
        cols = g.axis_names[-1]
        if dtype(t.dtype).size(shape[cols]) % 128:
            raise PassFailedException(f"hbm-to-smem: @{kernel.sym_name.data}: {t} is added into {g} inside the stream through "
                                      f"128-byte panels of f32 (32 a row); its {shape[cols]} along '{cols}' are not whole panels")
        if store.dest not in allocs:
            buf_t = smem.BufferType(shape, builtin.f32, 2, "swizzle")
            if buf_t.bytes() > room:
                buf_t = smem.BufferType(shape, builtin.f32, 1, "swizzle")
            room -= buf_t.bytes()
            allocs[store.dest] = smem.AllocOp(buf_t)
            Rewriter.insert_op([allocs[store.dest]], InsertPoint.at_start(kernel.body.block))
            types.append(buf_t)
        return allocs[store.dest]

    for chain in stream_chains(loop_facts.stream_loops(kernel)):
        if not any(_accumulated_stores(loop) for loop in chain):
            continue
        if not producers or not _accumulated_stores(chain[0]) or not _storable_by_role(chain):
            why = "it has no producer (no tile is copied by the TMA)" if not producers else "the stream's loops add differently"
            raise PassFailedException(f"hbm-to-smem: @{kernel.sym_name.data}: an f32 tile added into a global inside the stream "
                                      "leaves by a store role beside the producer, the same adds in every loop of the stream "
                                      f"at its position; {why}")
        _store_role(chain, [stage_of(st) for st in _accumulated_stores(chain[0])], producers[0])
    return types


def _store_role(chain: list[scf.ForOp], allocs: list[smem.AllocOp], producer: smem.ProducerOp) -> None:
    """The chain's adds by a store role (`_tma_adds_in_stream`): its loop over the chain's
    whole stream, and the consumers' side in each loop."""
    first = chain[0]
    step = _constant_value(first.step, "step")
    block = producer.parent_block()
    assert block is not None
    # the producer's rings' position, where it made one: every ring steps once a stream trip
    position = next((o for o in block.ops if isinstance(o, smem.RingPositionOp)), None) or smem.RingPositionOp()
    rings = []
    for alloc in allocs:
        ring = smem.MbarrierType(alloc.result.type.stages.data, 1)  # type: ignore[attr-defined]
        rings.append((smem.MbarrierAllocOp(ring), smem.MbarrierAllocOp(ring)))  # (full, empty)
    body = Block(arg_types=[IndexType()])
    stores = _accumulated_stores(first)
    ops: list[Operation] = []
    for store, alloc, (full, empty) in zip(stores, allocs, rings):
        stages = alloc.result.type.stages.data  # type: ignore[attr-defined]
        r_ops, s, p = _ring_round(body.args[0], first.lb, step, stages, position.result)
        offsets = [body.args[0] if o is first.body.block.args[0] else o for o in store.offsets]
        ops += [*r_ops, smem.MbarrierWaitOp(full.result, s, p),
                smem.TmaStoreOp(alloc.result, s, store.dest, offsets, accumulate=True),
                smem.TmaStoreWaitOp(0), smem.ArriveOp(empty.result, s)]
    body.add_ops([*ops, scf.YieldOp()])
    _hoist_before(chain[-1].ub, first)
    _hoist_before(first.lb, first)
    loop = scf.ForOp(first.lb, chain[-1].ub, first.step, [], Region(body))
    loop_facts.set_stream_axis(loop, loop_facts.stream_axis(first))  # type: ignore[arg-type]
    # the rings (and a position, if the producer has none) beside the producer's, the store role after it
    Rewriter.insert_op([*(b for pair in rings for b in pair), *([] if position.parent else [position])], InsertPoint.before(producer))
    Rewriter.insert_op([smem.StorerOp(Region(Block([loop])))], InsertPoint.after(producer))
    for cloop in chain:
        for store, alloc, (full, empty) in zip(_accumulated_stores(cloop), allocs, rings):
            stages = alloc.result.type.stages.data  # type: ignore[attr-defined]
            r_ops, s, p = _ring_round(cloop.body.block.args[0], first.lb, step, stages, position.result)
            one = _const(1)
            before = arith.SubiOp(one.result, p)  # the round before's parity: the stage's last add has read it
            Rewriter.replace_op(store, [*r_ops, one, before, smem.MbarrierWaitOp(empty.result, s, before.result),
                                        smem.WriteOp(store.value, alloc.result, s, {}),
                                        smem.ArriveOp(full.result, s, async_proxy=True)])


@dataclass
class _Resident:
    """A one-stage buffer of a tile loaded once (attention's Q): its alloc, the op of the
    body after which its last read is done, and the arrive that releases it to a
    persistent block's producer for the next tile (None on a plain grid)."""

    alloc: smem.AllocOp
    last_read: Operation
    release: smem.ArriveOp | None


def _resident_room(kernel: hbm.KernelOp, store: hbm.StoreOp, resident: list[_Resident]) -> _Resident | None:
    """The buffer of a tile loaded once whose room a tile stored after the stream may take
    (FlashAttention's O in Q's room): of the stored tile's shape and element type, every
    read of it done before the store, and not taken by another store."""
    block = kernel.body.block
    t: ncd.TensorType = store.value.type  # type: ignore[assignment]
    for r in resident:
        b: smem.BufferType = r.alloc.result.type  # type: ignore[assignment]
        if b.shape == t.shape and b.axis_names == t.axis_names and b.element_type == t.element_type and b.layout.data == "swizzle" \
                and block.get_operation_index(r.last_read) < block.get_operation_index(store):
            resident.remove(r)
            return r
    return None


def _store_in_resident_room(store: hbm.StoreOp, home: _Resident) -> None:
    """`store`'s tile out through the room of a tile loaded once: once every consumer is past
    its reads of it (`smem.tma_store_wait`, which the consumers meet at), the tile is written
    into the buffer's one stage and stored from there whole. A persistent block releases the
    buffer for its next tile's copy only once that store has read it."""
    zero = _const(0)
    out = smem.TmaStoreOp(home.alloc.result, zero.result, store.dest, list(store.offsets))
    Rewriter.replace_op(store, [zero, smem.TmaStoreWaitOp(0), smem.WriteOp(store.value, home.alloc.result, zero.result, {}), out])
    if home.release is not None:
        home.release.detach()
        Rewriter.insert_op([smem.TmaStoreWaitOp(0), home.release], InsertPoint.after(out))


def short_rows(g: SSAValue, t: smem.BufferType, kernel: hbm.KernelOp | None) -> int | None:
    """The rows a TMA copy of `g` into tiles `t` need bring (`smem.tma_copy`'s `rows`), or
    None for all: where the global is shorter than the tile along its rows' axis (a decode's
    1 to 63 rows of A in a 64-row tile), its length rounded up to 8, so that the TMA does not
    write the rest as zeros every stage. Only where what lies past the edge reaches nothing
    stored: a kernel of one product and element-wise maps (a GEMM and its epilogue), the
    axis not summed over, no cluster of multicast copies (they bring halves; a cluster of
    split sums' parts loads each part's own)."""
    gt = g.type
    if kernel is None or not isinstance(gt, hbm.GlobalType) or len(t.dims) != 2 or t.layout.data != "swizzle":
        return None
    axis, rows = t.axis_names[0], t.dims[0]
    length = gt.shape.get(axis, rows)
    if length >= rows or kernel.multicast_blocks > 1:
        return None
    products = [op for op in kernel.walk() if isinstance(op, ncd.ContractOp)]
    if len(products) != 1 or not ncd.made_of(kernel, ncd.ContractOp, ncd.MapOp) or axis in products[0].over_axes:
        return None
    short = -(-length // 8) * 8
    return short if short < rows else None


@dataclass(frozen=True)
class HbmToSmemPass(ModulePass):
    name = "hbm-to-smem"
    stages: int = 3
    layout: str = ""
    smem_bytes: int = SM90.smem_per_block()  # the most one block may take on sm_90a (and the sm_80 code run there)
    copy: str = "cp.async"
    store: str = "direct"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        tma = self.copy == "tma"
        if self.copy not in ("cp.async", "tma"):
            raise PassFailedException(f"hbm-to-smem: copy must be cp.async or tma, got '{self.copy}'")
        if self.stages < 2:
            raise PassFailedException(f"hbm-to-smem: stages must be at least 2 (one buffer cannot overlap copy and compute), got {self.stages}")
        if self.stages > (16 if tma else 8):
            why = "the mbarrier rings hold at most 16" if tma else "cp.async waits count up to 7 pending groups"
            raise PassFailedException(f"hbm-to-smem: at most {16 if tma else 8} stages ({why}), got {self.stages}")
        layout = self.layout or ("swizzle" if tma else "row")
        if layout not in smem.LAYOUTS:
            raise PassFailedException(f"hbm-to-smem: unknown layout '{layout}'; expected one of {', '.join(smem.LAYOUTS)}")
        if self.store not in ("direct", "tma"):
            raise PassFailedException(f"hbm-to-smem: store must be direct or tma, got '{self.store}'")
        if self.store == "tma" and not tma:
            raise PassFailedException("hbm-to-smem: store=tma writes tiles out with the TMA of sm_90a; it needs copy=tma")
        if tma and layout != "swizzle":
            raise PassFailedException(f"hbm-to-smem: TMA copies fill 128-byte swizzled buffers; layout={layout} cannot be used with copy=tma")
        kernels = [k for k in op.walk() if isinstance(k, hbm.KernelOp)]
        if not kernels:
            raise PassFailedException("hbm-to-smem: the module has no hbm.kernel; run ncd-to-hbm first")
        for kernel in kernels:
            loops = loop_facts.stream_loops(kernel)
            if tma:
                producers: list[smem.ProducerOp] = []
                buffers = [self._tma_pipeline(chain, layout, producers) for chain in stream_chains(loops)]
                resident: list[_Resident] = []
                buffers.append(self._tma_one_time_copies(kernel, layout, producers, resident))
                # dS takes its two stages before dQ's adds their second: with one, its writers
                # meet before each tile as well as after it (the attention gradient at d=64,
                # where both stages are 32 KB and 2 + 2 do not fit: 1.4-4% faster so,
                # research/benchmarks.md, session 68). An add's stage (f32, the head dim
                # wide) is at least dS's (16-bit, 128 keys wide) at d >= 64, so whatever fits
                # with dQ's two and dS's one fits this way round too.
                staged = 2 * _contracted_rows_bytes(kernel)
                buffers.append(_tma_adds_in_stream(kernel, self.smem_bytes - staged - sum(b.bytes() for bs in buffers for b in bs), producers))
                buffers.append(_stage_contracted_rows(kernel, self.smem_bytes - sum(b.bytes() for bs in buffers for b in bs)))
                if self.store == "tma":
                    buffers.append(self._tma_stores(kernel, self.smem_bytes - sum(b.bytes() for bs in buffers for b in bs), resident))
            else:
                _refuse_contracted_rows(kernel)
                buffers = [self._pipeline(chain, layout) for chain in stream_chains(loops)]
                buffers.append(self._one_time_copies(kernel, layout))
            total = sum(b.bytes() for bs in buffers for b in bs)
            if total > self.smem_bytes:
                detail = ", ".join(f"{b}: {b.bytes()}" for bs in buffers for b in bs)
                raise PassFailedException(f"hbm-to-smem: @{kernel.sym_name.data} needs {total} bytes of shared memory "
                                          f"({detail}), over the budget of {self.smem_bytes}; use fewer stages or smaller tiles")

    def _tma_stores(self, kernel: hbm.KernelOp, room: int, resident: list[_Resident]) -> list[smem.BufferType]:
        """Each tile stored after the stream goes out through a two-stage buffer of one
        128-byte panel of columns (one stage where two would not fit in the `room` the
        other buffers leave): per panel, wait until the store two panels back has read the
        stage (`smem.tma_store_wait {pending = 1}`), write the panel into it, store it.
        Panel j takes stage j mod 2, so with an odd count of panels the first panel's stage
        is the one the last panel's store reads: that wait retires every store (pending 0),
        those a persistent block's last tile left running too. With one stage every wait
        retires every store."""
        types = []
        stores = [o for o in kernel.body.block.ops if isinstance(o, hbm.StoreOp)]
        rows_of = {s.value.type.axis_names[:-1] for s in stores}  # type: ignore[attr-defined]
        for store in stores:
            t: ncd.TensorType = store.value.type  # type: ignore[assignment]
            g: hbm.GlobalType = store.dest.type  # type: ignore[assignment]
            where = f"hbm-to-smem: @{kernel.sym_name.data}: store=tma"
            if t.dtype == "f32" and t.axis_names in rows_of:
                continue  # a row statistic of another stored tile (attention's log-sum-exp): stored from registers
            wide = [a for a, n in t.shape.items() if n > 1]
            if not dtype(t.dtype).is_half or len(wide) < 2 or t.axis_names[-1] not in wide:
                raise PassFailedException(f"{where} writes bf16 or f16 tiles of rows and columns (stmatrix moves 16-bit "
                                          f"elements), the columns last; got {t}")
            cols = t.axis_names[-1]
            panel = dtype(t.dtype).elements(128)
            if t.shape[cols] % panel:
                raise PassFailedException(f"{where} writes 128-byte panels of {panel} columns; the tile has {t.shape[cols]} along '{cols}'")
            if dtype(g.dtype).size(g.shape[cols]) % 16:
                raise PassFailedException(f"{where} needs the global's rows to be a multiple of 16 bytes (the TMA's stride); "
                                          f"'{cols}' has {g.shape[cols]} elements")
            panel_shape = {**{a: t.shape[a] for a in t.axis_names[:-1]}, cols: panel}  # rows: the places of the other axes
            buf_t = smem.BufferType(panel_shape, t.element_type, 2, "swizzle")
            if buf_t.bytes() > room:
                buf_t = smem.BufferType(panel_shape, t.element_type, 1, "swizzle")
            if buf_t.bytes() > room and (home := _resident_room(kernel, store, resident)) is not None:
                _store_in_resident_room(store, home)
                continue
            room -= buf_t.bytes()
            stages = buf_t.stages.data
            alloc = smem.AllocOp(buf_t)
            Rewriter.insert_op([alloc], InsertPoint.at_start(kernel.body.block))
            ops: list[Operation] = []
            col_offset = store.offsets[list(g.axis_names).index(cols)]
            panels = t.shape[cols] // panel
            for j in range(panels):
                stage = _const(j % stages)
                ops.append(stage)
                moved = col_offset
                if j:
                    shift = _const(j * panel)
                    add = arith.AddiOp(col_offset, shift.result)
                    ops += [shift, add]
                    moved = add.result
                offsets = [moved if a == cols else o for o, a in zip(store.offsets, g.axis_names)]
                # the stage's last store must have read it: two panels back, or, for the first
                # panel of an odd count, the last tile's last (a persistent block's stores run
                # on); with one stage, the panel before
                ops += [smem.TmaStoreWaitOp(0 if stages == 1 or j == 0 and panels % 2 else 1),
                        smem.WriteOp(store.value, alloc.result, stage.result, {cols: j * panel}),
                        smem.TmaStoreOp(alloc.result, stage.result, store.dest, offsets)]
            Rewriter.replace_op(store, ops)
            types.append(buf_t)
        return types

    def _streamed_loads(self, loop: scf.ForOp, layout: str, vectors: bool = False) -> tuple[int, list[hbm.LoadOp], list[smem.BufferType]]:
        step = _constant_value(loop.step, "step")
        loads = self._loop_loads(loop, vectors)
        types = [smem.BufferType(l.result.type.shape, l.result.type.element_type, self.stages,  # type: ignore[attr-defined]
                                 "row" if tma_vector(l) else layout) for l in loads]
        return step, loads, types

    def _pipeline(self, chain: list[scf.ForOp], layout: str) -> list[smem.BufferType]:
        """Pipeline a chain of stream loops as one stream of tiles (see the module's doc)."""
        stages = self.stages
        first = chain[0]
        step, per_loop = self._chain_loads(chain)
        if not per_loop[0]:
            return []
        types = [smem.BufferType(l.result.type.shape, l.result.type.element_type, stages, layout) for l in per_loop[0]]  # type: ignore[attr-defined]
        allocs = [smem.AllocOp(t) for t in types]
        lb0, end = first.lb, chain[-1].ub
        lb0_const, end_const = constant(lb0), constant(end)
        # with known bounds a copy past the end reads zeros and is never read; otherwise the
        # copies are guarded by where the stream ends
        guarded = lb0_const is None or end_const is None

        def copies(loop: scf.ForOp, loads: list[hbm.LoadOp], pos: SSAValue, stage: SSAValue) -> list[Operation]:
            iv = loop.body.block.args[0]
            ops: list[Operation] = [smem.CopyOp(l.source, [pos if o is iv else o for o in l.offsets], buf.result, stage)
                                    for l, buf in zip(loads, allocs)]
            if not guarded:
                return ops
            inside = arith.CmpiOp(pos, end, "ult")
            return [inside, scf.IfOp(inside.result, [], [*ops, scf.YieldOp()])]

        # before the first loop: the buffers and the prologue, tiles 0 .. stages-2
        before: list[Operation] = list(allocs)
        for u in range(stages - 1):
            stage = _const(u)
            if lb0_const is not None:
                start = _const(lb0_const + u * step)
                before += [start, stage]
            else:
                delta = _const(u * step)
                start = arith.AddiOp(lb0, delta.result)
                before += [delta, start, stage]
            before += [*copies(first, per_loop[0], start.results[0], stage.result), smem.CommitOp()]
        Rewriter.insert_op(before, InsertPoint.before(first))
        Rewriter.insert_op([smem.WaitOp(0)], InsertPoint.after(chain[-1]))

        # in each loop: wait for this tile, read it, start the one stages - 1 ahead
        for loop, loads in zip(chain, per_loop):
            body = loop.body.block
            iv = body.args[0]
            c_step, c_stages, c_ahead = _const(step), _const(stages), _const((stages - 1) * step)
            c_ahead_tiles = _const(stages - 1)
            head: list[Operation] = [c_step, c_stages, c_ahead, c_ahead_tiles]
            rel = iv
            if lb0_const != 0:  # the tile's number counts from where the chain starts
                sub = arith.SubiOp(iv, lb0)
                head.append(sub)
                rel = sub.result
            i = arith.DivUIOp(rel, c_step.result)
            stage = arith.RemUIOp(i.result, c_stages.result)
            head += [i, stage, smem.WaitOp(stages - 2), smem.BarrierOp()]
            reads = [smem.ReadOp(buf.result, stage.result) for buf in allocs]
            head += reads
            nxt = arith.AddiOp(iv, c_ahead.result)
            nxt_i = arith.AddiOp(i.result, c_ahead_tiles.result)
            nxt_stage = arith.RemUIOp(nxt_i.result, c_stages.result)
            head += [nxt, nxt_i, nxt_stage, *copies(loop, loads, nxt.result, nxt_stage.result), smem.CommitOp()]
            Rewriter.insert_op(head, InsertPoint.at_start(body))
            for load, read in zip(loads, reads):
                load.result.replace_all_uses_with(read.result)
                Rewriter.erase_op(load)
            loop_facts.set_pipeline(loop, stages, loop_facts.CopyEngine.CP_ASYNC)
        return types

    def _chain_loads(self, chain: list[scf.ForOp]) -> tuple[int, list[list[hbm.LoadOp]]]:
        """(step, each loop's streamed loads) of a chain whose loops share their step and load
        the same tiles, as one pipeline needs."""
        first = chain[0]
        step = _constant_value(first.step, "step")
        for loop in chain[1:]:
            if _constant_value(loop.step, "step") != step:
                raise PassFailedException("hbm-to-smem: the stream loops over one axis must share their step")
        per_loop = [self._loop_loads(loop) for loop in chain]
        keys = [_load_key(l, first) for l in per_loop[0]]
        for loop, loads in zip(chain[1:], per_loop[1:]):
            if [_load_key(l, loop) for l in loads] != keys:
                raise PassFailedException(f"hbm-to-smem: the stream loops over '{loop_facts.stream_axis(first)}' "
                                          "must load the same tiles to share one pipeline")
        return step, per_loop

    def _loop_loads(self, loop: scf.ForOp, vectors: bool = False) -> list[hbm.LoadOp]:
        """The loop's loads that move with its counter and go through shared memory: tiles,
        and with `vectors` (a TMA pipeline) the statistics that ride with them."""
        iv = loop.body.block.args[0]
        return [o for o in loop.body.block.ops if isinstance(o, hbm.LoadOp) and iv in o.offsets
                and (not read_in_registers(o) or vectors and tma_vector(o))]

    def _one_time_copies(self, kernel: hbm.KernelOp, layout: str) -> list[smem.BufferType]:
        """A tile loaded outside the stream (attention's Q) is copied once, in a group of its
        own, where it was loaded; it is read after a wait and a barrier just before its first
        use, leaving in flight the groups committed in between (the stream's prologue)."""
        block = kernel.body.block
        types = []
        for load in _staged_once(block):
            t = smem.BufferType(load.result.type.shape, load.result.type.element_type, 1, layout)  # type: ignore[attr-defined]
            types.append(t)
            alloc, zero = smem.AllocOp(t), _const(0)
            Rewriter.insert_op([alloc, zero, smem.CopyOp(load.source, list(load.offsets), alloc.result, zero.result), smem.CommitOp()],
                               InsertPoint.before(load))
            first = first_use(block, load)
            if first is None:
                Rewriter.erase_op(load)
                continue
            pending = 0
            for op in block.ops:
                if op is load:
                    pending = 0
                elif op is first:
                    break
                elif isinstance(op, smem.CommitOp):
                    pending += 1
                elif isinstance(op, scf.ForOp) and loop_facts.pipeline(op) is not None:
                    pending = -len(block.ops)  # a pipeline in between ends with a wait for every group
            read = smem.ReadOp(alloc.result, zero.result)
            Rewriter.insert_op([smem.WaitOp(max(pending, 0)), smem.BarrierOp(), read], InsertPoint.before(first))
            load.result.replace_all_uses_with(read.result)
            Rewriter.erase_op(load)
        return types

    @staticmethod
    def _check_tma_tile(load: hbm.LoadOp, t: smem.BufferType) -> None:
        g: hbm.GlobalType = load.source.type  # type: ignore[assignment]
        if dtype(g.dtype).size(g.dims[-1]) % 16:
            raise PassFailedException(f"hbm-to-smem: copy=tma needs each global's rows to be a multiple of 16 bytes (the TMA's "
                                      f"stride); '{g.axis_names[-1]}' of {load.source.name_hint or 'an input'} has {g.dims[-1]} elements")
        inner = dtype(t.dtype).size(t.dims[-1])
        if inner % 128:
            raise PassFailedException(f"hbm-to-smem: a TMA tile with 128-byte swizzle needs rows of whole 128-byte panels; "
                                      f"{t.tile} has {inner}-byte rows along '{t.axis_names[-1]}'")

    def _tma_pipeline(self, chain: list[scf.ForOp], layout: str, producers: list[smem.ProducerOp]) -> list[smem.BufferType]:
        """One producer loop over the chain's whole stream; each consumer loop numbers its
        steps from where the chain starts (0), so the rings run on across the loops."""
        first = chain[0]
        step, loads, types = self._streamed_loads(first, layout, vectors=True)
        self._chain_loads(chain)
        if not any(not tma_vector(l) for l in loads):
            return []
        for load, t in zip(loads, types):
            if not tma_vector(load):
                self._check_tma_tile(load, t)
        allocs = [smem.AllocOp(t) for t in types]
        ring = smem.MbarrierType(self.stages, 1)
        # a full ring for each group of tiles first used together (attention's K, then V:
        # the scores need not wait for V)
        groups = _first_use_groups(first, loads)
        fulls = [smem.MbarrierAllocOp(ring) for _ in groups]
        # an empty ring for each point of the body where groups are last used (attention
        # releases K after the scores, V after P V), so that a stage of K is refilled while
        # the V of its step is still read
        ends = [_released_after(first.body.block, [loads[n].result for n in group]) for group in groups]
        points = sorted(set(ends), key=first.body.block.get_operation_index)
        empties = [smem.MbarrierAllocOp(ring) for _ in points]
        empty_of = [empties[points.index(e)] for e in ends]

        position = smem.RingPositionOp()  # steps the rings took before this tile
        lb0 = first.lb  # where the stream starts: 0, or where a mask lets it (the gradient's dK and dV)

        def round_of(iv: SSAValue) -> tuple[list[Operation], SSAValue, SSAValue]:
            return _ring_round(iv, lb0, step, self.stages, position.result)

        # the producer: its own loop over the stream
        body = Block(arg_types=[IndexType()])
        ops, s, p = round_of(body.args[0])
        one = _const(1)
        prev = arith.SubiOp(one.result, p)  # parity of the round before: (r + 1) mod 2
        ops += [one, prev]
        last: smem.MbarrierAllocOp | None = None
        for group, full, empty in zip(groups, fulls, empty_of):
            # the stage of each ring released before its copies: waited again where another
            # ring's wait stands between (a sum's products sharing an operand, K dG, V dA, K
            # dG^T: dG^T's copy follows V's wait, not the wait that released its stage)
            if empty is not last:
                ops.append(smem.MbarrierWaitOp(empty.result, s, prev.result))
                last = empty
            copies = []
            for n in group:
                offsets = [body.args[0] if o is first.body.block.args[0] else o for o in loads[n].offsets]
                copies.append(smem.TmaCopyOp(loads[n].source, offsets, allocs[n].result, s, full.result, s,
                                             rows=short_rows(loads[n].source, types[n], hbm.enclosing_kernel(first))))
            ops.append(smem.ArriveExpectOp(full.result, s, sum(c.copied_bytes() for c in copies)))
            ops += copies
        body.add_ops([*ops, scf.YieldOp()])
        _hoist_before(chain[-1].ub, first)
        _hoist_before(lb0, first)
        produce = scf.ForOp(first.lb, chain[-1].ub, first.step, [], Region(body))
        loop_facts.set_stream_axis(produce, loop_facts.stream_axis(first))  # type: ignore[arg-type]
        producer = smem.ProducerOp(4, Region(Block([produce])))
        producers.append(producer)
        # the statistics' plain buffers first in the kernel, so that none sits between two
        # buffers of panels (each 1024-byte aligned) and wastes the room up to the next
        vector_allocs = [a for a, l in zip(allocs, loads) if tma_vector(l)]
        kernel = hbm.enclosing_kernel(first)
        if vector_allocs and kernel is not None:
            Rewriter.insert_op(vector_allocs, InsertPoint.at_start(kernel.body.block))
        Rewriter.insert_op([*(a for a in allocs if a not in vector_allocs), *fulls, *empties, position, producer],
                           InsertPoint.before(first))

        # the consumers: wait for each group of the stage just before its first use, read
        # it, compute, release each ring's part of the stage after its last use
        for loop in chain:
            cbody = loop.body.block
            loop_loads = self._loop_loads(loop, vectors=True)
            # before the first use of any of the group's tiles (a statistic's may come first: a
            # map of it alone, as the log-sum-exp in base 2 where no row kernel wrote it)
            uses = [min((u for n in group if (u := first_use(cbody, loop_loads[n])) is not None), key=cbody.get_operation_index,
                        default=None) for group in groups]
            released = [_released_after(cbody, [loop_loads[n].result for n in group]) for group in groups]
            ops, s, p = round_of(cbody.args[0])
            Rewriter.insert_op(ops, InsertPoint.at_start(cbody))
            reads = [smem.ReadOp(buf.result, s) for buf in allocs]
            for group, full, use in zip(groups, fulls, uses):
                at = InsertPoint.before(use) if use is not None else InsertPoint.before(cbody.last_op)  # type: ignore[arg-type]
                Rewriter.insert_op([smem.MbarrierWaitOp(full.result, s, p), *(reads[n] for n in group)], at)
            assert cbody.last_op is not None
            for empty in empties:
                last = max((e for e, ring in zip(released, empty_of) if ring is empty), key=cbody.get_operation_index)
                at = InsertPoint.after(last) if last is not cbody.last_op else InsertPoint.before(last)
                Rewriter.insert_op([smem.ArriveOp(empty.result, s)], at)
            for load, read in zip(loop_loads, reads):
                load.result.replace_all_uses_with(read.result)
                Rewriter.erase_op(load)
            loop_facts.set_pipeline(loop, self.stages, loop_facts.CopyEngine.TMA)
        return types

    def _tma_one_time_copies(self, kernel: hbm.KernelOp, layout: str, producers: list[smem.ProducerOp],
                             resident: list[_Resident]) -> list[smem.BufferType]:
        """A tile loaded outside the stream (attention's Q) is copied once by the producer,
        before its stream, into a one-stage buffer on a barrier of its own; the consumers wait
        for its phase 0 just before the tile's first use. Each such buffer read in the body is
        listed in `resident`, with the op after which its last read is done and the
        release a persistent block arrives on there."""
        block = kernel.body.block
        loads = _staged_once(block)
        if not loads:
            return []
        if not producers:
            producer = smem.ProducerOp(4, Region(Block()))
            Rewriter.insert_op([producer], InsertPoint.before(loads[0]))
            producers.append(producer)
        producer_block = producers[0].body.block
        at = producers[0]
        ring = smem.MbarrierType(1, 1)
        zero = _const(0)
        parity, before = zero.result, zero.result  # of this tile's phase of the rings, and of the one before
        setup: list[Operation] = [zero]
        if kernel.persistent is not None:
            tile, two, one = smem.TilePositionOp(), _const(2), _const(1)
            p = arith.RemUIOp(tile.result, two.result)
            prev = arith.SubiOp(one.result, p.result)
            setup += [tile, two, one, p, prev]
            parity, before = p.result, prev.result
        Rewriter.insert_op(setup, InsertPoint.before(at))
        types = []
        for load in loads:
            t = smem.BufferType(load.result.type.shape, load.result.type.element_type, 1, layout)  # type: ignore[attr-defined]
            self._check_tma_tile(load, t)
            types.append(t)
            alloc, bars = smem.AllocOp(t), smem.MbarrierAllocOp(ring)
            empty = smem.MbarrierAllocOp(ring) if kernel.persistent is not None else None
            Rewriter.insert_op([alloc, bars, *([empty] if empty else [])], InsertPoint.before(at))
            first_op = producer_block.first_op
            copy: list[Operation] = [smem.MbarrierWaitOp(empty.result, zero.result, before)] if empty else []
            copy += [smem.ArriveExpectOp(bars.result, zero.result, t.bytes()),
                     smem.TmaCopyOp(load.source, list(load.offsets), alloc.result, zero.result, bars.result, zero.result)]
            Rewriter.insert_op(copy, InsertPoint.before(first_op) if first_op is not None else InsertPoint.at_end(producer_block))
            _sink_maps(block, load.result, at)
            first = first_use(block, load)
            if first is not None:
                read = smem.ReadOp(alloc.result, zero.result)
                Rewriter.insert_op([smem.MbarrierWaitOp(bars.result, zero.result, parity), read], InsertPoint.before(first))
                load.result.replace_all_uses_with(read.result)
                last = _released_after(block, [read.result])
                release = smem.ArriveOp(empty.result, zero.result) if empty else None
                if release:  # released after the last op of the body that reads it
                    Rewriter.insert_op([release], InsertPoint.after(last))
                resident.append(_Resident(alloc, last, release))
            elif empty:
                Rewriter.insert_op([smem.ArriveOp(empty.result, zero.result)], InsertPoint.before(block.last_op))  # type: ignore[arg-type]
            Rewriter.erase_op(load)
        return types
