"""From a kernel's cost to occupancy and a predicted time on one machine.

Occupancy is the CUDA occupancy calculation: blocks per SM limited by shared memory
(plus the runtime's reservation per block), by registers (allocated per warp in units of
256), by the warp limit and by the block limit; the smallest names the limiter.

The predicted time is the largest of the times each unit needs for its share of the
work, assuming they all overlap perfectly (the software pipeline keeps copies in flight
while the tensor cores work; warps hide each other's latency):

- tensor cores: tensor FLOPs at the instruction's dense rate (mma.sync or wgmma);
- f32 ALU and special functions (MUFU), at their rates;
- shared memory: bytes written by copies plus bytes read by the computation, at 128
  bytes per clock per SM;
- L2: every tile the napkin count reads or writes passes through it;
- HBM: the DRAM estimate (`napkin_ir.model.l2`) at `HBM_EFFICIENCY` of the peak, or at
  what the bytes in flight sustain by Little's law (concurrent blocks x bytes each has
  in flight / `DRAM_LATENCY_S`), whichever is lower.

A kernel whose products wait on the math between them (sm_90a attention: S = Q K^T,
the softmax on S's accumulators, then P V with P from registers) cannot overlap them
perfectly: its warpgroups keep the tensor cores busy only while another product is
ready to issue. For it a further time, `chain`, is the longer of the products (tensor)
and the math (the longer of ALU and MUFU, which overlap each other as elsewhere) plus
the share of the shorter that its schedule leaves exposed (`CHAIN_EXPOSED`): all of it
where each warpgroup waits for its products where it stands (the sum), less where the
next tile's scores are made under this tile's P V (`reg-wgmma-overlap`) or one
warpgroup's softmax runs under another's products (`reg-pingpong`), least with both;
plus a latency for each row reduction (`REDUCTION_LATENCY_S`), two a tile step for a
softmax: fewer, wider stream tiles cost less. A warp-specialised kernel with one consumer
warpgroup an SM has no other to take turns with, and its chain runs `SOLO_CHAIN` longer.

The SM-side times (the first four, and `chain`) run at full rate only with a warp on
each of the SM's four sub-partitions (`WARPS_PER_SM_TO_FILL`), and are scaled by the
tail: the busiest SM runs ceil(blocks / SMs) blocks while the average runs blocks /
SMs. The number of waves, ceil(blocks / (SMs x blocks per SM)), is reported with it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from napkin_ir.errors import UserError
from napkin_ir.model.analysis import FunctionCost, KernelCost, OpCost
from napkin_ir.model.hardware import Hardware, check_fits
from napkin_ir.model import l2 as l2_model
from napkin_ir.model.work import Work

# A device-to-device copy sustains about 4.2 of an H200's 4.8 TB/s (measured on the lent
# H200, 2026-11-21); the model assumes the same fraction of the peak on every machine.
HBM_EFFICIENCY = 0.875
# A DRAM round trip under load; unloaded pointer-chasing microbenchmarks give 400-500 ns
# on A100 and H100.
DRAM_LATENCY_S = 600e-9
# Each SM has four sub-partitions, each with its own tensor core, ALUs and MUFU; a warp
# runs on one of them.
WARPS_PER_SM_TO_FILL = 4

# The share of the shorter of a chain's products and its math that runs exposed, by
# (overlapped, pingpong). Fitted on napkin-sm90's attention steps on the H200
# (research/benchmarks.md, 2026-11-25): at d=128, 4k tokens, waiting for each group where it
# stands measured 524 TFLOP/s and with reg-wgmma-overlap 603 (+15%; the model, with 2/3
# exposed, +13%); ping-pong on top measured -3% to +9%; spherical attention (almost no
# MUFU work) ran 1.19-1.24x the softmax at d=128 with both on (the model: 1.15x) and
# 1.15-1.22x with neither at d=256 (1.17x).
CHAIN_EXPOSED = {(False, False): 1.0, (True, False): 2 / 3, (False, True): 2 / 3, (True, True): 1 / 2}
# What each row reduction of such a kernel (a softmax's running max and sum, a spherical
# attention's sum of squares: two a tile step, or one) costs an SM beyond its share of the
# work: the warpgroup's next stage waits on it (its products retired, its lanes
# exchanging), and no number of keys a tile shrinks it. Fitted on napkin-sm90's attention
# at d=128 on the H200 (2026-11-26, same call, overlap and ping-pong): 176 keys a tile
# against 128 at 16k tokens, 3587 against 3962 us; with 0.35 us a reduction the model
# gives 3959 against 4317, and at 4k (not paired; 875 against 946 us across calls) 1011
# against 1079.
REDUCTION_LATENCY_S = 0.35e-6
# How much longer the chain of a warp-specialised kernel runs where an SM holds one
# consumer warpgroup: no other warpgroup's math runs under its products, nor its products
# under another's math, so it also waits out each product's latency. Fitted on the
# gradient's one kernel at d=64 on the H200 (research/benchmarks.md, 2026-11-29): blocks of
# 64 keys (one consumer warpgroup) against 128 (two), 128 queries a tile, 1.09-1.24x as
# long at 4k and 16k, causal and not; the model without it put the two within 2%.
SOLO_CHAIN = 1.2

BOUND_NAMES = {"tensor": "tensor cores", "alu": "f32 ALU", "sfu": "special functions", "smem": "shared memory",
               "l2": "L2", "hbm": "HBM", "chain": "the products and the math between them, in turn"}


@dataclass(frozen=True)
class Occupancy:
    blocks_per_sm: int
    warps_per_sm: int
    limits: dict[str, int]  # smem, registers, warps, blocks: blocks per SM each allows

    @property
    def limiter(self) -> str:
        return " and ".join(k for k, v in self.limits.items() if v == self.blocks_per_sm)

    def describe(self) -> str:
        """`2 blocks (8 warps) per SM, limited by registers`."""
        blocks = f"{self.blocks_per_sm} block{'s' if self.blocks_per_sm != 1 else ''}"
        return f"{blocks} ({self.warps_per_sm} warps) per SM, limited by {self.limiter}"


def occupancy(hw: Hardware, smem_per_block: int, warps: int, registers: int | None) -> Occupancy:
    """Blocks and warps resident per SM; `registers` None when not known (not limiting)."""
    limits = {
        "smem": _blocks_by_smem(hw, smem_per_block),
        "registers": _blocks_by_registers(hw, warps, registers),
        "warps": hw.max_warps_per_sm // warps,
        "blocks": hw.max_blocks_per_sm,
    }
    blocks = min(limits.values())
    return Occupancy(blocks, blocks * warps, limits)


def _blocks_by_smem(hw: Hardware, smem_per_block: int) -> int:
    if smem_per_block > hw.smem_per_block:
        return 0
    return hw.smem_per_sm // (smem_per_block + hw.smem_reserved_per_block) if smem_per_block else hw.max_blocks_per_sm


def launch_registers(cost: KernelCost, hw: Hardware) -> int | None:
    """What each thread holds at launch where the kernel, not its fragments, decides it:
    a warp-specialised kernel's producer gives its registers to the consumers
    (`setmaxnreg`), which ptxas allows within the cap `.maxntid` and `.minnctapersm`
    impose, so it allocates the whole cap (the register file over the block's threads and
    its `hbm.blocks_per_sm`, in steps of 8; `ptxas -v` reports it): registers then hold a
    multiprocessor to the blocks the launch asks for. None for other kernels."""
    if not cost.producer_warps:
        return None
    return min(hw.regs_per_thread, hw.regs_per_sm // cost.blocks_per_sm // (32 * cost.warps)) // 8 * 8


def register_budget(cost: KernelCost, hw: Hardware) -> int:
    """The registers a computing thread may hold: what the machine gives a thread, or in a
    warp-specialised kernel what `setmaxnreg` gives the consumers once the producer has
    dropped to its share (`Target.consumer_registers`, which reg-to-ptx emits)."""
    if not cost.producer_warps:
        return hw.regs_per_thread
    from napkin_ir.target import SM90

    return SM90.consumer_registers(32 * cost.warps, cost.blocks_per_sm)


def _blocks_by_registers(hw: Hardware, warps: int, registers: int | None) -> int:
    if registers is None:
        return hw.max_blocks_per_sm
    per_warp = -(-min(registers, hw.regs_per_thread) * 32 // hw.reg_alloc_unit) * hw.reg_alloc_unit
    return (hw.regs_per_sm // per_warp) // warps


@dataclass(frozen=True)
class Prediction:
    hardware: Hardware
    occupancy: Occupancy
    instruction: str
    instruction_assumed: bool
    registers: int | None
    dram: dict[str, float]  # per tensor, the bytes moved while the kernel runs
    times: dict[str, float]
    waves: int
    tail: float
    dirty_at_end: dict[str, float] = field(default_factory=dict)  # per tensor, left dirty in the L2
    # the DRAM estimate's total with the L2 L2_EDGE_SPREAD smaller and larger (`predict`'s `edge`)
    dram_edge: tuple[float, float] | None = None
    # with several blocks an SM, the DRAM estimate's total with them in step rather than
    # staggered (`predict`'s `edge`)
    dram_in_step: float | None = None

    @property
    def seconds(self) -> float:
        return max(self.times.values())

    @property
    def bound(self) -> str:
        return max(self.times, key=lambda k: self.times[k])


def predict(cost: KernelCost, hw: Hardware, registers: int | None = None, instruction: str | None = None,
            edge: bool = False) -> Prediction:
    """Occupancy and predicted time of a kernel on `hw`. `registers` overrides the estimate
    (e.g. ptxas' count); `instruction` the tensor-core instruction where the level has not
    decided it (default: the fastest the machine has). With `edge`, also the DRAM estimate
    with the L2 `L2_EDGE_SPREAD` (5%) smaller and larger (`Prediction.dram_edge`): far apart
    where the kernel's reuse sits at the cache's edge, which is where the estimate misses
    most (research/model-validation.md, "How sure the DRAM estimate is"); and, with several blocks an SM,
    the estimate with an SM's blocks in step rather than staggered (`Prediction.dram_in_step`):
    which of the two the GPU settles into is not read off the kernel, and far apart they say
    the estimate is no surer than that."""
    check_fits(cost.name, cost.globals, hw)
    if registers is None:
        registers = launch_registers(cost, hw)
    regs = registers if registers is not None else (cost.registers.total if cost.registers else None)
    occ = occupancy(hw, cost.smem_per_block, cost.warps, regs)
    if cost.smem_per_block > hw.smem_per_block:
        raise UserError(f"@{cost.name}: a block needs {cost.smem_per_block} bytes of shared memory; "
                        f"the {hw.name} gives one block at most {hw.smem_per_block}")
    if occ.blocks_per_sm == 0:
        raise UserError(f"@{cost.name}: no block fits on an SM of the {hw.name} "
                        f"(blocks per SM by {', '.join(f'{k} {v}' for k, v in occ.limits.items())})")
    mma = cost.instruction or instruction or hw.best_mma
    blocks, slots = cost.n_blocks, hw.sms * occ.blocks_per_sm
    tail = math.ceil(blocks / hw.sms) * hw.sms / blocks
    fill = min(1.0, occ.warps_per_sm / WARPS_PER_SM_TO_FILL)
    sm_side = tail / fill
    spread = l2_model.L2_EDGE_SPREAD
    sizes = [hw.l2_bytes] + ([hw.l2_bytes * (1 - spread), hw.l2_bytes * (1 + spread)] if edge else [])
    estimate, *edges = l2_model.dram_estimates(cost, slots, sizes, occ.blocks_per_sm, partition=hw.l2_partition,
                                      dispatch=hw.dispatch_order)
    dram = estimate.moved
    in_flight = min(blocks, slots) * cost.inflight_per_block
    hbm_rate = min(sustained_hbm(hw), in_flight / DRAM_LATENCY_S) if in_flight else sustained_hbm(hw)
    times = {k: t * sm_side for k, t in work_times(cost.work, hw, mma).items()}
    times["smem"] = (cost.smem_read + cost.smem_written) / hw.smem_bytes_per_s * sm_side
    if cost.chained:  # the busiest SM's row reductions, each with its latency
        reductions = cost.reductions / (hw.sms * occ.blocks_per_sm) * sm_side
        solo = cost.producer_warps and (cost.warps - cost.producer_warps) * occ.blocks_per_sm <= 4
        products = max(times["tensor"], times["smem"])  # no faster than their operands are read
        times["chain"] = chain_time(products, max(times["alu"], times["sfu"]), cost.overlapped, cost.pingpong) * \
            (SOLO_CHAIN if solo else 1.0) + reductions * REDUCTION_LATENCY_S
    times.update({
        "l2": cost.hbm_bytes / hw.l2_bytes_per_s,
        "hbm": sum(dram.values()) / hbm_rate,
    })
    dram_edge = tuple(sum(e.moved.values()) for e in edges) if edge else None
    in_step = None
    if edge and l2_model.resident(blocks, slots, occ.blocks_per_sm)[1] > 1:
        (together,) = l2_model.dram_estimates(cost, slots, [hw.l2_bytes], occ.blocks_per_sm, partition=hw.l2_partition,
                                              dispatch=hw.dispatch_order, stagger=False)
        in_step = sum(together.moved.values())
    return Prediction(hw, occ, mma, cost.instruction is None, regs, dram, times, math.ceil(blocks / slots), tail,
                      estimate.dirty_at_end, dram_edge, in_step)


def chain_time(products: float, math_: float, overlapped: bool, pingpong: bool) -> float:
    """Products and the math between them where they wait on one another: the longer,
    plus the share of the shorter the schedule leaves exposed (`CHAIN_EXPOSED`)."""
    return max(products, math_) + CHAIN_EXPOSED[overlapped, pingpong] * min(products, math_)


def sustained_hbm(hw: Hardware) -> float:
    return hw.hbm_bytes_per_s * HBM_EFFICIENCY


def work_times(work: Work, hw: Hardware, instruction: str) -> dict[str, float]:
    """Seconds the whole machine's tensor cores, ALUs and MUFUs need for `work`."""
    return {"tensor": work.tensor_flops / hw.tensor_flops(instruction), "alu": work.alu_ops / hw.fp32_ops_per_s,
            "sfu": work.sfu_ops / hw.sfu_ops_per_s}


def op_times(op: OpCost, hw: Hardware) -> dict[str, float]:
    """An ncd-level op run as a kernel of its own over the whole machine (no tail)."""
    return {**work_times(op.work, hw, hw.best_mma), "hbm": (op.read + op.written) / sustained_hbm(hw)}


def fused_floor(f: FunctionCost, hw: Hardware) -> float:
    """What one kernel computing all of `f` needs at least: all its work, and its arguments
    and results through HBM once."""
    return max(*work_times(f.work, hw, hw.best_mma).values(), f.fused_bytes / sustained_hbm(hw))
