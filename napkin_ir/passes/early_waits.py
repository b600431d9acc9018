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

With `at="products"` the wait goes the other way, out of the trip into the next one, just
before the products that read the stage (P_j V_j, issued in the turn after the scores of
tile j + 1), as FA4's forward orders them; from the scores' wait to the trip's end is then
one block:

    smem.mbarrier_wait %k_full[%s] parity %p
    ... S_{j+1}'s products ...
    smem.mbarrier_wait %v_full[%s_prev] parity %p_prev
    ... P_j V_j's products ...
    reg.wgmma_wait {pending = 1 : i32}
    ... the softmax of S_{j+1}, P_j V_j's wait, P_{j+1}'s packing ...

Tile 0's wait before the loop moves into the first trip, and a wait after the last loop
of a chain (a causal mask's unmasked and diagonal loops) precedes the products that end
it. The stage's parity is a value the loops carry beside the stage.

Only the waits between the trip's first `reg.wgmma_wait` and its next move, and only those
whose operands come from before the first. ptxas's larger block holds more values live: at
176 keys a tile it spills, so a recipe asks for the pass, and where, as it pays
(`recipes.attention.early_waits_place`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, Operation, SSAValue
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


def _movable(loop: scf.ForOp) -> tuple[reg.WgmmaWaitOp, list[Operation], list[smem.MbarrierWaitOp]] | None:
    """`loop`'s trip's first `reg.wgmma_wait`, the ops after it up to its next one, and the
    stage waits among them whose operands come from before the first (those that may
    move); None where the trip has no second wgmma wait."""
    span = reg.first_wait_span(loop.body.block)
    if span is None or span[2] is None:
        return None
    first, between, _ = span
    inside = set(between)
    waits = [o for o in between if isinstance(o, smem.MbarrierWaitOp)
             and not any(isinstance(v.owner, Operation) and v.owner in inside for v in o.operands)]
    return first, between, waits


def early(loop: scf.ForOp, at: str = "scores") -> None:
    """Move the waits of `loop`'s trip made between its first `reg.wgmma_wait` and its
    next to just after the first (`at="max"`: after the trip's first row max, where it
    has one)."""
    found = _movable(loop)
    if found is None:
        return
    first, between, waits = found
    place: Operation = (_after_max(between) if at == "max" else None) or first
    above = set(between[: between.index(place) + 1]) if place in between else set()  # waits there stay
    for wait in [w for w in waits if w not in above]:
        wait.detach()
        Rewriter.insert_op(wait, InsertPoint.after(place))
        place = wait


def _moved_wait(loop: scf.ForOp) -> tuple[smem.MbarrierWaitOp, int] | None:
    """The wait `early` would move in `loop`'s trip whose stage the trip yields to the next
    one, and that stage's place among the loop's carried values."""
    found = _movable(loop)
    yielded = loop.body.block.last_op
    assert isinstance(yielded, scf.YieldOp)
    stages = list(yielded.operands)
    return next(((w, stages.index(w.stage)) for w in (found[2] if found else ()) if w.stage in stages), None)


def _first_user(value: SSAValue, block: Block) -> Operation | None:
    """The first op of `block` that uses `value` or holds a use of it."""
    users = {block.find_ancestor_op_in_block(use.operation) for use in value.uses}
    return next((op for op in block.ops if op in users), None)


def at_products(loops: list[scf.ForOp]) -> None:
    """FA4's order: each overlapped loop's trip waits for the stage it consumes after its
    softmax (tile j's V) in the next trip instead, just before the products that read it
    (P_j V_j, issued with the scores of tile j + 1), and after the last loop just before
    the products that end the chain. Tile 0's wait, before the first loop, moves into its
    first trip the same way. The stage's parity travels with the stage, a value the loop
    carries, from tile 0's wait or from the loop before."""
    parity_of: dict[SSAValue, SSAValue] = {}  # a stage a loop yields -> the parity it yields beside it
    for loop in loops:
        found = _moved_wait(loop)
        if found is None:
            continue
        wait, k = found
        init_stage = loop.iter_args[k]
        init = parity_of.get(init_stage)
        if init is None:  # tile 0's wait for the same stage, before the loop
            ops = list(loop.parent_block().ops)
            match = [o for o in ops[: ops.index(loop)] if isinstance(o, smem.MbarrierWaitOp) and o.bars == wait.bars and o.stage == init_stage]
            if not match:
                continue
            init = match[-1].parity
            Rewriter.erase_op(match[-1])  # the first trip waits for it now, before its products
        body = loop.body.block
        yielded = body.last_op
        assert isinstance(yielded, scf.YieldOp)
        parity = body.insert_arg(IndexType(), len(body.args))
        stage = body.args[1 + k]
        reader = _first_user(stage, body)
        assert reader is not None
        Rewriter.insert_op(smem.MbarrierWaitOp(wait.bars, stage, parity), InsertPoint.before(reader))
        Rewriter.replace_op(yielded, scf.YieldOp(*yielded.operands, wait.parity))
        Rewriter.erase_op(wait)
        new = scf.ForOp(loop.lb, loop.ub, loop.step, [*loop.iter_args, init], loop.detach_region(loop.body))
        new.attributes.update(dict(loop.attributes))
        Rewriter.replace_op(loop, new, new.results[:-1])
        last_stage, last_parity = new.results[k], new.results[-1]
        parity_of[last_stage] = last_parity
        after = _first_user(last_stage, new.parent_block())
        if after is not None and not (isinstance(after, scf.ForOp) and loop_facts.overlapped(after)):
            Rewriter.insert_op(smem.MbarrierWaitOp(wait.bars, last_stage, last_parity), InsertPoint.before(after))


@dataclass(frozen=True)
class RegEarlyWaitsPass(ModulePass):
    name = "reg-early-waits"

    at: str = "scores"  # "scores": right after the first group's wait; "max": after the trip's first row max;
    # "products": in the next trip, before the products that read the stage

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        if self.at not in ("scores", "max", "products"):
            raise PassFailedException(f"reg-early-waits: at must be \"scores\", \"max\" or \"products\", not \"{self.at}\"")
        loops = [o for o in op.walk() if isinstance(o, scf.ForOp) and loop_facts.overlapped(o)]
        if self.at == "products":
            at_products(loops)
            return
        for loop in loops:
            early(loop, self.at)
