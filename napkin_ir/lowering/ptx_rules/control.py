"""Index arithmetic, loops and conditions.

- `arith` on indices: `convert-arith-to-ptx`'s rules (32-bit).
- `scf.for`: values the loop carries (fragments: one register each) are block arguments.
  A loop that carries wgmma accumulators (at least one trip: constant bounds, or a
  loop ncd-to-hbm knows is `hbm.nonempty`) is tested
  at its bottom (body(iv, carried) ... iv' = iv + step; iv' < ub ? body : exit), so that
  the accumulators stay in their registers while the products run; any other at its head.
- `scf.if` without results: its region under a branch, or, where it holds only
  `smem.copy` (a tile that may lie past the edge), as the copies' guard predicate; with
  results or an else region: both under branches, meeting at a block whose arguments
  are the results (a software-pipelined loop that may run no trip).
"""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.ir import Block, SSAValue

from napkin_ir.dialects import loop_facts, reg, smem
from napkin_ir.dialects.ptx import ops as P
from napkin_ir.lowering.ptx_rules.context import B32, KernelLowering, constant, lowers

INDEX_OPS = (arith.ConstantOp, arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.DivUIOp, arith.RemUIOp, arith.MinUIOp,
             arith.MaxUIOp, arith.CmpiOp)


@lowers(*INDEX_OPS)
def _index(k: KernelLowering, op) -> None:
    for new in k.arith.lower_op(op):
        k.emit(new)


def _flat(vals: list) -> list[SSAValue]:
    return [r for v in vals for r in (v if isinstance(v, list) else [v])]


def _shaped(values: list[SSAValue], like: list) -> list:
    out, n = [], 0
    for v in like:
        size = len(v) if isinstance(v, list) else 1
        out.append(list(values[n:n + size]) if isinstance(v, list) else values[n])
        n += size
    return out


@lowers(scf.ForOp)
def _for(k: KernelLowering, loop: scf.ForOp) -> None:
    lb, ub, step = (k.index(v) for v in (loop.lb, loop.ub, loop.step))
    inits = [k.carried(v) for v in loop.iter_args]
    bounds = [constant(v) for v in (loop.lb, loop.ub, loop.step)]
    # wgmma accumulators must stay in their registers while the products run: a loop that
    # carries them is tested at its bottom (no copies on the back edge); others at their
    # head, which leaves ptxas more room (an mma.sync attention loop tested at its bottom
    # needs 255 registers and spills, at its head 170)
    yielded = loop.body.block.last_op
    asynchronous = isinstance(yielded, scf.YieldOp) and any(isinstance(v.owner, reg.WgmmaOp) for v in yielded.operands)
    bottom = asynchronous and (None not in bounds and bounds[0] < bounds[1] or loop_facts.nonempty(loop))  # type: ignore[operator]
    flat = _flat(inits)
    body_block = loop.body.block
    if bottom:
        body = k.new_block([B32] + [r.type for r in flat])
        k.jump(body, lb, *flat)
        k.cur = body
        iv, state = body.args[0], _shaped(list(body.args[1:]), inits)
    else:
        head = k.new_block([B32] + [r.type for r in flat])
        body, exit_ = Block(), Block()
        k.jump(head, lb, *flat)
        k.blocks += [body, exit_]
        k.cur = head
        iv, state = head.args[0], _shaped(list(head.args[1:]), inits)
        k.emit(P.CondBraOp(k.setp("lt", iv, ub), body, [], exit_, []))
        k.cur = body
    k.vals[body_block.args[0]] = iv
    for arg, v in zip(body_block.args[1:], state):
        k.vals[arg] = v
    for op in body_block.ops:
        if not isinstance(op, scf.YieldOp):
            k.lower(op)
    yielded = body_block.last_op
    assert isinstance(yielded, scf.YieldOp)
    nxt = _flat([k.carried(v) for v in yielded.operands])
    if bottom:
        after = k.r(P.AddOp("s32", iv, step, result=B32))
        more = k.r(P.SetpOp("lt", "s32", after, ub))
        exit_ = k.new_block()
        k.emit(P.CondBraOp(more, body, [after, *nxt], exit_, []))
        results = _shaped(nxt, inits)
    else:
        k.jump(head, k.add(iv, step), *nxt)
        results = state
    k.cur = exit_
    for res, v in zip(loop.results, results):
        k.vals[res] = v


def _if_else(k: KernelLowering, op: scf.IfOp) -> None:
    """Both regions under branches that meet at a block whose arguments are the results."""
    cond = k.index(op.cond)
    then, other = k.new_block(), k.new_block()
    k.emit(P.CondBraOp(cond, then, [], other, []))
    outs = []
    for block, region in ((then, op.true_region), (other, op.false_region)):
        k.cur = block
        k.lower_ops([o for o in region.block.ops if not isinstance(o, scf.YieldOp)])
        yielded = region.block.last_op
        assert isinstance(yielded, scf.YieldOp)
        outs.append((k.cur, [k.carried(v) for v in yielded.operands]))
    like = outs[0][1]
    join = k.new_block([r.type for r in _flat(like)])
    for block, vals in outs:
        k.cur = block
        k.jump(join, *_flat(vals))
    k.cur = join
    for res, v in zip(op.results, _shaped(list(join.args), like)):
        k.vals[res] = v


@lowers(scf.IfOp)
def _if(k: KernelLowering, op: scf.IfOp) -> None:
    if op.results or op.false_region.blocks and any(not isinstance(o, scf.YieldOp) for o in op.false_region.block.ops):
        _if_else(k, op)
        return
    inner = [o for o in op.true_region.block.ops if not isinstance(o, scf.YieldOp)]
    cond = k.index(op.cond)
    if inner and all(isinstance(o, smem.CopyOp) for o in inner):
        from napkin_ir.lowering.ptx_rules.copies import cp_async_copy

        for c in inner:
            cp_async_copy(k, c, cond)
        return
    then, join = k.branch(cond)
    k.cur = then
    k.lower_ops(inner)
    k.jump(join)
    k.cur = join
