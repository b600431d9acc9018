"""The products family: GEMMs, batched or not, B stored either way, several products of
one operand, elementwise epilogues and a bias.

Recognised by structure (`diagram.product_shape`: every contraction contracts one shared
axis into outputs of the same axes). On sm_80 a block of `block` rows x columns streams
the contracted axis through cp.async stages (swizzled where the rows allow, else padded)
and warps issue mma.sync, the stream loop unrolled with fragments carried and loaded a
step ahead. On sm_90a TMA fills swizzled stages on mbarrier rings, a producer warpgroup
beside consumer warpgroups of 64 rows issuing wgmma, a persistent grid in bands of block
rows, the output through TMA stores where their panels fit. Why these defaults:
research/benchmarks.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import PassFailedException

from napkin_ir.dialects import ncd
from napkin_ir.plan.diagram import ProductShape, axis_sizes, operand_dtype, product_shape, the_function
from napkin_ir.plan.kernel_plan import CopyEngine, KernelPlan, Launch, ProductEngine, SmemLayout, StorePath
from napkin_ir.plan.recipes.product_targets import sm90_block, sm90_swaps
from napkin_ir.plan.request import PlanRequest
from napkin_ir.target import SM80, SM90, Engine, Target

NAME = "products"
SM80_BLOCK = (128, 128, 32)  # rows, columns, stream
SM90_BLOCK = (128, 256, 64)
SM80_UNROLL = 2  # stream trips unrolled: two times the stages a trip measured faster than one
SM90_GROUP = 8  # block-row bands of napkin-sm90's launch order (L2 reuse)
BARRIER_BYTES = 8  # an mbarrier


def recognise(module: ModuleOp) -> ProductShape | None:
    """The product shape of `module`, or None where it is not one of this family."""
    try:
        return product_shape(module)
    except PassFailedException:
        return None


def fit(module: ModuleOp, axes: tuple[str, str, str], block: tuple[int, ...], least: int = 16) -> tuple[int, int, int]:
    """The default block tile, halved along an axis shorter than it (down to `least`): a
    tile may not exceed its axis."""
    sizes = axis_sizes(module)
    out = list(block)
    for n, axis in enumerate(axes):
        while out[n] > least and out[n] > sizes[axis]:
            out[n] //= 2
    return tuple(out)  # type: ignore[return-value]


def default_warps(block: tuple[int, int, int], outputs: int) -> tuple[int, int]:
    """The default warps (2 x 2; 1 x 4 for a block of 16 rows, a decode's few, whose warps
    each take all of them), doubled along the columns, then the rows (up to 16 warps, each
    a multiple of 16 x 8), until each thread holds at most 128 accumulators for the block's
    `outputs` products."""
    wm, wn = (2, 2) if block[0] >= 32 else (1, 4 if block[1] >= 32 else 2)
    while outputs * block[0] * block[1] // (32 * wm * wn) > 128:
        if block[1] // (2 * wn) >= 8 and wm * wn < 16:
            wn *= 2
        elif block[0] // (2 * wm) >= 16 and wm * wn < 16:
            wm *= 2
        else:
            break
    return wm, wn


def sm80_plan(block: tuple[int, int, int] = SM80_BLOCK, warps: tuple[int, int] = (2, 2), stages: int = 3,
              axes: tuple[str, str, str] = ("m", "n", "k"), layout: SmemLayout | None = None, group: int = 0,
              unroll: int = SM80_UNROLL, batch: tuple[str, ...] = (), element_bytes: int = 2, part: int = 0,
              ordered: bool = False) -> KernelPlan:
    """A GEMM's plan on sm_80. `layout` None swizzles the stages where their rows allow it
    (64 bytes or a multiple of 128: A's rows are the stream tile, B's the column tile),
    else pads them. `group` launches the blocks in bands of that many block rows (0: the
    plain order). `unroll` > 0 unrolls the stream loop (`unroll` times its stages a trip),
    carries the next trip's first fragments across its back edge and loads fragments a
    step ahead. `batch` axes are spread over the grid a block each. `part` > 0 splits the
    contracted axis over the grid in parts of that many (a whole number of stream tiles),
    each block adding its sum into the f32 output (in a fixed order where `ordered`)."""
    from napkin_ir.dialects.smem import swizzle_fits

    (m, n, k), (bm, bn, bk) = axes, block
    if layout is None:
        layout = SmemLayout.SWIZZLE if swizzle_fits(element_bytes * bk) and swizzle_fits(element_bytes * bn) else SmemLayout.PAD8
    return KernelPlan(NAME, SM80, grid=(*((b, None) for b in batch), (m, bm), (n, bn), *(((k, part),) if part else ())),
                      stream=(k, bk), stages=stages,
                      copy=CopyEngine.CP_ASYNC, product=ProductEngine.MMA_SYNC, layout=layout, warps=((m, warps[0]), (n, warps[1])),
                      launch=Launch(group=group, ordered=ordered), unroll=unroll)


def stage_elements(module: ModuleOp, shape: ProductShape, block: tuple[int, int, int]) -> int:
    """Elements of one stage of the streamed tiles: one tile of each operand the products
    read (an operand two products share, a single one), rows x stream or stream x columns
    of `block` (a batch axis a place)."""
    tiles = dict(zip((shape.rows, shape.cols, shape.k), block))
    return sum(math.prod(tiles.get(a, 1) for a in v.type.axis_names) for v in _product_operands(module))  # type: ignore[attr-defined]


def _product_operands(module: ModuleOp) -> set:
    """The values the products of `module` read (one that two share, once)."""
    return {v for c in module.walk() if isinstance(c, ncd.ContractOp) for v in (c.lhs, c.rhs)}


def resident_elements(module: ModuleOp, shape: ProductShape, block: tuple[int, int, int]) -> int:
    """Elements of the tiles a block loads once beside its stages: each input no product
    reads that is a tile of rows and columns (a residual added to the sums; a vector, as a
    bias, goes to registers and takes none)."""
    tiles = dict(zip((shape.rows, shape.cols, shape.k), block))
    f = the_function(module)
    operands = _product_operands(module)
    total = 0
    for arg in (f.body.block.args if f is not None else ()):
        t = arg.type
        if arg in operands or not isinstance(t, ncd.TensorType):
            continue
        sizes = [min(n, tiles.get(a, 1)) for a, n in t.shape.items()]
        if sum(n > 1 for n in sizes) > 1:
            total += math.prod(sizes)
    return total


def sm90_budget(stages: int, blocks_per_sm: int = 1, target: Target = SM90) -> int:
    """The shared memory a block's buffers may take: the block's share, less the swizzle's
    alignment slack and a full and an empty barrier a stage."""
    return target.smem_per_block(blocks_per_sm) - 1024 - BARRIER_BYTES * 2 * stages


# a stage this small (a 64 x 128, 128 x 64 or 64 x 64 tile of 16-bit operands) takes up to
# DEEP_STAGES stages: four of them in flight leave the SM waiting on its loads where the
# contraction is long (H200, 2026-11-27, one run: 128 x 8192 x 8192 in 64 x 128 tiles 37.7 us
# with 8 stages against 50.3 with 4, cuBLAS 38.5; 64 x 8192 x 8192 in 64 x 64 tiles 35.6
# against 46.3, cuBLAS 36.6; research/benchmarks.md)
DEEP_STAGE_BYTES = 24 * 1024
DEEP_STAGES = 8
# a 128 x 128 tile's stage (32 KB) takes MID_STAGES, its output's two panels beside them:
# 6 against 4, kernels alone in CUDA graphs (H200, 2026-11-29, one run): 1000x14336x4096
# 183.6 against 187.4 us, 1000x28672x8192 731.6 / 740.5, 2048x14336x4096 367.6 / 375.3,
# 256x4096x14336 in two parts 56.2 / 59.0, 256x8192x8192 56.5 / 58.7, 5000x3000x2056 154.7 /
# 154.6; slower at 128x8192x28672 in two parts, 132.7 / 127.8 (cuBLAS 153.6)
MID_STAGE_BYTES = 32 * 1024
MID_STAGES = 6


# a swapped tile (a GEMM with wgmma's rows over its columns) takes as many stages as fit, up
# to MID_STAGES, beside its output's one panel stage: 152 x 128 at 5000x4096x14336 842 us
# in 5 stages against 877 in 4 (H200, 2026-11-29, kernels alone in CUDA graphs, one run)


def sm90_stages(stage_bytes: int, blocks_per_sm: int = 1, target: Target = SM90, products_alone: bool = False,
                swapped_panel: int = 0, reserved: int = 0) -> int:
    """4 stages of `stage_bytes` (DEEP_STAGES for a stage of DEEP_STAGE_BYTES or less, and
    for a kernel of `products_alone`, no maps, MID_STAGES for one of MID_STAGE_BYTES or
    less: a gradient's product whose A is made in registers spills 40 bytes with 6), or
    fewer (2 at the least) where they would not fit. A swapped tile whose output's panel
    stage takes `swapped_panel` bytes (> 0) takes MID_STAGES, or fewer to fit beside it.
    `reserved` bytes are kept for other buffers (`exchange_bytes`)."""
    mid = products_alone and (stage_bytes <= MID_STAGE_BYTES or swapped_panel > 0)
    stages = DEEP_STAGES if stage_bytes <= DEEP_STAGE_BYTES else MID_STAGES if mid else 4
    while stages > 2 and stages * stage_bytes + swapped_panel + reserved > sm90_budget(stages, blocks_per_sm, target):
        stages -= 1
    return stages


def exchange_bytes(rows: int, cols: int, parts: int) -> int:
    """At most the shared memory a block of a cluster of split sums' `parts` keeps for the
    others' shares of its tile (`rows` x `cols` f32 sums): a slot for each other part, each
    a share of the tile rounded up to whole pairs of the consumer threads' (up to four
    warpgroups')."""
    return (parts - 1) * (4 * rows * cols // parts + 8 * 4 * 128)


def panel_stage_bytes(rows: int, outputs: int = 1, element_bytes: int = 2) -> int:
    """One stage of the outputs' panel buffer for TMA stores: `rows` x 64 columns of each of
    `outputs` outputs."""
    return outputs * rows * 64 * element_bytes


def sm90_fit(block: tuple[int, int, int], stage_bytes: Callable[[tuple[int, int, int]], int], blocks_per_sm: int = 1,
             target: Target = SM90) -> tuple[int, int, int]:
    """`block`, its columns then its rows halved (down to 64) until two stages of
    `stage_bytes(block)` fit: several products' own operands (a gradient's sum of products)
    stream more tiles a stage than a GEMM's two."""
    bm, bn, bk = block
    while 2 * stage_bytes((bm, bn, bk)) > sm90_budget(2, blocks_per_sm, target) and max(bm, bn) > 64:
        bm, bn = (bm, bn // 2) if bn >= bm else (bm // 2, bn)
    return bm, bn, bk


def sm90_plan(block: tuple[int, int, int] = SM90_BLOCK, stages: int = 4, axes: tuple[str, str, str] = ("m", "n", "k"),
              group: int = 0, blocks_per_sm: int = 1, persistent: bool = False, cluster: int = 1, store: StorePath | None = None,
              batch: tuple[str, ...] = (), outputs: int = 1, element_bytes: int = 2, staged: int | None = None,
              stored: int | None = None, part: int = 0, ordered: bool = False, swap: bool = False,
              resident: int = 0) -> KernelPlan:
    """A GEMM's plan on sm_90a. `swap` runs wgmma's rows over the columns (the output's
    second tiled axis), its N over the rows: the rows' tile any multiple of 8. `store` TMA writes the output through shared memory with
    TMA stores, direct from registers; None takes TMA stores where their two-stage panel
    buffer (rows x 64 columns, twice, for each of `stored` outputs) fits beside the stages,
    as it is faster. `outputs` products of one A stream one B each through the stages;
    `staged` elements a stage where the products read other operands (`stage_elements`;
    None: one A and `outputs` B's); `stored` outputs leave (None: `outputs`). `part` and
    `ordered` as for `sm80_plan`. A batched product's tiles are stored by TMA too (its batch
    axes a box of one): at 131072 x 128 x 128 in two batches 1.8x the direct stores' speed
    (H200, 2026-11-29). `resident` bytes of tiles loaded once (a residual) lie beside the
    stages and the panels."""
    (m, n, k), (bm, bn, bk) = axes, block
    budget = sm90_budget(stages, blocks_per_sm)
    if staged is None:
        staged = bm * bk + outputs * bk * bn
    if store is None:  # a swapped tile's fragments stored from registers go a value at a time: one panel stage will do
        panel = panel_stage_bytes(bm, outputs if stored is None else stored, element_bytes)
        total = stages * staged * element_bytes + (1 if swap else 2) * panel + resident
        store = StorePath.TMA if bn % 64 == 0 and total <= budget else StorePath.DIRECT
    return KernelPlan(NAME, SM90, grid=(*((b, None) for b in batch), (m, bm), (n, bn), *(((k, part),) if part else ())),
                      stream=(k, bk), stages=stages,
                      copy=CopyEngine.TMA, product=ProductEngine.WGMMA, store=store,
                      launch=Launch(group=group, blocks_per_sm=blocks_per_sm, persistent=persistent, cluster=cluster,
                                    ordered=ordered),
                      smem_bytes=budget, rows=n if swap else "")


def _stages_beside_panels(module: ModuleOp, shape: ProductShape, block: tuple[int, int, int], req: PlanRequest,
                          stage: int, reserved: int, products_alone: bool) -> int | None:
    """The stages of `stage` bytes that leave room for the output's two TMA panel stages
    (beside `reserved`), where the plan picks the store path (`store` auto) of a 16-bit
    output and the contraction is no more stream tiles than those stages: a block then
    streams its whole contraction in flight either way, and what it moves is its output as
    much as its operands (spherical attention's dK, three products over a head dim of 64
    into one tile: 66.7 us in 3 stages with TMA stores against 91.1 us in 4 storing from
    registers, 16 x 32 heads x 1024 x 64, H200, 2026-12-01). None where that does not hold."""
    if req.store is not None or not shape.half_output or block[1] % 64:
        return None
    panels = 2 * panel_stage_bytes(block[0], shape.results, operand_dtype(module).bytes)
    stages = sm90_stages(stage, req.blocks_per_sm, products_alone=products_alone, reserved=reserved + panels)
    if -(-axis_sizes(module)[shape.k] // block[2]) > stages or stages * stage + panels + reserved > sm90_budget(stages, req.blocks_per_sm):
        return None
    return stages


def plan(module: ModuleOp, shape: ProductShape, target: Target, req: PlanRequest) -> KernelPlan:
    """The plan for `module`, a diagram of products, on `target` as `req` asks."""
    if target.has(Engine.WGMMA):
        return _plan_sm90(module, req)
    return _plan_sm80(module, shape, req)


MAX_SCRATCH_BYTES = 2**30  # the most a split 16-bit output's scratch may take (allocated when the module loads)


def split_part(module: ModuleOp, shape: ProductShape, stream_tile: int, req: PlanRequest, scratch: bool = True) -> int:
    """The part of the contracted axis each of `req.split` blocks streams (a whole number of
    stream tiles; 0: not split). The parts of a 16-bit output's sums are summed in f32, in
    their order, by the part that finishes last, which rounds them: the same bits every run
    (so `deterministic` orders only an f32 output's parts). Its sums go through a scratch
    of the module unless `scratch` is false (the parts in a cluster, summed in shared
    memory)."""
    if req.split == 1:
        return 0
    sizes = axis_sizes(module)
    tiles = -(-sizes[shape.k] // stream_tile)
    if req.split > tiles:
        raise req.fail(f"split={req.split} is more parts than axis '{shape.k}' has stream tiles ({tiles} of {stream_tile})")
    if shape.half_output and scratch:  # the module's scratch: every part's f32 sums of the whole output (times its results)
        held = 4 * req.split * shape.results * math.prod(sizes[a] for a in (*shape.batch, shape.rows, shape.cols))
        if held > MAX_SCRATCH_BYTES:
            raise req.fail(f"split={req.split} of a 16-bit output keeps every part's f32 sums in a scratch of the module: "
                           f"{held / 2**30:.1f} GiB here, over {MAX_SCRATCH_BYTES // 2**30} GiB; split a smaller output, "
                           "in fewer parts, or give the contraction an f32 result (ncd-widen-results), added into atomically")
    return -(-tiles // req.split) * stream_tile


def _plan_sm80(module: ModuleOp, shape: ProductShape, req: PlanRequest) -> KernelPlan:
    from napkin_ir.plan.autotile import chosen_tiles

    axes = (shape.rows, shape.cols, shape.k)
    group = req.group or 0
    if group and shape.batch:
        raise req.fail(f"group={group} orders a two-axis grid; this one has batch axes {list(shape.batch)}")
    stages = req.stages or 3
    nbytes = operand_dtype(module).bytes
    if req.autotile:
        req.refuse("autotile=true (the model chooses them)", ("block", "warps", "split"))
        if not shape.plain:
            raise req.fail("autotile=true chooses tiles for a plain GEMM only, for now; give block= and warps=")
        c = chosen_tiles(module, req.hw, "sm80", req.pipeline, group)
        block = (c.grid[axes[0]], c.grid[axes[1]], c.stream[axes[2]])
        warps = (c.warps.get(axes[0], 1), c.warps.get(axes[1], 1))
        return sm80_plan(block, warps, c.stages, axes, req.layout, group, element_bytes=nbytes)
    # a tile may be longer than its axis: the copies zero-fill what lies past the edge
    block = req.sized("block", 3, "for a GEMM: rows, columns, stream") or fit(module, axes, SM80_BLOCK)
    warps = req.sized("warps", 2, "for a GEMM: warps along the rows, the columns") or default_warps(block, shape.outputs)  # type: ignore[arg-type]
    part = split_part(module, shape, block[2], req)
    if part and group:
        raise req.fail(f"group={group} orders a two-axis grid; split={req.split} adds the contraction's parts as a third")
    return sm80_plan(block, warps, stages, axes, req.layout, group, batch=shape.batch, element_bytes=nbytes, part=part,  # type: ignore[arg-type]
                     ordered=req.deterministic and not shape.half_output)


def _a_rows_first(module: ModuleOp, shape: ProductShape) -> bool:
    """Whether the operand with the output's rows is stored [rows, k]: a swapped product
    reads its tiles as wgmma's B, K-major, so that their rows may be any multiple of 8."""
    c = next(op for op in module.walk() if isinstance(op, ncd.ContractOp))
    a = c.lhs if shape.rows in c.lhs.type.axis_names else c.rhs  # type: ignore[attr-defined]
    return tuple(a.type.axis_names) == (shape.rows, shape.k)  # type: ignore[attr-defined]


def _plan_sm90(module: ModuleOp, req: PlanRequest) -> KernelPlan:
    from napkin_ir.plan.autotile import chosen_tiles

    shape = product_shape(module, req.pipeline)
    req.refuse("a GEMM on sm_90a (its warpgroups follow from the block's rows)", ("warps",))
    if not req.overlap or not req.pingpong:
        raise req.fail("overlap=false and pingpong=false order attention's products; a GEMM's pipeline always overlaps")
    axes = (shape.rows, shape.cols, shape.k)
    nbytes = operand_dtype(module).bytes
    given = req.sized("block", 3, "rows, columns, stream")

    def stage_bytes(b: tuple[int, int, int]) -> int:
        return stage_elements(module, shape, b) * nbytes

    alone = ncd.made_of(module, ncd.ContractOp)
    chosen = not given and shape.plain and nbytes == 2
    if chosen:  # one product: the tile the model's count of waves puts first (swapped only where no maps follow)
        sizes = axis_sizes(module)
        given = sm90_block(*(sizes[a] for a in axes), swapped=alone and req.swap is not False)
    if not given:  # where two stages of the default tiles do not fit (several products' own operands), smaller tiles
        given = sm90_fit(fit(module, axes, SM90_BLOCK, 64), stage_bytes, req.blocks_per_sm)
    # a tile may be longer than its axis (a decode's few rows in a 64-row tile): the TMA loads
    # read zeros past the edge, the stores write only what lies inside
    block = given
    swap = req.swap if req.swap is not None else block[0] % 64 != 0 or (chosen and sm90_swaps(block))
    if swap and not (shape.plain and _a_rows_first(module, shape)):
        raise req.fail("swap=true computes one GEMM of A stored [m, k] and B [k, n], unbatched, with wgmma's rows over its "
                       "columns; this diagram is not one (batched, several products, A stored [k, m] or B [n, k])")
    if swap and (block[0] % 8 or not 8 <= block[0] <= 256 or block[1] % 64 or not 64 <= block[1] <= 256):
        raise req.fail(f"block=\"{','.join(map(str, block))}\": the rows must be 64, 128, 192 or 256, or computed swapped "
                       "(wgmma's rows over the columns: swap=true, or rows not a multiple of 64) a multiple of 8 up to 256 "
                       "with columns 64 to 256 by 64")
    panel = panel_stage_bytes(block[0], 1, nbytes) if swap else 0  # a swapped tile's output leaves through one panel stage
    resident = resident_elements(module, shape, block) * nbytes  # a residual's tile, loaded once beside the stages
    stages = req.stages or sm90_stages(stage_bytes(block), req.blocks_per_sm, products_alone=alone, swapped_panel=panel,
                                       reserved=resident)
    if not req.stages and not swap:
        stages = _stages_beside_panels(module, shape, block, req, stage_bytes(block), resident, alone) or stages
    group = SM90_GROUP if req.group is None else req.group
    # a cluster persists as the plain launch does (each pair of blocks a pair of neighbouring
    # tiles a turn, in the group order), or with persistent=false runs a plain grid: 128 x 256
    # tiles (H200, 2026-11-28, cuBLAS in the same rounds) persistent 0.86x, 0.88x, 0.91x,
    # 0.98x, 0.94x cuBLAS at 3000x7000x1000, 5000x3000x2056, 5000x4096x4096, 4096^3 and
    # 5000x8192x28672, on a plain grid 0.76x, 0.83x, 0.91x, 0.96x, 0.91x
    plain = req.cluster > 1 and req.persistent is False
    if req.autotile:
        req.refuse("autotile=true (the model chooses it)", ("block", "split", "swap"))
        c = chosen_tiles(module, req.hw, "sm90", req.pipeline, 0 if plain else group)
        block, stages, swap = (c.grid[axes[0]], c.grid[axes[1]], c.stream[axes[2]]), c.stages, False  # swap refused above
    if shape.batch and req.cluster > 1:
        what = (f"split={req.split} with cluster={req.cluster} clusters the parts of a 2-D grid's tiles" if req.split > 1 else
                f"cluster={req.cluster} shares B's tiles between two blocks of a 2-D grid")
        raise req.fail(f"{what}; this one has batch axes {list(shape.batch)}: leave cluster=1")
    group = 0 if shape.batch else group  # bands of block rows order a 2-D grid
    store = req.store
    if not shape.half_output:  # stmatrix moves 16-bit elements
        if store is StorePath.TMA:
            raise req.fail("store=tma writes bf16 or f16 outputs (stmatrix); this one is f32: use store=direct")
        store = StorePath.DIRECT
    part = split_part(module, shape, block[2], req, scratch=req.cluster == 1)
    if part:  # a plain grid of three axes: no bands of block rows, no persistence; a cluster takes a tile's parts
        if req.persistent:
            raise req.fail(f"split={req.split} launches a plain grid: persistent cannot be honoured with it")
        parts = -(-axis_sizes(module)[shape.k] // part)
        if req.cluster > 1:  # the parts of each tile form a cluster and add their sums in shared memory
            if not shape.half_output or shape.results != 1:
                raise req.fail(f"split={req.split} with cluster={req.cluster} adds the parts' sums in shared memory and rounds "
                               "them into one 16-bit output; this diagram's sums are f32 or several: leave cluster=1")
            if req.cluster != parts:
                raise req.fail(f"split={req.split} makes {parts} parts of {part} along '{shape.k}', and a cluster takes "
                               f"the parts of one tile: give cluster={parts}")
            if not req.stages:
                stages = sm90_stages(stage_bytes(block), req.blocks_per_sm, products_alone=alone,
                                     reserved=exchange_bytes(block[0], block[1], parts) + resident)
        plain = True
        if swap:
            raise req.fail(f"split={req.split} adds its parts in tiles of the output's rows; a swapped product (swap=true, "
                           f"or a block of {block[0]} rows, not a multiple of 64) cannot be split: give swap=false with rows "
                           "a multiple of 64")
        if shape.half_output:  # the part that finishes last adds up the parts and rounds the sum, from registers
            if store is StorePath.TMA:
                raise req.fail(f"split={req.split} rounds each output tile's sum in the part that finishes last, which stores it directly: "
                               "use store=direct or auto")
            store = StorePath.DIRECT
    return sm90_plan(block, stages, axes, 0 if plain else group, req.blocks_per_sm, req.persistent is not False and not plain,  # type: ignore[arg-type]
                     req.cluster, store, shape.batch, shape.outputs, nbytes, stage_elements(module, shape, block), shape.results,
                     part, req.deterministic and not shape.half_output, swap, resident)


