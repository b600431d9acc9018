"""Programs: a diagram that no one kernel computes, cut into kernels that run in order.

A diagram whose contractions feed one another (spherical attention reassociated by
`ncd-reassociate`, and its gradient) is no one family's kernel. `kernel_program` cuts it
where a value must lie in memory between kernels:

- an operand of a contraction that is not an argument (a product reads its operands from
  memory),
- the result of a contraction (each contraction is a kernel of the products family), past
  its epilogue: the elementwise maps of its f32 sums alone, each value read once, up to
  the first 16-bit one, which its kernel applies before it rounds and stores,
- a result of the function;

every such value is the output of a kernel of its own: the contraction that makes it, or
the maps, reductions and normalisations (the rows family) that make it from the arguments
and the values cut before it (recomputing, in each kernel, what they share below the
cuts: row statistics are cheap beside the memory a kernel reads). Nothing is cut for a
value that is another's memory under other axis names: `ncd.rename`, or a 16-bit value
cast up and back. A kernel reads a renamed value as an argument of the renamed type, so
no kernel holds an `ncd.rename`. Common subexpressions are merged first (`cse`), so a
value cut once is made once.

    program = kernel_program(module)          # the one function of `module`
    for part in program.parts:                # in order
        part.text                             # its diagram: one kernel's, for a named pipeline
        part.inputs                           # ((the kernel's argument, the program value it reads), ...)
        part.output                           # the program value its result `out` is

`reassociated_program` is the planner's question: is the program of the diagram
reassociated (`ncd-reassociate`) faster than the one kernel of the diagram as it is
(`program_pays`), and if so, what program computes it (or, with `gradient`, its gradient
by `ncd-grad`)?
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.transforms.common_subexpression_elimination import cse
from xdsl.utils.exceptions import PassFailedException

from napkin_ir.compiler import parse
from napkin_ir.dialects import ncd
from napkin_ir.passes.reassociate import reassociates
from napkin_ir.passmanager import run_pipeline
from napkin_ir.plan.diagram import the_function
from napkin_ir.reference_eval import evaluate, macs

# What `program_pays` weighs. Each kernel of a program reads and writes its tensors whole
# and is bound by memory; the one tiled kernel of the diagram as it is streams them once and
# is bound by its products. Spherical attention's programs over 16k tokens of 2048 moved
# 3.4-3.6 TB/s on an H200 (0.7 GB forward, 2.1 GB backward: 192-208 us and 576-603 us at
# 1k keys, d=64 and 128; the backward of 11 kernels, 1.9 GB, 505-542 us), and the tiled
# kernels did 330 and 230 T multiply-adds a second there (forward, backward; 208-211 us
# and 745 us at d=128); between kernels the stream
# idles a few microseconds. With these the programs at 512 keys (d=64, 128, 256) and the
# forward at 1k keys and d=256 are left to the tiled kernel, which measured 1.2-2.3x
# faster there; the gradient from 1k keys and the forward from 2k go to the program,
# 1.2-4.1x faster; the forward at 1k keys, where the two measured close (192 us against
# 211 at d=64, 208 against 208 at d=128), goes to the program at d=64 and to the tiled
# kernel at d=128 (H200, 2026-12-01, research/benchmarks.md session 73).
PROGRAM_BYTES_PER_S = 3.5e12
PROGRAM_KERNEL_S = 2e-6
TILED_MACS_PER_S = {False: 330e12, True: 230e12}  # by `gradient`


@dataclass(frozen=True)
class Value:
    """A tensor of the program: an argument, a result or one kernel's output."""

    name: str
    dims: tuple[int, ...]
    dtype: str  # bf16, f16 or f32


@dataclass(frozen=True)
class Part:
    """One kernel: its diagram (`text`, one function named `name`), the program value each
    of its arguments reads, and the value its one result (`out`) writes."""

    name: str
    text: str
    inputs: tuple[tuple[str, str], ...]
    output: str
    product: tuple[int, int, int, int] | None = None  # a contraction's (batch, M, N, K), as its lhs gives the rows
    products: int = 0  # the contractions it adds up (a sum of products is one kernel's)

    @property
    def contraction(self) -> bool:
        return self.product is not None


@dataclass(frozen=True)
class Program:
    """Kernels in order; `arguments` and `results` name the function's, `values` every
    tensor (intermediates included), `views` a value that is another's memory."""

    arguments: tuple[str, ...]
    results: tuple[str, ...]
    values: dict[str, Value]
    views: dict[str, str]
    parts: tuple[Part, ...]
    macs: int

    def memory(self, name: str) -> str:
        """The value whose memory `name` is."""
        return self.views.get(name, name)

    def evaluate(self, arrays: dict[str, Any]) -> list[Any]:
        """The results in float64 from numpy `arrays` (one per argument, by name), each part
        run by the float64 reference (`napkin_ir.reference_eval`) in turn: what the kernels
        compute, without their roundings."""
        memory = {n: arrays[n] for n in self.arguments}
        for part in self.parts:
            f = the_function(parse(part.text))
            assert f is not None
            (out,) = evaluate(f, [memory[m] for _, m in part.inputs])
            memory[part.output] = out
        return [memory[self.memory(r)].reshape(self.values[r].dims) for r in self.results]

    def bytes(self) -> int:
        """The bytes its kernels move: each kernel's inputs (a tensor it reads under two
        names, once) and its output."""
        sizes = {n: math.prod(v.dims) * ncd.ELEMENT_BYTES[v.dtype] for n, v in self.values.items()}
        return sum(sizes[p.output] + sum(sizes[m] for m in {m for _, m in p.inputs}) for p in self.parts)

    def intermediates(self) -> list[Value]:
        """The values a run allocates besides the arguments and results."""
        outer = set(self.arguments) | {self.memory(r) for r in self.results}
        return [self.values[p.output] for p in self.parts if p.output not in outer]


def _type(v: SSAValue) -> ncd.TensorType:
    t = v.type
    assert isinstance(t, ncd.TensorType)
    return t


def _fail(msg: str) -> PassFailedException:
    return PassFailedException(f"kernel program: {msg}")


def _names(f: func.FuncOp) -> dict[SSAValue, str]:
    """A unique name for every value: its own where it has one, else `t<n>`; never ending
    in `_<digits>`, which the parser takes for a printer's suffix and drops."""
    of: dict[SSAValue, str] = {}
    taken: set[str] = set()
    for v in [*f.body.block.args, *(r for op in f.body.block.ops for r in op.results)]:
        base = re.sub(r"_[0-9]+$", "", v.name_hint or "") or "t"
        name, n = base, 0
        while name in taken or name == "t":
            n += 1
            name = f"{base}{n}"
        taken.add(name)
        of[v] = name
    return of


def _epilogue_end(v: SSAValue) -> SSAValue:
    """The last value of the chain of elementwise maps of one tensor that reads `v` and
    nothing else does, each value read once, up to the first 16-bit one: a product's
    epilogue, which its kernel applies to the f32 sums before it rounds and stores them. A
    map is unary, or by a constant, or the `add` of other products over the same axis into
    the same tile (`_summed`): a sum of products is one kernel's, its products' sums added
    in one accumulator (the gradient's dK = K dG^T + K dG + V dA^T), where each would be a
    kernel and their sum another reading every one back."""
    start = v.owner
    while len(uses := list(v.uses)) == 1 and _type(v).element_type == builtin.f32:
        op = uses[0].operation
        if not isinstance(op, ncd.MapOp):
            break
        if len(op.inputs) == 2 and op.fn.data == "add" and isinstance(start, ncd.ContractOp):
            other = op.inputs[1] if op.inputs[0] is v else op.inputs[0]
            if not _summed(other, start):
                break
        elif len(op.inputs) != 1:
            break
        v = op.result
    return v


def _summed(x: SSAValue, like: ncd.ContractOp) -> bool:
    """Whether `x`, read once, is a product over `like`'s axis into a tile of its axes, or
    the sum of such products (`_leaf_products`)."""
    products = _leaf_products(x) if len(list(x.uses)) == 1 else None
    return products is not None and all(
        p.over_axes == like.over_axes and _type(p.result).shape == _type(like.result).shape for p in products)


def _renamed_products(f: func.FuncOp) -> None:
    """Each product whose sums are read only renamed (`ncd.rename`, as the gradient
    renames K dG's axis back to K's) computed with its operands renamed instead, so that
    no rename stands between a product and the sum it joins; and the products a sum adds
    (`_leaf_products`) contracting one axis name, the first's. A kernel reads a renamed
    argument as it is, so neither costs a copy."""
    block = f.body.block
    for op in list(block.ops):
        if isinstance(op, ncd.RenameOp) and isinstance(op.input.owner, ncd.ContractOp) and len(list(op.input.uses)) == 1:
            product = op.input.owner
            _rewrite_product(product, op.renames, product.over_axes[0] if len(product.over_axes) == 1 else None, op)
    for op in list(block.ops):
        if not (isinstance(op, ncd.MapOp) and op.fn.data == "add" and len(op.inputs) == 2):
            continue
        products = _leaf_products(op.result)
        if products is None or len(products) < 2 or any(len(p.over_axes) != 1 for p in products):
            continue
        products.sort(key=block.get_operation_index)
        over = products[0].over_axes[0]
        for p in products[1:]:
            if p.over_axes[0] != over:
                _rewrite_product(p, {}, over, p)


def _gram_axes(v: SSAValue) -> tuple[str, str] | None:
    """(a, b) where `v` is a Gram product, X contracted with X renamed a -> b over one
    axis (K^T K): symmetric in a and b. None where it is not."""
    op = v.owner
    if not isinstance(op, ncd.ContractOp) or len(op.over_axes) != 1:
        return None
    for x, r in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
        ren = r.owner
        if isinstance(ren, ncd.RenameOp) and ren.input is x and len(ren.renames) == 1:
            ((a, b),) = ren.renames.items()
            if op.over_axes[0] != a and set(_type(v).axis_names) == (set(_type(x).axis_names) - {op.over_axes[0]}) | {b}:
                return a, b
    return None


def _row_scaled(y: SSAValue, c: str, o: str) -> tuple[SSAValue, SSAValue] | None:
    """(S, X) where `y` is S * X, X a 16-bit tensor cast up, renamed o -> c and rounded
    back (the gradient's dW = Q scaled by each row's factor, read by a product as dW16);
    S a tensor broadcast without the axis o. None where it is not."""
    if not (isinstance(cast := y.owner, ncd.MapOp) and cast.fn.data == "cast"):
        return None
    ren = cast.inputs[0].owner
    if not (isinstance(ren, ncd.RenameOp) and ren.renames == {o: c}):
        return None
    mul = ren.input.owner
    if not (isinstance(mul, ncd.MapOp) and mul.fn.data == "mul" and len(mul.inputs) == 2):
        return None
    for scale, up in (mul.inputs, mul.inputs[::-1]):
        if isinstance(u := up.owner, ncd.MapOp) and u.fn.data == "cast" and _type(u.inputs[0]).element_type == _type(y).element_type \
                and _uniform_along(scale, o):
            return scale, u.inputs[0]
    return None


def _uniform_along(v: SSAValue, axis: str) -> bool:
    """Whether `v` is the same along `axis`: it lacks it, or is a constant, or is the sum of
    such values (a row's factor broadcast by adding a constant of zeros, as `ncd-grad`
    writes it)."""
    if axis not in _type(v).axis_names or isinstance(v.owner, ncd.ConstantOp):
        return True
    op = v.owner
    return isinstance(op, ncd.MapOp) and op.fn.data == "add" and all(_uniform_along(i, axis) for i in op.inputs)


def _quadratic_forms(f: func.FuncOp) -> None:
    """A product (S * X) G, G a Gram product symmetric in (o, c) contracted over c, where
    X G over o is made already (W = Q G, the forward's): S * W renamed, read where W is,
    and the product dropped. The gradient of q^T G q through W = Q G gives dQ's term dW G^T
    with dW = Q scaled by rows; G^T = G, so that is the scale times W (spherical
    attention's norm: a kernel and an N x d tensor fewer)."""
    block = f.body.block
    for p in [op for op in block.ops if isinstance(op, ncd.ContractOp) and len(op.over_axes) == 1]:
        (c,) = p.over_axes
        for y, g in ((p.lhs, p.rhs), (p.rhs, p.lhs)):
            pair = _gram_axes(g)
            if pair is None or c not in pair:
                continue
            o = pair[0] if c == pair[1] else pair[1]
            found = _row_scaled(y, c, o)
            if found is None:
                continue
            scale, x = found
            w = next((op.result for op in block.ops if isinstance(op, ncd.ContractOp) and op.over_axes == (o,)
                      and {op.lhs, op.rhs} == {x, g} and block.get_operation_index(op) < block.get_operation_index(p)), None)
            if w is None or _type(scale).shape != _type(p.result).shape or _type(p.result).element_type != builtin.f32:
                continue
            ren = ncd.RenameOp(w, {c: o})
            ops: list[Operation] = [ren]
            if _type(w).element_type != builtin.f32:
                ops.append(ncd.MapOp("cast", [ren.result], ncd.TensorType(_type(ren.result).shape, builtin.f32)))
            ops.append(ncd.MapOp("mul", [scale, ops[-1].results[0]], p.result.type))
            block.insert_ops_before(ops, p)
            p.result.replace_all_uses_with(ops[-1].results[0])
            block.erase_op(p)
            break


def _leaf_products(x: SSAValue) -> list[ncd.ContractOp] | None:
    """The products a sum `x` adds (f32, each read once, through adds read once), or None
    where a term is something else."""
    op = x.owner
    if _type(x).element_type != builtin.f32:
        return None
    if isinstance(op, ncd.ContractOp):
        return [op]
    if isinstance(op, ncd.MapOp) and op.fn.data == "add" and len(op.inputs) == 2:
        terms = [t for i in op.inputs if len(list(i.uses)) == 1 and (t := _leaf_products(i)) is not None]
        return [p for t in terms for p in t] if len(terms) == 2 else None
    return None


def _rewrite_product(product: ncd.ContractOp, renames: dict[str, str], over: str | None, replaced: Operation) -> None:
    """`product` made again in place of `replaced` (the product, or the rename that alone
    reads it): its free axes renamed as `renames` says, its one contracted axis named
    `over` (or a name of its own where that would meet a free one), its operands renamed
    to match (a rename that only the product read folded into the new one). `replaced`,
    the product and such renames are erased."""
    (old_over,) = product.over_axes
    free = {a: renames.get(a, a) for a in _type(product.result).axis_names}
    taken = set(free.values())
    new_over = over if over is not None and over not in taken else old_over
    while new_over in taken:
        new_over += "_c"
    block = product.parent
    assert block is not None
    operands, dead = [], []
    for x in (product.lhs, product.rhs):
        ren = {a: (new_over if a == old_over else free.get(a, a)) for a in _type(x).axis_names}
        inner = x.owner
        if isinstance(inner, ncd.RenameOp) and len(list(x.uses)) == 1:
            dead.append(inner)
            first = inner.renames
            x = inner.input
            ren = {a: ren[first.get(a, a)] for a in _type(x).axis_names}
        ren = {a: n for a, n in ren.items() if a != n}
        if ren:
            r = ncd.RenameOp(x, ren)
            block.insert_op_before(r, replaced)
            x = r.result
        operands.append(x)
    new = ncd.ContractOp(operands[0], operands[1], [new_over], replaced.results[0].type)
    new.result.name_hint = replaced.results[0].name_hint or product.result.name_hint
    block.insert_op_before(new, replaced)
    replaced.results[0].replace_all_uses_with(new.result)
    for op in dict.fromkeys([replaced, product, *dead]):
        block.erase_op(op)


def _narrow_products(f: func.FuncOp) -> None:
    """Each product of 16-bit operands whose value (past its epilogue) stays f32 and is not
    a result of `f` is rounded to its operands' element type where it is made, and cast
    up where it is read: every kernel of a program is bound by memory, and the value in 16
    bits is half the bytes its readers move (the spherical gradient's N x d products, read
    by its rows kernels), and a product rounded in its epilogue then read by another
    product is one kernel where the f32 sums would be two. Nothing is rounded before an
    epilogue's maps (exp(x) of x rounded would not be exp(x))."""
    ret = f.body.block.last_op
    for op in list(f.body.block.ops):
        if not isinstance(op, ncd.ContractOp):
            continue
        end, et = _epilogue_end(op.result), _type(op.lhs).element_type
        t = _type(end)
        if t.element_type != builtin.f32 or et == builtin.f32 or any(u.operation is ret for u in end.uses):
            continue
        down = ncd.MapOp("cast", [end], ncd.TensorType(t.shape, et))
        up = ncd.MapOp("cast", [down.result], t)
        down.result.name_hint, end.name_hint = end.name_hint, None
        f.body.block.insert_ops_after([down, up], end.owner)  # type: ignore[arg-type]
        for use in [u for u in end.uses if u.operation is not down]:
            use.operation.operands[use.index] = up.result
    for op in list(f.body.block.ops):  # a product rounded at once: its result in the 16-bit type (the same sums, rounded)
        if isinstance(op, ncd.ContractOp) and len(uses := list(op.result.uses)) == 1:
            cast = uses[0].operation
            et = _type(op.lhs).element_type
            if isinstance(cast, ncd.MapOp) and cast.fn.data == "cast" and _type(cast.result).element_type == et != builtin.f32 \
                    and _type(cast.result).axis_names == _type(op.result).axis_names:
                rounded = ncd.ContractOp(op.lhs, op.rhs, op.over_axes, cast.result.type)
                rounded.result.name_hint = cast.result.name_hint or op.result.name_hint
                f.body.block.insert_op_before(rounded, op)
                cast.result.replace_all_uses_with(rounded.result)
                f.body.block.erase_op(cast)
                f.body.block.erase_op(op)


def _viewed(v: SSAValue) -> SSAValue | None:
    """What `v` is a view of: the input of an `ncd.rename`, or x where `v` is x cast up to
    f32 and back to x's own element type (renamed between, or not), its axes in x's order;
    None where `v` is a tensor of its own."""
    op = v.owner
    if isinstance(op, ncd.RenameOp):
        return op.input
    if not (isinstance(op, ncd.MapOp) and op.fn.data == "cast") or _type(op.inputs[0]).element_type != builtin.f32:
        return None
    inner = op.inputs[0]
    while isinstance(inner.owner, ncd.RenameOp):
        inner = inner.owner.input
    up = inner.owner
    if not (isinstance(up, ncd.MapOp) and up.fn.data == "cast"):
        return None
    x = up.inputs[0]
    if _type(x).element_type != _type(v).element_type or _type(x).dims != _type(v).dims:
        return None
    if _type(op.inputs[0]).axis_names != _type(v).axis_names or _type(x).axis_names != _type(inner).axis_names:
        return None  # a cast that also transposes
    return x


def _root(v: SSAValue) -> SSAValue:
    while (u := _viewed(v)) is not None:
        v = u
    return v


def _swapped(op: ncd.ContractOp) -> bool:
    """Whether the products family wants the operands the other way round: the lhs gives
    the rows of the output (its first axis that only one operand has)."""
    lt, rt = _type(op.lhs), _type(op.rhs)
    for a in _type(op.result).axis_names:
        if (a in lt.shape) != (a in rt.shape):
            return a in rt.shape
    return False


def kernel_program(module: ModuleOp) -> Program:
    """The program of `module`'s one function (see the module's docstring). `module` is
    changed (common subexpressions merged); pass a copy to keep it."""
    f = the_function(module)
    if f is None:
        raise _fail("give a module of one function")
    _quadratic_forms(f)
    _renamed_products(f)
    _narrow_products(f)
    cse(f)
    block = f.body.block
    ret = block.last_op
    if not isinstance(ret, func.ReturnOp):
        raise _fail(f"@{f.sym_name.data} has no func.return")
    for op in block.ops:
        if op is not ret and not isinstance(op, ncd.NcdOp):
            raise _fail(f"{op.name} is not an ncd op; a program cuts diagrams")
    names = _names(f)
    args = set(block.args)
    cut: set[SSAValue] = set(ret.arguments)
    for op in block.ops:
        if isinstance(op, ncd.ContractOp):
            cut |= {_epilogue_end(op.result), *(u for v in op.operands if (u := _unrenamed(v)) not in args)}
    values = {names[v]: Value(names[v], tuple(_type(v).dims), ncd.element_type_name(_type(v).element_type))
              for v in [*block.args, *(r for op in block.ops for r in op.results)]}
    views: dict[str, str] = {}
    parts: list[Part] = []
    made = set(args)
    for op in block.ops:
        if op is ret or op.results[0] not in cut:
            continue
        v = op.results[0]
        root = _root(v)
        if root is not v and (root in made or root in cut):
            views[names[v]] = views.get(names[root], names[root])
            made.add(v)
            continue
        parts.append(_part(f, v, cut | args, names, views, len(parts)))
        made.add(v)
    kept = {names[v] for v in block.args} | {n for p in parts for n in (p.output, *(m for _, m in p.inputs))} \
        | {names[v] for v in ret.arguments}
    return Program(tuple(names[a] for a in block.args), tuple(names[v] for v in ret.arguments),
                   {n: x for n, x in values.items() if n in kept}, views, tuple(parts), macs(f))


def _unrenamed(v: SSAValue) -> SSAValue:
    """`v` past the renames it is made by: a product's operand renamed at its edge (to
    match the sum it joins) is cut where it is made, under its own name."""
    while isinstance(v.owner, ncd.RenameOp):
        v = v.owner.input
    return v


def _relabels(op: Operation) -> bool:
    """An `ncd.rename`, or a cast that keeps its input's axis order: what a kernel's edge
    takes for free (the axes renamed in an argument's or the output's type)."""
    if isinstance(op, ncd.RenameOp):
        return True
    return isinstance(op, ncd.MapOp) and op.fn.data == "cast" and _type(op.inputs[0]).axis_names == _type(op.result).axis_names


def _chain_to(x: SSAValue, stops: set[SSAValue]) -> tuple[SSAValue, list[Operation]] | None:
    """(s, ops) where `x` is s in `stops` through renames and casts (`ops`, from s on);
    None where it is not."""
    ops: list[Operation] = []
    while x not in stops:
        op = x.owner
        if not isinstance(op, Operation) or not _relabels(op):
            return None
        ops.insert(0, op)
        x = op.operands[0]
    return x, ops


def _part(f: func.FuncOp, v: SSAValue, stops: set[SSAValue], names: dict[SSAValue, str], views: dict[str, str],
          index: int) -> Part:
    """The kernel that makes `v` from the values in `stops`. A value made from one of
    them by renames and casts alone is read as an argument of its renamed type, then cast;
    the renames `v` ends with are left out (its memory is the same)."""
    stops = stops - {v}
    tail: list[Operation] = []  # the casts `v` ends with, past its last op that is not a rename or a cast
    made = v
    while isinstance(made.owner, Operation) and _relabels(made.owner) and _chain_to(made, stops) is None:
        op = made.owner
        if not isinstance(op, ncd.RenameOp):
            tail.insert(0, op)
        made = op.operands[0]
    needed: set[Operation] = set()
    work = [made.owner]
    while work:
        op = work.pop()
        assert isinstance(op, Operation)
        if op in needed:
            continue
        needed.add(op)
        work += [x.owner for x in op.operands if _chain_to(x, stops) is None]
    body = Block()
    mapping: dict[SSAValue, SSAValue] = {}
    inputs: list[tuple[str, str]] = []

    def operand(x: SSAValue) -> SSAValue:
        if x in mapping:
            return mapping[x]
        found = _chain_to(x, stops)
        assert found is not None, "an operand is an input or made before"
        src, ops = found
        st = _type(src)
        axis = {a: a for a in st.axis_names}
        for op in ops:
            if isinstance(op, ncd.RenameOp):
                axis = {a: op.renames.get(n, n) for a, n in axis.items()}
        memory = views.get(names[src], names[src])
        name, n = memory, 0
        while any(name == a for a, _ in inputs):  # read twice, under two names: k and k_b
            n += 1
            name = f"{memory}_{chr(ord('a') + n)}"
        value: SSAValue = body.insert_arg(ncd.TensorType({axis[a]: s for a, s in st.shape.items()}, st.element_type), len(body.args))
        value.name_hint = name
        inputs.append((name, memory))
        for op in ops:
            if not isinstance(op, ncd.RenameOp):
                value = _cast(body, value, _type(op.results[0]).element_type)
        mapping[x] = value
        return value

    for op in [op for op in f.body.block.ops if op in needed]:
        if isinstance(op, ncd.ContractOp) and _swapped(op):
            new: Operation = ncd.ContractOp(operand(op.rhs), operand(op.lhs), op.over_axes, op.result.type)
        else:
            new = op.clone()
            for i, x in enumerate(op.operands):
                new.operands[i] = mapping[x] if x in mapping else operand(x)
        body.add_op(new)
        mapping[op.results[0]] = new.results[0]
    product, products = None, 0
    for op in body.ops:
        if isinstance(op, ncd.ContractOp):
            products += 1
            lt, rt = _type(op.lhs), _type(op.rhs)
            size = lambda axes: math.prod(lt.shape.get(a) or rt.shape[a] for a in axes)  # noqa: E731
            over = set(op.over_axes)
            product = (size([a for a in lt.shape if a in rt.shape and a not in over]), size([a for a in lt.shape if a not in rt.shape]),
                       size([a for a in rt.shape if a not in lt.shape]), size(op.over_axes))
    out = mapping[made]
    for op in tail:
        out = _cast(body, out, _type(op.results[0]).element_type)
    body.add_op(func.ReturnOp(out))
    name = f"k{index}_{names[v]}"
    fn = func.FuncOp(name, builtin.FunctionType.from_lists([a.type for a in body.args], [out.type]), Region(body))
    return Part(name, str(ModuleOp([fn])), tuple(inputs), names[v], product, products)


def _cast(body: Block, x: SSAValue, element_type) -> SSAValue:
    if _type(x).element_type == element_type:
        return x
    op = ncd.MapOp("cast", [x], ncd.TensorType(_type(x).shape, element_type))
    body.add_op(op)
    return op.result


def program_pays(program: Program, tiled_macs: int, gradient: bool = False) -> bool:
    """Whether `program` runs faster than the one tiled kernel of `tiled_macs` multiply-adds
    that computes the same (with `gradient`, a gradient's): the program's bytes at
    PROGRAM_BYTES_PER_S and PROGRAM_KERNEL_S a kernel, against the tiled kernel's
    multiply-adds at TILED_MACS_PER_S and one PROGRAM_KERNEL_S."""
    program_s = program.bytes() / PROGRAM_BYTES_PER_S + len(program.parts) * PROGRAM_KERNEL_S
    return program_s < tiled_macs / TILED_MACS_PER_S[gradient] + PROGRAM_KERNEL_S


def reassociated_program(text: str, gradient: bool = False, always: bool = False) -> Program | None:
    """The program of the diagram `text` reassociated (`ncd-reassociate`; with `gradient`,
    its gradient by `ncd-grad`), where it runs faster than the one tiled kernel of the
    diagram as it is (`program_pays`; with `always`, whether or not it does: a test's
    small shape); None where it does not (or where nothing reassociates)."""
    module = parse(text)
    if not reassociates(module):
        return None
    before = module
    passes = "ncd-reassociate"
    if gradient:
        before = run_pipeline(text, "ncd-grad,ncd-fold-casts")
        passes += ",ncd-grad,ncd-fold-casts"
    after = run_pipeline(text, passes)
    if gradient:
        for m in (before, after):
            for g in [g for g in m.body.block.ops if isinstance(g, func.FuncOp) and not g.sym_name.data.endswith("_grad")]:
                m.body.block.erase_op(g)
    f0, f1 = the_function(before), the_function(after)
    assert f0 is not None and f1 is not None
    program = kernel_program(after)
    return program if always or program_pays(program, macs(f0), gradient) else None
