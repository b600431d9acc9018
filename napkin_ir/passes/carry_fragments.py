"""`reg-carry-fragments`: a stream loop carries the next trip's first fragments.

A pipelined stream loop starts each trip by waiting for its first stage, meeting at the
barrier and loading that stage's first fragments (`reg.ldmatrix`); its products then
wait for those loads. This pass rotates that head across the back edge: the loop's first
head is issued before it, each trip issues the next trip's head after its own work, and
the fragments it loads are carried (`iter_args`). The next trip's first products then find
their operands in registers, and `reg-prefetch` can move the trip's last products past the
next head's loads, as it does between the tiles inside a trip. What runs is the same
sequence of ops, rotated.

The loop's last trip loads the head of what follows it; the pass rotates a loop only where
the code after it begins with that head (the bodies `smem-unroll-stages` peels off after
the loop, their counters constant), and those ops then take the loop's carried results:

    %r = scf.for %k = %c0 to %c192 step %c96 iter_args(%acc = %z) {
      smem.wait {pending = 1}; smem.barrier; %a0 = reg.ldmatrix %A[%c0] ...; <rest>(%a0, %acc) }
    smem.wait {pending = 1}; smem.barrier; %t0 = reg.ldmatrix %A[%c0] ...; <tail>(%t0, %r)

becomes

    smem.wait {pending = 1}; smem.barrier; %h = reg.ldmatrix %A[%c0] ...
    %r, %f = scf.for %k = %c0 to %c192 step %c96 iter_args(%acc = %z, %a0 = %h) {
      <rest>(%a0, %acc); %n = %k + 96; smem.wait {pending = 1}; smem.barrier;
      %a1 = reg.ldmatrix %A[stage at %n] ...; scf.yield .., %a1 }
    <tail>(%f, %r)

A loop whose head loads nothing, whose bounds are not constants, or that nothing matching
its head follows is left as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, builtin, scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from napkin_ir.dialects import loop_facts, reg, smem
from napkin_ir.passes.unroll_stages import Periodic, constant, index_constant

INDEX = (arith.ConstantOp, arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.DivUIOp, arith.RemUIOp)
HEAD = (smem.WaitOp, smem.BarrierOp, reg.LdmatrixOp)


def _is_copy(op: Operation) -> bool:
    """A copy into a stage, its commit, or copies under a guard."""
    if isinstance(op, scf.IfOp):
        inner = [o for o in op.true_region.walk() if not isinstance(o, scf.YieldOp)]
        return not op.results and bool(inner) and all(isinstance(o, smem.CopyOp) for o in inner)
    return isinstance(op, smem.CopyOp | smem.CommitOp)


def loop_head(body: Block) -> list[Operation]:
    """The waits, barriers and loads a body starts with (index arithmetic among them
    aside, and the copies after its last barrier, which fill another stage than those
    loads read): none where they load no fragment or read what the loop carries."""
    carried = set(body.args[1:])
    head: list[Operation] = []
    copied = False
    for op in body.ops:
        if isinstance(op, INDEX):
            continue
        if _is_copy(op):
            copied = True
            continue
        if not isinstance(op, HEAD) or any(v in carried for v in op.operands):
            break
        if copied and not isinstance(op, reg.LdmatrixOp):  # a copy stays before the barrier after it
            break
        head.append(op)
    return head if any(isinstance(o, reg.LdmatrixOp) for o in head) else []


def _inputs(ops: list[Operation], body: Block) -> list[Operation]:
    """The index arithmetic of `body` that `ops` use, in the body's order."""
    need: set[Operation] = set()
    todo = [v for o in ops for v in o.operands]
    while todo:
        v = todo.pop()
        op = v.owner
        if isinstance(op, Operation) and op.parent_block() is body and op not in need:
            need.add(op)
            todo += list(op.operands)
    return [o for o in body.ops if o in need]


def _clone(ops: list[Operation], mapping: dict[SSAValue, SSAValue], at: InsertPoint) -> None:
    for op in ops:
        Rewriter.insert_op(op.clone(value_mapper=mapping), at)


def _same(op: Operation, like: Operation, stage: int | None) -> bool:
    """Whether `op` (after the loop) is `like` (in the head) at the loop's end."""
    if type(op) is not type(like):
        return False
    if isinstance(op, smem.WaitOp):
        return op.pending == like.pending  # type: ignore[attr-defined]
    if isinstance(op, reg.LdmatrixOp):
        assert isinstance(like, reg.LdmatrixOp)
        return (op.source == like.source and op.at == like.at and op.result.type == like.result.type
                and stage is not None and constant(op.stage) == stage)
    return True


def _following_head(loop: scf.ForOp, head: list[Operation], end: int) -> list[Operation] | None:
    """The ops after `loop` that are its head with the counter at `end`, or None."""
    at_end = Periodic(loop.body.block.args[0], end, 0)
    found: list[Operation] = []
    op = loop.next_op
    for like in head:
        while isinstance(op, INDEX) or op is not None and _is_copy(op) and isinstance(like, reg.LdmatrixOp):
            op = op.next_op
        stage = None
        if isinstance(like, reg.LdmatrixOp):
            v = at_end.of(like.stage)
            stage = v[0] if v is not None else None
        if op is None or not _same(op, like, stage):
            return None
        found.append(op)
        op = op.next_op
    return found


def carry(loop: scf.ForOp) -> bool:
    """Rotate one loop's head across its back edge; False where it cannot be."""
    if loop_facts.copy_engine(loop) == loop_facts.CopyEngine.TMA:
        return False
    lb, ub, step = (constant(v) for v in (loop.lb, loop.ub, loop.step))
    if lb is None or ub is None or step is None or step <= 0 or ub <= lb:
        return False
    body = loop.body.block
    head = loop_head(body)
    if not head:
        return False
    after = _following_head(loop, head, lb + -(-(ub - lb) // step) * step)
    if after is None:
        return False
    inputs = _inputs(head, body)
    loads = [o for o in head if isinstance(o, reg.LdmatrixOp)]
    iv = body.args[0]

    # the first trip's head, before the loop
    start = index_constant(lb)
    Rewriter.insert_op(start, InsertPoint.before(loop))
    mapping: dict[SSAValue, SSAValue] = {iv: start.result}
    _clone(inputs + head, mapping, InsertPoint.before(loop))
    first = [mapping[o.result] for o in loads]
    if not start.result.uses:
        Rewriter.erase_op(start)

    # the body without its head, then the next trip's head
    new_body = Block(arg_types=[IndexType(), *(v.type for v in loop.iter_args), *(o.result.type for o in loads)])
    n_acc = len(loop.iter_args)
    mapping = {iv: new_body.args[0], **dict(zip(body.args[1:], new_body.args[1:1 + n_acc]))}
    mapping.update({o.result: a for o, a in zip(loads, new_body.args[1 + n_acc:])})
    end = InsertPoint.at_end(new_body)
    yielded = body.last_op
    assert isinstance(yielded, scf.YieldOp)
    _clone([o for o in body.ops if o not in head and o is not yielded], mapping, end)
    c_step = index_constant(step)
    nxt = arith.AddiOp(new_body.args[0], c_step.result)
    Rewriter.insert_op([c_step, nxt], end)
    head_map: dict[SSAValue, SSAValue] = {iv: nxt.result}
    _clone(inputs + head, head_map, end)
    Rewriter.insert_op(scf.YieldOp(*(mapping.get(v, v) for v in yielded.operands), *(head_map[o.result] for o in loads)), end)
    _drop_dead(list(new_body.ops))

    rotated = scf.ForOp(loop.lb, loop.ub, loop.step, [*loop.iter_args, *first], Region(new_body))
    rotated.attributes.update(dict(loop.attributes))
    Rewriter.insert_op(rotated, InsertPoint.before(loop))
    for old, new in zip(loop.results, rotated.results):
        old.replace_all_uses_with(new)
    # what follows the loop takes the head its last trip loaded
    for op, like in zip(after, head):
        if isinstance(op, reg.LdmatrixOp):
            op.result.replace_all_uses_with(rotated.results[n_acc + loads.index(like)])  # type: ignore[arg-type]
    for op in reversed(after):
        Rewriter.erase_op(op)
    Rewriter.erase_op(loop)
    return True


def _drop_dead(ops: list[Operation]) -> None:
    for op in reversed(ops):
        if isinstance(op, INDEX) and not any(r.uses for r in op.results):
            Rewriter.erase_op(op)


@dataclass(frozen=True)
class RegCarryFragmentsPass(ModulePass):
    name = "reg-carry-fragments"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for loop in loop_facts.pipelined_loops(op):
            carry(loop)
