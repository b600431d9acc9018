"""`reg-partial-row-sums`: a running row sum kept as each lane's part of it, its quad's parts
added once, where the sum is read.

Attention's forward keeps each row's softmax denominator across the stream loop: each trip
scales the sum so far by the trip's correction and adds the row sum of the trip's
probabilities, which `reg.row_reduce` makes within each lane and then across the 4 lanes
of its quad (two butterfly shuffles and adds a row a trip):

    %l0 = reg.fill {value = 0.0 : f32} : !reg.frag<row, i=16 : f32>
    ... scf.for ... iter_args(%l = %l0) {
      %lc = reg.map mul %l, %corr : ... row, row -> row
      %s = reg.row_reduce sum %p : !reg.frag<c, i=16, j=128 : f32> -> !reg.frag<row, i=16 : f32>
      %l2 = reg.map add %lc, %s : ... row, row -> row
      scf.yield %l2
    }
    %o = reg.map div %acc, %l_end

The sum distributes over the lanes: each lane may keep the sum of its own columns (a
`row_part` fragment), scaled by the same corrections, and the quad's parts are added once
after the loop. The trip's sum becomes one chain of adds a row starting from the scaled
part (`reg.row_accumulate`), FA4's forward's form: the correction's exponential heads the
chain, so ptxas issues it before the trip's, and the exponentials' adds follow them one by
one instead of as a tree:

    %l0 = reg.fill {value = 0.0 : f32} : !reg.frag<row_part, i=16 : f32>
    ... scf.for ... iter_args(%l = %l0) {
      %lc = reg.map mul %l, %corr : ... row_part, row -> row_part
      %l2 = reg.row_accumulate %lc, %p : ... -> !reg.frag<row_part, i=16 : f32>
      scf.yield %l2
    }
    %l_end_row = reg.row_combine %l_end
    %o = reg.map div %acc, %l_end_row

A running sum is a web of `row` values: a `reg.map add` of a value of the web and a
`reg.row_reduce sum` read by nothing else (a trip's sum added on), a `reg.map mul` of a
value of the web and another `row` value (the correction), a `reg.fill` of 0, and the
loop-carried values (an `scf.for`'s iter_arg and result whose initial and yielded values
are of the web). A web with no sum added on is left alone. Wherever else a value of the web
is read (the output's division, the log-sum-exp), a `reg.row_combine` made right after it
gives the row's sum (a fill of 0 read so is filled again, as a `row`). The sum's rounding differs (each lane's chain, then the quad's) from
the tree's; the values are those of the same sum.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, scf
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from napkin_ir.dialects import reg


def _is_row(v: SSAValue) -> bool:
    return isinstance(v.type, reg.FragType) and v.type.role.data == "row"


def _added_sum(op: Operation) -> tuple[SSAValue, reg.RowReduceOp] | None:
    """Of a `reg.map add` of a value and a row sum of a `c` fragment that only it reads: (the
    value, the sum)."""
    if not (isinstance(op, reg.MapOp) and op.fn.data == "add" and len(op.inputs) == 2 and _is_row(op.result)):
        return None
    for n, v in enumerate(op.inputs):
        s = v.owner
        if (isinstance(s, reg.RowReduceOp) and s.kind.data == "sum" and v.has_one_use()
                and isinstance(s.input.type, reg.FragType) and s.input.type.role.data == "c"):
            return op.inputs[1 - n], s
    return None


def _carried_from(v: SSAValue) -> list[SSAValue] | None:
    """Of an `scf.for`'s iter_arg or result: its initial and its yielded value."""
    if isinstance(v, BlockArgument) and isinstance(loop := v.block.parent_op(), scf.ForOp) and v.index > 0:
        k = v.index - 1
    elif isinstance(v, OpResult) and isinstance(v.op, scf.ForOp):
        loop, k = v.op, v.index
    else:
        return None
    yielded = loop.body.block.last_op
    assert isinstance(yielded, scf.YieldOp)
    return [loop.iter_args[k], yielded.operands[k]]


@dataclass
class _Web:
    """The values of the running sums in a module, found optimistically: every candidate
    first, then those whose definition needs a value not in the set dropped until none is."""

    values: set[SSAValue]

    @staticmethod
    def of(module: builtin.ModuleOp) -> set[SSAValue]:
        cands: set[SSAValue] = set()
        for op in module.walk():
            if isinstance(op, reg.FillOp) and _is_row(op.result) and op.value.value.data == 0.0:
                cands.add(op.result)
            elif isinstance(op, reg.MapOp) and op.fn.data in ("add", "mul") and _is_row(op.result):
                cands.add(op.result)
            elif isinstance(op, scf.ForOp):
                cands.update(v for v in (*op.results, *op.body.block.args[1:]) if _is_row(v))
        web = _Web(cands)
        while web._drop():
            pass
        return web._with_sums()

    def _holds(self, v: SSAValue) -> bool:
        if (carried := _carried_from(v)) is not None:
            return all(x in self.values for x in carried)
        op = v.owner
        if isinstance(op, reg.FillOp):
            return True
        assert isinstance(op, reg.MapOp)
        if op.fn.data == "add":
            added = _added_sum(op)
            return added is not None and added[0] in self.values
        inside = [x in self.values for x in op.inputs]  # mul: the sum so far times a value of the row
        return len(op.inputs) == 2 and sum(inside) == 1 and all(_is_row(x) for x in op.inputs)

    def _drop(self) -> bool:
        gone = {v for v in self.values if not self._holds(v)}
        self.values -= gone
        return bool(gone)

    def _with_sums(self) -> set[SSAValue]:
        """The values of the webs that add a row sum on (the others are left alone)."""
        parent = {v: v for v in self.values}

        def root(v: SSAValue) -> SSAValue:
            while parent[v] is not v:
                v = parent[v]
            return v

        for v in self.values:
            for u in _inputs_in(v, self.values):
                parent[root(u)] = root(v)
        summed = {root(v) for v in self.values if isinstance(v.owner, reg.MapOp) and v.owner.fn.data == "add"}
        return {v for v in self.values if root(v) in summed}


def _inputs_in(v: SSAValue, web: set[SSAValue]) -> list[SSAValue]:
    """The values of `web` that `v` (of it) is made from."""
    if (carried := _carried_from(v)) is not None:
        return carried
    op = v.owner
    return [x for x in op.operands if x in web] if isinstance(op, reg.MapOp) else []


def _reads_inside(use_op: Operation, index: int, v: SSAValue, web: set[SSAValue]) -> bool:
    """Whether operand `index` of `use_op` (the value `v` of the web) is read as a part of
    the sum: by a value of the web, or carried into one."""
    if isinstance(use_op, scf.YieldOp):
        loop = use_op.parent_op()
        return isinstance(loop, scf.ForOp) and loop.results[index] in web
    if isinstance(use_op, scf.ForOp):
        k = index - 3  # lower bound, upper bound, step, then the initial values
        return k >= 0 and use_op.body.block.args[k + 1] in web
    return any(r in web for r in use_op.results)


def _part(t: reg.FragType) -> reg.FragType:
    return reg.FragType("row_part", dict(t.shape), t.element_type)  # type: ignore[arg-type]


def keep_parts(module: builtin.ModuleOp) -> int:
    """Rewrite `module`'s running row sums to each lane's parts; the number of sums added on
    (trips' and tiles') that became chains."""
    web = _Web.of(module)
    if not web:
        return 0
    outside = {v: [u for u in v.uses if not _reads_inside(u.operation, u.index, v, web)] for v in web}
    adds = [(v.owner, *added) for v in web if isinstance(v.owner, Operation) and (added := _added_sum(v.owner)) is not None]
    parts = {v: Rewriter.replace_value_with_new_type(v, _part(v.type)) for v in web}  # type: ignore[arg-type]
    for old, new in parts.items():
        if not outside[old]:
            continue
        # a fill of 0 is one still where read as the row's sum; any other value's parts are added
        combined = reg.FillOp(0.0, old.type) if isinstance(new.owner, reg.FillOp) else reg.RowCombineOp(new)  # type: ignore[arg-type]
        owner = new.owner
        point = InsertPoint.at_start(owner) if isinstance(owner, Block) else InsertPoint.after(owner)
        Rewriter.insert_op(combined, point)
        for use in outside[old]:
            use.operation.operands[use.index] = combined.result
    for add, acc, s in adds:
        Rewriter.replace_op(add, reg.RowAccumulateOp(parts[acc], s.input))
        Rewriter.erase_op(s)
    return len(adds)


class RegPartialRowSumsPass(ModulePass):
    name = "reg-partial-row-sums"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        keep_parts(op)
