"""`hbm-launch`: how a kernel's blocks are launched, for the lowering to honour.

    hbm-launch{group=8 blocks_per_sm=2 persistent=true}

`group` orders the blocks of a two-axis grid in groups of `group` block rows: a run of
consecutive blocks then covers a `group`-high band of the output, column by column, so
the tiles of the first input it reads stay in L2 while the band is swept (0: plain
order, the first grid axis fastest). `blocks_per_sm` asks for that many blocks to share
a multiprocessor (so that one's epilogue overlaps another's main loop); the register
and shared-memory budgets are divided accordingly. `persistent` launches only as many
blocks as fit the machine at once, each looping over tiles (block, block + blocks, ...
in the same order), so that a block's producer fetches its next tile while its
consumers finish the last. `cluster=2` pairs neighbouring blocks along the first grid
axis into a thread-block cluster: a tile both need (one whose offsets do not move along
that axis) is loaded half by each and multicast to both; persistent, each cluster takes a
pair of such neighbouring tiles a turn. On a kernel whose sums are split over the grid
(ncd-to-hbm's `accumulate` stores into a 16-bit output), `cluster` is the parts of each
output tile's sum, which then form a cluster: each part sends the others' shares of its
f32 sums to their shared memory, and each adds its share in the parts' order and rounds
it into the output (`reg-to-ptx`), with no global scratch, counter or fence between
them. They are written on each
`hbm.kernel` as its properties `hbm.group`, `hbm.blocks_per_sm`, `hbm.persistent` and
`hbm.cluster`, whose types and ranges the kernel verifies;
`reg-to-ptx` emits them for sm_90a kernels. `order=last` makes the last grid axis vary
fastest (attention: the query tiles of one head run together, sharing its K and V in L2),
walked so that the blocks with the longest streams start first: from its end where the
streams grow along it (`hbm.order = "last"`: a causal forward's query blocks, each
streaming the keys up to its own), from its start where they shrink
(`"last_from_start"`: the causal gradient's key blocks, each streaming the queries from
its own); without it the first grid axis varies fastest. The napkin model follows the same
order (`hbm.order`).
`ordered=true` has the blocks that split a sum over the grid (ncd-to-hbm's `accumulate`
stores) add their parts in a fixed order, the first part written, each next one added
when its turn comes (`hbm.ordered_sums`): the sums are the same from run to run, and the
output needs no zeroing. The split axes must then be launched last (the slowest), so that
a block only ever waits for blocks launched before it; a persistent or grouped launch,
or `order=last`, is refused with it. A sum rounded into a 16-bit output is added in a
fixed order whatever this says (by the part that finishes last: `reg-to-ptx`).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from napkin_ir.dialects import hbm
from napkin_ir.errors import UserError
from napkin_ir.model.space import stream_trips


@dataclass(frozen=True)
class HbmLaunchPass(ModulePass):
    name = "hbm-launch"
    group: int = 0
    blocks_per_sm: int = 1
    persistent: bool = False
    cluster: int = 1
    order: str = "first"
    ordered: bool = False

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        if self.group < 0:
            raise PassFailedException(f"hbm-launch: group must be 0 (plain order) or positive, got {self.group}")
        if self.order not in ("first", "last"):
            raise PassFailedException(f"hbm-launch: order must be first or last (the grid axis that varies fastest), got '{self.order}'")
        if not 1 <= self.cluster <= hbm.MAX_CLUSTER:
            raise PassFailedException(f"hbm-launch: cluster must be 1 to {hbm.MAX_CLUSTER} blocks, got {self.cluster}")
        if not 1 <= self.blocks_per_sm <= 4:
            raise PassFailedException(f"hbm-launch: blocks_per_sm must be 1 to 4, got {self.blocks_per_sm}")
        kernels = [k for k in op.walk() if isinstance(k, hbm.KernelOp)]
        if not kernels:
            raise PassFailedException("hbm-launch: the module has no hbm.kernel; run ncd-to-hbm first")
        for k in kernels:
            if self.group and len(k.grid_tiles) != 2:
                raise PassFailedException(f"hbm-launch: @{k.sym_name.data}: grouping orders a two-axis grid; "
                                          f"this one has {len(k.grid_tiles)} axes")
            k.properties["hbm.group"] = builtin.IntegerAttr(self.group, 32)
            k.properties["hbm.blocks_per_sm"] = builtin.IntegerAttr(self.blocks_per_sm, 32)
            if self.persistent:
                k.properties["hbm.persistent"] = builtin.UnitAttr()
            if self.cluster > 1:
                self._check_cluster(k)
                k.properties["hbm.cluster"] = builtin.IntegerAttr(self.cluster, 32)
            if self.order == "last":
                k.properties["hbm.order"] = builtin.StringAttr("last" if _streams_grow(k) else "last_from_start")
            if self.ordered and k.accumulated():
                self._order_sums(k)

    def _check_cluster(self, k: hbm.KernelOp) -> None:
        where = f"hbm-launch: @{k.sym_name.data}: cluster={self.cluster}"
        split = k.split_axes()
        if not split:
            if self.cluster != 2:
                raise PassFailedException(f"{where}: a grid without split sums clusters pairs of blocks (cluster=2)")
            return
        counts = k.grid_shape()
        parts = prod(counts[a] for a in split)
        if parts != self.cluster:
            raise PassFailedException(f"{where}: the sums are split in {parts} parts over the grid ({', '.join(split)}), "
                                      f"and a cluster takes the parts of one output tile: give cluster={parts}")
        if self.persistent or self.group or self.order == "last":
            raise PassFailedException(f"{where} clusters the parts of split sums on a plain grid: persistent, group and "
                                      "order=last cannot be honoured with it")
        if any(g.type.dtype == "f32" for g in k.accumulated()):  # type: ignore[attr-defined]
            raise PassFailedException(f"{where} adds the parts in shared memory and rounds the sum into a 16-bit output; "
                                      "an f32 output's parts are added into it (red.global.add): leave cluster=1")

    def _order_sums(self, k: hbm.KernelOp) -> None:
        where = f"hbm-launch: @{k.sym_name.data}: ordered=true"
        if self.persistent or self.group or self.cluster > 1 or self.order == "last":
            raise PassFailedException(f"{where} adds the parts of a sum in the order the blocks are launched: "
                                      "it needs a plain launch (no persistence, group, cluster or order=last)")
        split, grid = k.split_axes(), list(k.grid_tiles)
        if grid[len(grid) - len(split):] != split:
            raise PassFailedException(f"{where} waits for the earlier parts of a sum, so its split axes {split} must be the "
                                      f"grid's last (launched slowest); the grid is {grid}")
        k.properties["hbm.ordered_sums"] = builtin.UnitAttr()


def _streams_grow(k: hbm.KernelOp) -> bool:
    """Whether the blocks' streams (their outermost loops' trips) grow along the last grid
    axis, or stay even: its first blocks' the shortest (else its first blocks start first)."""
    try:
        trips = stream_trips(k)
    except UserError:  # bounds the model cannot follow: from the end, as a causal forward's
        return True
    along = trips.reshape(-1, trips.shape[-1]).sum(0) if trips.ndim else trips
    return bool(along.size < 2 or along[0] <= along[-1])
