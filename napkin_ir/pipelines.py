"""Named pipelines: `napkin-sm80` and `napkin-sm90`, the whole way from a diagram to PTX.

Each is a pass made of passes (`PipelinePass`): when its turn comes it reads its options
once into a typed `PlanRequest`, asks the planner (`napkin_ir.plan.planner`) for the
kernel's plan on its target, and returns the passes the plan lists, with typed options.
`run_passes` (and so `napkin-opt`) splices those into the pipeline it is running:
`--print-between-passes` shows every level, `--time-passes` times each pass, and
`--dump-pass-pipeline` prints the spec they make. An option a plan cannot honour for the
diagram at hand is an error that names it. The two differ in their target and their
options' defaults only: what a kernel gets is the recipes' to say.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import ClassVar

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from napkin_ir.passes.composite import PipelinePass, run_passes, spec
from napkin_ir.plan.kernel_plan import KernelPlan, SmemLayout, StorePath
from napkin_ir.plan.planner import plan_kernel
from napkin_ir.plan.recipes import products
from napkin_ir.plan.request import PlanRequest, request
from napkin_ir.target import SM80, SM90, Target

__all__ = ["NapkinSm80Pass", "NapkinSm90Pass", "PipelinePass", "launch_config", "run_passes", "sm80_gemm_passes", "sm80_gemm_pipeline",
           "sm90_gemm_passes", "sm90_gemm_pipeline", "spec"]


def sm80_gemm_passes(block: tuple[int, int, int] = products.SM80_BLOCK, warps: tuple[int, int] = (2, 2), stages: int = 3,
                     axes: tuple[str, str, str] = ("m", "n", "k"), layout: str = "auto", group: int = 0,
                     unroll: int = products.SM80_UNROLL, batch: tuple[str, ...] = (), to: str = "ptx") -> tuple[ModulePass, ...]:
    """The passes from a GEMM diagram to sm_80 PTX, or to the level `to` (hbm, smem, reg)
    (`recipes.products.sm80_plan`)."""
    return products.sm80_plan(block, warps, stages, axes, None if layout == "auto" else SmemLayout(layout), group, unroll,
                              batch).passes(to)


def sm80_gemm_pipeline(*args, **kwargs) -> str:
    """`sm80_gemm_passes` as a pipeline spec."""
    return spec(sm80_gemm_passes(*args, **kwargs))


def sm90_gemm_passes(block: tuple[int, int, int] = products.SM90_BLOCK, stages: int = 4, axes: tuple[str, str, str] = ("m", "n", "k"),
                     group: int = 0, blocks_per_sm: int = 1, persistent: bool = False, cluster: int = 1, store: str = "auto",
                     batch: tuple[str, ...] = (), outputs: int = 1, to: str = "ptx", swap: bool = False) -> tuple[ModulePass, ...]:
    """The passes from a GEMM diagram to sm_90a PTX, or to the level `to` (hbm, smem, reg)
    (`recipes.products.sm90_plan`)."""
    return products.sm90_plan(block, stages, axes, group, blocks_per_sm, persistent, cluster,
                              None if store == "auto" else StorePath(store), batch, outputs, swap=swap).passes(to)


def sm90_gemm_pipeline(*args, **kwargs) -> str:
    """`sm90_gemm_passes` as a pipeline spec."""
    return spec(sm90_gemm_passes(*args, **kwargs))


def launch_config(module: ModuleOp) -> dict[str, object]:
    """Kernel name, grid, block, dynamic shared memory and TMA boxes ((argument, box, swizzle)
    each) of the (one) compiled kernel."""
    from napkin_ir.dialects.ptx.ops import KernelOp

    (kernel,) = [op for op in module.walk() if isinstance(op, KernelOp)]
    assert kernel.launch_grid is not None and kernel.smem_bytes is not None, f"@{kernel.sym_name.data} has no launch configuration"
    grid = [a.value.data for a in kernel.launch_grid.data]
    threads = kernel.reqntid or kernel.maxntid
    block = [a.value.data for a in threads.data] if threads else [1]
    tma = [(t.arg.data, t.dims, t.swizzle.data) for t in (kernel.tma.data if kernel.tma else [])]
    return {"name": kernel.sym_name.data, "grid": grid, "block": block, "smem": kernel.smem_bytes.value.data, "tma": tma}


class NamedPipeline(PipelinePass):
    """What `napkin-sm80` and `napkin-sm90` share: options read once, the planner asked."""

    target: ClassVar[Target]
    # the option values that mean "not given": the recipe's default applies
    unset: ClassVar[dict[str, object]]

    def request(self) -> PlanRequest:
        return request(self.name, asdict(self), self.unset)  # type: ignore[call-overload]

    def plan(self, module: ModuleOp) -> KernelPlan:
        """The plan of `module`'s kernel on this pipeline's target."""
        return plan_kernel(module, self.target, self.request())

    def passes(self, module: ModuleOp) -> Sequence[ModulePass]:
        return self.plan(module).passes()


@dataclass(frozen=True)
class NapkinSm80Pass(NamedPipeline):
    """`napkin-sm80`: the whole way from a diagram to sm_80 PTX (cp.async, ldmatrix,
    mma.sync). A GEMM takes `block="128,128,32"` (rows, columns, stream), `warps="2,2"`
    (warps sharing the rows and the columns), `stages`, `split` (see below); `autotile=true` lets the napkin
    model choose all three for `hw` (h100, h200, a100); `layout` the stages' layout
    (`swizzle`, `pad8`, or `auto`: swizzled where the tile's rows allow); `group` the
    block-row bands of the launch order (L2 reuse; 0 = plain). Attention (softmax, causal,
    spherical) takes `block="rows,keys"` (128,64 by default), `warps="n"` (rows / 16 by
    default) and `stages`; the model does not choose attention tiles on sm_80, and its
    stages are padded, launched head by head: `autotile`, `layout` and `group` are refused.
    Grouped-query attention (K and V without the query heads' axis of a group) packs a
    group's heads into a block's rows, a warp or more a head (`recipes.attention.group_tiles`).
    A row reduction (no product: a row softmax, L2 norm, sum or max) takes `block="R"` rows
    a block and `warps="W"` warps sharing them; a sum down the columns (a bias's gradient)
    `block="C"` columns a block and `warps="W"` warps sharing them, its rows streamed. The
    plans: `napkin_ir.plan.recipes`.

    `split=S` (both pipelines, a GEMM): S blocks share each output tile's contraction,
    each streaming its part of it. Into an f32 output each adds its sum with
    `red.global.add.f32` (the launch zeroes the output first); the order of the additions,
    and so the last bits of the sums, may differ from run to run. `deterministic=true` adds
    the parts in a fixed order instead: each output tile's first part is written, each next
    one added when the one before is in (a turn counter per tile in global memory): the
    same bits every run, no zeroing, a little waiting. Into a 16-bit output each part
    writes its f32 sums to its own slice of a scratch array, and the warp that finishes
    last on its piece of a tile (a counter per tile and warp) adds the parts in order and
    rounds them into the output: the same bits every run, no zeroing, no waiting."""

    name = "napkin-sm80"
    target = SM80
    unset = {"block": "", "warps": "", "stages": 3, "autotile": False, "hw": "h100", "layout": "auto", "group": 0, "split": 1, "deterministic": False}
    block: str = ""
    warps: str = ""
    stages: int = 3
    autotile: bool = False
    hw: str = "h100"
    layout: str = "auto"
    # plain by default: bands of block rows cut the GEMMs' DRAM traffic but measured no
    # faster, up to 5.4% slower (research/benchmarks.md, "the launch order")
    group: int = 0
    split: int = 1
    deterministic: bool = False


@dataclass(frozen=True)
class NapkinSm90Pass(NamedPipeline):
    """`napkin-sm90`: the whole way from a diagram to sm_90a PTX: TMA copies into
    128-byte swizzled stages, full/empty mbarrier rings, a producer warpgroup and
    consumer warpgroups of 64 rows issuing wgmma from shared memory.

    A GEMM: `block="128,256,64"` is the block tile (rows, columns, stream; rows 64 to 256
    and columns 64 to 256 by 64, either may run past a short axis). Without it, a GEMM of
    16-bit operands takes the tile the count of waves, padding, rates and loads puts first
    (`product_targets.sm90_time`: 128,256 on large squares, 128,128 or 64-row tiles where
    they fill the SMs better). `stages` the ring depth (by default 4, or up to 8 where a stage
    takes 24 KiB or less: `products.sm90_stages`), `group` the block-row groups of the launch order (L2 reuse; 0 = plain),
    `blocks_per_sm` how many blocks share a multiprocessor, `persistent` (on by default) a
    grid of as many blocks as fit, each looping over tiles, `cluster=2` pairs of blocks
    sharing B's tiles by TMA multicast (persistent, each cluster a pair of neighbouring row
    tiles a turn in the group order; with `persistent=false` a plain grid, no group), `store`
    how the output leaves (`tma`: stmatrix into shared memory and TMA stores that overlap
    the next tile; `direct`: from registers; `auto`: TMA where it fits). `autotile=true`
    lets the napkin model choose the block tile and the stages for `hw` (h100, h200);
    `block` is refused with it. `split` as on napkin-sm80 (a plain grid then: no group, no
    persistence); with `cluster` set to the number of parts, the parts of each output tile
    form a cluster and add their f32 sums in each other's shared memory, each part rounding
    its share into the 16-bit output (no global scratch). `swap=true` computes a GEMM with wgmma's rows over the
    output's columns (C^T = B^T A^T in registers, written back as C through stmatrix.trans):
    the block's rows may then be any multiple of 8 up to 256 (its columns 64 to 256 by 64),
    so that a ragged M makes whole waves; by default on where the block's rows are not a
    multiple of 64 or the model puts a swapped tile first (`product_targets.sm90_swaps`).

    Attention (softmax, causal, spherical, grouped-query): `block="rows,keys"` (query rows
    in warpgroups of 64, keys a tile in steps of 16 up to 256; by default
    `recipes.attention.sm90_tiles`), `stages`,
    `blocks_per_sm`, `overlap` (a tile's P V under the next tile's scores), `pingpong` (the
    consumer warpgroups take turns issuing products), `q_registers` (S = Q K^T with Q from
    registers; by default where `q_registers_pay`), `schedule` (each wgmma group issued as
    soon as its operands are ready and waited for where its results are first read,
    `reg-wgmma-schedule`; by default where `schedule_pays`), `early_waits` (where an overlapped
    trip waits for its V: `scores` right after the scores retire, `max` after the row max,
    `products` in the next trip just before P V's products (FA4's order), `none` where it
    stood, before P V's wait; `reg-early-waits`, by default where
    `early_waits_place` says), `partial_sums` (the forward's running row sums kept as each
    lane's part, the quad's added once after the loop, `reg-partial-row-sums`; by default
    where `partial_sums_pay`), `lazy_rescale` (the forward's running row max kept until a row
    of a warp outgrows it by 2^8, the output's corrections skipped where they are 1,
    FlashAttention-4's lazy rescale, `reg-lazy-rescale`; by default where
    `lazy_rescale_pays`), `persistent` (by default where the
    streams are short: `persistent_pays`), `store` as for a GEMM. With `autotile=true` the
    model chooses among 64, 128 and 192 query rows, 64, 128 and 176 keys, 2 and 3 stages,
    overlap and ping-pong on or off; `stages` given, `overlap=false`, `pingpong=false` and
    `blocks_per_sm` bound its search. `group` and `cluster` are refused for attention.
    Grouped-query attention packs a group's query heads into a block, so each K and V tile
    is loaded once for them all.

    A row reduction (no product: a row softmax, L2 norm, sum or max) takes `block="R"` rows
    a block and `warps="W"` warps sharing them, and a sum down the columns `block="C"`
    columns a block, as on napkin-sm80. The plans: `napkin_ir.plan.recipes`."""

    name = "napkin-sm90"
    target = SM90
    unset = {"block": "", "warps": "", "stages": 0, "group": 8, "blocks_per_sm": 1, "persistent": None, "cluster": 1, "store": "auto",
             "autotile": False, "hw": "h100", "overlap": True, "pingpong": True, "q_registers": None, "split": 1,
             "deterministic": False, "schedule": None, "early_waits": None, "partial_sums": None,
             "lazy_rescale": None, "swap": None}
    block: str = ""
    warps: str = ""  # a row reduction's warps; wgmma's warpgroups follow from the block's rows
    stages: int = 0  # the ring's depth: 4 for a GEMM (8 for a 24 KiB stage or smaller), 2 or 3 for attention
    group: int = products.SM90_GROUP
    blocks_per_sm: int = 1
    persistent: bool | None = None  # None: on for a GEMM; for attention, where its streams are short
    cluster: int = 1
    store: str = "auto"
    autotile: bool = False
    hw: str = "h100"
    overlap: bool = True
    pingpong: bool = True
    q_registers: bool | None = None  # None: where it pays (`recipes.attention.q_registers_pay`)
    split: int = 1
    deterministic: bool = False
    schedule: bool | None = None  # None: where it pays (`recipes.attention.schedule_pays`)
    early_waits: str | None = None  # scores, max, products or none; None: where it pays (`recipes.attention.early_waits_place`)
    partial_sums: bool | None = None  # None: where it pays (`recipes.attention.partial_sums_pay`)
    lazy_rescale: bool | None = None  # None: where it pays (`recipes.attention.lazy_rescale_pays`)
    swap: bool | None = None  # None: a GEMM's rows not a multiple of 64, or where the model puts it first
