"""`ncd-grad`: the backward of each diagram, derived from it by reverse mode.

    ncd-grad                    @f_grad recomputes the forward, row statistics included
    ncd-grad{residuals=true}    @f also returns each normalisation's row statistic; @f_grad reads it

For every function `@f(x1, ..., xn) -> (y1, ..., ym)` of the module the pass adds, right
after it,

    @f_grad(x1, ..., xn, dy1, ..., dym) -> (dx1, ..., dxn)

all in `ncd` ops: the arguments of `@f`, then one cotangent per result (in result order,
each of its result's type), returning one cotangent per argument (in argument order, each
of its argument's type). `@f_grad` recomputes the forward values it needs, then walks the
forward's ops backwards, each op's rule adding contributions to its operands' cotangents;
contributions meet by SSA value and are summed with `ncd.map add`.

Conventions:
- Cotangents are f32 inside `@f_grad`: a 16-bit incoming cotangent is cast up on entry,
  an argument's gradient is cast back to its argument's element type at the end, and a
  forward `ncd.map cast` passes its cotangent through unchanged.
- Broadcasting is by name: an operand that lacks an axis of its op's result gets a
  cotangent summed over that axis (`ncd.reduce sum`), so grouped-query attention's dK and
  dV sum over the query heads of their group with no special case; an axis a reduction
  removed is broadcast back by adding an `ncd.constant 0.0` that has it.
- max splits ties: where the two operands of `ncd.map max` are equal (or the operand
  equals the constant `by`) each side gets half of the cotangent, as `torch.maximum` does;
  `ncd.reduce max` divides the cotangent equally among the elements equal to the maximum,
  as `torch.amax` does. `ncd.map ge` is piecewise constant and passes nothing back.
- A mask (`ncd.mask causal`, `ncd.mask_bound`) zeroes the cotangent where it filled its
  input; its fill is a constant.

With `residuals=true` the pass first makes each `@f` also return the row statistic of
every `ncd.softmax` and `ncd.l2norm` it computes, in the order of those ops, after its own
results: the log-sum-exp of the softmax's scaled input (`ncd.logsumexp`, natural log, the
softmax's scale included) or the L2 norm (sqrt of the sum of squares), each f32 with the
normalised input's axes but the normalised one. So, with s1..sk those statistics,

    @f(x1, ..., xn) -> (y1, ..., ym, s1, ..., sk)
    @f_grad(x1, ..., xn, dy1, ..., dym, s1, ..., sk) -> (dx1, ..., dxn)

and `@f_grad` reads them instead of reducing again: P = exp(scale * S - lse) for a
softmax, Y = X / norm for an L2 norm (the FlashAttention backward's recomputation of P
tile by tile). The statistics get no cotangent. The first arguments of `@f_grad` are those
of the plain form, so a caller adds the statistics at the end.

A softmax's gradient needs the row sum of dP * P, a reduction along the softmax's axis
(an L2 norm's too).
Where P (through at most a cast) only feeds one contraction over that axis whose result
Y = P . V is a result of `@f`, that sum is the sum of dY * Y along V's other axes
(sum_j dP_ij P_ij = sum_j sum_d dY_id V_jd P_ij = sum_d dY_id Y_id): with
`residuals=true`, `@f_grad` then also takes `@f`'s results, after the statistics, and
computes it so, named `%delta`, from dY and the saved Y alone: no reduction along the
streamed keys is left in the gradient, and `ncd-extract{cut="delta"}` lets another kernel
compute it (FlashAttention's D = rowsum(dO * O)).

    @f_grad(x1, ..., xn, dy1, ..., dym, s1, ..., sk, y1, ..., ym) -> (dx1, ..., dxn)

Refused, with the function and the op named: a function that already has an `@f_grad`
beside it, arguments or results that are not `!ncd.tensor`, ops outside the `ncd`
dialect, and masks on tiles (`at [...]`, the hbm level and below).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import f32
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.transforms.dead_code_elimination import region_dce
from xdsl.utils.exceptions import PassFailedException

from napkin_ir.dialects import ncd

LN2 = math.log(2.0)


def _fail(f: func.FuncOp, msg: str) -> PassFailedException:
    return PassFailedException(f"ncd-grad: @{f.sym_name.data}: {msg}")


def _where(op: Operation) -> str:
    """`ncd.map exp (%e)`: how a diagnostic names an op of the diagram."""
    kind = op.properties.get("fn") or op.properties.get("kind")
    name = f"{op.name} {kind.data}" if isinstance(kind, builtin.StringAttr) else op.name
    hint = op.results[0].name_hint if op.results else None
    return f"{name} (%{hint})" if hint else name


def _type(v: SSAValue) -> ncd.TensorType:
    t = v.type
    assert isinstance(t, ncd.TensorType)
    return t


def _ordered(shape: dict[str, int], order: Sequence[str]) -> dict[str, int]:
    """`shape` with the axes named in `order` first, in that order, then the others."""
    first = {a: shape[a] for a in order if a in shape}
    return first | {a: s for a, s in shape.items() if a not in first}


class Emitter:
    """Appends ncd ops to a block, working out each result's type."""

    def __init__(self, block: Block):
        self.block = block
        self._f32: dict[SSAValue, SSAValue] = {}

    def add(self, op: Operation, hint: str | None = None) -> SSAValue:
        self.block.add_op(op)
        if hint:
            op.results[0].name_hint = hint
        return op.results[0]

    def map(self, fn: str, xs: Sequence[SSAValue], order: Sequence[str] = (), by: float | None = None,
            element_type=None, hint: str | None = None) -> SSAValue:
        ts = [_type(x) for x in xs]
        shape: dict[str, int] = {}
        for t in ts:
            shape |= {a: s for a, s in t.shape.items() if a not in shape}
        rt = ncd.TensorType(_ordered(shape, order), element_type or ts[0].element_type)
        return self.add(ncd.MapOp(fn, xs, rt, by), hint)

    def f32(self, v: SSAValue) -> SSAValue:
        """`v` in f32 (cast once per value; exact from bf16 and f16)."""
        t = _type(v)
        if t.element_type == f32:
            return v
        if v not in self._f32:
            self._f32[v] = self.map("cast", [v], element_type=f32)
        return self._f32[v]

    def cast(self, v: SSAValue, element_type, hint: str | None = None) -> SSAValue:
        return v if _type(v).element_type == element_type else self.map("cast", [v], element_type=element_type, hint=hint)

    def reduce(self, kind: str, x: SSAValue, along: Sequence[str], order: Sequence[str] = (), hint: str | None = None) -> SSAValue:
        t = _type(x)
        kept = _ordered({a: s for a, s in t.shape.items() if a not in along}, order)
        return self.add(ncd.ReduceOp(kind, x, along, ncd.TensorType(kept, t.element_type)), hint)

    def fit(self, d: SSAValue, like: ncd.TensorType, hint: str | None = None) -> SSAValue:
        """The f32 cotangent `d` shaped as `like`: summed over the axes `like` lacks,
        broadcast over those it lacks itself, in `like`'s axis order."""
        t = _type(d)
        extra = [a for a in t.axis_names if a not in like.shape]
        if extra:
            d = self.reduce("sum", d, extra, like.axis_names)
        missing = {a: s for a, s in like.shape.items() if a not in _type(d).shape}
        if missing:
            zero = self.add(ncd.ConstantOp(0.0, ncd.TensorType(missing, f32)))
            d = self.map("add", [d, zero], like.axis_names)
        if _type(d).axis_names != like.axis_names:  # a transpose: the same values in `like`'s order
            d = self.map("cast", [d], like.axis_names, element_type=f32)
        if hint and not d.name_hint:
            d.name_hint = hint
        return d


@dataclass(frozen=True)
class NcdGradPass(ModulePass):
    """Adds `@f_grad` beside every function `@f` (see the module's docstring)."""

    name = "ncd-grad"
    residuals: bool = False

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        funcs = [f for f in op.body.block.ops if isinstance(f, func.FuncOp) and f.body.blocks]
        if not funcs:
            raise PassFailedException("ncd-grad: the module has no function to differentiate")
        names = {f.sym_name.data for f in op.body.block.ops if isinstance(f, func.FuncOp)}
        for f in funcs:
            if f"{f.sym_name.data}_grad" in names:
                raise _fail(f, f"the module already has @{f.sym_name.data}_grad; ncd-grad names the gradient of @f @f_grad "
                               "(run it once, on the forward functions)")
            _check(f)
        for f in funcs:
            stats = save_stats(f) if self.residuals else []
            grad = _Gradient(f, stats).build()
            op.body.block.insert_op_after(grad, f)


def _check(f: func.FuncOp) -> None:
    if len(f.body.blocks) != 1:
        raise _fail(f, "the function has several blocks; ncd-grad takes a diagram, one block of ncd ops")
    for op in f.body.block.ops:  # first, as its offsets come from index arguments or arith ops
        if isinstance(op, ncd.FillOutsideOp) and op.offsets:
            raise _fail(f, f"{_where(op)} masks a tile (at [...]); ncd-grad differentiates whole tensors, before ncd-to-hbm")
    for n, t in enumerate(f.function_type.inputs.data):
        if not isinstance(t, ncd.TensorType):
            raise _fail(f, f"argument #{n} has type {t}; ncd-grad differentiates functions of !ncd.tensor values")
    for n, t in enumerate(f.function_type.outputs.data):
        if not isinstance(t, ncd.TensorType):
            raise _fail(f, f"result #{n} has type {t}; ncd-grad differentiates functions of !ncd.tensor values")
    for op in f.body.block.ops:
        if not isinstance(op, ncd.NcdOp | func.ReturnOp):
            raise _fail(f, f"{op.name} is not an ncd op; ncd-grad differentiates diagrams (run it before ncd-to-hbm)")


@dataclass
class _Stat:
    """The row statistic of one normalisation, saved by the forward."""

    op: ncd.SoftmaxOp | ncd.L2NormOp
    value: SSAValue  # in the forward
    ops: list[Operation]  # that compute it in the forward, which @f_grad does not recompute


def save_stats(f: func.FuncOp) -> list[_Stat]:
    """Make `f` also return the row statistic of each softmax (log-sum-exp) and L2 norm
    (the norm), in op order, after its results; returns them."""
    stats: list[_Stat] = []
    for op in list(f.body.block.ops):
        if not isinstance(op, ncd.SoftmaxOp | ncd.L2NormOp):
            continue
        t = _type(op.input)
        rows = ncd.TensorType({a: s for a, s in t.shape.items() if a != op.axis.data}, f32)
        block = Block()
        e = Emitter(block)
        if isinstance(op, ncd.SoftmaxOp):
            scale = op.scale.value.data if op.scale is not None else None
            value = e.add(ncd.LogSumExpOp(op.input, op.axis.data, rows, scale), "lse")
        else:
            x = e.f32(op.input)
            value = e.map("sqrt", [e.reduce("sum", e.map("mul", [x, x]), [op.axis.data])], hint="norm")
        ops = list(block.ops)
        for new in ops:
            new.detach()
        f.body.block.insert_ops_after(ops, op)
        stats.append(_Stat(op, value, ops))
    if stats:
        ret = f.body.block.last_op
        assert isinstance(ret, func.ReturnOp)
        ret.operands = [*ret.arguments, *(s.value for s in stats)]
        f.update_function_type()
    return stats


class _Gradient:
    """Builds `@f_grad` for one function `@f`."""

    def __init__(self, f: func.FuncOp, stats: Sequence[_Stat]):
        self.f = f
        self.stats = list(stats)
        ret = f.body.block.last_op
        assert isinstance(ret, func.ReturnOp)
        self.results = list(ret.arguments)[: len(ret.arguments) - len(self.stats)]
        self.ct: dict[SSAValue, SSAValue] = {}  # forward value -> its cotangent so far, f32, in @f_grad
        self.primal: dict[SSAValue, SSAValue] = {}  # forward value -> the same value recomputed in @f_grad
        self.norms: dict[Operation, SSAValue] = {}  # an L2 norm op -> its saved norm, in @f_grad

    def build(self) -> func.FuncOp:
        f = self.f
        args = list(f.body.block.args)
        ins = [a.type for a in args] + [v.type for v in self.results] + [s.value.type for s in self.stats]
        if self.stats:  # the forward's results, read where a row sum goes through them
            ins += [v.type for v in self.results]
        block = Block(arg_types=ins)
        self.e = e = Emitter(block)
        grad_args = list(block.args)
        for a, g in zip(args, grad_args):
            g.name_hint = a.name_hint
            self.primal[a] = g
        douts = grad_args[len(args) : len(args) + len(self.results)]
        saved = grad_args[len(args) + len(self.results) : len(args) + len(self.results) + len(self.stats)]
        self.outputs = dict(zip(self.results, grad_args[len(args) + len(self.results) + len(self.stats) :]))
        for n, (v, d) in enumerate(zip(self.results, douts)):
            d.name_hint = f"d_{v.name_hint}" if v.name_hint else f"d_result{n}"
        for s, g in zip(self.stats, saved):
            g.name_hint = s.value.name_hint
        for v, g in self.outputs.items():
            g.name_hint = v.name_hint

        self._recompute(saved)
        for v, d in zip(self.results, douts):
            self._accumulate(v, e.f32(d))
        for op in reversed(list(f.body.block.ops)):
            if isinstance(op, func.ReturnOp) or not op.results or op.results[0] not in self.ct:
                continue  # no result depends on it (the saved statistics among them)
            self._rule(op, self.ct[op.results[0]])

        outs = []
        for a in args:
            t = _type(a)
            d = self.ct[a] if a in self.ct else e.add(ncd.ConstantOp(0.0, ncd.TensorType(t.shape, f32)))
            outs.append(e.cast(d, t.element_type, hint=f"d_{a.name_hint}" if a.name_hint else None))
        block.add_op(func.ReturnOp(*outs))
        grad = func.FuncOp(f"{f.sym_name.data}_grad", ([a.type for a in grad_args], [o.type for o in outs]), Region(block))
        region_dce(grad.body)
        return grad

    # -- the forward, recomputed ---------------------------------------------------------
    def _recompute(self, saved: Sequence[SSAValue]) -> None:
        e = self.e
        by_op = {s.op: g for s, g in zip(self.stats, saved)}
        skipped = {op for s in self.stats for op in s.ops}
        for op in self.f.body.block.ops:
            if isinstance(op, func.ReturnOp) or op in skipped:
                continue
            stat = by_op.get(op)
            if stat is None:
                new = op.clone(value_mapper=self.primal)
                e.block.add_op(new)
                continue
            assert isinstance(op, ncd.SoftmaxOp | ncd.L2NormOp)
            x = e.f32(self.primal[op.input])
            if isinstance(op, ncd.SoftmaxOp):  # P = exp(scale * S - lse)
                s = x if op.scale_value == 1.0 else e.map("scale", [x], by=op.scale_value)
                y = e.map("exp", [e.map("sub", [s, stat], _type(x).axis_names)])
            else:  # Y = X / norm
                y = e.map("div", [x, stat], _type(x).axis_names)
                self.norms[op] = stat
            y = e.cast(y, _type(op.result).element_type)
            y.name_hint = y.name_hint or op.result.name_hint
            self.primal[op.result] = y

    # -- the backward ------------------------------------------------------------------
    def _accumulate(self, v: SSAValue, d: SSAValue) -> None:
        t = _type(v)
        hint = f"d_{v.name_hint}" if v.name_hint else None
        d = self.e.fit(d, t, hint)
        if v in self.ct:
            d = self.e.map("add", [self.ct[v], d], t.axis_names, hint=hint)
        self.ct[v] = d

    def _rule(self, op: Operation, dy: SSAValue) -> None:
        e = self.e
        P = self.primal
        if isinstance(op, ncd.ContractOp):
            for target, other in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
                tt, ot = _type(target), _type(other)
                over = [a for a in _type(dy).axis_names if a in ot.shape and a not in tt.shape]
                rt = ncd.TensorType(tt.shape, f32)
                self._accumulate(target, e.add(ncd.ContractOp(dy, e.f32(P[other]), over, rt)))
        elif isinstance(op, ncd.MapOp):
            self._map_rule(op, dy)
        elif isinstance(op, ncd.ReduceOp):
            x = op.input
            xt = _type(x)
            zero = e.add(ncd.ConstantOp(0.0, ncd.TensorType({a: xt.shape[a] for a in op.along_axes}, f32)))
            if op.kind.data == "sum":
                self._accumulate(x, e.map("add", [dy, zero], xt.axis_names))
            else:  # the cotangent shared equally among the elements equal to the maximum
                mask = e.map("ge", [e.f32(P[x]), e.f32(P[op.result])], xt.axis_names)
                share = e.map("div", [mask, e.reduce("sum", mask, op.along_axes)], xt.axis_names)
                self._accumulate(x, e.map("mul", [share, dy], xt.axis_names))
        elif isinstance(op, ncd.SoftmaxOp):  # dS = scale * P * (dP - rowsum(dP * P))
            p = e.f32(P[op.result])
            order = _type(p).axis_names
            row = self._row_sum_through_output(op)
            if row is None:
                row = e.reduce("sum", e.map("mul", [dy, p], order), [op.axis.data])
            ds = e.map("mul", [p, e.map("sub", [dy, row], order)], order)
            self._accumulate(op.input, ds if op.scale_value == 1.0 else e.map("scale", [ds], by=op.scale_value))
        elif isinstance(op, ncd.L2NormOp):  # dX = (dY - Y * rowsum(dY * Y)) / norm
            y = e.f32(P[op.result])
            order = _type(y).axis_names
            norm = self.norms.get(op)
            if norm is None:
                x = e.f32(P[op.input])
                norm = e.map("sqrt", [e.reduce("sum", e.map("mul", [x, x], order), [op.axis.data])], hint="norm")
            row = self._row_sum_through_output(op)
            if row is None:
                row = e.reduce("sum", e.map("mul", [dy, y], order), [op.axis.data])
            dx = e.map("sub", [dy, e.map("mul", [y, row], order)], order)
            self._accumulate(op.input, e.map("div", [dx, norm], order))
        elif isinstance(op, ncd.LogSumExpOp):  # d x = scale * softmax(scale * x) * d lse
            x = e.f32(P[op.input])
            order = _type(x).axis_names
            s = x if op.scale_value == 1.0 else e.map("scale", [x], by=op.scale_value)
            p = e.map("exp", [e.map("sub", [s, P[op.result]], order)], order)
            dx = e.map("mul", [p, dy], order)
            self._accumulate(op.input, dx if op.scale_value == 1.0 else e.map("scale", [dx], by=op.scale_value))
        elif isinstance(op, ncd.MaskOp):
            t = ncd.TensorType(_type(dy).shape, f32)
            self._accumulate(op.input, e.add(ncd.MaskOp(dy, op.row.data, op.col.data, 0.0, t, op.kind.data)))
        elif isinstance(op, ncd.MaskBoundOp):
            t = ncd.TensorType(_type(dy).shape, f32)
            self._accumulate(op.input, e.add(ncd.MaskBoundOp(dy, op.axis.data, op.bound.data, 0.0, t)))
        elif isinstance(op, ncd.RenameOp):  # the cotangent named back
            self._accumulate(op.input, e.add(ncd.RenameOp(dy, {n: o for o, n in op.renames.items()})))
        elif isinstance(op, ncd.ConstantOp):
            pass
        else:
            raise _fail(self.f, f"{_where(op)} has no gradient rule")

    def _row_sum_through_output(self, op: ncd.SoftmaxOp | ncd.L2NormOp) -> SSAValue | None:
        """rowsum(dP * P) as the sum of dY * Y over V's axes, where P (through at most a
        cast) only feeds Y = contract(P, V) over the softmax's axis and Y is a saved result
        of `@f` (see the module's docstring); None where that does not hold."""
        v = op.result
        uses = [u.operation for u in v.uses]
        if len(uses) == 1 and isinstance(uses[0], ncd.MapOp) and uses[0].fn.data == "cast":
            v = uses[0].result
            uses = [u.operation for u in v.uses]
        if len(uses) != 1 or not isinstance(uses[0], ncd.ContractOp) or uses[0].over_axes != (op.axis.data,):
            return None
        y = uses[0].result
        if y not in self.outputs or y not in self.ct or len(list(y.uses)) != 1:
            return None
        order = [a for a in _type(op.result).axis_names if a != op.axis.data]
        over = [a for a in _type(y).axis_names if a not in order]
        e = self.e
        return e.reduce("sum", e.map("mul", [self.ct[y], e.f32(self.outputs[y])], _type(y).axis_names), over, order, hint="delta")

    def _map_rule(self, op: ncd.MapOp, dy: SSAValue) -> None:
        e = self.e
        P = self.primal
        fn = op.fn.data
        by = op.by.value.data if op.by is not None else None
        order = _type(op.result).axis_names
        x = op.inputs[0]
        if fn == "ge":  # piecewise constant
            return
        if fn == "add":
            self._accumulate(x, dy)
            if by is None:
                self._accumulate(op.inputs[1], dy)
        elif fn == "cast" or fn == "sub" and by is not None:
            self._accumulate(x, dy)
        elif fn == "neg":
            self._accumulate(x, e.map("neg", [dy]))
        elif fn == "scale" or fn == "mul" and by is not None:
            self._accumulate(x, e.map("scale", [dy], by=by))
        elif fn == "div" and by is not None:
            self._accumulate(x, e.map("div", [dy], by=by))
        elif fn == "exp":
            self._accumulate(x, e.map("mul", [dy, e.f32(P[op.result])], order))
        elif fn == "exp2":
            self._accumulate(x, e.map("scale", [e.map("mul", [dy, e.f32(P[op.result])], order)], by=LN2))
        elif fn == "log2":  # d log2(x) = dy / (x ln 2)
            self._accumulate(x, e.map("div", [e.map("scale", [dy], by=1 / LN2), e.f32(P[x])], order))
        elif fn == "sqrt":
            self._accumulate(x, e.map("div", [e.map("scale", [dy], by=0.5), e.f32(P[op.result])], order))
        elif fn == "max":
            a = e.f32(P[x])
            if by is None:
                b = e.f32(P[op.inputs[1]])
                a_ge = e.map("ge", [a, b], order)
                b_ge = e.map("ge", [b, a], order)
            else:  # max(x, c): the other side is the constant
                a_ge = e.map("ge", [a], by=by)
                b_ge = e.map("ge", [e.map("neg", [a])], by=-by if by else 0.0)
            # x's share: 1 where x > y, 1/2 where x == y, 0 where x < y
            share = e.map("scale", [e.map("add", [e.map("sub", [a_ge, b_ge], order)], by=1.0)], by=0.5)
            dx = e.map("mul", [dy, share], order)
            self._accumulate(x, dx)
            if by is None:
                self._accumulate(op.inputs[1], e.map("sub", [dy, dx], order))
        elif fn == "sub":
            self._accumulate(x, dy)
            self._accumulate(op.inputs[1], e.map("neg", [dy]))
        elif fn == "mul":
            y = op.inputs[1]
            self._accumulate(x, e.map("mul", [dy, e.f32(P[y])], order))
            self._accumulate(y, e.map("mul", [dy, e.f32(P[x])], order))
        elif fn == "div":  # d(x / y) = dz / y, -dz x / y^2 = -(dz / y) (x / y)
            dx = e.map("div", [dy, e.f32(P[op.inputs[1]])], order)
            self._accumulate(x, dx)
            self._accumulate(op.inputs[1], e.map("neg", [e.map("mul", [dx, e.f32(P[op.result])], order)]))
        else:
            raise _fail(self.f, f"{_where(op)} has no gradient rule")
