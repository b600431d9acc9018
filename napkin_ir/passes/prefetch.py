"""`reg-prefetch`: load each step's fragments while the step before multiplies.

In a body that reads a stage step by step (`reg.ldmatrix` of the A and B fragments of a
16-wide slice, then their `reg.mma`), the loads of step s + 1 only depend on shared
memory, and the products of step s only on registers. This pass moves each `reg.mma`
down past the ops after it that neither use its result nor multiply themselves (loads,
copies, commits, waits, barriers, index arithmetic), so that the tensor cores work on
step s while step s + 1's fragments arrive: the last step of a tile then multiplies after
the next tile's wait, barrier and first loads. The products keep their order; a body's
last product stays before its terminator.

    %a1 = reg.ldmatrix ...; %c1 = reg.mma %a0, %b0, %c0; %b1 = reg.ldmatrix ...
becomes
    %a1 = reg.ldmatrix ...; %b1 = reg.ldmatrix ...; %c1 = reg.mma %a0, %b0, %c0
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, builtin, scf
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from napkin_ir.dialects import hbm, reg, smem

MOVABLE = (reg.LdmatrixOp, smem.WaitOp, smem.BarrierOp, smem.CopyOp, smem.CommitOp, arith.ConstantOp, arith.AddiOp,
           arith.SubiOp, arith.MuliOp, arith.DivUIOp, arith.RemUIOp)


def _passes(op: Operation, mma: reg.MmaOp | None, produced: set) -> bool:
    if isinstance(op, scf.IfOp):  # a guard around copies
        inner = [o for o in op.true_region.walk() if not isinstance(o, scf.YieldOp)]
        return not op.results and all(isinstance(o, smem.CopyOp) for o in inner)
    return isinstance(op, MOVABLE) and not any(v in produced for v in op.operands)


def _is_copy(op: Operation) -> bool:
    return isinstance(op, smem.CopyOp) or isinstance(op, scf.IfOp) and _passes(op, None, set())  # type: ignore[arg-type]


def spread_copies(block: Block) -> None:
    """Move each run of copies (and its commit) down among the loads after it: the n-th copy
    of a run after the n-th step's loads (the loads before each product), so that a step's
    fragments are asked for before the copies queue behind them."""
    ops = list(block.ops)
    n = 0
    while n < len(ops):
        if not _is_copy(ops[n]):
            n += 1
            continue
        run = []
        while n < len(ops) and (_is_copy(ops[n]) or isinstance(ops[n], smem.CommitOp) and run):
            run.append(ops[n])
            n += 1
        # the load groups after the run: loads up to each product
        groups, cur = [], []
        m = n
        while m < len(ops) and not isinstance(ops[m], smem.WaitOp | smem.BarrierOp | scf.YieldOp) and not _is_copy(ops[m]):
            if isinstance(ops[m], reg.MmaOp):
                if cur:
                    groups.append(cur[-1])
                cur = []
            elif isinstance(ops[m], reg.LdmatrixOp):
                cur.append(ops[m])
            m += 1
        if not groups:
            continue
        copies = [o for o in run if not isinstance(o, smem.CommitOp)]
        commit = [o for o in run if isinstance(o, smem.CommitOp)]
        placed: dict[int, Operation] = {}  # load group -> the last copy put after it
        for i, c in enumerate(copies):
            g = min(i, len(groups) - 1)
            c.detach()
            Rewriter.insert_op(c, InsertPoint.after(placed.get(g, groups[g])))
            placed[g] = c
        if commit:
            commit[0].detach()
            Rewriter.insert_op(commit[0], InsertPoint.after(copies[-1]))
        ops = list(block.ops)
        n = ops.index(commit[0]) + 1 if commit else ops.index(copies[-1]) + 1


def prefetch_block(block: Block) -> None:
    for mma in [o for o in block.ops if isinstance(o, reg.MmaOp)]:
        produced = set(mma.results)
        last = None
        nxt = mma.next_op
        while nxt is not None and _passes(nxt, mma, produced):
            last = nxt
            nxt = nxt.next_op
        if last is not None:
            mma.detach()
            Rewriter.insert_op(mma, InsertPoint.after(last))


@dataclass(frozen=True)
class RegPrefetchPass(ModulePass):
    name = "reg-prefetch"
    spread: bool = True  # copies among the steps' loads, not all before the first

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for kernel in [k for k in op.walk() if isinstance(k, hbm.KernelOp)]:
            for block in [kernel.body.block, *(o.body.block for o in kernel.walk() if isinstance(o, scf.ForOp))]:
                if self.spread:
                    spread_copies(block)
                prefetch_block(block)
