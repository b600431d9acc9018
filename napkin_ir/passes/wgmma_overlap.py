"""`reg-wgmma-overlap`: a tile's second product runs while the next tile's scores are made.

A stream loop whose body issues two wgmma groups, the second accumulating into a value
the loop carries (attention: S = Q K^T, the softmax, then acc * alpha + P V), waits for
each group where it stands, so the tensor cores idle while the softmax runs. This pass
software-pipelines the loop by one step: iteration j issues tile j's first group, then
tile j - 1's second (its operands, P and the rescale, carried from the iteration
before), waits only for the first (`reg.wgmma_wait {pending = 1}`: groups retire in
order), computes tile j's softmax while tile j - 1's P V runs, then waits for it and
releases tile j - 1's stages. Tile 0's first part runs before the loop, the last tile's
second part after it; a loop that may run no trip is guarded (`scf.if`).

    for j: [A_j: wait K_j, S_j = QK_j, wait 0, softmax_j] [B_j: acc = acc a_j + P_j V_j, wait 0, release j]
becomes
    A_0 (whole); for j >= 1: [A_j, B_j-1 before their products] [A_j's group] [B_j-1's group]
        wait 1 [rest of A_j] [rest of B_j-1] [A_j's packing of P_j]; B_last

What B is: the second group, the ops that depend on the carried accumulator (its rescale),
and the waits, arrivals and releases that come after the first of those; what B needs
from A (P's fragments, the rescale, the stage) is carried. A loop whose first part would
need something of the second is left alone, as is a loop of one trip.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, builtin, scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from napkin_ir.dialects import hbm, reg
from napkin_ir.dialects.utils import constant

PRODUCTS = (reg.WgmmaOp, reg.WgmmaRsOp)
PURE = (reg.ToAOp, reg.MapOp, reg.RowReduceOp, reg.MaskOp, reg.MaskBoundOp, reg.FillOp, reg.ZerosOp, arith.ConstantOp,
        arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.DivUIOp, arith.RemUIOp, arith.MinUIOp, arith.CmpiOp)


@dataclass
class _Split:
    a: list[Operation]  # the first part, in order
    b: list[Operation]  # the second part, in order
    first_wait: reg.WgmmaWaitOp  # the first group's wait, in A
    second_commit: reg.WgmmaCommitOp  # the second group's commit, in B
    last: Operation  # the second group's last product
    acc: int  # which carried value the second group accumulates into
    carried: list[SSAValue]  # what B takes from A (or the counter)


def _split(loop: scf.ForOp) -> _Split | None:
    body = loop.body.block
    yielded = body.last_op
    if not isinstance(yielded, scf.YieldOp):
        return None
    ops = [o for o in body.ops if o is not yielded]
    waits = [n for n, o in enumerate(ops) if isinstance(o, reg.WgmmaWaitOp)]
    commits = [n for n, o in enumerate(ops) if isinstance(o, reg.WgmmaCommitOp)]
    if len(waits) != 2 or len(commits) != 2 or not commits[0] < waits[0] < commits[1] < waits[1]:
        return None
    w1, c2 = waits[0], commits[1]
    second = [o for o in ops[w1 + 1 : c2] if isinstance(o, PRODUCTS)]
    if not second or any(isinstance(o, PRODUCTS) for o in ops[c2:]) or any(o.regions for o in ops[w1 + 1 :]):
        return None
    accs = [n for n, v in enumerate(yielded.operands) if v is second[-1].results[0]]
    if len(accs) != 1:
        return None
    acc_arg = body.args[1 + accs[0]]
    # the ops that depend on the carried accumulator
    after_acc: set[Operation] = set()
    for o in ops:
        if any(v is acc_arg or v.owner in after_acc for v in o.operands):
            after_acc.add(o)
    # A: everything up to the first group's wait, and what the other carried values need
    a: set[Operation] = set(ops[: w1 + 1])
    todo = [v for n, v in enumerate(yielded.operands) if n != accs[0]]
    while todo:
        owner = todo.pop().owner
        if isinstance(owner, Operation) and owner.parent_block() is body and owner not in a:
            a.add(owner)
            todo += owner.operands
    if a & after_acc:
        return None
    in_body = set(ops)
    first_b = min(n for n, o in enumerate(ops) if n > w1 and (o in after_acc or isinstance(o, (*PRODUCTS, reg.WgmmaCommitOp))))
    for n in range(w1 + 1, len(ops)):
        o = ops[n]
        if o in a or o in after_acc or isinstance(o, (*PRODUCTS, reg.WgmmaCommitOp, reg.WgmmaWaitOp)):
            continue
        from_a = all(not isinstance(v.owner, Operation) or v.owner not in in_body or v.owner in a for v in o.operands)
        if from_a and (isinstance(o, PURE) or n < first_b):
            a.add(o)
    a_ops = [o for o in ops if o in a]
    b_ops = [o for o in ops if o not in a]
    b_set = set(b_ops)
    if any(v.owner in b_set for o in a_ops for v in o.operands):
        return None
    carried: list[SSAValue] = []
    for o in b_ops:
        for v in o.operands:
            if v is acc_arg or v in carried:
                continue
            if v in body.args[1:]:
                return None  # B would need a carried value of the iteration before
            if v is body.args[0] or isinstance(v.owner, Operation) and v.owner in a:
                carried.append(v)
    first_wait = ops[w1]
    second_commit = ops[c2]
    assert isinstance(first_wait, reg.WgmmaWaitOp) and isinstance(second_commit, reg.WgmmaCommitOp)
    return _Split(a_ops, b_ops, first_wait, second_commit, second[-1], accs[0], carried)


def _clone(ops: list[Operation], mapping: dict[SSAValue, SSAValue]) -> list[Operation]:
    return [o.clone(value_mapper=mapping) for o in ops]


def rotate(loop: scf.ForOp) -> bool:
    """Software-pipeline `loop` by one step (see the module's doc); False where it cannot."""
    lb, ub, step = (constant(v) for v in (loop.lb, loop.ub, loop.step))
    if lb is not None and ub is not None and step is not None and ub - lb <= step:
        return False  # one trip (a ragged stream's last tile): nothing to overlap
    split = _split(loop)
    if split is None:
        return False
    body = loop.body.block
    iv, args = body.args[0], list(body.args[1:])
    inits = list(loop.iter_args)
    acc_arg = args[split.acc]
    yielded = body.last_op
    assert isinstance(yielded, scf.YieldOp)

    # tile 0's first part, before the loop
    pro_map: dict[SSAValue, SSAValue] = {iv: loop.lb, **dict(zip(args, inits))}
    prologue = _clone(split.a, pro_map)
    start = arith.AddiOp(loop.lb, loop.step)

    # the loop: A_j up to its commit, B_j-1 up to its commit, wait 1, the rest of A_j, the rest of B_j-1
    carried_types = [v.type for v in split.carried]
    new_body = Block(arg_types=[IndexType(), *(a.type for a in args), *carried_types])
    n_iv, n_args, n_carried = new_body.args[0], list(new_body.args[1 : 1 + len(args)]), list(new_body.args[1 + len(args) :])
    a_map: dict[SSAValue, SSAValue] = {iv: n_iv, **dict(zip(args, n_args))}
    b_map: dict[SSAValue, SSAValue] = {acc_arg: n_args[split.acc], **dict(zip(split.carried, n_carried))}
    # what each part does before its first product (the accumulator's rescale among it) goes
    # before both groups: no register a product reads is written while one runs
    a_first = next(n for n, o in enumerate(split.a) if isinstance(o, PRODUCTS))
    b_first = next(n for n, o in enumerate(split.b) if isinstance(o, PRODUCTS))
    wait_at = split.a.index(split.first_wait)
    commit_at = split.b.index(split.second_commit)
    a_pre, b_pre = _clone(split.a[:a_first], a_map), _clone(split.b[:b_first], b_map)
    a_group, b_group = _clone(split.a[a_first:wait_at], a_map), _clone(split.b[b_first : commit_at + 1], b_map)
    # the second group's operands for the next tile are packed after it retires: the
    # registers it reads are never written while it runs
    a_tail = _clone([o for o in split.a[wait_at + 1 :] if not isinstance(o, reg.ToAOp)], a_map)
    b_tail = _clone(split.b[commit_at + 1 :], b_map)
    b_tail += _clone([o for o in split.a[wait_at + 1 :] if isinstance(o, reg.ToAOp)], a_map)
    out = [a_map.get(v, v) if n != split.acc else b_map[split.last.results[0]]
           for n, v in enumerate(yielded.operands)]
    new_body.add_ops([*a_pre, *b_pre, *a_group, *b_group, reg.WgmmaWaitOp(1), *a_tail, *b_tail,
                      scf.YieldOp(*out, *(a_map.get(v, v) for v in split.carried))])
    pro_carried = [pro_map.get(v, v) for v in split.carried]
    pro_out = [pro_map.get(v, v) if n != split.acc else inits[n] for n, v in enumerate(yielded.operands)]
    new_loop = scf.ForOp(start.result, loop.ub, loop.step, [*pro_out, *pro_carried], Region(new_body))
    new_loop.attributes.update(loop.attributes)
    new_loop.attributes["reg.overlapped"] = builtin.UnitAttr()

    # the last tile's second part, after the loop
    epi_map: dict[SSAValue, SSAValue] = {acc_arg: new_loop.results[split.acc],
                                         **dict(zip(split.carried, new_loop.results[len(args) :]))}
    epilogue = _clone(split.b, epi_map)
    results = [new_loop.results[n] if n != split.acc else epi_map[split.last.results[0]] for n in range(len(args))]

    ops: list[Operation] = [*prologue, start, new_loop, *epilogue]
    if lb is not None and ub is not None and lb < ub:
        Rewriter.insert_op(ops, InsertPoint.before(loop))
        for old, new in zip(loop.results, results):
            old.replace_all_uses_with(new)
    else:  # a loop that may run no trip: all of it under lb < ub
        some = arith.CmpiOp(loop.lb, loop.ub, "ult")
        guarded = scf.IfOp(some.result, [r.type for r in loop.results], [*ops, scf.YieldOp(*results)], [scf.YieldOp(*inits)])
        Rewriter.insert_op([some, guarded], InsertPoint.before(loop))
        for old, new in zip(loop.results, guarded.results):
            old.replace_all_uses_with(new)
    Rewriter.erase_op(loop)
    return True


@dataclass(frozen=True)
class RegWgmmaOverlapPass(ModulePass):
    name = "reg-wgmma-overlap"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for kernel in [k for k in op.walk() if isinstance(k, hbm.KernelOp)]:
            for loop in [o for o in kernel.walk() if isinstance(o, scf.ForOp) and "smem.stages" in o.attributes]:
                rotate(loop)  # a loop without two wgmma groups (an mma.sync kernel's, a GEMM's) is left alone
