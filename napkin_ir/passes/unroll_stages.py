"""`smem-unroll-stages`: unroll each pipelined stream loop by its stage count.

A loop that `hbm-to-smem` pipelined through S stages reads stage i mod S and copies tile
i + S - 1 ahead. Unrolled S times, every stage index in its body is a constant, so the
lowering puts the stages' offsets into immediates, and the copies' places differ by
constants from one body to the next (one base register a trip). The last iterations,
whose copies run past the end of the stream, are peeled off after the loop with their
counters constant: their copies are then known to be past the end (and dropped) or
inside (and unguarded).

    %r = scf.for %k = %c0 to %c256 step %c32 iter_args(%acc = %z) {...}
           {hbm.stream = #hbm.stream<k>, smem.pipeline = #smem.pipeline<stages=3, copy=cp_async>}

becomes a loop over 6 of the 8 tiles in steps of 96, three bodies in each trip (stages
0, 1, 2; its pipeline says `unrolled=3`), then the last two tiles with %k = 192 and 224. Index arithmetic whose value
the unrolling fixes (a stage, a tile's place that no longer moves) becomes a constant.
Loops with bounds that are not constants (a causal stream) are left as they are, as are
loops fed by the TMA (their stages follow the ring's position, not the counter alone).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, builtin, scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from napkin_ir.dialects import loop_facts
from napkin_ir.dialects.utils import constant  # re-exported for the passes that run after this one


def index_constant(value: int) -> arith.ConstantOp:
    return arith.ConstantOp.from_int_and_width(value, IndexType())


class Periodic:
    """Index values in a body whose counter is `lb + period q` (q = 0, 1, ...): each value
    as `const + coeff q` where known; a value with coeff 0 is the same in every trip."""

    def __init__(self, counter: SSAValue, start: int, period: int):
        self.vals: dict[SSAValue, tuple[int, int]] = {counter: (start, period)}

    def of(self, v: SSAValue) -> tuple[int, int] | None:
        if v in self.vals:
            return self.vals[v]
        c = constant(v)
        if c is not None:
            return c, 0
        op = v.owner
        out = None
        if isinstance(op, arith.AddiOp | arith.SubiOp | arith.MuliOp | arith.DivUIOp | arith.RemUIOp):
            a, b = self.of(op.lhs), self.of(op.rhs)
            if a is not None and b is not None:
                if isinstance(op, arith.AddiOp):
                    out = (a[0] + b[0], a[1] + b[1])
                elif isinstance(op, arith.SubiOp):
                    out = (a[0] - b[0], a[1] - b[1])
                elif isinstance(op, arith.MuliOp) and (a[1] == 0 or b[1] == 0):
                    out = (a[0] * b[0], a[0] * b[1] + a[1] * b[0])
                elif b[1] == 0 and b[0] > 0 and a[0] >= 0 and a[1] >= 0 and a[1] % b[0] == 0:
                    # (x + m c q) / c = x / c + m q and (x + m c q) mod c = x mod c, for x, q >= 0
                    out = (a[0] // b[0], a[1] // b[0]) if isinstance(op, arith.DivUIOp) else (a[0] % b[0], 0)
        if out is not None:
            self.vals[v] = out
        return out


def _fold(ops: list[Operation], periodic: Periodic) -> None:
    """Replace the index results among `ops` that the period fixes by constants."""
    for op in ops:
        if isinstance(op, arith.ConstantOp) or len(op.results) != 1 or not isinstance(op.results[0].type, IndexType):
            continue
        v = periodic.of(op.results[0])
        if v is not None and v[1] == 0 and op.results[0].uses:
            c = index_constant(v[0])
            Rewriter.insert_op(c, InsertPoint.before(op))
            op.results[0].replace_all_uses_with(c.result)


def _drop_dead(ops: list[Operation]) -> None:
    """Erase the index arithmetic among `ops` that folding left without uses."""
    for op in reversed(ops):
        if isinstance(op, arith.ConstantOp | arith.AddiOp | arith.SubiOp | arith.MuliOp | arith.DivUIOp | arith.RemUIOp) and \
                not any(r.uses for r in op.results):
            Rewriter.erase_op(op)


def _copy_body(body: Block, counter: SSAValue, carried: list[SSAValue], at: InsertPoint) -> list[SSAValue]:
    """Clone the loop body at `at` with its counter and carried values given; returns what it yields."""
    mapping: dict[SSAValue, SSAValue] = {body.args[0]: counter, **dict(zip(body.args[1:], carried))}
    out: list[SSAValue] = []
    for op in body.ops:
        if isinstance(op, scf.YieldOp):
            out = [mapping.get(v, v) for v in op.operands]
            break
        Rewriter.insert_op(op.clone(value_mapper=mapping), at)
    return out


def unroll(loop: scf.ForOp, trips: int = 1) -> bool:
    """Unroll one pipelined loop by `trips` times its stage count; False where it cannot be."""
    pipeline = loop_facts.pipeline(loop)
    if pipeline is None or pipeline.copy_engine == loop_facts.CopyEngine.TMA:
        return False
    stage_count = pipeline.stage_count
    s = stage_count * max(1, trips)  # bodies a trip: a multiple of the stages keeps them constant
    lb, ub, step = (constant(v) for v in (loop.lb, loop.ub, loop.step))
    if lb is None or ub is None or step is None or step <= 0 or ub <= lb or stage_count < 2:
        return False
    count = -(-(ub - lb) // step)
    # the main loop's iterations copy only tiles before the end: i + s - 1 < trips
    main = max(0, count - (stage_count - 1)) // s * s
    body = loop.body.block
    carried: list[SSAValue] = list(loop.iter_args)
    new_ops: list[Operation] = []
    if main:
        new_body = Block(arg_types=[IndexType(), *(v.type for v in loop.iter_args)])
        iv, *state = new_body.args
        end = InsertPoint.at_end(new_body)
        first = len(list(new_body.ops))
        for j in range(s):
            if j:
                off = index_constant(j * step)
                at_j = arith.AddiOp(iv, off.result)
                Rewriter.insert_op([off, at_j], end)
                counter = at_j.result
            else:
                counter = iv
            state = _copy_body(body, counter, state, end)
        Rewriter.insert_op(scf.YieldOp(*state), end)
        periodic = Periodic(iv, lb, s * step)
        _fold(list(new_body.ops)[first:], periodic)
        _drop_dead(list(new_body.ops))
        c_lb, c_ub, c_step = index_constant(lb), index_constant(lb + main * step), index_constant(s * step)
        unrolled = scf.ForOp(c_lb.result, c_ub.result, c_step.result, carried, Region(new_body))
        unrolled.attributes.update({k: v for k, v in loop.attributes.items()})
        loop_facts.set_unrolled(unrolled, s)
        new_ops += [c_lb, c_ub, c_step, unrolled]
        carried = list(unrolled.results)
    Rewriter.insert_op(new_ops, InsertPoint.before(loop))
    # the peeled iterations, their counters constant
    tail_at = InsertPoint.before(loop)
    for t in range(main, count):
        c = index_constant(lb + t * step)
        Rewriter.insert_op(c, tail_at)
        before = set(loop.parent_block().ops)  # type: ignore[union-attr]
        carried = _copy_body(body, c.result, carried, tail_at)
        added = [o for o in loop.parent_block().ops if o not in before]  # type: ignore[union-attr]
        _fold(added, Periodic(c.result, lb + t * step, 0))
        _drop_dead([c, *added])
    for res, v in zip(loop.results, carried):
        res.replace_all_uses_with(v)
    Rewriter.erase_op(loop)
    return True


@dataclass(frozen=True)
class SmemUnrollStagesPass(ModulePass):
    name = "smem-unroll-stages"
    trips: int = 1  # stage counts of bodies a trip of the unrolled loop

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        if self.trips < 1:
            raise PassFailedException(f"smem-unroll-stages: trips must be at least 1, got {self.trips}")
        for loop in loop_facts.pipelined_loops(op):
            unroll(loop, self.trips)
