"""`reg-early-waits`: in a loop pipelined by `reg-wgmma-overlap`, the wait for a stage the
trip consumes after its softmax is made as soon as the first group's scores retire.

`reg-wgmma-overlap` leaves each trip's wait for tile j's V where the loop before it had it:
after the softmax of S_j, just before the wait for tile j - 1's P V (whose registers the
packing of P_j overwrites). An `smem.mbarrier_wait` lowers to a loop of
`mbarrier.try_wait`, and ptxas schedules nothing across a loop: the softmax's
exponentials and row sums stay on one side, P V's retiring and P's 32 conversions
(`cvt.rn.bf16x2.f32`) on the other, issued back to back after the last exponential. Made
right after the first group's wait, ahead of tile j's K release, the wait leaves the
softmax, P V's wait and P's packing one block, which ptxas interleaves (the conversions
between the exponentials, as FA4's forward issues them). The stage was requested with
tile j's K, which the scores have already read, so the wait seldom waits.

    reg.wgmma_wait {pending = 1 : i32}
    smem.arrive %k_empty[%s]
    ... the softmax of S_j ...
    smem.mbarrier_wait %v_full[%s] parity %p
    reg.wgmma_wait {pending = 0 : i32}
    smem.arrive %v_empty[%s_prev]
    %p0 = reg.to_a ...
becomes
    reg.wgmma_wait {pending = 1 : i32}
    smem.mbarrier_wait %v_full[%s] parity %p
    smem.arrive %k_empty[%s]
    ... the softmax of S_j ...
    reg.wgmma_wait {pending = 0 : i32}
    ...

With `at="max"` the wait goes instead just after the trip's first row max (a
`reg.row_reduce` max and the `reg.map` that folds it into the running max, where one
follows): ptxas puts P V's wait right below whichever boundary the wait makes, and below
the max it follows the scores' scaling, where FA4's forward has it.

Only the waits between the trip's first `reg.wgmma_wait` and its next move, and only those
whose operands come from before the first. ptxas's larger block holds more values live: at
176 keys a tile it spills, so a recipe asks for the pass, and where, as it pays
(`recipes.attention.early_waits_place`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, scf
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from napkin_ir.dialects import loop_facts, reg, smem


def _after_max(between: list[Operation]) -> Operation | None:
    """Of the ops after a trip's first wait: its first row max, or the map that folds that
    max into the running one where it comes next."""
    for n, op in enumerate(between):
        if isinstance(op, reg.RowReduceOp) and op.kind.data == "max":
            fold = between[n + 1] if n + 1 < len(between) else None
            return fold if isinstance(fold, reg.MapOp) and op.result in fold.operands else op
    return None


def early(loop: scf.ForOp, at: str = "scores") -> None:
    """Move the waits of `loop`'s trip made between its first `reg.wgmma_wait` and its
    next to just after the first (`at="max"`: after the trip's first row max, where it
    has one)."""
    span = reg.first_wait_span(loop.body.block)
    if span is None or span[2] is None:
        return
    first, between, _ = span
    inside = set(between)
    place: Operation = (_after_max(between) if at == "max" else None) or first
    above = set(between[: between.index(place) + 1]) if place in inside else set()  # waits there stay
    for wait in [o for o in between if isinstance(o, smem.MbarrierWaitOp) and o not in above]:
        if any(isinstance(v.owner, Operation) and v.owner in inside for v in wait.operands):
            continue
        wait.detach()
        Rewriter.insert_op(wait, InsertPoint.after(place))
        place = wait


@dataclass(frozen=True)
class RegEarlyWaitsPass(ModulePass):
    name = "reg-early-waits"

    at: str = "scores"  # "scores": right after the first group's wait; "max": after the trip's first row max

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        if self.at not in ("scores", "max"):
            raise PassFailedException(f"reg-early-waits: at must be \"scores\" or \"max\", not \"{self.at}\"")
        for loop in [o for o in op.walk() if isinstance(o, scf.ForOp) and loop_facts.overlapped(o)]:
            early(loop, self.at)
