"""Registers per thread, estimated from the fragments of the `reg` level.

A fragment of `n` values per lane takes `n` 32-bit registers when it holds f32 and n / 2
when it holds bf16 or f16 (two halves to a register). The estimate is the most fragment
registers live at once (`_peak`): walking each block's ops in order, a value lives from
its definition to its last use (a loop's carried values and the operands it uses but
did not define, throughout its body); an op's result takes the registers of operands
that die at it, so an mma's or wgmma's result reuses its accumulators, and a
probability tile rounded for P V frees the scores it came from. Of the A and B operands
loaded for the mma steps of one block, ptxas keeps about two steps' worth live (the step
it computes and the one it prefetches), so the estimate counts the two largest. On top
of the fragments, `OVERHEAD` registers hold addresses, loop counters and predicates, and
one more for each extra ldmatrix base a swizzled buffer needs: reg-to-ptx keeps a
chunk's place within its 128-byte line in the base register (XOR does not add), so each
distinct 32-byte column within a line that a warp's fragments start at has its own (4
for A with 64-deep stream tiles, 4 for B with 64-column warp tiles, where a padded
buffer needs one each).

Calibrated against `ptxas -v` on napkin-sm80's GEMM (sm_80, reg-to-ptx with base +
immediate addresses and fragments a step ahead, commit 65427c4): 64x64 warp tiles: 212
estimated, 212-214 by ptxas (32- and 64-deep stream tiles); 64x32: 132 and 128-132;
32x32: 84 and 86 (GEMMs of 2048 and 4096 cubed; with only a few stream tiles ptxas keeps
fewer live, 168 for 64x64 at K = 256). No spills. Code that keeps more addresses live
needs a larger `OVERHEAD`: `napkin-model --ptxas` shows both figures. On napkin-sm90's
attention (2026-11-26), against what setmaxnreg gives the consumers: at d=128, 176 keys
a tile with overlap and ping-pong, 222 of 240 (ptxas: no spills); three consumer
warpgroups at d=64 (160 each), 128 keys 154 (no spills), 176 keys 190 (56 bytes
spilled).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.dialects import scf
from xdsl.ir import Block, Operation, SSAValue

from napkin_ir.dialects import hbm, reg, smem
from napkin_ir.target import SM90

OVERHEAD = 20
PREFETCHED_STEPS = 2
# registers over what setmaxnreg gives a consumer that a plan may still be judged at: ptxas
# spills the few it lacks to local memory, which the L1 holds. The gradient's one kernel at
# d=64, 128 keys by 128 queries: estimated 244 of 240, ptxas spills 44 bytes, and it is the
# fastest plan (1.06-1.14x the 64-query one, H200, research/benchmarks.md 2026-11-29)
SPILL_SLACK = 8


@dataclass(frozen=True)
class RegisterEstimate:
    fragments: int
    overhead: int = OVERHEAD

    @property
    def total(self) -> int:
        return self.fragments + self.overhead


def fragment_registers(t: reg.FragType) -> int:
    per_register = 1 if t.dtype == "f32" else 2
    return -(-t.values_per_lane() // per_register)


def _regs(v: SSAValue) -> int:
    return fragment_registers(v.type) if isinstance(v.type, reg.FragType) else 0  # type: ignore[arg-type]


def _retired(ops: list[Operation]) -> dict[SSAValue, int]:
    """Each register A operand of a wgmma group (`reg.wgmma_rs`): where, in `ops`, the wait
    that retires its group is (len(ops) where none does). The tensor cores read those
    registers until then, so they stay allocated that long, not only to the product's issue."""
    out: dict[SSAValue, int] = {}
    flight: list[list[SSAValue]] = []
    pending: list[SSAValue] = []
    for n, op in enumerate(ops):
        if isinstance(op, reg.WgmmaRsOp):
            pending.append(op.a)
        elif isinstance(op, reg.WgmmaCommitOp):
            flight.append(pending)
            pending = []
        elif isinstance(op, reg.WgmmaWaitOp):
            keep = op.pending.value.data
            for group in flight[: max(0, len(flight) - keep)]:
                out.update(dict.fromkeys(group, n))
            flight = flight[max(0, len(flight) - keep) :]
    for group in [*flight, pending]:
        out.update(dict.fromkeys(group, len(ops)))
    return out


def _peak(block: Block, around: int = 0, kept: frozenset[SSAValue] = frozenset(), order: list[Operation] | None = None,
          in_flight: bool = False) -> int:
    """The most fragment registers live at once in `block` (and the blocks inside its ops),
    with `around` registers held by values live across it that it does not use, and
    `kept` the values from outside it that it uses and that live on after it.

    Walking the block's ops in order: a value is live from its definition (or the block's
    start) to its last use in the block; a value from outside it, to its last use too,
    unless it lives on after the block (`kept`) or the block is a loop's body, run again
    (then throughout). An op's results take the registers of the operands that die at it
    (an accumulating op's result reuses its accumulators). The A and B operands of the
    block's mma steps are counted apart, as the two largest steps' worth
    (`PREFETCHED_STEPS`). `order`: the block's ops in another order (a schedule being
    weighed); `in_flight`: a wgmma's register A operand lives until its group retires."""
    ops = list(block.ops) if order is None else order
    last: dict[SSAValue, int] = {}
    inside: list[set[SSAValue]] = []
    for n, op in enumerate(ops):
        within = [inner for r in op.regions for inner in r.walk()]
        made_within = {v for inner in within for v in inner.results} | {
            a for inner in [op, *within] for r in inner.regions for b in r.blocks for a in b.args}
        nested = {v for inner in within for v in inner.operands if isinstance(v.type, reg.FragType) and v not in made_within}
        inside.append(nested)
        for v in [*op.operands, *nested]:
            if isinstance(v.type, reg.FragType):
                last[v] = n
    if in_flight:
        for v, n in _retired(ops).items():
            last[v] = max(last.get(v, n), n)
    mine = set(block.args) | {r for op in ops for r in op.results}
    mma_steps, operands = [], set()
    for op in ops:
        if isinstance(op, reg.MmaOp):
            loaded = [v for v in (op.a, op.b) if v in mine and v not in block.args]
            operands.update(loaded)
            mma_steps.append(sum(_regs(v) for v in loaded))
    window = sum(sorted(mma_steps, reverse=True)[:PREFETCHED_STEPS])
    outside = {v for v in last if v not in mine}
    pinned = outside if isinstance(block.parent_op(), scf.ForOp) else outside & kept
    live = outside | {a for a in block.args if a in last}
    base = around + window
    peak = base
    for n, op in enumerate(ops):
        held = sum(_regs(v) for v in live)
        after = {v for v in live if v in pinned or last[v] > n}  # live once the op is done
        if op.regions:  # what lives across the op unused inside it; what it uses and lives on
            beside = sum(_regs(v) for v in after if v not in inside[n])
            for region in op.regions:
                for b in region.blocks:
                    peak = max(peak, _peak(b, base + beside, frozenset(after & inside[n])))
        dying = live - after
        made = [r for r in op.results if isinstance(r.type, reg.FragType) and r not in operands]
        peak = max(peak, base + held, base + held - sum(_regs(v) for v in dying) + sum(_regs(r) for r in made))
        live = after | {r for r in made if r in last}
    return peak


def _swizzle_bases(kernel: hbm.KernelOp) -> int:
    """The ldmatrix base registers swizzled buffers need beyond one each."""
    warps = kernel.warp_grid
    columns: dict[SSAValue, set[int]] = {}
    for op in kernel.walk():
        if not isinstance(op, reg.LdmatrixOp):
            continue
        buf, t = op.source.type, op.result.type
        if not isinstance(buf, smem.BufferType) or buf.layout.data != "swizzle" or not isinstance(t, reg.FragType):
            continue
        col_axis = t.axis_names[-1]
        c0 = 0 if col_axis in warps else hbm.parse_labels(op.at).get(col_axis, 0)
        starts = [2 * c0] if t.role.data == "a" else [2 * c0 + 32 * j for j in range(max(1, t.dims[-1] // 16))]
        row_bytes = 2 * buf.dims[-1]
        columns.setdefault(op.source, set()).update(c % 128 if row_bytes > 128 else c for c in starts)
    return sum(len(c) - 1 for c in columns.values())


def consumer_budget(kernel: hbm.KernelOp) -> int | None:
    """The registers a consumer thread of `kernel` has once `setmaxnreg` has moved the
    producer warpgroup's to the consumers (sm_90a's warp-specialised kernels); None for a
    kernel without a producer."""
    if not any(isinstance(o, smem.ProducerOp) for o in kernel.body.block.ops):
        return None
    return SM90.consumer_registers(32 * prod(kernel.warp_grid.values()) + 128, kernel.resident_blocks)


def fragment_peak(block: Block, order: list[Operation]) -> int:
    """Fragment registers live at once in `block` were its ops in `order`, a wgmma's
    register A operand held until its group retires, plus `OVERHEAD`: what
    `reg-wgmma-schedule` weighs against `consumer_budget`."""
    return _peak(block, order=order, in_flight=True) + OVERHEAD


def estimate_registers(kernel: hbm.KernelOp) -> RegisterEstimate | None:
    """The estimate for a kernel at the `reg` level; None above it (no fragments yet)."""
    if not any(isinstance(op.results[0].type, reg.FragType) for op in kernel.walk() if op.results):
        return None
    return RegisterEstimate(_peak(kernel.body.block), OVERHEAD + _swizzle_bases(kernel))
