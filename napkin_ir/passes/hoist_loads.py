"""`reg-hoist-loads`: a vector read from global memory that no trip of a loop changes is read
once, before the loop.

smem-to-reg reads a statistic of the rows (`reg.load`: attention's log-sum-exp, its
gradient's D) where it is used, inside the stream loop. Where its offsets do not depend
on the loop (the attention gradient's dQ kernel: the block holds its queries and streams
the keys, so the queries' statistics are the same every trip) and the kernel writes
nothing into that global (its every use is a `reg.load`), the load moves before the loop:
a tile reads it once, and no trip waits for it between its products. A load whose
offsets move with the loop (the dK and dV kernel's, which stream the queries), or are
made inside it, stays.

    scf.for %j0 = ... {
      %lse = reg.load %g[%b0, %h0, %i0] ...
      ...
becomes
    %lse = reg.load %g[%b0, %h0, %i0] ...
    scf.for %j0 = ... {
      ...

Loops nested in loops are done from the innermost out, so a load may leave several.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, scf
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from napkin_ir.dialects import reg


def only_read(load: reg.LoadOp) -> bool:
    """Whether the kernel only reads the global `load` reads (its every use is a
    `reg.load`): a read anywhere else sees the same values."""
    return all(isinstance(u.operation, reg.LoadOp) for u in load.source.uses)


def hoist(loop: scf.ForOp) -> int:
    """Move `loop`'s invariant loads before it; how many moved."""
    moved = 0
    for op in list(loop.body.block.ops):
        if not isinstance(op, reg.LoadOp) or not only_read(op):
            continue
        # every offset made outside the loop (not the induction variable, a carried value or an op of its body)
        if any(loop.is_ancestor(v.owner) if isinstance(v.owner, Operation) else v.owner is loop.body.block for v in op.operands):
            continue
        op.detach()
        Rewriter.insert_op(op, InsertPoint.before(loop))
        moved += 1
    return moved


@dataclass(frozen=True)
class RegHoistLoadsPass(ModulePass):
    name = "reg-hoist-loads"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        loops = [o for o in op.walk() if isinstance(o, scf.ForOp)]
        for loop in reversed(loops):  # the innermost first: a load may then leave its outer loop too
            hoist(loop)
