"""The kernel plan: everything a kernel gets, decided once, typed, read by every pass.

A `KernelPlan` says how a diagram becomes a kernel on a target: the block tile of each
grid axis, the streamed axis and its tile, the stage count, the copy, product and store
engines, the shared-memory layout, the warps (or warpgroups) and what they hold, the
launch (order, band height, blocks a multiprocessor, persistence, cluster) and the
schedule passes at the register level. A recipe (`napkin_ir.plan.recipes`) chooses it;
`passes()` turns it into the pass instances that lower the diagram, with typed options.
Strings appear only where a pass option is a string at the command line.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from xdsl.passes import ModulePass

from napkin_ir.target import Engine, Target


class CopyEngine(enum.StrEnum):
    """How tiles reach shared memory."""

    CP_ASYNC = "cp.async"
    TMA = "tma"


class ProductEngine(enum.StrEnum):
    """What issues the products at the register level."""

    MMA_SYNC = "mma.sync"  # warps, fragments in registers
    WGMMA = "wgmma"  # warpgroups, operands from swizzled shared memory (A may come from registers)

    @property
    def engine(self) -> Engine:
        return Engine(self.value)


class StorePath(enum.StrEnum):
    """How the output leaves."""

    DIRECT = "direct"  # from registers to global memory
    TMA = "tma"  # stmatrix into shared-memory panels, then TMA stores


class SmemLayout(enum.StrEnum):
    """How a stage's rows lie in shared memory (cp.async stages; TMA stages are swizzled)."""

    SWIZZLE = "swizzle"
    PAD8 = "pad8"
    ROW = "row"


class LaunchOrder(enum.StrEnum):
    """Which grid axis varies fastest from one block to the next."""

    FIRST = "first"
    LAST = "last"  # attention: the query tiles of one head together, longest first


LEVELS = ("hbm", "smem", "reg", "ptx")


@dataclass(frozen=True)
class Launch:
    """How the grid is launched: block order, bands of `group` block rows (0: none),
    blocks sharing a multiprocessor, a persistent grid looping over tiles, a cluster, and
    whether the blocks splitting a sum add their parts in a fixed order."""

    order: LaunchOrder = LaunchOrder.FIRST
    group: int = 0
    blocks_per_sm: int = 1
    persistent: bool = False
    cluster: int = 1
    ordered: bool = False  # the parts of a sum split over the grid added in a fixed order


@dataclass(frozen=True)
class KernelPlan:
    """One kernel's plan. `grid` lists each grid axis with its block tile (None: a block
    an index, as a batch axis or a head); `stream` the streamed axis and its tile, if
    any; `warps` the warps along each tiled axis (mma.sync; a wgmma plan's warpgroups
    follow from its rows, 64 a warpgroup, beside one producer warpgroup)."""

    family: str  # the recipe that made it
    target: Target
    grid: tuple[tuple[str, int | None], ...]
    stream: tuple[str, int] | None
    stages: int
    copy: CopyEngine
    product: ProductEngine | None  # None: no product (a row reduction)
    store: StorePath = StorePath.DIRECT
    layout: SmemLayout | None = None  # None: hbm-to-smem's own choice (TMA stages swizzle)
    warps: tuple[tuple[str, int], ...] = ()
    hoist: bool = True  # mma.sync: an operand read before the stream loop loaded into registers once
    a_registers: bool = False  # wgmma: A (attention's Q) from registers
    rows: str = ""  # wgmma: the axis its accumulator rows run over ("": the result's first tiled axis)
    launch: Launch = Launch()
    smem_bytes: int | None = None  # the shared-memory budget hbm-to-smem holds the block to; None: its default
    unroll: int = 0  # stream trips unrolled (cp.async stages), with fragments carried and prefetched
    overlap: bool = False  # reg-wgmma-overlap: one tile's P V under the next tile's scores
    pingpong: bool = False  # reg-pingpong: the consumer warpgroups take turns issuing products
    schedule: bool = False  # reg-wgmma-schedule: wgmma groups issued once their operands are ready, waited for where read
    early_reads: bool = False  # reg-early-reads: a statistic the first awaited products meet read as soon as its stage is full
    later_reads: bool = False  # reg-early-reads{later=true}: a statistic a later wait's results meet read just before that wait
    early_waits: str = ""  # reg-early-waits{at=...}: where an overlapped trip waits for its later stages ("": where it stood)
    partial_sums: bool = False  # reg-partial-row-sums: a running row sum kept as each lane's part, its quad's added once
    lazy_rescale: bool = False  # reg-lazy-rescale: a running row max moved only past a slack, its unit corrections skipped
    reason: str = field(default="", compare=False)  # why the model chose it, where it did

    def __post_init__(self) -> None:
        # a value given by its name (from Python callers) becomes the enumeration, or fails here
        for name, kind in (("copy", CopyEngine), ("product", ProductEngine), ("store", StorePath), ("layout", SmemLayout)):
            value = getattr(self, name)
            if isinstance(value, str) and not isinstance(value, kind):
                object.__setattr__(self, name, kind(value))
        for engine in (Engine(self.copy.value), *((self.product.engine,) if self.product else ())):
            if not self.target.has(engine):
                raise ValueError(f"{self.family}: {engine.value} does not exist on {self.target.arch}")

    def grid_labels(self) -> str:
        return ",".join(f"{a}:{t}" if t else a for a, t in self.grid)

    def stream_labels(self) -> str:
        return f"{self.stream[0]}:{self.stream[1]}" if self.stream else ""

    def passes(self, to: str = "ptx") -> tuple[ModulePass, ...]:
        """The passes that take the diagram to the level `to` (hbm, smem, reg or ptx)."""
        from napkin_ir.lowering.hbm_to_smem import HbmToSmemPass
        from napkin_ir.lowering.ncd_to_hbm import NcdToHbmPass
        from napkin_ir.lowering.reg_to_ptx import RegToPtxPass
        from napkin_ir.lowering.smem_to_reg import SmemToRegPass
        from napkin_ir.passes.carry_fragments import RegCarryFragmentsPass
        from napkin_ir.passes.early_reads import RegEarlyReadsPass
        from napkin_ir.passes.early_waits import RegEarlyWaitsPass
        from napkin_ir.passes.hoist_loads import RegHoistLoadsPass
        from napkin_ir.passes.launch import HbmLaunchPass
        from napkin_ir.passes.lazy_rescale import RegLazyRescalePass
        from napkin_ir.passes.partial_row_sums import RegPartialRowSumsPass
        from napkin_ir.passes.pingpong import RegPingpongPass
        from napkin_ir.passes.prefetch import RegPrefetchPass
        from napkin_ir.passes.relabel import RelabelPass
        from napkin_ir.passes.reload_loads import RegReloadLoadsPass
        from napkin_ir.passes.unroll_stages import SmemUnrollStagesPass
        from napkin_ir.passes.wgmma_overlap import RegWgmmaOverlapPass
        from napkin_ir.passes.wgmma_schedule import RegWgmmaSchedulePass

        ln = self.launch
        levels: list[tuple[ModulePass, ...]] = [
            (RelabelPass(grid=self.grid_labels(), stream=self.stream_labels()), NcdToHbmPass(),
             HbmLaunchPass(group=ln.group, blocks_per_sm=ln.blocks_per_sm, persistent=ln.persistent, cluster=ln.cluster,
                           order=ln.order.value, ordered=ln.ordered)),
            (HbmToSmemPass(stages=self.stages, layout=self.layout.value if self.layout else "", copy=self.copy.value,
                           store=self.store.value, **({"smem_bytes": self.smem_bytes} if self.smem_bytes else {})),),
            (SmemToRegPass(**({"warps": ",".join(f"{a}:{w}" for a, w in self.warps)} if self.warps else {}),
                           **({"mma": self.product.value} if self.product else {}), hoist=self.hoist, a_registers=self.a_registers,
                           **({"rows": self.rows} if self.rows else {})),
             *((RegHoistLoadsPass(),) if self.product is ProductEngine.WGMMA else ()),
             *((SmemUnrollStagesPass(trips=self.unroll), RegCarryFragmentsPass(), RegPrefetchPass()) if self.unroll else ()),
             *((RegWgmmaOverlapPass(),) if self.overlap else ()),
             *((RegWgmmaSchedulePass(),) if self.schedule else ()),
             *((RegPingpongPass(),) if self.pingpong else ()),
             *((RegReloadLoadsPass(),) if self.product is ProductEngine.WGMMA else ()),
             *((RegEarlyReadsPass(first=self.early_reads, later=self.later_reads),) if self.early_reads or self.later_reads else ()),
             *((RegEarlyWaitsPass(at=self.early_waits),) if self.early_waits else ()),
             *((RegPartialRowSumsPass(),) if self.partial_sums else ()),
             *((RegLazyRescalePass(),) if self.lazy_rescale else ())),
            (RegToPtxPass(arch=self.target.arch),),
        ]
        if to not in LEVELS:
            raise ValueError(f"a plan lowers to one of {', '.join(LEVELS)}, not '{to}'")
        return tuple(p for level in levels[: LEVELS.index(to) + 1] for p in level)


__all__ = ["CopyEngine", "KernelPlan", "LEVELS", "Launch", "LaunchOrder", "ProductEngine", "SmemLayout", "StorePath"]
