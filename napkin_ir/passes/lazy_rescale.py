"""`reg-lazy-rescale`: a running row max that moves only where a row of the warp outgrows it
by more than a slack, and the corrections it makes skipped where they are 1
(FlashAttention-4's lazy rescale).

Attention's forward keeps each row's running max across the stream loop; every trip
corrects the sums so far by exp2(old - new max), the output's accumulator included (a
`reg.map mul` of 64 values a lane at d=128, before the trip's P V may add to it):

    ... scf.for ... iter_args(%m = %m0, %o = %o0, %corr = %c0) {
      %o2 = reg.map mul %o, %corr : !reg.frag<c, i=16, d=128 : f32>, !reg.frag<row, i=16 : f32> -> ...
      ...
      %mn = reg.map max %m, %tile_max : ... row, row -> row
      %d = reg.map sub %m, %mn
      %c = reg.map exp2 %d
      scf.yield %mn, ..., %c
    }

After the first tiles the max rarely moves. Kept while no row of a warp grows past it by
more than `slack` (log2 units: the scores are scaled by log2 e), it is exact in every row
of the warp, so the correction is exactly 1 there and the products can be skipped:

      %mn = reg.lazy_max %m, %tile_max slack 8.0 : ...
      ...
      %o2 = reg.rescale %o, %corr : ...

A running max is an `scf.for` iter_arg of a `row` fragment whose yielded value is a
`reg.map max` of it and another value in the loop's body. Each `reg.map mul` of a `c`
fragment by its correction (`reg.map exp2` of the old max less the new one) in the loop,
made in the trip or carried from the last one, becomes a `reg.rescale`; the one after the
loop (once a tile) stays a `reg.map mul`: its branch measured 4-5% slower at d=128 (ptxas
schedules the loop around it differently). A running max
made before the loop (the first tile's, from -inf) stays as it is.

The probabilities then reach up to 2^slack instead of 1; the softmax's numerator and
denominator carry the same stale max, so the output is the same quotient (its rounding
differs: a row's largest probability is no longer exactly 1).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, scf
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from napkin_ir.dialects import reg

SLACK = 8.0  # log2 units a running max may stay below a row's values (FA4's threshold): probabilities up to 256


def _frag_role(v: SSAValue) -> str | None:
    return v.type.role.data if isinstance(v.type, reg.FragType) else None


def _running_max(loop: scf.ForOp, index: int) -> reg.MapOp | None:
    """The `reg.map max` in `loop`'s body that its iter_arg `index` is yielded from, of that
    iter_arg and another value; None where there is none."""
    body = loop.body.block
    m = body.args[index + 1]
    yielded = body.last_op
    if _frag_role(m) != "row" or not isinstance(yielded, scf.YieldOp):
        return None
    owner = yielded.operands[index].owner
    if isinstance(owner, reg.MapOp) and owner.fn.data == "max" and owner.by is None and m in owner.inputs \
            and owner.parent_block() is body and len(set(owner.inputs)) == 2:
        return owner
    return None


def _corrections(loop: scf.ForOp, old: SSAValue, new: SSAValue) -> set[SSAValue]:
    """exp2(old - new) where `loop` makes it, with the iter_args that carry it to the next
    trip. (Not the loop's results: a rescale after the loop runs once a tile, and its branch
    measured 4-5% slower at d=128, ptxas scheduling the loop around it differently.)"""
    made = {e.results[0] for u in old.uses if isinstance(d := u.operation, reg.MapOp) and d.fn.data == "sub"
            and list(d.inputs) == [old, new] for e in (x.operation for x in d.results[0].uses)
            if isinstance(e, reg.MapOp) and e.fn.data == "exp2"}
    yielded = loop.body.block.last_op
    assert isinstance(yielded, scf.YieldOp)
    return made | {loop.body.block.args[i + 1] for i, y in enumerate(yielded.operands) if y in made}


def _rescale_by(factor: SSAValue, loop: scf.ForOp) -> int:
    """Each `reg.map mul` of a `c` fragment of f32 by `factor` in `loop`'s body made a
    `reg.rescale`."""
    count = 0
    for use in list(factor.uses):
        op = use.operation
        if op.parent_block() is not loop.body.block or not (isinstance(op, reg.MapOp) and op.fn.data == "mul" and op.by is None and len(op.inputs) == 2):
            continue
        acc = op.inputs[1 - use.index]
        if _frag_role(acc) == "c" and acc.type.dtype == "f32" and acc is not factor:  # type: ignore[attr-defined]
            Rewriter.replace_op(op, reg.RescaleOp(acc, factor))
            count += 1
    return count


def lazy_rescale(module: builtin.ModuleOp, slack: float = SLACK) -> tuple[int, int]:
    """Rewrite `module`'s running row maxes in stream loops to `reg.lazy_max` and their
    corrections of accumulators to `reg.rescale`; (maxes, rescales) rewritten."""
    maxes = rescales = 0
    loops: list[Operation] = [op for op in module.walk() if isinstance(op, scf.ForOp)]
    for loop in loops:
        assert isinstance(loop, scf.ForOp)
        for index in range(len(loop.iter_args)):
            eager = _running_max(loop, index)
            if eager is None:
                continue
            old = loop.body.block.args[index + 1]
            other = eager.inputs[1] if eager.inputs[0] is old else eager.inputs[0]
            lazy = reg.LazyMaxOp(old, other, slack)
            Rewriter.replace_op(eager, lazy)
            maxes += 1
            for factor in _corrections(loop, old, lazy.result):
                rescales += _rescale_by(factor, loop)
    return maxes, rescales


@dataclass(frozen=True)
class RegLazyRescalePass(ModulePass):
    name = "reg-lazy-rescale"
    slack: float = SLACK  # log2 units a running max may stay below a row's values

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        if not 0.0 <= self.slack <= reg.MAX_SLACK:
            raise PassFailedException(f"reg-lazy-rescale: the slack is the log2 units a running max may stay below a row's values "
                                      f"(0 to {reg.MAX_SLACK:g}), got {self.slack}")
        lazy_rescale(op, self.slack)
