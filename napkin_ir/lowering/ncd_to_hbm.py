"""`ncd-to-hbm`: a labelled diagram becomes a grid of blocks over tiles of global tensors.

Reads the labels `ncd-relabel` wrote. Each function becomes an `hbm.kernel` whose body
computes one output tile: every tensor is replaced by its tile (grid axes cut to their
tile size, a streamed axis to its stream tile, other axes whole), function arguments
are loaded as tiles, results stored. A streamed axis `s` becomes an `scf.for` over tile
origins that carries an f32 accumulator: the contraction over `s` is computed per
stream tile and added in, and what uses its result runs after the loop. This is the
summation case of the general rule (a reduction along a streamed axis becomes its
running form); the online softmax and L2 norm join it with the attention lowering.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, builtin, func, scf
from xdsl.dialects.builtin import IndexType, StringAttr, f32
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from napkin_ir.dialects import hbm, ncd
from napkin_ir.passes.relabel import function_axes


def _fail(f: func.FuncOp, msg: str) -> PassFailedException:
    return PassFailedException(f"ncd-to-hbm: @{f.sym_name.data}: {msg}")


class _KernelBuilder:
    def __init__(self, f: func.FuncOp):
        self.f = f
        if "ncd.grid" not in f.attributes:
            raise _fail(f, "the function has no labels; run ncd-relabel first")
        self.grid = hbm.parse_labels(f.attributes["ncd.grid"])  # type: ignore[arg-type]
        self.stream = hbm.parse_labels(f.attributes.get("ncd.stream"))  # type: ignore[arg-type]
        if len(self.stream) > 1:
            raise _fail(f, f"one streamed axis is supported, got {', '.join(self.stream)}")
        self.sizes = function_axes(f)
        ins = [a.type for a in f.body.block.args]
        outs = list(f.function_type.outputs.data)
        for t in ins + outs:
            if not isinstance(t, ncd.TensorType):
                raise _fail(f, f"arguments and results must be !ncd.tensor, got {t}")
        self.block = Block(arg_types=[hbm.GlobalType(t.shape, t.element_type) for t in ins + outs] + [IndexType()] * len(self.grid))
        n_glob = len(ins) + len(outs)
        names = [a.name_hint for a in f.body.block.args] + ["out" if len(outs) == 1 else f"out{k}" for k in range(len(outs))]
        names += [f"{a}0" for a in self.grid]  # the origin of this block's tile along each grid axis
        for arg, name in zip(self.block.args, names):
            if name:
                arg.name_hint = name
        self.in_globals = dict(zip(f.body.block.args, self.block.args[: len(ins)]))
        self.out_globals = list(self.block.args[len(ins) : n_glob])
        self.origins = dict(zip(self.grid, self.block.args[n_glob:]))
        self.zero = arith.ConstantOp.from_int_and_width(0, IndexType())
        self.zero.result.name_hint = "c0"
        self.block.add_op(self.zero)
        self.values: dict[SSAValue, SSAValue] = {}

    def tile_type(self, t: ncd.TensorType, element_type=None) -> ncd.TensorType:
        shape = {a: self.grid.get(a, self.stream.get(a, s)) for a, s in t.shape.items()}
        return ncd.TensorType(shape, element_type or t.element_type)

    def offsets(self, g: hbm.GlobalType, stream_origin: SSAValue | None) -> list[SSAValue]:
        out = []
        for a in g.axis_names:
            if a in self.origins:
                out.append(self.origins[a])
            elif a in self.stream:
                if stream_origin is None:
                    raise _fail(self.f, f"axis '{a}' is streamed, but a value with it is used outside the stream")
                out.append(stream_origin)
            else:
                out.append(self.zero.result)
        return out

    def get(self, v: SSAValue, into: Block, stream_origin: SSAValue | None) -> SSAValue:
        if v in self.values:
            return self.values[v]
        if v in self.in_globals:  # an argument: load its tile where it is used
            g = self.in_globals[v]
            load = hbm.LoadOp(g, self.offsets(g.type, stream_origin), self.tile_type(v.type))  # type: ignore[arg-type]
            into.add_op(load)
            if stream_origin is None:
                self.values[v] = load.result  # outside the stream a tile is loaded once
            return load.result
        raise _fail(self.f, f"value {v} is used before it is defined")

    def position(self, axis: str, stream_origin: SSAValue | None) -> SSAValue:
        """Where this block's tile starts along `axis` (0 for an axis kept whole)."""
        if axis in self.origins:
            return self.origins[axis]
        if axis in self.stream and stream_origin is not None:
            return stream_origin
        return self.zero.result

    def clone(self, op: Operation, into: Block, stream_origin: SSAValue | None, result_type=None) -> Operation:
        operands = [self.get(o, into, stream_origin) for o in op.operands]
        if isinstance(op, ncd.MaskOp) and not op.offsets:  # a mask on a tile needs the tile's position
            operands += [self.position(op.row.data, stream_origin), self.position(op.col.data, stream_origin)]
        new = type(op).create(
            operands=operands,
            result_types=[result_type or self.tile_type(r.type) for r in op.results],  # type: ignore[arg-type]
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        into.add_op(new)
        return new

    def build(self) -> hbm.KernelOp:
        f = self.f
        body_ops = [op for op in f.body.block.ops if not isinstance(op, func.ReturnOp)]
        for op in body_ops:
            if not isinstance(op, ncd.NcdOp):
                raise _fail(f, f"{op.name} is not an ncd op")
        streamed = set()
        if self.stream:
            (s,) = self.stream
            reducers = [op for op in body_ops if isinstance(op, ncd.ContractOp) and s in op.over_axes]
            others = [op for op in body_ops if not isinstance(op, ncd.ContractOp | ncd.MapOp | ncd.MaskOp) and s in op.results[0].type.axis_names]  # type: ignore[attr-defined]
            if others:
                raise _fail(f, f"{others[0].name} along the streamed axis '{s}' needs its online form (running "
                               "statistics and a rescaled accumulator), which this lowering does not build yet")
            if len(reducers) != 1:
                raise _fail(f, f"streaming '{s}' is supported through one contraction over it, found {len(reducers)}")
            contraction = reducers[0]
            streamed = self._ancestry(contraction, body_ops)
            self._emit_stream(s, contraction, [op for op in body_ops if op in streamed])
        for op in body_ops:
            if op not in streamed:
                self.values[op.results[0]] = self.clone(op, self.block, None).results[0]
        ret = f.body.block.last_op
        assert isinstance(ret, func.ReturnOp)
        for v, g in zip(ret.arguments, self.out_globals):
            tile = self.get(v, self.block, None)
            self.block.add_op(hbm.StoreOp(tile, g, self.offsets(g.type, None)))  # type: ignore[arg-type]
        self.block.add_op(hbm.ReturnOp())
        return hbm.KernelOp(f.sym_name.data, self.grid, len(self.out_globals), Region([self.block]))

    @staticmethod
    def _ancestry(op: Operation, body_ops: list[Operation]) -> set[Operation]:
        """`op` and the ops its operands come from, within the function."""
        seen: set[Operation] = set()
        todo = [op]
        while todo:
            o = todo.pop()
            if o in seen or o not in body_ops:
                continue
            seen.add(o)
            todo.extend(v.owner for v in o.operands if isinstance(v.owner, Operation))
        return seen

    def _emit_stream(self, s: str, contraction: ncd.ContractOp, ops: list[Operation]) -> None:
        acc_type = self.tile_type(contraction.result.type, f32)  # type: ignore[arg-type]
        init = hbm.FillOp(0.0, acc_type)
        lb, step = self.zero, arith.ConstantOp.from_int_and_width(self.stream[s], IndexType())
        ub = arith.ConstantOp.from_int_and_width(self.sizes[s], IndexType())
        self.block.add_ops([init, step, ub])
        body = Block(arg_types=[IndexType(), acc_type])
        origin, acc = body.args
        origin.name_hint, acc.name_hint = f"{s}0", "acc"
        saved = dict(self.values)
        for op in ops:
            if op is contraction:
                part = self.clone(op, body, origin, result_type=acc_type)
                add = ncd.MapOp("add", [acc, part.results[0]], acc_type)
                body.add_op(add)
                body.add_op(scf.YieldOp(add.result))
            else:
                self.values[op.results[0]] = self.clone(op, body, origin).results[0]
        self.values = saved  # values computed per stream tile do not outlive the loop
        loop = scf.ForOp(lb.result, ub.result, step.result, [init.result], body)
        loop.attributes["hbm.stream"] = StringAttr(s)
        self.block.add_op(loop)
        result: SSAValue = loop.results[0]
        final_type = self.tile_type(contraction.result.type)  # type: ignore[arg-type]
        if final_type.element_type != f32:
            cast = ncd.MapOp("cast", [result], final_type)
            self.block.add_op(cast)
            result = cast.result
        self.values[contraction.result] = result


@dataclass(frozen=True)
class NcdToHbmPass(ModulePass):
    name = "ncd-to-hbm"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        funcs = [f for f in op.walk() if isinstance(f, func.FuncOp) and f.body.blocks]
        if not funcs:
            raise PassFailedException("ncd-to-hbm: the module has no function to lower")
        for f in funcs:
            kernel = _KernelBuilder(f).build()
            Rewriter.replace_op(f, kernel)
