"""`reg-early-reads`: a row statistic staged in shared memory, which the results of a loop's
first awaited products meet, is read as soon as its stage is full, before any product is
issued.

smem-to-reg reads a statistic that the TMA stages with its stream's tiles (`reg.read` of a
`row` or `col` fragment) where it is first used. In the attention gradient that is the
log-sum-exp, subtracted from S = K Q^T right after the wait for S: ptxas moves no
shared-memory load across `wgmma.wait_group`, so the warpgroup's first step of the softmax
waits out the loads' latency (ncu: 11% of the one kernel's stall samples, short
scoreboard, on that subtraction at d=128). Read right after the mbarrier wait that makes
its stage full, before the loop's first product is issued, the loads run under the
products, as FA4's kernel issues them.

    smem.mbarrier_wait %full[%s] parity %p
    %s0 = reg.wgmma %k[%c0], %q[%s], %z ...
    reg.wgmma_commit
    ...
    reg.wgmma_wait {pending = 1 : i32}
    %x = reg.map scale %s7 by 0.1275
    %lse = reg.read %stage[%s] ...
    %y = reg.map sub %x, %lse
becomes
    smem.mbarrier_wait %full[%s] parity %p
    %lse = reg.read %stage[%s] ...
    %s0 = reg.wgmma %k[%c0], %q[%s], %z ...
    ...

Only the reads used between the block's first `reg.wgmma_wait` and its next one move (a
statistic met later, as the gradient's D, would hold its registers across the softmax
too), and only where the block waits on the mbarrier that the read's stage is filled with,
for the same stage, before that first wait. The registers are held across the products'
issue: a recipe asks for the pass where that pays (`recipes.attention.early_reads_pay`).

With `later=true`, a read that a later wait's results meet (the gradient's D, subtracted
from dP right after dP's wait) is issued just before that wait instead, its stage full by
then: its loads run while the warpgroup waits, as FA4's kernel reads dPsum, and its
registers are held across the wait alone, not the softmax before it. `first=false` leaves
the first wait's reads where they are (`recipes.attention.later_reads_pay` says where the
second move pays without the first, or with it).

    reg.wgmma_wait {pending = 0 : i32}
    %d = reg.read %stage[%s] ...
    %y = reg.map sub %dp, %d
becomes
    %d = reg.read %stage[%s] ...
    reg.wgmma_wait {pending = 0 : i32}
    %y = reg.map sub %dp, %d
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from napkin_ir.dialects import reg, smem


def _full_wait(block: Block, read: reg.ReadOp, before: Operation) -> smem.MbarrierWaitOp | None:
    """The wait of `block`, before `before`, on the mbarrier that the TMA fills `read`'s
    stage with, for the stage `read` reads."""
    bars = {u.operation.bars for u in read.source.uses if isinstance(u.operation, smem.TmaCopyOp) and u.operation.dest is read.source}
    for op in block.ops:
        if op is before:
            return None
        if isinstance(op, smem.MbarrierWaitOp) and op.bars in bars and op.stage is read.stage:
            return op
    return None


def _met_reads(block: Block, span: list[Operation]) -> list[reg.ReadOp]:
    """The vector reads in `span` whose results ops of `span` use."""
    met = set(span)
    return [o for o in span if isinstance(o, reg.ReadOp) and o.vector
            and any(block.find_ancestor_op_in_block(u.operation) in met for u in o.result.uses)]


def early(block: Block) -> None:
    """Move `block`'s reads that its first awaited products' results meet to their stage's
    wait."""
    span = reg.first_wait_span(block)
    if span is None:
        return
    first, between, _ = span
    for read in _met_reads(block, between):
        wait = _full_wait(block, read, first)
        if wait is not None:
            read.detach()
            Rewriter.insert_op(read, InsertPoint.after(wait))


def before_later_waits(block: Block) -> None:
    """Move `block`'s reads that the results of a `reg.wgmma_wait` after its first meet (up
    to the next wait) to just before that wait, where their stage is full by then."""
    for wait, span, _ in reg.wait_spans(block)[1:]:
        for read in _met_reads(block, span):
            if _full_wait(block, read, wait) is not None:
                read.detach()
                Rewriter.insert_op(read, InsertPoint.before(wait))


@dataclass(frozen=True)
class RegEarlyReadsPass(ModulePass):
    name = "reg-early-reads"

    first: bool = True  # reads the first awaited products meet, to their stage's wait
    later: bool = False  # reads a later wait's results meet, to just before that wait

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        blocks = dict.fromkeys(o.parent_block() for o in op.walk() if isinstance(o, reg.ReadOp) and o.vector)
        for block in blocks:
            if block is None:
                continue
            if self.first:
                early(block)
            if self.later:
                before_later_waits(block)
