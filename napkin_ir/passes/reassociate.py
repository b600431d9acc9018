"""`ncd-reassociate`: attention whose scores are divided by their L2 norm, with no mask,
reassociated into products of the head dim alone.

Spherical attention is linear in its scores but for the row norm, and the norm itself is
a quadratic form of the query: with S = Q K^T (summed over the head dims `c`),

    |S_i|^2 = sum_j (q_i . k_j)^2 = q_i^T (K^T K) q_i,

so O = (S / |S|) V becomes

    A = K^T V,  G = K^T K          (summed over the keys: d x d a head)
    W = Q G,    n = sqrt(rowsum(W * Q))
    O = (Q / n) A

whose products are N x d x d where the diagram's are N x N x d: 2 N_k / d times fewer
multiply-adds at N_k keys a head (64x at 16k keys and d=128), and no N x N tensor at all.
A grouped diagram's key/value heads make A and G once for their group of query heads.

    %s  = ncd.contract %q, %k over [d]            %a  = ncd.contract %k, %v_ over [j]
    %p  = ncd.l2norm %s along j           ->      %g  = ncd.contract %k, %k_ over [j]
    %ph = ncd.map cast %p                         %w  = ncd.contract %q, %g over [d]
    %o  = ncd.contract %ph, %v over [j]           %n  = sqrt(rowsum(rename(%w) * %q) along d)
                                                  %qn = cast(%q / %n)
                                                  %o  = rename(ncd.contract %qn, %a over [d])

where `%v_` and `%k_` are V and K with their head dims renamed (`ncd.rename`, which moves
nothing) so that A and G keep both. A diagram that also computes the row norm of the
scores as sqrt(sum_j S * S), as `ncd-grad{residuals=true}` and `attention_diagram(...,
lse=True)` write spherical attention's statistic, gets it from the same quadratic form.

The reassociation is exact in real arithmetic; its roundings differ. The diagram rounds
P to 16 bits before P V; here A, G and W are rounded to the queries' element type (the
tensor cores' operands) after their f32 sums, and Q / n before its product with A: about
the same relative error (3e-3 in bf16 against a float64 reference, `research/
spherical_linear.py`). Not in f16: A and G are sums over the keys, which pass f16's
largest value (65504) where the keys are many or large (bf16 has f32's range). Matched
only where the scores feed nothing else; a mask between the product and the norm
(causal attention) leaves the diagram as it is, as does every other function. The
gradient of the reassociated diagram (`ncd-grad`) is products of the same sizes. The
planner reassociates where it cuts the multiply-adds (`napkin_ir.plan.program`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import f16
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from napkin_ir.dialects import ncd
from napkin_ir.passes.grad import Emitter


def _type(v: SSAValue) -> ncd.TensorType:
    t = v.type
    assert isinstance(t, ncd.TensorType)
    return t


def _uses(v: SSAValue) -> list[Operation]:
    return [u.operation for u in v.uses]


@dataclass
class _Match:
    scores: ncd.ContractOp  # S = Q K^T
    norm: ncd.L2NormOp  # along the keys
    product: ncd.ContractOp  # Y = P V
    q: SSAValue
    k: SSAValue
    v: SSAValue
    head: tuple[str, ...]  # the axes S sums over
    keys: str
    row_sums: list[ncd.ReduceOp]  # sum_j S * S, where the diagram computes the norm itself
    dead: list[Operation]


def _match(norm: ncd.L2NormOp) -> _Match | None:
    scores = norm.input.owner
    if not isinstance(scores, ncd.ContractOp):
        return None
    keys = norm.axis.data
    lhs, rhs = _type(scores.lhs), _type(scores.rhs)
    if (keys in lhs.shape) == (keys in rhs.shape):
        return None
    q, k = (scores.rhs, scores.lhs) if keys in lhs.shape else (scores.lhs, scores.rhs)
    head = scores.over_axes
    qt, kt = _type(q), _type(k)
    if qt.element_type == f16:
        return None  # K^T K and K^T V sum over the keys: past f16's 65504 where the keys are many or large
    if any(a not in qt.shape for a in kt.shape if a not in head and a != keys):
        return None  # K has an axis of its own besides the keys: not attention's shape
    dead: list[Operation] = [norm]
    p = norm.result
    uses = _uses(p)
    if len(uses) == 1 and isinstance(uses[0], ncd.MapOp) and uses[0].fn.data == "cast":
        dead.append(uses[0])
        p = uses[0].result
        uses = _uses(p)
    if len(uses) != 1 or not isinstance(uses[0], ncd.ContractOp) or uses[0].over_axes != (keys,):
        return None
    product = uses[0]
    v = product.rhs if product.lhs is p else product.lhs
    vt, st = _type(v), _type(scores.result)
    if any(a not in kt.shape for a in vt.shape if a in st.shape):
        return None  # V shares an axis with the queries that K lacks
    row_sums: list[ncd.ReduceOp] = []
    for use in _uses(scores.result):
        if use is norm or use in dead:
            continue
        if not (isinstance(use, ncd.MapOp) and use.fn.data == "mul" and list(use.inputs) == [scores.result] * 2):
            return None
        sums = _uses(use.result)
        if not all(isinstance(r, ncd.ReduceOp) and r.kind.data == "sum" and r.along_axes == (keys,) for r in sums):
            return None
        row_sums += sums  # type: ignore[arg-type]
        dead.append(use)
    return _Match(scores, norm, product, q, k, v, head, keys, row_sums, [product, *reversed(dead), scores])


def _fresh(name: str, taken: set[str]) -> str:
    n = 1
    while f"{name}{n}" in taken:
        n += 1
    taken.add(f"{name}{n}")
    return f"{name}{n}"


def _contract(e: Emitter, lhs: SSAValue, rhs: SSAValue, over: tuple[str, ...], order: list[str], et, hint: str) -> SSAValue:
    shape = _type(lhs).shape | _type(rhs).shape
    rt = ncd.TensorType({a: shape[a] for a in order}, et)
    return e.add(ncd.ContractOp(lhs, rhs, over, rt), hint)


def _rewrite(f: func.FuncOp, m: _Match) -> None:
    taken = {a for op in f.walk() for r in op.results if isinstance(r.type, ncd.TensorType) for a in r.type.shape}
    taken |= {a for arg in f.body.block.args if isinstance(arg.type, ncd.TensorType) for a in arg.type.shape}
    qt, kt, vt, yt = _type(m.q), _type(m.k), _type(m.v), _type(m.product.result)
    et = qt.element_type
    block = Block()
    e = Emitter(block)
    # V's own axes (its head dims) named apart from K's and Q's; K's head dims named apart for G
    values = [a for a in vt.axis_names if a != m.keys and a not in _type(m.scores.result).shape]
    v_names = {a: _fresh(a, taken) for a in values if a in kt.shape or a in qt.shape}
    k_names = {a: _fresh(a, taken) for a in m.head}
    v = e.add(ncd.RenameOp(m.v, v_names)) if v_names else m.v
    k2 = e.add(ncd.RenameOp(m.k, k_names))
    k_lead = [a for a in kt.axis_names if a not in m.head and a != m.keys]
    a_mat = _contract(e, m.k, v, (m.keys,), [*k_lead, *m.head, *(v_names.get(a, a) for a in values)], et, "a")
    g_mat = _contract(e, m.k, k2, (m.keys,), [*k_lead, *m.head, *k_names.values()], et, "g")
    w = _contract(e, m.q, g_mat, m.head, [k_names.get(a, a) for a in qt.axis_names], et, "w")
    w = e.add(ncd.RenameOp(w, {n: a for a, n in k_names.items()}))
    rows = [a for a in qt.axis_names if a not in m.head]
    squares = e.reduce("sum", e.map("mul", [e.f32(w), e.f32(m.q)], qt.axis_names), m.head, rows, hint="sq")
    n = e.map("sqrt", [squares], hint="n")
    qn = e.cast(e.map("div", [e.f32(m.q), n], qt.axis_names), et, hint="qn")
    y = _contract(e, qn, a_mat, m.head, [v_names.get(a, a) for a in yt.axis_names], yt.element_type, "u")
    y = e.add(ncd.RenameOp(y, {n: a for a, n in v_names.items()})) if v_names else y
    anchor: Operation = m.scores  # Q and K are made before it; V, if made by an op, before its product
    ops = list(f.body.block.ops)
    if isinstance(m.v.owner, Operation) and ops.index(m.v.owner) > ops.index(anchor):
        anchor = ops[ops.index(m.v.owner) + 1]
    for op in list(block.ops):
        op.detach()
        f.body.block.insert_op_before(op, anchor)
    m.product.result.replace_all_uses_with(y)
    for r in m.row_sums:  # sum_j S_ij^2 is q_i^T G q_i
        want = _type(r.result)
        same = squares if want == _type(squares) else _permuted(f, squares, want, r)
        r.result.replace_all_uses_with(same)
        f.body.block.erase_op(r)
    for op in m.dead:
        f.body.block.erase_op(op)


def _permuted(f: func.FuncOp, x: SSAValue, want: ncd.TensorType, before: Operation) -> SSAValue:
    op = ncd.MapOp("cast", [x], want)
    f.body.block.insert_op_before(op, before)
    return op.result


@dataclass(frozen=True)
class NcdReassociatePass(ModulePass):
    """Rewrites every L2-normalised attention without a mask (see the module's docstring)."""

    name = "ncd-reassociate"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for f in [f for f in op.body.block.ops if isinstance(f, func.FuncOp) and f.body.blocks]:
            for norm in [o for o in f.body.block.ops if isinstance(o, ncd.L2NormOp)]:
                m = _match(norm)
                if m is not None:
                    _rewrite(f, m)
            f.update_function_type()


def reassociates(module: builtin.ModuleOp) -> bool:
    """Whether `ncd-reassociate` finds something to rewrite in `module`."""
    return any(_match(o) is not None for o in module.walk() if isinstance(o, ncd.L2NormOp))


__all__ = ["NcdReassociatePass", "reassociates"]
