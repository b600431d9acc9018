"""`reg-hoist-loads`: a vector read from global memory that no trip of a loop changes is read
once, before the loop.

smem-to-reg reads a statistic of the rows (`reg.load`: attention's log-sum-exp, its
gradient's D) where it is used, inside the stream loop. Where its offsets do not depend
on the loop (the attention gradient's dQ kernel: the block holds its queries and streams
the keys, so the queries' statistics are the same every trip) and the kernel writes
nothing into that global (its every use is a `reg.load`), the load moves before the loop,
with the constants and index arithmetic its offsets are made of: a tile reads it once,
and no trip waits for it between its products. A load whose offsets move with the
loop (the dK and dV kernel's, which stream the queries) stays.

    scf.for %j0 = ... {
      %c = arith.constant 0 : index
      %lse = reg.load %g[%b0, %i0, %c] ...
      ...
becomes
    %c = arith.constant 0 : index
    %lse = reg.load %g[%b0, %i0, %c] ...
    scf.for %j0 = ... {
      ...

Loops nested in loops are done from the innermost out, so a load may leave several.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, builtin, scf
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from napkin_ir.dialects import reg

# what a hoisted load's offsets may be made of inside the loop
INDEX_MATH = (arith.ConstantOp, arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.DivUIOp, arith.RemUIOp, arith.MinUIOp,
              arith.MaxUIOp)


def _invariant(op: Operation, loop: scf.ForOp, moving: list[Operation]) -> bool:
    """Whether `op`'s operands are made outside `loop` or by index math that can leave it
    too (collected, in order, into `moving`)."""
    for v in op.operands:
        owner = v.owner
        if not isinstance(owner, Operation):
            if owner is loop.body.block:  # the induction variable or a carried value
                return False
            continue
        if not loop.is_ancestor(owner):
            continue
        if owner.parent_block() is not loop.body.block or not isinstance(owner, INDEX_MATH):
            return False
        if owner not in moving:
            if not _invariant(owner, loop, moving):
                return False
            moving.append(owner)
    return True


def hoist(loop: scf.ForOp) -> int:
    """Move `loop`'s invariant loads before it; how many moved."""
    moved = 0
    for op in list(loop.body.block.ops):
        if not isinstance(op, reg.LoadOp) or not all(isinstance(u.operation, reg.LoadOp) for u in op.source.uses):
            continue
        chain: list[Operation] = []
        if not _invariant(op, loop, chain):
            continue
        for o in sorted(chain, key=loop.body.block.get_operation_index) + [op]:
            if any(loop.is_ancestor(u.operation) and u.operation not in (*chain, op) for r in o.results for u in r.uses) \
                    and o is not op:
                o2 = o.clone()  # still used in the loop: the loop keeps its own
                Rewriter.insert_op(o2, InsertPoint.before(loop))
                for r, r2 in zip(o.results, o2.results):
                    for u in list(r.uses):
                        if u.operation in chain or u.operation is op:
                            u.operation.operands[u.index] = r2
                continue
            o.detach()
            Rewriter.insert_op(o, InsertPoint.before(loop))
        moved += 1
    return moved


@dataclass(frozen=True)
class RegHoistLoadsPass(ModulePass):
    name = "reg-hoist-loads"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        loops = [o for o in op.walk() if isinstance(o, scf.ForOp)]
        for loop in reversed(loops):  # the innermost first: a load may then leave its outer loop too
            hoist(loop)
