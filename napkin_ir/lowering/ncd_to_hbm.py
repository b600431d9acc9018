"""`ncd-to-hbm`: a labelled diagram becomes a grid of blocks over tiles of global tensors.

Reads the labels `ncd-relabel` wrote. Each function becomes an `hbm.kernel` whose body
computes one output tile: every tensor is replaced by its tile (grid axes cut to their
tile size, a streamed axis to its stream tile, other axes whole), function arguments
are loaded as tiles, results stored.

A streamed axis `s` becomes an `scf.for` over tile origins (marked `hbm.stream`). What
does not involve `s` is computed once before it (the Q tile of attention is loaded
once); what has `s` runs per tile; every op that reduces or normalises along `s` carries
a state through the loop, as its description in `streamed_reductions` says, and what
uses a reduction's result runs after the loop. A log-sum-exp beside a softmax of the
same input and scale (attention saving its row statistic) is finished from the softmax's
running max and sum, with no state of its own. Values that a normalisation (softmax,
L2 norm) produces are known only up to a factor until the stream ends: they may flow,
through ops linear in them, into sums along `s`, whose accumulators the normalisation
rescales each tile and finishes after the loop. That is the online softmax, derived
for whatever diagram comes.

Positions past the end of `s` (a ragged last tile: loads read zeros there) are filled
with what each reduction ignores where the zeros would not already be ignored. A causal
mask between `s` and a grid axis fills whole tiles above the diagonal; when every
reduction ignores its fill, those tiles are skipped (the loop ends where the block's
rows end). The loop is split in two: tiles that no mask touches, run without masks,
then the diagonal and ragged tiles, masked.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, builtin, func, scf
from xdsl.dialects.builtin import IndexType, StringAttr, f32
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from napkin_ir.dialects import hbm, loop_facts, ncd
from napkin_ir.lowering.streamed_reductions import (
    Accumulation,
    Known,
    LogSumExp,
    Normalisation,
    StreamedReduction,
    StreamingError,
    TileMath,
    describe,
)
from napkin_ir.passes.relabel import function_axes
from napkin_ir.passes.widen_results import rounding, with_f32_result


def _fail(f: func.FuncOp, msg: str) -> PassFailedException:
    return PassFailedException(f"ncd-to-hbm: @{f.sym_name.data}: {msg}")


def _where(op: Operation) -> str:
    """`ncd.map exp (%e)`: how a diagnostic names an op of the diagram."""
    kind = op.properties.get("fn") or op.properties.get("kind")
    name = f"{op.name} {kind.data}" if isinstance(kind, StringAttr) else op.name
    hint = op.results[0].name_hint if op.results else None
    return f"{name} (%{hint})" if hint else name


def _reduced_axes(op: Operation) -> tuple[str, ...]:
    if isinstance(op, ncd.ContractOp):
        return op.over_axes
    if isinstance(op, ncd.ReduceOp):
        return op.along_axes
    if isinstance(op, ncd.SoftmaxOp | ncd.L2NormOp | ncd.LogSumExpOp):
        return (op.axis.data,)
    return ()


def _widen_split_sums(body_ops: list[Operation], grid: dict[str, int]) -> list[Operation]:
    """`body_ops` with each sum along a grid axis that has a 16-bit result made an f32 sum and
    its rounding (a contraction accumulates in f32 and rounds at the end either way): the
    blocks' parts are summed in f32, and only the whole sum is rounded."""
    out: list[Operation] = []
    for op in body_ops:
        v = op.results[0] if len(op.results) == 1 else None
        summed = isinstance(op, ncd.ContractOp) or (isinstance(op, ncd.ReduceOp) and op.kind.data == "sum")
        if not (summed and v is not None and any(a in grid for a in _reduced_axes(op)) and v.type.dtype in ("bf16", "f16")):  # type: ignore[attr-defined]
            out.append(op)
            continue
        wide = with_f32_result(op)
        cast = ncd.MapOp("cast", [wide.results[0]], v.type)
        Rewriter.insert_op(wide, InsertPoint.before(op))
        Rewriter.insert_op(cast, InsertPoint.before(op))
        v.replace_all_uses_with(cast.results[0])
        Rewriter.erase_op(op)
        out += [wide, cast]
    return out


def _rounding_returned(v: SSAValue, ret: func.ReturnOp) -> SSAValue | None:
    """The result `ret` returns that is only the rounding of the f32 sum `v` (`rounding`),
    where that rounding is `v`'s only use."""
    for r in ret.arguments:
        cast = rounding(r)
        if cast is not None and cast.inputs[0] is v and len(list(v.uses)) == 1 and {u.operation for u in r.uses} == {ret}:
            return r
    return None


class _KernelBuilder:
    def __init__(self, f: func.FuncOp):
        self.f = f
        if "ncd.grid" not in f.attributes:
            raise _fail(f, "the function has no labels; run ncd-relabel first")
        for key in ("ncd.grid", "ncd.stream"):
            if not isinstance(f.attributes.get(key, hbm.LabelsAttr({})), hbm.LabelsAttr):
                raise _fail(f, f"{key} must be labels like #hbm.labels<m=128, n=128>, got {f.attributes[key]}")
        self.grid = hbm.parse_labels(f.attributes["ncd.grid"])
        self.stream = hbm.parse_labels(f.attributes.get("ncd.stream"))
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

    def tile_type(self, t: ncd.TensorType, element_type=None, computed: bool = False) -> ncd.TensorType:
        """`t` cut to this block's tile. A tile the block computes (not one it loads) puts
        the streamed axis last: its rows are the block's own, its columns the stream's
        (the attention gradient's dK and dV blocks hold keys and stream queries, so their
        scores are K Q^T whatever order the diagram wrote Q K^T in)."""
        shape = {a: self.stream.get(a, self.grid.get(a, s)) for a, s in t.shape.items()}  # a split axis's tiles are the stream's
        if computed:
            shape = {**{a: n for a, n in shape.items() if a not in self.stream},
                     **{a: n for a, n in shape.items() if a in self.stream}}
        return ncd.TensorType(shape, element_type or t.element_type)

    def offsets(self, g: hbm.GlobalType, stream_origin: SSAValue | None) -> list[SSAValue]:
        out = []
        for a in g.axis_names:
            if a in self.stream and stream_origin is None:
                raise _fail(self.f, f"axis '{a}' is streamed, but a value with it is used outside the stream")
            out.append(self.position(a, stream_origin))
        return out

    def get(self, v: SSAValue, into: Block, stream_origin: SSAValue | None) -> SSAValue:
        if v in self.values:
            return self.values[v]
        if v in self.in_globals:  # an argument: load its tile where it is first used
            g = self.in_globals[v]
            load = hbm.LoadOp(g, self.offsets(g.type, stream_origin), self.tile_type(v.type))  # type: ignore[arg-type]
            into.add_op(load)
            load.result.name_hint = f"{v.name_hint}_tile" if v.name_hint else None
            self.values[v] = load.result
            return load.result
        raise _fail(self.f, f"value {v} is used before it is defined")

    def position(self, axis: str, stream_origin: SSAValue | None) -> SSAValue:
        """Where this block's tile starts along `axis` (0 for an axis kept whole)."""
        if axis in self.stream and stream_origin is not None:
            return stream_origin
        if axis in self.origins:
            return self.origins[axis]
        return self.zero.result

    def clone(self, op: Operation, into: Block, stream_origin: SSAValue | None, result_type=None) -> SSAValue:
        operands = [self.get(o, into, stream_origin) for o in op.operands]
        if isinstance(op, ncd.FillOutsideOp) and not op.offsets:  # a mask on a tile needs the tile's position
            operands += [self.position(a, stream_origin) for a in op.compared_axes]
        new = type(op).create(
            operands=operands,
            result_types=[result_type or self.tile_type(r.type, computed=True) for r in op.results],  # type: ignore[arg-type]
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        into.add_op(new)
        new.results[0].name_hint = op.results[0].name_hint
        self.values[op.results[0]] = new.results[0]
        return new.results[0]

    def _partial_sums(self, body_ops: list[Operation], ret: func.ReturnOp) -> dict[SSAValue, SSAValue]:
        """The results that sum along a split axis (a reduced axis spread over the grid, and
        maybe streamed too), each with the f32 sum whose part a block adds into the output.
        Only a sum adds up so, and only one returned as it is in f32, or rounded to 16 bits
        and returned (its parts are then summed in f32 and the whole sum rounded:
        `hbm.store {accumulate}` into a 16-bit global); anything else is refused."""
        partial: dict[SSAValue, SSAValue] = {}
        for op in body_ops:
            if not isinstance(op, ncd.NcdOp):
                raise _fail(self.f, f"{op.name} is not an ncd op")
            for a in _reduced_axes(op):
                if a not in self.grid:
                    continue
                summed = isinstance(op, ncd.ContractOp) or (isinstance(op, ncd.ReduceOp) and op.kind.data == "sum")
                result = op.results[0]
                users = {u.operation for u in result.uses}
                if not summed:
                    raise _fail(self.f, f"{_where(op)} reduces along '{a}', which is spread over the grid: each block sees "
                                        f"only its tile of '{a}', and only a sum (a contraction or a reduce sum) adds up "
                                        f"from the blocks' parts; stream '{a}' or keep it whole")
                rounded = _rounding_returned(result, ret)
                if rounded is not None:
                    partial[rounded] = result
                    continue
                if users != {ret} or result.type.dtype != "f32":  # type: ignore[attr-defined]
                    raise _fail(self.f, f"{_where(op)} sums along '{a}', which is split over the grid: each block adds its part "
                                        "into the output, so the sum must be a result of the function, in f32 as it is or "
                                        "rounded to 16 bits once "
                                        f"(here {result.type}{', used by ' + _where(next(iter(users - {ret}))) if users - {ret} else ''})")  # type: ignore[attr-defined]
                partial[result] = result
        return partial

    def build(self) -> hbm.KernelOp:
        f = self.f
        ret = f.body.block.last_op
        assert isinstance(ret, func.ReturnOp)
        body_ops = _widen_split_sums([op for op in f.body.block.ops if op is not ret], self.grid)
        partial = self._partial_sums(body_ops, ret)
        rounded = {v.owner for v, summed in partial.items() if v is not summed}  # rounded once the parts are summed, as stored
        body_ops = [op for op in body_ops if op not in rounded]
        along: dict[SSAValue, SSAValue] = {}  # results along the streamed axis: stored tile by tile, in the stream
        if self.stream:
            (s,) = self.stream
            for v, g in zip(ret.arguments, self.out_globals):
                if s in v.type.axis_names:  # type: ignore[attr-defined]
                    if partial.get(v) is not v:
                        raise _fail(f, f"result %{v.name_hint or '?'} has the streamed axis '{s}': it is stored tile by tile as "
                                       "the stream goes, which adds up only for an f32 sum over an axis spread over the grid")
                    along[v] = g
            _Stream(self, s, body_ops, along).build()
        else:
            for op in body_ops:
                self.clone(op, self.block, None)
        for v, g in zip(ret.arguments, self.out_globals):
            if v in along:
                continue
            tile = self.get(partial.get(v, v), self.block, None)
            self.block.add_op(hbm.StoreOp(tile, g, self.offsets(g.type, None), accumulate=v in partial))  # type: ignore[arg-type]
        self.block.add_op(hbm.ReturnOp())
        return hbm.KernelOp(f.sym_name.data, self.grid, len(self.out_globals), Region([self.block]))


Index = int | SSAValue  # an index known now, or computed in the kernel
Carriers = list[tuple[Operation, StreamedReduction]]  # the ops that carry a state through the stream, in order


@dataclass(frozen=True)
class _Region:
    """Positions that a mask fills (`mask`), or those past the end of the streamed axis
    (`mask` None); `axes` are the axes whose positions say whether an element is in it."""

    mask: ncd.MaskOp | None
    axes: frozenset[str]


class _Stream:
    """The loops over tiles of the streamed axis `s`, and what comes before and after."""

    def __init__(self, kb: _KernelBuilder, s: str, body_ops: list[Operation], along: dict[SSAValue, SSAValue] | None = None):
        self.kb, self.f, self.s = kb, kb.f, s
        self.along = along or {}  # results along s, each with its global: added tile by tile
        self.size, self.tile = kb.sizes[s], kb.stream[s]
        self.pre: list[Operation] = []
        self.ops: list[Operation] = []  # per tile, in order
        self.post: list[Operation] = []
        self.reductions: dict[Operation, StreamedReduction] = {}
        self._classify(body_ops)
        self.shared = self._share()
        self.linear = self._linearity()
        self.diagonal = [op for op in self.ops if isinstance(op, ncd.MaskOp) and s in (op.row.data, op.col.data)]
        # the streamed axis as the mask's row (the gradient's dK and dV blocks hold keys and
        # stream queries): the tiles below the block's first key are the wholly filled ones
        self.rising = bool(self.diagonal) and self.diagonal[0].row.data == s
        if any((m.row.data == s) != self.rising for m in self.diagonal):
            raise _fail(self.f, f"masks along the streamed axis '{s}' keep it both as rows and as columns; one direction a "
                                "kernel is streamed")
        self.fill_operand: dict[Operation, int] = {}  # which operand of a clipped reduction is filled
        self.clipped = self._clips() if self.size % self.tile else set()
        self.skipped = [m for m in self.diagonal if self._ignored(_Region(m, frozenset((self._other(m), s))))]
        self.constants: dict[int, SSAValue] = {0: kb.zero.result}
        self.spans: dict[str, tuple[Index, Index]] = {}

    # -- what runs where -----------------------------------------------------------------
    def _classify(self, body_ops: list[Operation]) -> None:
        s = self.s
        after: dict[SSAValue, Operation] = {}  # values that need this reduction along s finished
        for op in body_ops:
            try:
                d = describe(op, s)
            except StreamingError as e:
                raise _fail(self.f, f"{_where(op)} along '{s}' {e}") from None
            late = [v for v in op.operands if v in after]
            result = op.results[0]
            if d is not None or s in result.type.axis_names:  # type: ignore[attr-defined]
                if late:
                    raise _fail(self.f, f"{_where(op)} uses %{late[0].name_hint or '?'}, which depends on {_where(after[late[0]])} "
                                        f"along the streamed axis '{s}' and so is known only when the stream over '{s}' ends: "
                                        f"that would take a second pass over '{s}'; write the normalisation as ncd.softmax "
                                        f"or ncd.l2norm along '{s}' for its online form")
                self.ops.append(op)
                if d is not None:
                    self.reductions[op] = d
                    if not d.keeps_axis:
                        after[result] = op
            elif late:
                self.post.append(op)
                after[result] = after[late[0]]
            else:
                self.pre.append(op)
        if all(d.keeps_axis for d in self.reductions.values()):
            raise _fail(self.f, f"nothing reduces along the streamed axis '{s}' (a contraction over it, or a reduction along it)")

    def _share(self) -> dict[Operation, tuple[LogSumExp, Operation]]:
        """The log-sum-exps that a softmax's state finishes (`LogSumExp.shares`), each with
        that softmax: they leave the per-tile ops and carry no state."""
        shared = {}
        for op, d in list(self.reductions.items()):
            if isinstance(d, LogSumExp):
                owner = next((o for o, e in self.reductions.items() if d.shares(e)), None)
                if owner is not None:
                    shared[op] = (d, owner)
                    del self.reductions[op]
                    self.ops.remove(op)
        return shared

    def _linearity(self) -> dict[SSAValue, Normalisation]:
        """Which normalisation each per-tile value (and each reduction's input) is linear in."""
        lin: dict[SSAValue, Normalisation] = {}
        for op in self.ops:
            ins = [lin.get(v) for v in op.operands]
            found = [n for n in ins if n is not None]
            d = self.reductions.get(op)
            if isinstance(d, Normalisation):
                if found:
                    raise _fail(self.f, f"{_where(op)} normalises the values of {_where(found[0].op)}, which are known "
                                        f"only up to a factor until the stream over '{self.s}' ends; a chain of "
                                        f"normalisations along the streamed axis is not streamed")
                lin[op.results[0]] = d
                continue
            try:
                n = _linear_through(op, ins)
            except StreamingError as e:
                raise _fail(self.f, f"{_where(op)} {e} the values of {_where(found[0].op)} along '{self.s}', which are known "
                                    f"only up to a factor until the stream over '{self.s}' ends; between a normalisation "
                                    f"and a sum along the streamed axis only ops linear in its values can be streamed "
                                    "(casts, scalings, products with other values, masks that fill 0)") from None
            if isinstance(d, Accumulation) and n is not None and not d.linear_ok:
                raise _fail(self.f, f"{_where(op)} along '{self.s}' takes the values of {_where(n.op)}, which are known only "
                                    f"up to a factor until the stream over '{self.s}' ends; only sums of them can be rescaled "
                                    "as that factor changes")
            if n is not None:
                lin[op.results[0]] = n
        return lin

    # -- which positions contribute nothing ------------------------------------------------
    def _known(self, region: _Region, clip: set[Operation] | None = None) -> dict[SSAValue, Known]:
        """What each per-tile value holds in `region`. With `clip`, the reductions whose input
        does not hold what they ignore there are added to it (their input will be filled)."""
        known: dict[SSAValue, Known] = {}
        for v in self.kb.in_globals:
            if region.mask is None and self.s in v.type.axis_names:  # type: ignore[attr-defined]
                known[v] = 0.0  # hbm.load reads zeros past the edge
        for op in self.ops:
            d = self.reductions.get(op)
            if d is not None:
                k = self._input_known(op, known)
                if clip is not None and not d.ignores(k):
                    clip.add(op)
                    self.fill_operand[op] = _clipped_operand(op, [known.get(v) for v in op.operands])
                    k = d.neutral
                if isinstance(d, Normalisation):
                    known[op.results[0]] = d.values_known(k)
            elif op is region.mask:
                known[op.results[0]] = op.fill.value.data
            else:
                known[op.results[0]] = _known_through(op, [known.get(v) for v in op.operands], region.axes - {self.s})
        return known

    @staticmethod
    def _input_known(op: Operation, known: dict[SSAValue, Known]) -> Known:
        """What a reduction takes in from a position: the product's, for a contraction."""
        ks = [known.get(v) for v in op.operands]
        return _product_known(ks) if isinstance(op, ncd.ContractOp) else ks[0]

    def _ignored(self, region: _Region) -> bool:
        """Whether no reduction along s takes anything from the positions in `region`, and
        no result added tile by tile gets anything from them: a skipped tile must add 0."""
        known = self._known(region)
        added = [v.owner for v in self.along]
        return all(d.ignores(self._input_known(op, known)) for op, d in self.reductions.items()) and all(
            isinstance(op, ncd.ContractOp | ncd.ReduceOp) and self._input_known(op, known) == 0.0 for op in added)

    def _clips(self) -> set[Operation]:
        """The reductions whose input must be filled past the end of s."""
        clip: set[Operation] = set()
        self._known(_Region(None, frozenset((self.s,))), clip)
        return clip

    # -- index arithmetic, folded where it is known ----------------------------------------
    def _value(self, x: Index) -> SSAValue:
        if isinstance(x, SSAValue):
            return x
        if x not in self.constants:
            c = arith.ConstantOp.from_int_and_width(x, IndexType())
            self.kb.block.add_op(c)
            self.constants[x] = c.result
        return self.constants[x]

    def _arith(self, op_type, fold, a: Index, b: Index, name: str | None = None) -> Index:
        if isinstance(a, int) and isinstance(b, int):
            return fold(a, b)
        new = op_type(self._value(a), self._value(b))
        self.kb.block.add_op(new)
        new.result.name_hint = name
        return new.result

    def _min(self, a: Index, b: Index, name: str | None = None) -> Index:
        return self._arith(arith.MinUIOp, min, a, b, name)

    def _tile_start(self, x: Index, name: str | None = None) -> Index:
        """Where the stream tile holding position `x` starts: floor(x / tile) * tile."""
        t = self.tile
        return self._arith(arith.MuliOp, int.__mul__, self._arith(arith.DivUIOp, int.__floordiv__, x, t), t, name)

    def _row_span(self, axis: str) -> tuple[Index, Index]:
        """Where this block's rows along `axis` start, and where they end (inside the axis)."""
        if axis not in self.spans:
            size = self.kb.sizes[axis]
            if axis not in self.kb.grid:
                self.spans[axis] = (0, size)
            else:
                start, tile = self.kb.origins[axis], self.kb.grid[axis]
                end = self._arith(arith.AddiOp, int.__add__, start, tile, f"{axis}_end")
                self.spans[axis] = (start, end if size % tile == 0 else self._min(end, size, f"{axis}_end"))
        return self.spans[axis]

    def _other(self, m: ncd.MaskOp) -> str:
        """The axis a mask along the streamed axis compares it with."""
        return m.col.data if m.row.data == self.s else m.row.data

    def _bounds(self) -> tuple[Index, Index]:
        """(where the masked tiles start, where the stream ends)."""
        s, t = self.s, self.tile
        end: Index = self.size
        for m in self.skipped:  # no key past the block's last row is seen
            end = self._min(end, self._row_span(m.row.data)[1], f"{s}_end")
        split = end
        if self.clipped:
            split = self._min(split, self.size // t * t)
        for m in self.diagonal:  # a tile is untouched when its last key is at most the block's first row
            start = self._row_span(m.row.data)[0]
            first = self._arith(arith.AddiOp, int.__add__, start, 1)
            whole = self._tile_start(first)
            split = self._min(split, whole, f"{s}_masked")
        return split, end

    def _rising_loops(self) -> list[tuple[Index, Index, bool]]:
        """The loops of a stream that a mask keeps where it is at least the block's columns
        (s >= g): the tiles wholly below the block's first column are skipped where every
        reduction ignores the fill, the tiles that cross the diagonal run masked, the rest
        unmasked, and a ragged last tile masked again."""
        s, t = self.s, self.tile
        begin: Index = 0
        masked_end: Index = 0
        columns: dict[str, bool] = {}  # the axes the masks compare s with, and whether their tiles below are skipped
        for m in self.diagonal:
            columns[m.col.data] = columns.get(m.col.data, False) or m in self.skipped
        for n, (axis, skipped) in enumerate(columns.items()):  # (the mask and its gradient's compare the same axes)
            first, last_end = self._row_span(axis)
            if skipped:  # the first tile holding a kept position: floor(g0 / t) * t
                begin = self._tile_start(first, f"{s}_begin")
            # the first tile wholly kept starts at or after the block's last column: ceil((g_end - 1) / t) * t
            top = self._arith(arith.AddiOp, int.__add__, last_end, t - 2)
            whole = self._tile_start(top)
            masked_end = whole if n == 0 else self._arith(arith.MaxUIOp, max, masked_end, whole)
        split: Index = self.size // t * t if self.clipped else self.size
        masked_end = self._min(masked_end, split, f"{s}_masked")
        loops = [(begin, masked_end, True), (masked_end, split, False)]
        if self.clipped:
            loops.append((split, self.size, True))
        return loops

    def _split_loops(self) -> list[tuple[Index, Index, bool]]:
        """The loops of a split stream: this block's part of the axis, from its origin to
        the part's end (the axis's, for the last part), a ragged last tile masked."""
        s = self.s
        if self.diagonal:
            raise _fail(self.f, f"a mask along '{s}', which is split over the grid, is not supported: stream '{s}' whole")
        begin, end = self._row_span(s)
        if not self.clipped:
            return [(begin, end, False)]
        whole = self._min(end, self.size // self.tile * self.tile, f"{s}_whole")
        return [(begin, whole, False), (whole, end, True)]

    # -- emission --------------------------------------------------------------------------
    def build(self) -> None:
        kb = self.kb
        for op in self.pre:
            kb.clone(op, kb.block, None)
        for op in self.ops:  # what the tiles use that does not move with s is loaded once, here
            for v in op.operands:
                if v in kb.in_globals and self.s not in v.type.axis_names:  # type: ignore[attr-defined]
                    kb.get(v, kb.block, None)
        carriers = list(self.reductions.items())
        inits: list[SSAValue] = []
        for op, d in carriers:
            for value, t in zip(d.init(), self._state_types(op, d)):
                fill = hbm.FillOp(value, t)
                kb.block.add_op(fill)
                inits.append(fill.result)
        step = self._value(self.tile)
        if self.s in kb.grid:
            loops = self._split_loops()
        elif self.rising:
            loops = self._rising_loops()
        elif self.diagonal or self.clipped:
            split, end = self._bounds()
            loops = [(0, split, False), (split, end, True)]
            loops = [(lb, ub, masked) for lb, ub, masked in loops if not (isinstance(lb, int) and lb == ub)]
        else:
            loops = [(0, self.size, False)]
        state = inits
        for lb, ub, masked in loops:
            lb_v, ub_v = self._value(lb), self._value(ub)
            body = Block(arg_types=[IndexType()] + [v.type for v in state])
            body.args[0].name_hint = f"{self.s}0"
            for arg, name in zip(body.args[1:], [n for _, d in carriers for n in d.state_names]):
                arg.name_hint = name
            self._tile(body, carriers, masked)
            loop = scf.ForOp(lb_v, ub_v, step, state, body)
            loop_facts.set_stream_axis(loop, self.s)
            if self.s in kb.grid and not masked:  # a split's part: from its origin, inside the axis, never empty
                loop_facts.set_nonempty(loop)
            kb.block.add_op(loop)
            state = list(loop.results)
        self._finish(carriers, state)
        for op in self.post:
            kb.clone(op, kb.block, None)

    def _state_types(self, op: Operation, d: StreamedReduction) -> list[ncd.TensorType]:
        """f32 tiles: of the result of a reduction, of the input without s for a normalisation."""
        t = op.results[0].type
        if d.keeps_axis:
            t = ncd.TensorType({a: n for a, n in t.shape.items() if a != self.s}, f32)  # type: ignore[attr-defined]
        return [self.kb.tile_type(t, f32)] * len(d.init())  # type: ignore[arg-type]

    def _split_state(self, carriers: Carriers, flat: Sequence[SSAValue]) -> dict[Operation, Sequence[SSAValue]]:
        out, k = {}, 0
        for op, d in carriers:
            n = len(d.init())
            out[op], k = flat[k : k + n], k + n
        return out

    def _tile(self, body: Block, carriers: Carriers, masked: bool) -> None:
        """One iteration: the tile at body.args[0]; masks and fills only when `masked`."""
        kb, m, j0 = self.kb, TileMath(body), body.args[0]
        state = self._split_state(carriers, body.args[1:])
        saved = dict(kb.values)
        rescale: dict[Normalisation, SSAValue | None] = {}
        new_state: list[SSAValue] = []
        for op in self.ops:
            d = self.reductions.get(op)
            if d is None:
                if op in self.diagonal and not masked:  # this tile lies wholly on the kept side
                    kb.values[op.results[0]] = kb.get(op.operands[0], body, j0)
                else:
                    kb.clone(op, body, j0)
                continue
            operands = [kb.get(v, body, j0) for v in op.operands]
            if masked and op in self.clipped:
                n = self.fill_operand[op]
                operands[n] = self._fill_past_end(m, operands[n], d.neutral, j0)
            if isinstance(d, Normalisation):
                step = d.step(m, state[op], m.cast(operands[0], f32))
                rescale[d] = step.rescale
                kb.values[op.results[0]] = m.cast(step.values, op.results[0].type.element_type)  # type: ignore[arg-type, attr-defined]
            elif isinstance(d, LogSumExp):
                step = d.step(m, state[op], m.cast(operands[0], f32))
            else:
                n = self.linear.get(op.results[0])
                step = d.step(m, state[op], self._partial(m, op, operands), rescale[n] if n else None)
            new_state += step.state
        for v, g in self.along.items():  # this tile's part of a sum over the grid, added where it lies along s
            body.add_op(hbm.StoreOp(kb.get(v, body, j0), g, kb.offsets(g.type, j0), accumulate=True))  # type: ignore[arg-type]
        body.add_op(scf.YieldOp(*new_state))
        kb.values = saved  # values computed per tile do not outlive the loop

    def _fill_past_end(self, m: TileMath, x: SSAValue, fill: float, j0: SSAValue) -> SSAValue:
        """`x` filled with `fill` past the end of the stream; a 16-bit rounding of an f32
        tile (a product's operand) is filled before it rounds, where the tile is computed."""
        cast = x.owner
        if isinstance(cast, ncd.MapOp) and cast.fn.data == "cast" and not cast.result.uses and cast.parent is m.block:
            wide = cast.inputs[0]
            Rewriter.erase_op(cast)
            filled = m.cast(m.mask_bound(wide, self.s, self.size, fill, j0), x.type.element_type)  # type: ignore[attr-defined]
            for v, tile in list(self.kb.values.items()):  # later uses of the rounding read the filled one
                if tile is x:
                    self.kb.values[v] = filled
            return filled
        return m.mask_bound(x, self.s, self.size, fill, j0)

    def _partial(self, m: TileMath, op: Operation, operands: list[SSAValue]) -> SSAValue:
        """The reduction applied to this tile alone, in f32."""
        if isinstance(op, ncd.ContractOp):
            return m.add(ncd.ContractOp(operands[0], operands[1], op.over_axes, self.kb.tile_type(op.result.type, f32, computed=True)))  # type: ignore[arg-type]
        assert isinstance(op, ncd.ReduceOp)
        return m.reduce(op.kind.data, m.cast(operands[0], f32), op.along_axes)

    def _finish(self, carriers: Carriers, flat: Sequence[SSAValue]) -> None:
        """After the stream: each reduction's result, normalised where it is linear in a normalisation."""
        m = TileMath(self.kb.block)
        state = self._split_state(carriers, flat)
        for op, d in carriers:
            if isinstance(d, Accumulation):
                result = d.finalise(m, state[op])
                n = self.linear.get(op.results[0])
                if n is not None:
                    result = n.normalise(m, result, state[n.op])
                self.kb.values[op.results[0]] = m.cast(result, op.results[0].type.element_type)  # type: ignore[attr-defined]
            elif isinstance(d, LogSumExp):
                self.kb.values[op.results[0]] = d.finalise(m, state[op])
        for op, (d, softmax) in self.shared.items():
            self.kb.values[op.results[0]] = d.finalise(m, state[softmax])


def _linear_through(op: Operation, ins: list[Normalisation | None]) -> Normalisation | None:
    """The normalisation the result of a per-tile op (or a reduction's input) is linear in,
    given its operands'; raises StreamingError, saying how, where it is not linear."""
    found = [n for n in ins if n is not None]
    if not found:
        return None
    fn = op.fn.data if isinstance(op, ncd.MapOp) else None
    if fn in ("cast", "scale", "neg") or isinstance(op, ncd.ReduceOp):
        return found[0]
    if fn == "mul" or isinstance(op, ncd.ContractOp):
        if len(found) > 1:
            raise StreamingError("multiplies together two tiles of")
        return found[0]
    if fn == "div":
        if ins[1] is not None:
            raise StreamingError("divides by")
        return found[0]
    if fn in ("add", "sub", "max"):
        if len(found) != len(ins) or found[0] is not found[1]:
            raise StreamingError("mixes other values with")
        return found[0]
    if isinstance(op, ncd.FillOutsideOp):
        if op.fill.value.data != 0:
            raise StreamingError(f"fills {ncd.format_float(op.fill.value.data)} among")
        return found[0]
    raise StreamingError("is not linear in")


def _product_known(ks: list[Known]) -> Known:
    if any(_maybe_infinite(k) for k in ks):
        return math.nan  # 0 times inf or nan is nan
    return 0.0 if 0.0 in ks else None


def _maybe_infinite(k: Known) -> bool:
    """Whether positions holding `k` may hold inf or nan: a division by the zeros loaded
    past the end (spherical attention's gradient divides by the saved norm)."""
    return k is not None and math.isnan(k)


def _clipped_operand(op: Operation, ks: list[Known]) -> int:
    """Which operand of a reduction to fill past the end of the stream: a product's operand
    that may not be finite there (the other's zeros cannot cancel it), else the first."""
    return next((n for n, k in enumerate(ks) if _maybe_infinite(k)), 0) if isinstance(op, ncd.ContractOp) else 0


def _known_through(op: Operation, ks: list[Known], region_axes: frozenset[str]) -> Known:
    """What a per-tile op's result holds in a region where its operands hold `ks`;
    `region_axes` are the region's axes other than the streamed one."""
    if isinstance(op, ncd.MapOp):
        fn, a = op.fn.data, ks[0]
        if fn == "cast":
            return a
        if any(_maybe_infinite(k) for k in ks) or fn == "div" and len(ks) == 2 and ks[1] == 0.0:
            return math.nan
        if fn == "scale":
            return a if a == 0 or (a == -math.inf and op.by is not None and op.by.value.data > 0) else None
        if fn in ("neg", "sqrt"):
            return a if a == 0 else None
        if fn in ("exp", "exp2"):
            return 0.0 if a == -math.inf else None
        if op.by is not None:  # a binary function of one tensor and the constant `by`
            if a is None:
                return None
            b = op.by.value.data
            with contextlib.suppress(ArithmeticError):
                v = {"add": a + b, "sub": a - b, "mul": a * b if a != 0 or math.isfinite(b) else math.nan, "div": a / b,
                     "max": max(a, b)}[fn]
                return v if v in (0.0, -math.inf) else None
            return None
        if fn == "mul":
            return _product_known(ks)
        # an unknown value is finite, as the products take it (0 times it is 0): -inf
        # less or plus it stays -inf (the gradient's scores less the log-sum-exp)
        if fn == "add" and -math.inf in ks and math.inf not in ks:
            return -math.inf
        if fn in ("add", "max"):
            return a if a == ks[1] and a in (0.0, -math.inf) else None
        if fn == "sub":
            return 0.0 if a == ks[1] == 0 else -math.inf if a == -math.inf and ks[1] is None else None
        return None
    if isinstance(op, ncd.FillOutsideOp):  # another mask: its fill or its input, alike or unknown
        return ks[0] if ks[0] == op.fill.value.data else None
    if set(_reduced_axes(op)) & region_axes:  # reduced across the region's edge
        return None
    if isinstance(op, ncd.ContractOp):
        return _product_known(ks)
    if isinstance(op, ncd.ReduceOp):
        return ks[0] if ks[0] in (0.0, -math.inf) else None
    return None


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
