"""`reg-wgmma-schedule`: each wgmma group issued as soon as what it reads is ready, and
waited for only where what it made is first read.

smem-to-reg waits for every group right after its commit (`reg.wgmma_wait {pending = 0}`),
so a warpgroup never has two groups in flight, and its tensor cores idle while it computes
on a result. Where a block issues groups that do not read each other (the attention
gradient's tile: S = K Q^T and dP = V dO^T; then dV += P^T dO while dS is computed from
dP), this pass, in each loop body whose waits are all of that plain form:

- drops the waits;
- moves each stage release (`smem.arrive`) made right after a group's wait to the end of
  the block, where every group has retired (a release made later is never wrong; none
  moves past a wait on a full barrier, but for the empty barriers a store role arrives on,
  whose arrivals wait for nothing the release frees); a release placed elsewhere (`reg-wgmma-overlap`'s,
  of Q ahead of the last tile's P V) stays;
- moves each group up, past the ops it does not need (pure register math, `reg.load`),
  taking along the waits on full barriers (`smem.mbarrier_wait`, waited for earlier) and
  the constants and zeros it reads, until it meets an op that makes one of its operands,
  an earlier group, or an op it cannot pass (a barrier, a write to shared memory, a
  region); groups keep their order, so that waits can count them;
- waits for a group (`reg.wgmma_wait {pending = n}`, groups retire in order) just before
  the first op that reads one of its results, writes a buffer it reads, hands a store role
  a buffer it reads (`smem.arrive {async_proxy}`: the attention gradient's dQ stage goes
  to the role while dK's product runs), or is none of the ops known not to touch what a
  group uses; the block's end waits for all;
- where that order would hold more fragment registers at once than a consumer thread has
  (`napkin_ir.model.registers.fragment_peak` against `consumer_budget`: a product's
  register A operand counts until its group retires), issues a group that reads its A
  operand from registers after the register math that follows it instead, with its
  conversions, and after a write into a buffer it does not read that follows that math
  (the gradient's dV += P^T dO after dS's math and dS's `reg.stmatrix`, just before the
  writers' fenced meeting, so that its products run while they wait: FlashAttention-4's
  order; at 64 queries and d=64 the early order fits). Issued before dS's write instead,
  the fence waited for the writes with no product of the warpgroup's in flight: d=64 over
  16k 1.007-1.020, causal 1.034-1.035, d=128 under a causal mask 1.018-1.021, d=128 at 80
  queries 0.989-1.012 (H200, the one kernel alone; research/benchmarks.md, session 68).

    wait Q; S = K Q^T; commit; wait 0; P = exp(S - lse); wait dO; dP = V dO^T; commit; wait 0;
    dV += P^T dO; commit; wait 0; release dO; dS = P (dP - D); dK += dS^T Q; commit; wait 0; release Q
becomes
    wait Q; S = K Q^T; commit; wait dO; dP = V dO^T; commit; wait 1; P = exp(S - lse);
    dV += P^T dO; commit; wait 1; dS = P (dP - D); dK += dS^T Q; commit; wait 0; release dO; release Q

A group is never moved past an op that reads the value it accumulates into (the printer may
write that accumulator in place). Blocks already scheduled (a wait that leaves groups
pending: the GEMM's stream, `reg-wgmma-overlap`'s loops) or taking turns (`reg-pingpong`
runs after this pass) are left as they are, as is a block of fewer than two groups.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, builtin, scf
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from napkin_ir.dialects import hbm, reg, smem
from napkin_ir.model.registers import consumer_budget, fragment_peak
from napkin_ir.passes.wgmma_overlap import PRODUCTS, PURE

# what a group may be issued ahead of: register math (`reg-wgmma-overlap`'s, which reads and
# writes nothing a group does but for its operands) and loads from global memory
PASSABLE = (*PURE, reg.LoadOp)
# what a group takes along when it reads it (no operand made by register math)
TAKEN_ALONG = (reg.ZerosOp, reg.FillOp, arith.ConstantOp, arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.DivUIOp,
               arith.RemUIOp, arith.MinUIOp, arith.MaxUIOp)
# ops that need no group retired but those whose results they read
FREE = (*PASSABLE, smem.MbarrierWaitOp, smem.BarrierOp, smem.TmaStoreOp, smem.TmaStoreWaitOp)


def _on_staged_statistic(op: Operation) -> bool:
    """Whether `op` reads a staged statistic (`reg.read` of a `row` or `col` fragment) or is
    register math on one, directly or through such math."""
    if isinstance(op, reg.ReadOp) and op.vector:
        return True
    return isinstance(op, reg.MapOp) and any(isinstance(v.owner, Operation) and _on_staged_statistic(v.owner) for v in op.operands)


def _passable(op: Operation) -> bool:
    """Whether a group may be issued ahead of `op`: register math, a load from global memory,
    or a read of a statistic staged with the stream's tiles (`reg.read` of a `row` or `col`
    fragment: a stage no product writes)."""
    return isinstance(op, PASSABLE) or (isinstance(op, reg.ReadOp) and op.vector)


@dataclass
class _Group:
    ops: list[Operation]  # the products, then the commit
    results: set[SSAValue] = field(default_factory=set)
    reads: set[SSAValue] = field(default_factory=set)  # the buffers its products read
    accumulates: set[SSAValue] = field(default_factory=set)  # the values it accumulates into, from outside it

    def __post_init__(self) -> None:
        for op in self.ops[:-1]:
            assert isinstance(op, PRODUCTS)
            self.results.add(op.result)
            self.reads |= {op.b} | ({op.a} if isinstance(op, reg.WgmmaOp) else set())
            if op.c not in self.results:
                self.accumulates.add(op.c)


def _groups(block: Block) -> list[_Group] | None:
    """The block's groups, each of products then a commit then `wait {pending = 0}`; None
    where the block has another shape (a wait leaving groups pending, turns, a product
    outside such a group)."""
    ops = list(block.ops)
    groups: list[_Group] = []
    run: list[Operation] = []
    for n, op in enumerate(ops):
        if isinstance(op, (reg.TurnStartOp, reg.TurnWaitOp, reg.TurnPassOp)):
            return None
        if isinstance(op, PRODUCTS):
            run.append(op)
        elif isinstance(op, reg.WgmmaCommitOp):
            after = ops[n + 1] if n + 1 < len(ops) else None
            if not run or not isinstance(after, reg.WgmmaWaitOp) or after.pending.value.data != 0:
                return None
            groups.append(_Group([*run, op]))
            run = []
        elif run:  # a product not followed by its commit
            return None
        elif isinstance(op, reg.WgmmaWaitOp) and (n == 0 or not isinstance(ops[n - 1], reg.WgmmaCommitOp)):
            return None
    return None if run else groups


def _needs(op: Operation, group: _Group) -> bool:
    """Whether `op` must wait for `group` to retire."""
    if any(v in group.results for v in op.operands):
        return True
    if isinstance(op, smem.WindowWriteOp):
        return op.dest in group.reads
    if isinstance(op, smem.ArriveOp) and op.async_proxy is not None:  # stages written for a store role: only those count
        return any(smem.stored_by_role(b) for b in group.reads)
    return not (isinstance(op, FREE) or _passable(op)) or bool(op.regions)


def _hoist(order: list[Operation], group: _Group) -> None:
    """Move `group` up in `order` as far as it may go (see the module's docstring)."""
    pos = order.index(group.ops[0])
    size = len(group.ops)
    while pos > 0:
        x = order[pos - 1]
        if isinstance(x, (*PRODUCTS, reg.WgmmaCommitOp)) or x.regions:
            return
        used = any(v in unit_op.operands for unit_op in order[pos : pos + size] for v in x.results)
        if used or isinstance(x, smem.MbarrierWaitOp):
            if used and not isinstance(x, TAKEN_ALONG) and not isinstance(x, smem.MbarrierWaitOp):
                return
            pos, size = pos - 1, size + 1  # taken along
            continue
        if not _passable(x) or any(v in group.accumulates for v in x.operands):
            return
        order.pop(pos - 1)
        order.insert(pos - 1 + size, x)
        pos -= 1


def _placed(order: list[Operation], groups: list[_Group], end: Operation) -> list[Operation]:
    """`order` and the block's end with the waits placed: each before the first op that
    needs a group in flight (new `reg.wgmma_wait` ops, not yet in the block)."""
    commits = {g.ops[-1]: g for g in groups}
    in_group = {o for g in groups for o in g.ops}
    out: list[Operation] = []
    flight: list[_Group] = []
    for op in [*order, end]:
        if op in in_group:
            out.append(op)
            if op in commits:
                flight.append(commits[op])
            continue
        needed = [n for n, g in enumerate(flight) if _needs(op, g)]
        if needed:
            out.append(reg.WgmmaWaitOp(len(flight) - 1 - needed[-1]))
            flight = flight[needed[-1] + 1 :]
        out.append(op)
    return out


def _sunk(order: list[Operation], group: _Group) -> list[Operation] | None:
    """`order` with `group` (its products, its commit, and the `reg.to_a` conversions only it
    reads, placed just before it) moved down past the register math, staged reads and
    writes into buffers it does not read that follow it and do not read its results; None
    where nothing follows that it may pass."""
    owners = [o.a.owner for o in group.ops[:-1] if isinstance(o, reg.WgmmaRsOp)]
    conversions = [o for o in order if o in owners and isinstance(o, reg.ToAOp)
                   and all(u.operation in group.ops for u in o.result.uses)]
    moving = [*conversions, *group.ops]
    start = order.index(group.ops[-1]) + 1
    stop = start
    # not past a reader of its results, nor of the accumulator it takes (written in place)
    while stop < len(order) and (_passable(order[stop]) or isinstance(order[stop], smem.WindowWriteOp)
                                 and not _needs(order[stop], group)) and not order[stop].regions \
            and not any(v in group.results or v in group.accumulates for v in order[stop].operands):
        stop += 1
    if stop == start:
        return None
    below = order[stop] if stop < len(order) else None
    rest = [o for o in order if o not in moving]
    at = rest.index(below) if below is not None else len(rest)
    return [*rest[:at], *moving, *rest[at:]]


def schedule(block: Block, budget: int | None = None) -> bool:
    """Schedule `block`'s groups; whether it changed. With a register `budget` (a consumer
    thread's, `consumer_budget`), where the schedule would hold more fragment registers at
    once than that (`fragment_peak`: a register operand of a product in flight is held until
    its group retires), a group that reads its A operand from registers (`reg.wgmma_rs`) is
    issued later instead, after the register math that follows it (`_sunk`): the
    attention gradient's dV += P^T dO after dS = P (dP - D), so that P's bf16 copy is not
    held beside D, dP and P while dS is computed (FlashAttention-4's order)."""
    groups = _groups(block)
    if groups is None or len(groups) < 2:
        return False
    end = block.last_op
    assert end is not None
    order = [op for op in block.ops if op is not end]
    # a release right after a group's wait goes to the end, unless a wait on a full barrier
    # follows (one on a ring a store role arrives on is not: the role waits for nothing the
    # release frees)
    for op in [o for o in order if isinstance(o, smem.ArriveOp)]:
        at = order.index(op)
        before = at - 1
        while before > 0 and _on_staged_statistic(order[before]):  # past a statistic's read and the math on it
            before -= 1
        if isinstance(order[before], reg.WgmmaWaitOp) and \
                not any(isinstance(o, smem.MbarrierWaitOp) and not smem.returned_by_store_role(o.bars) or o.regions
                        for o in order[at + 1 :]):
            order.remove(op)
            order.append(op)
    for op in [o for o in order if isinstance(o, reg.WgmmaWaitOp)]:
        order.remove(op)
        op.detach()
        op.erase()
    for group in groups[1:]:
        _hoist(order, group)
    out = _placed(order, groups, end)
    if budget is not None:
        peak = fragment_peak(block, out)
        while peak > budget:
            tries = [(fragment_peak(block, placed), alt, placed) for alt in (_sunk(order, g) for g in groups
                     if any(isinstance(o, reg.WgmmaRsOp) for o in g.ops)) if alt is not None
                     for placed in [_placed(alt, groups, end)]]
            if not tries or min(t[0] for t in tries) >= peak:
                break
            peak, order, out = min(tries, key=lambda t: t[0])
    for op in order:
        op.detach()
    for op in out[:-1]:
        block.insert_op_before(op, end)
    return True


@dataclass(frozen=True)
class RegWgmmaSchedulePass(ModulePass):
    name = "reg-wgmma-schedule"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for kernel in [o for o in op.walk() if isinstance(o, hbm.KernelOp)]:
            budget = consumer_budget(kernel)
            for loop in [o for o in kernel.walk() if isinstance(o, scf.ForOp)]:
                schedule(loop.body.block, budget)
