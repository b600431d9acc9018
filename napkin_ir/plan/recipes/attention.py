"""The attention family: softmax, causal and spherical attention, grouped-query heads.

Recognised by structure (`diagram.attention_axes`: two contractions, the second over the
first's keys). A block takes a tile of query rows of one batch entry and head (or a
group's query heads packed into its rows), streams the keys, and the normalisation
along them becomes its online form at the hbm level. On sm_80: cp.async stages, padded,
warps of 16 rows issuing mma.sync with Q's fragments loaded once. On sm_90a: TMA stages
on mbarrier rings filled by a producer warpgroup, consumer warpgroups of 64 rows issuing
wgmma (S = Q K^T with Q from shared memory or registers, P V with P from registers), one
tile's P V overlapped with the next tile's scores, the warpgroups taking turns, the
output through TMA stores where their panels fit, and a persistent grid where the
streams are short. The measurements behind each default are in research/benchmarks.md
("Why napkin-sm90's attention defaults are what they are").
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import PassFailedException, VerifyException

from napkin_ir.dialects import ncd
from napkin_ir.errors import UserError
from napkin_ir.model.hardware import Hardware, hardware
from napkin_ir.passes.composite import run_passes, spec
from napkin_ir.plan.autotile import AutotileResult, Candidate, Progress, announce, axis_roles, chosen, judge, parsed, search, the_function
from napkin_ir.plan.diagram import AttentionAxes, attention_axes, attention_shape, group_size, operand_dtype
from napkin_ir.plan.kernel_plan import CopyEngine, KernelPlan, Launch, LaunchOrder, ProductEngine, SmemLayout, StorePath
from napkin_ir.plan.request import PlanRequest
from napkin_ir.target import SM80, SM90, Engine, Target

NAME = "attention"
WIDE_STREAM = 176  # keys a tile where no mask cuts them, at head dims up to 128 (FlashAttention-3's)
# queries a tile of a kernel that adds dQ along the stream, by head dim: 128 at d=64 once the
# schedule kept P's registers free over dS's math (1.06-1.14x 64, H200 2026-11-29), else 64
ADDED_STREAM = {64: 128, 128: 64}
# at d=128 without a mask, FlashAttention-4's 80 queries a tile (dS staged keys innermost)
# where the last tile pads the queries by at most 1/ADDED_PAD of them (16k: 16 rows over;
# 4k: 64, 1.6%): 1.03x 64 at 16k, 1.05x at 4k (kernels alone, a block a tile); under a
# causal mask 64 stays (80 lost 1.5%; H200 2026-11-29, research/benchmarks.md)
WIDE_ADDED_STREAM, ADDED_PAD = 80, 50
DEEP_STREAM = 80  # keys a tile of a long stream at head dims over 128 (FlashAttention-3's at 256)
PERSISTENT_WORK = 2048 * 256  # keys x head dim a block streams on average, at which a persistent grid stops paying
LONG_STREAM = 2048  # a causal block's average keys over which its diagonal tiles are a small share
SM80_TILES = (128, 64)  # query rows, keys
BARRIER_BYTES = 64  # the mbarriers of Q's, K's, V's and the output's rings


def recognise(module: ModuleOp) -> AttentionAxes | None:
    return attention_axes(module)


def plan(module: ModuleOp, axes: AttentionAxes, target: Target, req: PlanRequest) -> KernelPlan:
    """The plan for `module`, attention, on `target` as `req` asks."""
    if target.has(Engine.WGMMA):
        return _plan_sm90(module, req)
    req.refuse("attention on sm_80", ("autotile", "layout", "group", "split", "deterministic"))
    given = req.sized("block", 2, "for attention: query rows, keys")
    rows, keys = given or SM80_TILES
    warps = req.sized("warps", 1, "for attention: the warps sharing the rows")
    stages = req.stages or 3
    if "stages" not in req.given and not given:  # at large head dims, fewer stages, then fewer rows, until the tiles fit
        while not sm80_fits(module, rows, keys, stages) and (stages > 2 or rows > 64):
            stages, rows = (stages - 1, rows) if stages > 2 else (stages, rows // 2)
    return sm80_plan(module, rows, keys, warps[0] if warps else None, stages, sm80_hoist_pays(module))


def sm80_hoist_pays(module: ModuleOp) -> bool:
    """Whether sm_80 attention loads the fragments of its resident tiles once: where they
    hold at most 128 columns a warp's rows (Q at head dims up to 128; the gradient's two
    resident tiles at 64); past that they and the accumulators outgrow a thread's 255
    registers, and each product reloads them from shared memory instead."""
    axes, sizes = attention_shape(module)
    return head_dim(axes, sizes) * staged_tiles(module, axes)[1] <= 128


def sm80_fits(module: ModuleOp, rows: int, keys: int, stages: int) -> bool:
    """Whether sm_80 attention's padded stages fit a block's shared memory: the tiles that
    move with the keys (K and V; the gradient's Q and dO where its rows are keys), `stages`
    deep, beside those loaded once for the block's rows (Q; the gradient's Q and dO, or K
    and V). Vectors (the log-sum-exp) are read into registers and take none."""
    axes, sizes = attention_shape(module)
    streamed, resident = staged_tiles(module, axes)
    row_bytes = (head_dim(axes, sizes) + 8) * operand_dtype(module).bytes
    return (streamed * stages * keys + resident * rows) * row_bytes <= SM80.smem_per_block()


def staged_tiles(module: ModuleOp, axes: AttentionAxes) -> tuple[int, int]:
    """(the inputs staged along the keys, those loaded once for the block's rows): K and V,
    and Q, for the forward; the gradient's dQ streams K and V beside Q and dO, its dK
    streams Q and dO beside K and V. Vectors (the log-sum-exp) are not counted
    (`streamed_vectors`)."""
    f = the_function(module)
    assert f is not None
    tiles = [a.type for a in f.body.block.args if sum(n > 1 for n in a.type.shape.values()) > 1]  # type: ignore[attr-defined]
    return (sum(axes.keys in t.shape for t in tiles),
            sum(axes.keys not in t.shape and axes.query in t.shape for t in tiles))


def streamed_vectors(module: ModuleOp, axes: AttentionAxes) -> int:
    """The f32 vectors along the streamed keys (the gradient's dK and dV kernels stream the
    queries' log-sum-exp and D): the TMA brings them with the streamed tiles where their
    rows are whole 16 bytes (`hbm-to-smem`), 4 bytes a streamed position each a stage."""
    f = the_function(module)
    assert f is not None
    per_row = (*axes.batch, *axes.group, axes.keys)  # one value a streamed position of each head
    return sum(axes.keys in a.type.shape and all(x in per_row for x in a.type.shape)  # type: ignore[attr-defined]
               and str(a.type.element_type) == "f32" for a in f.body.block.args)  # type: ignore[attr-defined]


def _plan_sm90(module: ModuleOp, req: PlanRequest) -> KernelPlan:
    rows, keys = req.sized("block", 2, "for attention: query rows, keys") or (0, 0)
    persistent = persistent_pays(module, rows) if req.persistent is None else req.persistent
    req.refuse("attention on sm_90a", ("group", "cluster", "warps", "split", "deterministic", "swap"))
    if req.autotile:
        req.refuse("autotile=true (the model chooses it)", ("block",))
        # stages given, overlap or ping-pong turned off, and the blocks an SM bound the search
        space = AttentionSpace(stages=(req.stages,) if req.stages else (2, 3), overlap=(True, False) if req.overlap else (False,),
                               pingpong=(True, False) if req.pingpong else (False,), blocks_per_sm=req.blocks_per_sm,
                               persistent=persistent, store=req.store, q_registers=req.q_registers, partial_sums=req.partial_sums,
                               lazy_rescale=req.lazy_rescale)
        return chosen_attention(module, req.hw, req.pipeline, space)
    return sm90_plan(module, rows or None, keys or None, req.stages or 0, req.overlap, req.pingpong, req.blocks_per_sm, persistent,
                     req.store, req.q_registers, partial_sums=req.partial_sums, lazy_rescale=req.lazy_rescale)


# --------------------------------------------------------------------------------------
# sm_80
# --------------------------------------------------------------------------------------


def sm80_plan(module: ModuleOp, block: int = 128, stream: int = 64, warps: int | None = None, stages: int = 3,
              q_in_registers: bool = True, blocks_per_sm: int = 1) -> KernelPlan:
    """Blocks of `block` query rows (tiles fitted to the axes: `fit_tiles`), keys streamed
    `stream` at a time through `stages` padded cp.async stages, `warps` warps sharing the
    rows (16 each by default), Q's fragments loaded once (`q_in_registers`). Grouped-query
    attention's blocks take `group_tiles`' query heads of a group by query positions, a
    warp a head or more: each K and V tile is copied once for them all."""
    axes, sizes = attention_shape(module)
    fitted = fit_tiles(sizes[axes.query], sizes[axes.keys], block, stream, warps, group_size(axes, sizes))
    return sm80_tiles_plan(fitted["block"], fitted["stream"], fitted["warps"], stages, q_in_registers, (axes.query, axes.keys),
                           axes.batch + axes.summed, blocks_per_sm, (axes.group[0], fitted["heads"]) if axes.group else None)


def sm80_tiles_plan(block: int = 128, stream: int = 64, warps: int | None = None, stages: int = 3, q_in_registers: bool = True,
                    axes: tuple[str, str] = ("i", "j"), batch: tuple[str, ...] = ("b", "h"), blocks_per_sm: int = 1,
                    group: tuple[str, int] | None = None) -> KernelPlan:
    """`sm80_plan` with its tiles and axes given: `group` (axis, heads) packs that many
    query heads of a group into a block."""
    i, j = axes
    w = warps or block // 16
    per_block = group[1] if group else 1
    heads = ((group[0], per_block),) if group else ()
    # a warp holds one query head of those a block packs, or more warps share it
    warp_heads = heads if per_block > 1 else ()
    # the query tiles of one head run together (they share its K and V in L2), longest first
    return KernelPlan(NAME, SM80, grid=(*((b, None) for b in batch), *heads, (i, block // per_block)), stream=(j, stream),
                      stages=stages, copy=CopyEngine.CP_ASYNC, product=ProductEngine.MMA_SYNC, layout=SmemLayout.PAD8,
                      warps=(*warp_heads, (i, w // per_block)), hoist=q_in_registers,
                      launch=Launch(order=LaunchOrder.LAST, blocks_per_sm=blocks_per_sm))


def sm80_attention_pipeline(*args, **kwargs) -> str:
    """`sm80_tiles_plan`'s passes to the register level, as a pipeline spec."""
    return spec(sm80_tiles_plan(*args, **kwargs).passes("reg"))


def sm80_attention_passes(module: ModuleOp, **config) -> str | None:
    """The pipeline spec that takes `module`, if it is attention, to the register level on
    sm_80 (`sm80_plan`); None otherwise."""
    return spec(sm80_plan(module, **config).passes("reg")) if attention_axes(module) is not None else None


def group_tiles(group: int, block: int, warps: int | None = None) -> tuple[int, int]:
    """(query heads, query positions) of a block of `block` query rows of grouped-query
    attention, `group` query heads sharing a key/value head: the most heads of the group
    (a divisor of it) that leave each head a multiple of 16 positions (whole warps' rows:
    each warp holds 16 rows or more of one head), and, given `warps`, a whole number of
    warps. (1, block) where the heads are not grouped."""
    for heads in range(group, 0, -1):
        if group % heads or block % heads or (block // heads) % 16:
            continue
        if warps is not None and (warps % heads or (block // heads) % (16 * (warps // heads))):
            continue
        return heads, block // heads
    return 1, block


def fit_tiles(n_queries: int, n_keys: int, block: int = 128, stream: int = 64, warps: int | None = None,
              group: int = 1) -> dict[str, int]:
    """Tiles no longer than the axes (a tile may not exceed its axis): the block's rows and
    the stream tile halve, down to 16, until they fit; the warps of a shrunk block keep 16
    rows or more each. With a `group` of query heads sharing K and V, a block holds
    `heads` of them (`group_tiles`), and its positions along the queries are what must fit."""
    fitted = block
    while fitted > 16 and group_tiles(group, fitted)[1] > n_queries and group_tiles(group, fitted // 2)[1] >= 16:
        fitted //= 2
    while stream > 16 and stream > n_keys:
        stream //= 2
    w = warps or fitted // 16
    w = w if fitted == block else min(w, fitted // 16)
    return {"block": fitted, "stream": stream, "warps": w, "heads": group_tiles(group, fitted, w)[0]}


# --------------------------------------------------------------------------------------
# sm_90a
# --------------------------------------------------------------------------------------


def sm90_plan(module: ModuleOp, block: int | None = None, stream: int | None = None, stages: int = 0, overlap: bool = True,
              pingpong: bool = True, blocks_per_sm: int = 1, persistent: bool = False, store: StorePath | None = None,
              q_registers: bool | None = None, schedule: bool | None = None, partial_sums: bool | None = None,
              lazy_rescale: bool | None = None) -> KernelPlan:
    """Blocks of `block` query rows (warpgroups of 64 consumer rows each; one batch entry and
    head a block, longest first), keys streamed `stream` at a time through `stages` TMA
    stages filled by a producer warpgroup (None or 0 for the defaults: `sm90_tiles`), K
    and V released on rings of their own. `overlap` runs a tile's P V while the next
    tile's scores are made; `pingpong` has the consumer warpgroups take turns issuing
    products; `q_registers` loads each warp's rows of Q into registers once a tile (None:
    where `q_registers_pay`); `blocks_per_sm` blocks share a multiprocessor; `persistent`
    launches as many blocks as fit, each looping over query tiles in pairs of equal work
    (the longest with the shortest), its producer loading the next tile while the
    consumers finish the last. `store` TMA writes the output by stmatrix into 64-column
    panels and TMA stores, direct from registers, None the first where it fits.
    `schedule` issues each wgmma group as soon as its operands are ready and waits for it
    where its results are first read (None: where `schedule_pays`). `partial_sums` keeps
    the forward's running row sums as each lane's part (None: where `partial_sums_pay`),
    and the wait for V goes where it paid with them or without. `lazy_rescale` moves the
    forward's running max only where a row outgrows it by more than a slack and skips the
    output's unit corrections (None: where `lazy_rescale_pays`).

    Grouped-query attention packs the query heads of a group into a block (`group_tiles`:
    in 128 rows 4 heads by 32 positions, 8 by 16; in 192, 4 by 48), so each K and V tile
    is copied once for all of them."""
    axes, sizes = attention_shape(module)
    if q_registers is None:
        q_registers = q_registers_pay(module, block, stream, blocks_per_sm)
    elif q_registers and resident_rows_innermost(module, axes):
        raise PassFailedException(f"napkin-sm90: q_registers=true loads the first product's A into registers by ldmatrix, which reads "
                                  f"K-major rows from the 128-byte swizzle; a tile this block loads once holds its rows "
                                  f"('{axes.query}') innermost (M-major): wgmma reads it from shared memory (q_registers=false)")
    block, stream, stages, budget, store = sm90_tiles(module, block, stream, stages, blocks_per_sm, store, q_registers, persistent)
    if added_along_stream(module, axes):  # dS's barriers keep the warpgroups in step: taking turns
        overlap = pingpong = False  # measured 3% slower on the H100 (research/benchmarks.md, 2026-11-27)
    per_head, rows = group_tiles(group_size(axes, sizes), block)
    # asked for, only where there is a running sum (the planner refuses the request where there is none)
    partial_sums = partial_sums_pay(module, stream) if partial_sums is None else partial_sums and running_sums(module)
    lazy_rescale = lazy_rescale_pays(module, persistent) if lazy_rescale is None else lazy_rescale and running_max(module)
    packed = ((axes.group[0], per_head),) if axes.group else ()
    return KernelPlan(NAME, SM90, grid=(*((b, None) for b in axes.batch + axes.summed), *packed, (axes.query, rows)), stream=(axes.keys, stream),
                      stages=stages, copy=CopyEngine.TMA, product=ProductEngine.WGMMA, store=store, a_registers=q_registers,
                      launch=Launch(order=LaunchOrder.LAST, blocks_per_sm=blocks_per_sm, persistent=persistent), smem_bytes=budget,
                      overlap=overlap, pingpong=pingpong, schedule=schedule_pays(module) if schedule is None else schedule,
                      early_reads=early_reads_pay(module, stream), later_reads=later_reads_pay(module, stream),
                      early_waits=early_waits_place(module, stream, persistent, partial_sums) if overlap else "",
                      partial_sums=partial_sums, lazy_rescale=lazy_rescale)


def sm90_passes(module: ModuleOp, *args, **kwargs) -> tuple:
    """`sm90_plan`'s passes, to PTX."""
    return sm90_plan(module, *args, **kwargs).passes()


def sm80_passes(module: ModuleOp, *args, **kwargs) -> tuple:
    """`sm80_plan`'s passes, to PTX."""
    return sm80_plan(module, *args, **kwargs).passes()


def q_registers_pay(module: ModuleOp, block: int | None = None, stream: int | None = None, blocks_per_sm: int = 1) -> bool:
    """Whether napkin-sm90 keeps Q in registers by default for blocks of `block` query rows
    and `stream` keys a tile (None: the defaults): at head dims from 64 up to 128, in a
    block of up to 128 rows alone on its multiprocessor, with up to 128 keys a tile. Q's
    32 registers a thread at d=128 fit beside 128 keys' scores, probabilities and the
    output's accumulators in a consumer's 240, not beside 176 keys' (ptxas spills); 2-8%
    faster on the H200 (research/benchmarks.md). Not in a kernel of four products a tile
    (the gradient's dK and dV together): its two f32 accumulators beside the scores and
    dP leave no room for the resident tiles' fragments (ptxas spills 656 bytes at d=128)."""
    axes, sizes = attention_shape(module)
    d = head_dim(axes, sizes)
    return 64 <= d <= 128 and blocks_per_sm == 1 and (block or _rows_for(module, axes, sizes)) <= 128 and (stream or 0) <= 128 \
        and not resident_rows_innermost(module, axes) and products(module) <= 3


def schedule_pays(module: ModuleOp) -> bool:
    """Whether napkin-sm90 schedules the wgmma groups of `module`'s attention
    (`reg-wgmma-schedule`) by default: in the gradient's kernels, but for its kernel of dK
    and dV (four products a tile, two accumulators carried) at head dims up to 64 without
    a mask (128 queries a tile) or at d=128 under one. Where a tile's groups read nothing
    of each other (the gradient's S and dP, then dV beside dS), it measured 3-13% faster
    for dQ's kernel, 7-9% for dK and dV's at d=128, 5-9% for theirs at d=64 under a mask
    (64 queries a tile), and 9-31% for the one kernel of all three (unmasked and causal,
    1k-16k tokens); dK and dV's kernel, with dP in flight beside its two accumulators,
    measured up to 3% slower at d=64 unmasked and up to 4% under a causal mask at d=128,
    and once guarded loads stopped spilling (`ptx.ld{zero}`) 1% and 1-2% slower (at d=64
    it still spills 36 bytes a thread; research/benchmarks.md). The forward's products each need the one before (P V
    the softmax of S): nothing is issued early, and its loops are `reg-wgmma-overlap`'s."""
    axes, sizes = attention_shape(module)
    if not _gradient(module, axes):
        return False
    if products(module) == 4:  # dK and dV: at d=64 under a mask (64 queries a tile), at d=128 without one
        return axes.masked if head_dim(axes, sizes) <= 64 else not axes.masked
    return True


def early_reads_pay(module: ModuleOp, stream: int) -> bool:
    """Whether napkin-sm90 reads the log-sum-exp (or spherical attention's norms) from its
    stage before the loop's products are issued (`reg-early-reads`): in the gradient's one
    kernel of dQ, dK and dV (five products a tile) streaming up to 80 queries a tile, whose
    16 or 20 registers a lane fit beside S and dP in flight. The kernel alone at d=128 over
    16k tokens (80 queries a tile, 64 under a mask): 1.2-2.3% faster, 1.5-3.4% under a
    causal mask (three calls); at d=64 (128 queries a tile, 32 registers a lane) 0.4-1.8%
    slower (H200, research/benchmarks.md, session 63)."""
    axes, _ = attention_shape(module)
    return _gradient(module, axes) and products(module) == 5 and stream <= 80


def later_reads_pay(module: ModuleOp, stream: int) -> bool:
    """Whether napkin-sm90 also reads the gradient's D (met by dP = dO V^T, the block's
    second awaited products) just before dP's wait rather than after it
    (`reg-early-reads{later=true}`, FA4's place for its dPsum): in the one kernel of dQ, dK
    and dV at 80 queries a tile (d=128 without a mask). ptxas then issues the loads among
    the scores' scaling, so they are back by the time dS = P (dP - D) is made. The kernel
    alone over 16k tokens: 80 queries a tile 1.010-1.011 (two rounds); 64 under a causal
    mask 0.968-0.983, where the loads delay the exponentials they are issued before; d=64
    (128 queries, 32 registers a lane) 0.974-0.980, 0.90-0.92 under a mask, where ptxas
    spills 116 bytes (H200, research/benchmarks.md, session 69)."""
    return stream == WIDE_ADDED_STREAM and early_reads_pay(module, stream)


def running_sums(module: ModuleOp) -> bool:
    """Whether `module` is an attention forward, whose stream loop keeps a running row sum
    (the softmax's denominator, or spherical attention's) that `reg-partial-row-sums` can
    keep as each lane's part."""
    axes = attention_axes(module)
    return axes is not None and not _gradient(module, axes)


def partial_sums_pay(module: ModuleOp, stream: int) -> bool:
    """Whether napkin-sm90 keeps the forward's running row sums as each lane's part
    (`reg-partial-row-sums`: no quad exchange a trip, each trip's sum one chain from the
    scaled part, FA4's form): in a softmax forward at head dims up to 128 with more than
    two tiles of up to 128 keys (`_pipelined_loop`: at two, a pipelined loop of one trip,
    ptxas spills 168 bytes a thread at d=128, and at 176 keys a tile over 2k, where the
    tree and exchange spill none). Kernels alone over 16k keys, against the tree and the
    exchange a trip, each with the wait for V where the recipe puts it (H200, 2026-11-30:
    three calls of a research copy, two of the pass; research/benchmarks.md, session 66):
    d=128 1.008-1.025 (1.025-1.046 with the wait before the products), causal 1.034-1.061;
    d=64 1.023-1.030, causal 1.019-1.033; grouped heads (4 a group) 1.015-1.052, causal
    with the wait before the products 1.063; a persistent block (4k causal) 1.029-1.033.
    d=256: 0.990-1.002, left off. Spherical attention's forward was not measured."""
    axes, sizes = attention_shape(module)
    return running_max(module) and head_dim(axes, sizes) <= 128 and _pipelined_loop(axes, sizes, stream)


def running_max(module: ModuleOp) -> bool:
    """Whether `module` is a softmax's forward, whose stream loop keeps a running row max
    that `reg-lazy-rescale` can let stay behind."""
    return running_sums(module) and _softmax(module)


def lazy_rescale_pays(module: ModuleOp, persistent: bool) -> bool:
    """Whether napkin-sm90's forward keeps its running max until a row of a warp outgrows it
    by 2^8 and skips the output's corrections where they are 1 (`reg-lazy-rescale`,
    FlashAttention-4's lazy rescale): on a plain grid (not persistent) at d=128 without a
    mask (grouped heads too) and at d=64 under a causal mask (not grouped heads: not
    measured). Kernels alone against the
    eager max (H200, 2026-11-30, session 67; research/benchmarks.md): d=128 over 16k
    1.023-1.041 (four calls), grouped heads (4 a group) 1.025-1.033; d=64 causal over 16k
    1.012-1.020 (four). Left off where it measured slower or even: d=128 causal over 16k
    0.982-1.000, grouped causal 0.986-1.023, d=64 without a mask 0.989-0.993; the
    persistent blocks at 4k 0.969-0.994 (d=64 and 128, masked or not); d=256 0.99-1.03."""
    axes, sizes = attention_shape(module)
    d = head_dim(axes, sizes)
    return running_max(module) and not persistent and (d == 128 and not axes.masked or d == 64 and axes.masked and not axes.group)


def _pipelined_loop(axes: AttentionAxes, sizes: dict[str, int], stream: int) -> bool:
    """Whether the forward streams more than two tiles of up to 128 keys: where ptxas holds
    a larger block of the loop without spilling (at 176 keys, or in a pipelined loop of one
    trip, it spills)."""
    return stream <= 128 and sizes[axes.keys] > 2 * stream


def early_waits_place(module: ModuleOp, stream: int, persistent: bool = False, partial_sums: bool = False) -> str:
    """Where napkin-sm90's overlapped forward waits for a trip's V (`reg-early-waits{at}`),
    so that ptxas interleaves P's packing with the softmax ("": where it stood, before P
    V's wait): for a softmax (a spherical forward's norm was not measured) with up to 128
    keys a tile and more than two tiles. Kernels alone over 16k keys
    (H200), against the wait where it stood: right after the scores' wait, d=64
    1.001-1.024x, causal 1.030-1.037x (four calls); d=128 0.998-1.026x, causal
    1.006-1.017x. At d=128, after the row max instead (ptxas then waits for P V after the
    scores' scaling): 0.999-1.023x, causal 1.004-1.021x against the first placement (six
    calls); at d=64 1.001-1.016x, causal 0.976-0.988x (two): d=64 keeps the first, and so
    does a persistent block (its loops inside the loop over query tiles), where after the
    max ptxas spills 60-64 bytes a thread under a causal mask (research/benchmarks.md,
    session 64). At 176 keys a tile ptxas spills 156 bytes a thread, and at two tiles (a
    pipelined loop of one trip) 20. At d=256 (80 keys a tile; 64 in a persistent causal
    block), the op against FA4 in the same rounds (H200, 2026-11-30), after the max against
    the wait where it stood: 4k 652 against 653 TFLOP/s, causal (persistent, where after
    the scores measured the same 605) 605 against 598; 16k 711 against 702, causal 695
    against 679; after the scores 636 and 699 without a mask. Under a causal mask at
    d=128 on a plain grid (query heads ungrouped), in the next trip just before the
    products that read it (`at="products"`, FA4's order), against after the max, kernels
    alone over 16k keys (three calls, H200 2026-11-30): 1.029, 1.010, 1.010; without a
    mask 1.002, 0.993, 0.994 and at d=64 0.986-0.989 (causal 1.000-1.005), so those keep
    theirs. Grouped heads and d=256 were not measured there. With the running sums kept
    as each lane's part (`partial_sums`, `reg-partial-row-sums`), the products' place at
    d=128 on a plain grid, masked or not and grouped or not, against after the max (both
    with the parts; H200, 2026-11-30, two calls): 1.007-1.011 without a mask, causal
    1.048-1.064; grouped heads 0.990-1.001, causal 1.050-1.065; at d=64 after the max
    against after the scores, 0.986-1.000."""
    axes, sizes = attention_shape(module)
    d = head_dim(axes, sizes)
    if _gradient(module, axes) or not _softmax(module) or not _pipelined_loop(axes, sizes, stream):
        return ""
    if d > 64 and not persistent:
        return "products" if d <= 128 and (partial_sums or axes.masked and not axes.group) else "max"
    return "scores"


def resident_rows_innermost(module: ModuleOp, axes: AttentionAxes) -> bool:
    """Whether a tile loaded once for the block's rows lies with those rows innermost (the
    MLP's W1 [k, h] in the gradient dW2, whose rows are h): read as a product's A it is
    M-major, which wgmma reads from shared memory with its transpose bit, as CUTLASS reads
    an M-major A; ldmatrix from the 128-byte swizzle loads `a` fragments of K-major rows
    only, so such an A stays in shared memory. A vector of the rows (a log-sum-exp) is no tile."""
    f = the_function(module)
    assert f is not None
    rows = (*axes.batch, *axes.group, axes.query)
    tiles = [a.type for a in f.body.block.args if isinstance(a.type, ncd.TensorType) and any(x not in rows for x in a.type.axis_names)]
    return any(axes.query in t.shape and axes.keys not in t.shape and t.axis_names[-1] == axes.query for t in tiles)


def persistent_pays(module: ModuleOp, block: int | None = None) -> bool:
    """Whether napkin-sm90 launches `module`'s attention persistent by default (blocks of
    `block` query rows, or the default): where a block's stream (its keys, half under a
    causal mask, times the head dim) is PERSISTENT_WORK or less on average, so that the
    prologue and epilogue each block pays are a large share of its time; twice that for a
    softmax forward under a causal mask at head dims over 128 (query heads not packed: not
    measured), whose persistent block takes
    80 keys a tile and stores from Q's room (`sm90_tiles`): at d=256 over 8k, 652 TFLOP/s
    against 626 on the plain grid (FA4 660), and over 16k 677 against 699 (H200,
    2026-12-01, session 74); spherical attention at head dims over 64 up to 128 at any
    length. Never:

    - for blocks of three consumer warpgroups (research/benchmarks.md);
    - for a kernel that adds a result along the stream (the gradient's dQ beside dK and
      dV): on a plain grid its blocks' dK and dV leave through the consumers' shared
      memory, where a persistent block's producer is loading the next block's tiles and its
      stores go from registers. Without a mask its blocks' work is even; under a causal
      mask the plain grid launched longest first (`hbm.order = "last_from_start"`) balances
      the uneven blocks as the paired persistent ones do. The op's backward over 16k tokens,
      H200 2026-12-01, plain against persistent: d=128 causal 1.08x at 1k and 2k, 1.01x at
      4k and 8k; d=64 causal 1.03x at 1k and 2k, 1.00x at 4k, 1.01x at 8k and 16k; grouped
      heads (4 a group, d=128, causal) 1.22x at 1k, 1.07x at 2k; spherical attention
      (d=128) 1.09x at 1k; d=128 without a mask (64 queries a tile where 80 would pad)
      1.23x at 256 keys, 1.13x at 512 (research/benchmarks.md, session 71);
    - for the gradient's kernels at head dims over 128 (dQ's, dK's and dV's, a kernel
      each), whose blocks' 256 columns leave the same way. The op's backward at d=256 over
      16k tokens, H200 2026-12-01, plain against persistent: 1.10x at 512 keys under a
      causal mask and 1.08x without, 1.05x and 1.07x at 1k, 1.01x and 1.05x at 2k, 0.995x at
      4k under the mask (research/benchmarks.md, session 72). At d=128 and below, where the
      two kernels run below 512 keys (1k under a mask), the loop stays: it ran 1.07x a
      block a tile at 512 keys under a mask (d=128), 1.21x at 256 without (d=64)."""
    axes, sizes = attention_shape(module)
    if (block or _rows_for(module, axes, sizes)) > 128:
        return False
    d = head_dim(axes, sizes)
    if added_along_stream(module, axes) or (d > 128 and _gradient(module, axes)):
        return False
    if _spherical_narrow(module, d):
        return True
    work = sizes[axes.keys] / (2 if axes.masked else 1) * d
    # a softmax under a causal mask at head dims over 128, its output from Q's room
    # (`sm90_tiles`): twice the work
    if axes.masked and not axes.group and running_max(module) and q_room_pays(module, axes):
        return work <= 2 * PERSISTENT_WORK
    return work <= PERSISTENT_WORK


def default_rows(module: ModuleOp) -> int:
    """The query rows of napkin-sm90's attention blocks where none are given: 192 (three
    consumer warpgroups, FlashAttention-3's tile at head dim 64) at head dims up to 64
    where the stream is long, else 128 (research/benchmarks.md). The gradient's kernels
    take 128: three warpgroups' 160 registers a thread hold the forward's one accumulator
    at d=64, not the gradient's recomputed scores, dP and accumulators (ptxas spills 88
    to 636 bytes)."""
    return _rows_for(module, *attention_shape(module))


def _rows_for(module: ModuleOp, axes: AttentionAxes, sizes: dict[str, int]) -> int:
    return 192 if head_dim(axes, sizes) <= 64 and _long_stream(axes, sizes) and not _gradient(module, axes) else 128


def _gradient(module: ModuleOp, axes: AttentionAxes) -> bool:
    """Whether `module` is a kernel of attention's gradient: more than two products a
    tile, or a row statistic read (the log-sum-exp or D: an input of rows alone)."""
    return products(module) > 2 or bool(_row_inputs(module, axes))


def _row_inputs(module: ModuleOp, axes: AttentionAxes) -> list[ncd.TensorType]:
    """The inputs of rows alone (no head dim): the log-sum-exp, spherical attention's norm,
    D, and where a kernel reads one, a tile of queries by keys."""
    f = the_function(module)
    rows = {*axes.batch, *axes.group, *axes.summed, axes.query, axes.keys}
    return [a.type for a in (f.body.block.args if f is not None else ())
            if isinstance(a.type, ncd.TensorType) and set(a.type.axis_names) <= rows]


def _reads_row_vector(module: ModuleOp, axes: AttentionAxes) -> bool:
    """Whether `module` reads a vector of the query rows or of the keys (not a tile of
    both, as a GEMM's gradient reads dC)."""
    return any(not {axes.query, axes.keys} <= set(t.axis_names) for t in _row_inputs(module, axes))


def products(module: ModuleOp) -> int:
    """The contractions a tile of `module`'s attention computes: two for the forward, three
    for the gradient's dQ or dK, two for its dV, four for dK and dV together."""
    return sum(isinstance(op, ncd.ContractOp) for op in module.walk())


def _half_tiles(module: ModuleOp, axes: AttentionAxes) -> bool:
    """Whether every tile the kernel stores (an output with columns, not a row statistic
    such as the log-sum-exp) is 16-bit, as stmatrix moves."""
    f = the_function(module)
    rows = {*axes.batch, *axes.group, *axes.summed, axes.query}
    return f is not None and all(t.dtype in ("bf16", "f16") for t in f.function_type.outputs.data  # type: ignore[attr-defined]
                                 if set(t.axis_names) - rows)


def out_in_resident_room(module: ModuleOp, axes: AttentionAxes) -> bool:
    """Whether every tile the kernel stores has the shape and type of a tile it loads once
    for the block's rows (the forward's O and Q): `hbm-to-smem` then stores it by TMA
    from that tile's room, once the last product has read it, where no panel stage fits
    beside the rest (FlashAttention's O in Q's room)."""
    f = the_function(module)
    if f is None:
        return False
    rows = {*axes.batch, *axes.group, *axes.summed, axes.query}
    once = [a.type for a in f.body.block.args if isinstance(a.type, ncd.TensorType) and axes.keys not in a.type.shape
            and axes.query in a.type.shape and set(a.type.axis_names) - rows]
    stored = [t for t in f.function_type.outputs.data if isinstance(t, ncd.TensorType) and set(t.axis_names) - rows]
    return bool(stored) and all(t in once for t in stored)


def q_room_pays(module: ModuleOp, axes: AttentionAxes) -> bool:
    """Whether napkin-sm90's plan may leave the output to Q's room where no panel stage fits
    (`out_in_resident_room`; a persistent block then waits for that store before its next
    Q): at head dims over 128, where it was measured (a persistent block at d=128 keeps its
    stores), and not beside a result added along the stream."""
    return head_dim(axes, attention_shape(module)[1]) > 128 and not added_along_stream(module, axes) \
        and out_in_resident_room(module, axes)


def _softmax(module: ModuleOp) -> bool:
    """Whether the attention normalises its scores by a softmax (else an L2 norm: spherical):
    the forward's softmax, or its gradient's probabilities recomputed by exp from the
    saved log-sum-exp (a row vector read: a product's epilogue of exp, as a GEMM's
    gradient recomputes it, is no softmax), or by exp2 from it in base 2 (`ncd-fold-log2e`)."""
    if any(isinstance(op, ncd.SoftmaxOp) for op in module.walk()):
        return True
    exp = any(isinstance(op, ncd.MapOp) and op.fn.data in ("exp", "exp2") for op in module.walk())
    return exp and _reads_row_vector(module, attention_shape(module)[0])


def added_stream(module: ModuleOp, d: int) -> int:
    """Queries a tile of a kernel that adds dQ along the stream, where none are given:
    ADDED_STREAM's by head dim for a softmax's gradient (its probabilities recomputed by
    exp), or WIDE_ADDED_STREAM at d=128 without a mask where its last tile pads the
    queries by at most 1/ADDED_PAD of them, but 64 for spherical attention's (divided by
    the norm), whose norm's terms hold more registers a row than the softmax's: at 128
    queries (d=64) ptxas spills 180 bytes a thread, at 64 none (0.62x the softmax's
    backward at 128, H200 2026-11-29); at 80 (d=128) 420 bytes."""
    if not _softmax(module):
        return 64
    axes, sizes = attention_shape(module)
    n = sizes[axes.query]
    pad = -n % WIDE_ADDED_STREAM
    if d == 128 and not axes.masked and pad * ADDED_PAD <= n:
        return WIDE_ADDED_STREAM
    return ADDED_STREAM.get(d, 64)


def _spherical_narrow(module: ModuleOp, d: int) -> bool:
    """Spherical attention at head dims over 64 up to 128: 128 keys a tile and a persistent grid."""
    return 64 < d <= 128 and not _softmax(module)


def _long_stream(axes: AttentionAxes, sizes: dict[str, int]) -> bool:
    """Keys enough that a block's fixed costs are a small share: 4096 or more without a
    mask; under a causal mask, over LONG_STREAM on average (its diagonal tiles a small
    share too)."""
    return sizes[axes.keys] / 2 > LONG_STREAM if axes.masked else sizes[axes.keys] >= 4096


def head_dim(axes: AttentionAxes, sizes: dict[str, int]) -> int:
    heads = [a for a in sizes if a not in (*axes.batch, *axes.group, axes.query, axes.keys)]
    return max(sizes[a] for a in heads) if heads else 0


def sm90_tiles(module: ModuleOp, block: int | None = None, stream: int | None = None, stages: int = 0, blocks_per_sm: int = 1,
               store: StorePath | None = None, q_registers: bool | None = None,
               persistent: bool = False) -> tuple[int, int, int, int, StorePath]:
    """(query rows, keys a tile, stages, shared-memory budget of a block, how the output
    leaves) of `sm90_plan` for `module`: the tiles fitted to the axes (a block of
    grouped-query attention no longer than its packed heads' positions need), and where
    none is given, the default query rows, stream tile, store and stage count, with Q in
    registers or not as given (None: `q_registers_pay`).

    Keys a tile: WIDE_STREAM at head dims up to 128 with Q in shared memory, where no
    causal mask cuts the tiles or the masked stream is long, so each tile's fixed costs
    (the row reductions' shuffles, the output's rescale, the barriers) spread over more
    keys; where the output's panels do not fit beside it, a softmax keeps it and stores
    from registers. Spherical attention at head dims over 64 takes 128 keys. A softmax
    over a long stream at head dims over 128 takes DEEP_STREAM keys and stores from
    registers (not with packed query heads). Else 128 keys, or 64 at head dims over 128,
    or over 64 where the keys end in a partial tile of 128. A persistent block (`persistent`)
    of a softmax at head dims over 128 takes DEEP_STREAM keys from 4k keys on, and a
    persistent block at those head dims stores its output by TMA from Q's room where no
    panel stage fits beside its stages (`hbm-to-smem`): at d=256
    over 4k under a causal mask 612 and 614 against 600 and 607 TFLOP/s for 64 keys with
    their panels, and 579 with 80 keys stored from registers (H200, 2026-12-01, two calls).
    Neither wide tile where an input holds the keys innermost. The store: TMA stores where
    a panel stage fits (or, in a persistent block, Q's room takes the output), but for an
    output that holds the query rows innermost (from registers).
    Stages: three where they fit beside Q and a panel stage, else two. The measurements:
    research/benchmarks.md."""
    store = None if store in (None, "auto") else StorePath(store)
    axes, sizes = attention_shape(module)
    i, j = axes.query, axes.keys
    d = head_dim(axes, sizes)
    if q_registers is None:
        q_registers = q_registers_pay(module, block, stream, blocks_per_sm)
    given_block = bool(block)
    across = added_along_stream(module, axes)
    if across:  # dQ^T's rows, the head dim, 16 a consumer warp; dS staged as 128-byte panels of queries (of keys at 80)
        if block and block not in (d, 128) or stream and stream not in ((64, 128) if d == 64 else (64, WIDE_ADDED_STREAM)) or d not in (64, 128):
            raise PassFailedException(f"napkin-sm90: a kernel that adds a result along the stream (dQ beside dK and dV) takes "
                                      f"blocks of 128 keys or as many as the head dim (64 or 128: dQ^T's rows, 16 a consumer "
                                      f"warp, its columns split between warpgroups where the rows are fewer than their warps') "
                                      f"and 64 queries a tile, or 128 at head dim 64, or 80 at head dim 128 (dS through "
                                      f"128-byte panels, of queries or of keys); got head dim {d}"
                                      + (f", block {block}" if block else "") + (f", stream {stream}" if stream else ""))
        block, stream, given_block = block or 128, stream or added_stream(module, d), True
    block = block or _rows_for(module, axes, sizes)
    if block % 64 or not 64 <= block <= 256:
        raise PassFailedException(f"napkin-sm90: attention's block is warpgroups of 64 query rows (64 to 256), got {block}")
    asked = stream
    r = group_size(axes, sizes)
    while block > 64 and group_tiles(r, block)[1] > sizes[i] and not across:
        block -= 64
    # a block's shared memory, less the swizzle's alignment slack and the barriers
    e = operand_dtype(module).bytes
    streamed, resident = staged_tiles(module, axes)
    # each resident tile past the forward's Q (the gradient's dO, or V) adds its own full
    # and empty one-stage mbarriers, 8 bytes each
    budget = SM90.smem_per_block(blocks_per_sm) - 1024 - BARRIER_BYTES - 16 * max(0, resident - 1)
    tile_bytes = streamed * d * e + 4 * streamed_vectors(module, axes)  # a row of K and of V (of Q and dO, and their statistics)
    while not given_block and block > 64 and resident * block * d * e + 2 * 64 * tile_bytes > budget:
        block -= 64  # the gradient's two resident tiles at d=256
    q_bytes = resident * block * d * e  # Q
    # beside it, a stage of dS's panels of the streamed queries and two of dQ's f32 adds (at
    # d=64 the bytes of what hbm-to-smem takes, two of dS's and one of dQ's; at d=128 it
    # takes two of each under a mask, at 80 queries two of dS's and one of dQ's)
    if across:
        q_bytes += block * stream * e + 2 * stream * d * 4
    out = block * 64 * e  # a stage of a 64-column panel of the output (hbm-to-smem takes two where they fit)

    def fits(keys: int, panels: bool) -> bool:
        return q_bytes + (stages or 2) * keys * tile_bytes + (out if panels else 0) <= budget

    room = q_room_pays(module, axes)

    # the gradient's dQ and dK (three products a tile) at head dims over 64 take 64 keys:
    # with 128 their sm_90a kernels compute wrong values on the GPU while every level above
    # PTX is right on the CPU (research/gpu-tests.md, 2026-11-27): not yet explained
    three = products(module) > 2
    if not stream:
        # the wide tile spreads a softmax's per-tile costs (the running max's shuffles, the
        # output's rescale); spherical attention has none, and gains more from TMA stores
        softmax = _softmax(module)
        inner = _streamed_innermost(module, j)
        # three consumer warpgroups at d=64 hold too little a thread for 176 keys (ptxas spills)
        three_at_64 = d <= 64 and block > 128
        # unmasked, or a mask's diagonal tiles a small share of a long stream
        wide = d <= 128 and not three_at_64 and not _spherical_narrow(module, d) and not q_registers and (
            not axes.masked or _long_stream(axes, sizes)) and sizes[j] >= WIDE_STREAM and not inner and (
            fits(WIDE_STREAM, store is not StorePath.DIRECT) or store is None and softmax and fits(WIDE_STREAM, False))
        deep = d > 128 and softmax and not axes.group and (_long_stream(axes, sizes) or persistent and room and sizes[j] >= 4096) \
            and not inner and (store is not StorePath.TMA or room) and fits(DEEP_STREAM, False)
        # the gradient's dK and dV (four products, two accumulators) under a causal mask take
        # 64 queries at d=64 too: with 128 ptxas spills 620-976 bytes a thread (the mask's
        # index math beside S and dP); with 64 none, 1.74-1.81x faster (H100,
        # research/benchmarks.md 2026-11-27)
        four_masked = products(module) == 4 and axes.masked
        stream = WIDE_STREAM if wide else DEEP_STREAM if deep else \
            64 if d > 128 or d > 64 and (sizes[j] % 128 or three) or four_masked else 128
    while stream > 16 and stream > sizes[j] and not across:  # the power of two below (176: 128), a multiple of 16 (P V's k step)
        stream = 1 << (stream - 1).bit_length() - 1
    if asked and (stream % 16 or stream > 256):
        raise PassFailedException(f"napkin-sm90: attention streams keys in steps of 16 (P V's wgmma contracts 16 keys a "
                                  f"step), at most 256 a tile (S = Q K^T's wgmma is at most 256 wide), got {asked}"
                                  + (f" ({stream} for {sizes[j]} keys)" if stream != asked else ""))
    if three and d > 64 and stream > 64 and not across:  # (dQ beside dK and dV: its stream is checked above)
        raise PassFailedException(f"napkin-sm90: a kernel of three products a tile (the attention gradient's dQ or dK) at head "
                                  f"dim {d} takes at most 64 keys a tile, got {stream}: with more, its sm_90a kernel computes "
                                  "wrong values on the GPU (a known fault, research/gpu-tests.md 2026-11-27)")
    transposed = _output_rows_innermost(module, axes)
    if store is StorePath.TMA and transposed:
        raise PassFailedException(f"napkin-sm90: store=tma writes the accumulators' rows ('{i}') as rows of the output's panels; "
                                  f"this output holds them innermost: it leaves from registers (store=direct or auto)")
    if store is None and across:  # dK and dV leave once a block: their panels' room goes to dQ's stages
        store = StorePath.DIRECT
    if store is None:  # stmatrix moves 16-bit outputs (an f32 gradient of grouped heads is added from registers)
        store = StorePath.TMA if d % 64 == 0 and (fits(stream, True) or persistent and room and fits(stream, False)) \
            and operand_dtype(module).is_half and _half_tiles(module, axes) and not transposed else StorePath.DIRECT
    if not stages:
        stages = 3 if q_bytes + 3 * stream * tile_bytes + (out if store is StorePath.TMA else 0) <= budget else 2
    return block, stream, stages, budget, store


def added_along_stream(module: ModuleOp, axes: AttentionAxes) -> bool:
    """Whether a result holds the streamed axis (the gradient's dQ beside dK and dV, in
    blocks that hold keys and stream queries): a sum over the block's keys, added into its
    f32 output tile by tile. Its product, dQ^T = K^T dS^T, reads dS from shared memory
    (a panel of 64 streamed queries) and its rows, the head dim, are 16 a consumer warp."""
    f = the_function(module)
    return f is not None and any(axes.keys in t.shape for t in f.function_type.outputs.data)  # type: ignore[attr-defined]


def _output_rows_innermost(module: ModuleOp, axes: AttentionAxes) -> bool:
    """Whether an output tile holds the block's rows innermost (the MLP's dW1 [k, h], rows
    h): its accumulators, rows h a warp, leave transposed, value by value from registers,
    where stmatrix writes rows of the output's panels. A vector of the rows (the
    log-sum-exp) is no tile: it leaves from registers anyway."""
    rows = (*axes.batch, *axes.group, axes.query)
    return any(isinstance(t, ncd.TensorType) and t.axis_names[-1] == axes.query and any(a not in rows for a in t.axis_names)
               for f in module.walk() if isinstance(f, func.FuncOp) for t in f.function_type.outputs.data)


def _streamed_innermost(module: ModuleOp, j: str) -> bool:
    """Whether an input holds the streamed axis `j` innermost (an MLP's first weight [k, h]
    streams h): its TMA tiles along `j` are then whole 128-byte panels of the swizzle,
    which WIDE_STREAM and DEEP_STREAM keys (352 and 160 bytes) are not."""
    return any(isinstance(a.type, ncd.TensorType) and a.type.axis_names[-1] == j
               for f in module.walk() if isinstance(f, func.FuncOp) for a in f.args)


# --------------------------------------------------------------------------------------
# the model's search over napkin-sm90's configurations
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AttentionSpace:
    """napkin-sm90's attention configurations to search (`recipes.attention.sm90_plan`'s
    arguments): query rows a block (warpgroups of 64), keys a stream tile, stages, and
    whether reg-wgmma-overlap and reg-pingpong run; the blocks a multiprocessor holds,
    whether the launch is persistent, how the output leaves (`auto`: TMA stores where
    they fit), whether Q is held in registers (None: where `q_registers_pay` for the
    candidate's tile) and whether the running sums are kept in parts (None: where
    `partial_sums_pay`) and whether the running max is lazy (None: where
    `lazy_rescale_pays`) are given, not searched."""

    block_rows: tuple[int, ...] = (64, 128, 192)
    stream_sizes: tuple[int, ...] = (64, 128, WIDE_STREAM)
    stages: tuple[int, ...] = (2, 3)
    overlap: tuple[bool, ...] = (True, False)
    pingpong: tuple[bool, ...] = (True, False)
    blocks_per_sm: int = 1
    persistent: bool = False
    store: StorePath | None = None  # None: TMA stores where they fit
    q_registers: bool | None = None
    partial_sums: bool | None = None
    lazy_rescale: bool | None = None


@dataclass(frozen=True)
class AttentionConfig:
    """One configuration of napkin-sm90's attention: blocks of `block` rows of the query
    axis, `stream` keys a tile through `stages` TMA stages, the schedule passes."""

    queries: str
    keys: str
    block: int
    stream: int
    stages: int
    overlap: bool = False
    pingpong: bool = False
    blocks_per_sm: int = 1
    persistent: bool = False
    store: StorePath = StorePath.DIRECT
    q_registers: bool | None = None
    partial_sums: bool | None = None
    lazy_rescale: bool | None = None

    def plan(self, module: ModuleOp) -> KernelPlan:
        """The kernel plan of this configuration for `module` (`recipes.attention.sm90_plan`)."""
        return sm90_plan(module, self.block, self.stream, self.stages, self.overlap, self.pingpong, self.blocks_per_sm,
                         self.persistent, self.store, self.q_registers, partial_sums=self.partial_sums, lazy_rescale=self.lazy_rescale)

    def passes(self, module: ModuleOp) -> tuple:
        """The passes from `module` to sm_90a PTX."""
        return self.plan(module).passes()

    def describe(self) -> str:
        schedule = " and ".join(name for name, on in (("overlap", self.overlap), ("ping-pong", self.pingpong)) if on)
        blocks = f", {self.blocks_per_sm} blocks an SM" if self.blocks_per_sm > 1 else ""
        return (f"grid {self.queries}:{self.block}, stream {self.keys}:{self.stream}, {self.stages} stages, "
                f"{schedule or 'no overlap or ping-pong'}{blocks}")






def attention_configs(module: ModuleOp, space: AttentionSpace = AttentionSpace()) -> list[AttentionConfig]:
    """The distinct configurations of `space` for the attention in `module`: tiles fitted to
    its axes as napkin-sm90 fits them (`sm90_tiles`: the output's store too; tiles it
    refuses for the kernel, as more than 64 keys for the gradient's kernels of three
    products or more at head dims over 64, are left out; a kernel that adds a result along
    the stream streams 64 queries a tile, or 128 at d=64, or 80 at d=128), ping-pong only with two
    warpgroups or more (one has no one to take turns with), neither it nor overlap where a
    result is added along the stream (their plan turns both off)."""
    axes, _ = attention_shape(module)
    i, j = axes.query, axes.keys
    # a result added along the stream (dQ beside dK and dV) keeps the warpgroups in step: no
    # overlap or ping-pong (`sm90_plan`), so those choices would all be the one kernel
    across = added_along_stream(module, axes)
    schedules = [(False, False)] if across else list(itertools.product(space.overlap, space.pingpong))
    # such a kernel streams 64 queries a tile, or 128 at d=64, or 80 at d=128 (`sm90_tiles`
    # refuses others)
    offered = (*space.stream_sizes, *((WIDE_ADDED_STREAM,) if across else ()))
    stream_sizes = [s for s in offered if not across or s in (64, WIDE_ADDED_STREAM, 128)]
    out: dict[tuple, AttentionConfig] = {}
    for rows, keys, stages in itertools.product(space.block_rows, stream_sizes, space.stages):
        try:
            block, stream, _, _, store = sm90_tiles(module, rows, keys, stages, space.blocks_per_sm, space.store,
                                                    persistent=space.persistent)
        except PassFailedException:
            continue
        for overlap, pingpong in schedules:
            cfg = AttentionConfig(i, j, block, stream, stages, overlap, pingpong and block > 64, space.blocks_per_sm, space.persistent,
                                  store, space.q_registers, space.partial_sums, space.lazy_rescale)
            out.setdefault((block, stream, stages, cfg.overlap, cfg.pingpong), cfg)
    return list(out.values())


def _attention_candidates(module: ModuleOp, configs: list[AttentionConfig], hw: Hardware) -> Iterator[Candidate]:
    """Each configuration lowered to the reg level (every prefix of its passes lowered once
    and shared with the configurations that begin with it) and judged there."""
    done: dict[str, ModuleOp] = {}
    for cfg in configs:
        passes = cfg.passes(module)[:-1]  # all but reg-to-ptx
        lowered, why = module, None
        for n in range(len(passes)):
            key = spec(passes[: n + 1])
            if key not in done:
                out = lowered.clone()
                try:
                    run_passes(Context(), out, passes[n: n + 1])
                    out.verify()
                except (PassFailedException, VerifyException, UserError) as e:
                    why = str(e).strip().splitlines()[0]
                    break
                done[key] = out
            lowered = done[key]
        yield Candidate(cfg, "reg", rejected=f"does not lower: {why}") if why else judge(Candidate(cfg), lowered, "reg", hw, None)


def autotile_attention(module: ModuleOp | str, hw: Hardware | str = "h100", *, space: AttentionSpace = AttentionSpace(),
                       progress: Progress | None = None) -> AutotileResult:
    """Pick the configuration of napkin-sm90's attention kernel (query rows a block, keys a
    stream tile, stages, overlap and ping-pong) that minimises the predicted time of the
    attention in `module` on `hw`. Each is lowered as napkin-sm90 lowers it, to the reg
    level, and predicted there; those over the shared-memory budget (they do not lower)
    or the consumers' registers are set aside with the reason. Ranked as `autotile` ranks."""
    hw = hardware(hw) if isinstance(hw, str) else hw
    module = parsed(module)
    if attention_axes(module) is None:
        raise UserError("autotile: the diagram is not attention (two contractions, the second over the first's keys)")
    if not hw.wgmma_flops:
        raise UserError(f"autotile: napkin-sm90's attention runs wgmma, which the {hw.name} does not have")
    configs = attention_configs(module, space)
    cands = search(_attention_candidates(module, configs, hw), len(configs), progress)
    return chosen(cands, axis_roles(the_function(module)))  # every candidate is judged at the reg level




def chosen_attention(module: ModuleOp, hw: str, pipeline: str, space: AttentionSpace) -> KernelPlan:
    """The model's choice of napkin-sm90's attention configuration in `space`, as a plan."""
    result = announce(module, pipeline, lambda: autotile_attention(module.clone(), hw, space=space))
    return result.config.plan(module)  # type: ignore[union-attr]
