"""`reg-wgmma-overlap`: a tile's second product runs while the next tile's scores are made.

A stream loop whose body issues two wgmma groups, the second accumulating into a value
the loop carries (attention: S = Q K^T, the softmax, then acc * alpha + P V), waits for
each group where it stands, so the tensor cores idle while the softmax runs. This pass
software-pipelines the loop by one step: iteration j issues tile j's first group, then
tile j - 1's second (its operands, P and the rescale, carried from the iteration
before), waits only for the first (`reg.wgmma_wait {pending = 1}`: groups retire in
order), computes tile j's softmax while tile j - 1's P V runs, then waits for it and
releases tile j - 1's stages. Tile 0's first part runs before the loop, the last tile's
second part after it; a loop that may run no trip is guarded (`scf.if`). A chain of two
stream loops whose second parts are the same ops (causal attention's unmasked tiles, then
its masked ones) is pipelined as one: the first loop's last second part is pending when
the second loop starts, and runs in its first trip, under the diagonal tile's scores and
softmax; where the first loop runs no trip, the second is pipelined alone.

    for j: [A_j: wait K_j, S_j = QK_j, wait 0, softmax_j] [B_j: acc = acc a_j + P_j V_j, wait 0, release j]
becomes
    A_0 (whole); for j >= 1: [A_j, B_j-1 before their products] [A_j's group] [B_j-1's group]
        wait 1 [rest of A_j] [rest of B_j-1] [A_j's packing of P_j]; B_last

What B is: the second group, the ops that depend on the carried accumulator (its rescale),
and the waits, arrivals and releases that come after the first of those; what B needs
from A (P's fragments, the rescale, the stage) is carried. A loop whose first part would
need something of the second is left alone, as is a loop of one trip.

B_last reads only its own stage, so a release that followed the loops (a persistent
block's Q, `smem.arrive` on Q's empty barrier) moves up to just after them, ahead of
B_last, where each trip ends with every group retired (`reg.wgmma_wait {pending = 0}`
after its last commit) and nothing in between reads the buffers it releases (those the
producer copies after waiting on that barrier): the producer loads the next tile's Q
while the last tile's P V runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, builtin, scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from napkin_ir.dialects import hbm, loop_facts, reg, smem
from napkin_ir.dialects.utils import constant
from napkin_ir.lowering.hbm_to_smem import stream_chains

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


def _one_trip(loop: scf.ForOp) -> bool:
    lb, ub, step = (constant(v) for v in (loop.lb, loop.ub, loop.step))
    return lb is not None and ub is not None and step is not None and ub - lb <= step


def _surely_runs(loop: scf.ForOp) -> bool:
    lb, ub = constant(loop.lb), constant(loop.ub)
    return lb is not None and ub is not None and lb < ub


def _prologue(loop: scf.ForOp, split: _Split, inits: list[SSAValue]) -> tuple[list[Operation], list[SSAValue], list[SSAValue]]:
    """Tile lb's first part with the loop's values `inits`: its ops, the values the
    pipelined loop starts from (the accumulator as given: its second part is pending) and
    what that second part takes."""
    body = loop.body.block
    args = list(body.args[1:])
    yielded = body.last_op
    assert isinstance(yielded, scf.YieldOp)
    pro_map: dict[SSAValue, SSAValue] = {body.args[0]: loop.lb, **dict(zip(args, inits))}
    ops = _clone(split.a, pro_map)
    out = [pro_map.get(v, v) if n != split.acc else inits[n] for n, v in enumerate(yielded.operands)]
    return ops, out, [pro_map.get(v, v) for v in split.carried]


def _pipelined(loop: scf.ForOp, split: _Split, start: SSAValue, inits: list[SSAValue], pending: list[SSAValue]) -> scf.ForOp:
    """The loop from `start`, each trip issuing its tile's first group and then the second
    group pending from the trip before (`pending`: what it takes, to begin with)."""
    body = loop.body.block
    iv, args = body.args[0], list(body.args[1:])
    acc_arg = args[split.acc]
    yielded = body.last_op
    assert isinstance(yielded, scf.YieldOp)
    # the loop: A_j up to its commit, B_j-1 up to its commit, wait 1, the rest of A_j, the rest of B_j-1
    new_body = Block(arg_types=[IndexType(), *(a.type for a in args), *(v.type for v in split.carried)])
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
    new_loop = scf.ForOp(start, loop.ub, loop.step, [*inits, *pending], Region(new_body))
    new_loop.attributes.update(loop.attributes)
    loop_facts.set_overlapped(new_loop)
    return new_loop


def _drain(loop: scf.ForOp, split: _Split, new_loop: scf.ForOp) -> tuple[list[Operation], list[SSAValue]]:
    """The second part pending after `new_loop` (the last tile's), and the loop's results."""
    n = len(loop.body.block.args) - 1
    epi_map: dict[SSAValue, SSAValue] = {loop.body.block.args[1 + split.acc]: new_loop.results[split.acc],
                                         **dict(zip(split.carried, new_loop.results[n:]))}
    ops = _clone(split.b, epi_map)
    return ops, [new_loop.results[k] if k != split.acc else epi_map[split.last.results[0]] for k in range(n)]


def _replace(loops: list[scf.ForOp], ops: list[Operation], results: list[SSAValue], guard: SSAValue | None,
             otherwise: list[Operation], otherwise_results: list[SSAValue]) -> None:
    """`ops` in place of `loops` (the last one's results become `results`), under `guard`
    (else `otherwise`) where given."""
    last = loops[-1]
    if guard is None:
        Rewriter.insert_op(ops, InsertPoint.before(loops[0]))
        new = results
    else:
        guarded = scf.IfOp(guard, [r.type for r in last.results], [*ops, scf.YieldOp(*results)],
                           [*otherwise, scf.YieldOp(*otherwise_results)])
        Rewriter.insert_op([guarded], InsertPoint.before(loops[0]))
        new = list(guarded.results)
    for old, r in zip(last.results, new):
        old.replace_all_uses_with(r)
    for loop in reversed(loops):
        Rewriter.erase_op(loop)


def rotate(loop: scf.ForOp) -> bool:
    """Software-pipeline `loop` by one step (see the module's doc); False where it cannot."""
    if _one_trip(loop):
        return False  # one trip (a ragged stream's last tile): nothing to overlap
    split = _split(loop)
    if split is None:
        return False
    inits = list(loop.iter_args)
    prologue, out, pending = _prologue(loop, split, inits)
    start = arith.AddiOp(loop.lb, loop.step)
    new_loop = _pipelined(loop, split, start.result, out, pending)
    epilogue, results = _drain(loop, split, new_loop)
    ops: list[Operation] = [*prologue, start, new_loop, *epilogue]
    if _surely_runs(loop):
        _replace([loop], ops, results, None, [], [])
    else:  # a loop that may run no trip: all of it under lb < ub
        some = arith.CmpiOp(loop.lb, loop.ub, "ult")
        Rewriter.insert_op([some], InsertPoint.before(loop))
        _replace([loop], ops, results, some.result, [], inits)
    return True


def _same_second_part(first: scf.ForOp, s1: _Split, second: scf.ForOp, s2: _Split) -> bool:
    """Whether the two loops' second parts are the same ops on corresponding values, so
    that the second loop's can finish a tile of the first (what they carry in the same
    order, the same values from outside)."""
    if len(s1.b) != len(s2.b) or s1.acc != s2.acc or [v.type for v in s1.carried] != [v.type for v in s2.carried]:
        return False
    same: dict[SSAValue, SSAValue] = {first.body.block.args[1 + s1.acc]: second.body.block.args[1 + s2.acc],
                                      **dict(zip(s1.carried, s2.carried))}
    for o1, o2 in zip(s1.b, s2.b):
        if (o1.name != o2.name or o1.properties != o2.properties or o1.attributes != o2.attributes
                or len(o1.operands) != len(o2.operands) or [r.type for r in o1.results] != [r.type for r in o2.results]):
            return False
        if any(same.get(v1, v1) is not v2 for v1, v2 in zip(o1.operands, o2.operands)):
            return False
        same.update(zip(o1.results, o2.results))
    return True


def rotate_chain(first: scf.ForOp, second: scf.ForOp) -> bool:
    """Software-pipeline a chain of two stream loops (causal attention's unmasked tiles,
    then its masked ones) as one: the first loop's last tile's second part runs in the
    second loop's first trip, under that tile's scores and softmax, rather than alone
    between the loops. Where the first loop runs no trip, the second is pipelined alone."""
    s1, s2 = _split(first), _split(second)
    if s1 is None or s2 is None or not _same_second_part(first, s1, second, s2):
        return False
    inits = list(first.iter_args)
    prologue, out, pending = _prologue(first, s1, inits)
    start = arith.AddiOp(first.lb, first.step)
    loop1 = _pipelined(first, s1, start.result, out, pending)
    n = len(inits)
    loop2 = _pipelined(second, s2, second.lb, list(loop1.results[:n]), list(loop1.results[n:]))
    epilogue, results = _drain(second, s2, loop2)
    ops: list[Operation] = [*prologue, start, loop1, loop2, *epilogue]
    if _surely_runs(first):
        _replace([first, second], ops, results, None, [], [])
        return True
    # the first loop may run no trip: then the second starts from the chain's values alone
    alone = second.clone(value_mapper=dict(zip(first.results, inits)))
    some = arith.CmpiOp(first.lb, first.ub, "ult")
    Rewriter.insert_op([some], InsertPoint.before(first))
    _replace([first, second], ops, results, some.result, [alone], list(alone.results))
    rotate(alone)
    return True


def guarded_buffers(kernel: hbm.KernelOp) -> dict[SSAValue, set[SSAValue]]:
    """Per empty barrier ring: the buffers the producer copies into after waiting on it
    (and before it waits on another), which a consumer's arrival on it releases."""
    empties = {a.operation.bars for o in kernel.walk() if isinstance(o, smem.MbarrierAllocOp)  # type: ignore[attr-defined]
               for a in o.result.uses if isinstance(a.operation, smem.ArriveOp)}
    out: dict[SSAValue, set[SSAValue]] = {}
    for producer in [o for o in kernel.walk() if isinstance(o, smem.ProducerOp)]:
        ring = None
        for o in producer.walk():
            if isinstance(o, smem.MbarrierWaitOp) and o.bars in empties:
                ring = o.bars
            elif isinstance(o, smem.TmaCopyOp) and ring is not None:
                out.setdefault(ring, set()).add(o.dest)
    return out


def _reads(op: Operation, buffers: set[SSAValue]) -> bool:
    return any(v in buffers for o in op.walk() for v in o.operands)


def _retires_all(loop: scf.ForOp) -> bool:
    """Whether each trip of `loop` ends with no wgmma group pending."""
    ops = list(loop.body.block.ops)
    commits = [n for n, o in enumerate(ops) if isinstance(o, reg.WgmmaCommitOp)]
    waits = [n for n, o in enumerate(ops) if isinstance(o, reg.WgmmaWaitOp)]
    return bool(waits) and (not commits or waits[-1] > commits[-1]) and ops[waits[-1]].pending.value.data == 0  # type: ignore[attr-defined]


def release_early(arrive: smem.ArriveOp, buffers: set[SSAValue]) -> None:
    """Move `arrive` up past the ops before it that read none of `buffers`, into both
    branches of an `scf.if`, to just after a stream loop whose trips retire every group;
    where no such loop comes first it stays where it is."""
    block = arrive.parent_block()
    assert block is not None
    at = arrive.prev_op
    while at is not None and not isinstance(at, scf.ForOp | scf.IfOp) and not _reads(at, buffers):
        at = at.prev_op
    if isinstance(at, scf.ForOp) and loop_facts.pipeline(at) is not None and _reads(at, buffers) and _retires_all(at):
        if at is not arrive.prev_op:
            arrive.detach()
            Rewriter.insert_op([arrive], InsertPoint.after(at))
    elif isinstance(at, scf.IfOp):
        moved = []
        for region in at.regions:
            end = region.block.last_op
            assert end is not None
            copy = arrive.clone()
            Rewriter.insert_op([copy], InsertPoint.before(end))
            moved.append(copy)
        # ops between the scf.if and the arrive read none of the buffers: the arrive may
        # come before them, in each branch at its end
        Rewriter.erase_op(arrive)
        for copy in moved:
            release_early(copy, buffers)


@dataclass(frozen=True)
class RegWgmmaOverlapPass(ModulePass):
    name = "reg-wgmma-overlap"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for kernel in [k for k in op.walk() if isinstance(k, hbm.KernelOp)]:
            loops = loop_facts.pipelined_loops(kernel)
            rotated = False
            for chain in stream_chains(loops):
                if len(chain) == 2 and rotate_chain(*chain):
                    rotated = True
                    continue
                for loop in chain:
                    rotated |= rotate(loop)  # a loop without two wgmma groups (an mma.sync kernel's, a GEMM's) is left alone
            if not rotated:
                continue
            guarded = guarded_buffers(kernel)
            for arrive in [o for o in kernel.body.block.ops if isinstance(o, smem.ArriveOp) and o.bars in guarded]:
                release_early(arrive, guarded[arrive.bars])
