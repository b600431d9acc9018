"""Reductions along a streamed axis, one tile at a time: what `ncd-to-hbm` streams with.

When `ncd-relabel` streams an axis `s`, every op that reduces along `s` sees one tile of
it per iteration of the stream loop and must carry what it has seen so far. This module
describes each such reduction once, independently of the diagram it sits in:

- its carried state and the state's start (a sum starts at 0, a max at -inf, a softmax
  carries its running max and its running sum);
- `step`: how the state absorbs a new tile, and, for a normalisation (softmax, L2 norm:
  the result keeps `s`), the tile's values before the final normalisation and the factor
  by which partial sums of earlier tiles that are *linear* in those values must be
  rescaled (the softmax's values are relative to the running max: when it grows, what
  was accumulated shrinks by exp(old max - new max));
- the finalisation: a reduction's result is its state; a normalisation finishes each
  linear result by dividing it by its normaliser (the sum, the L2 norm); a log-sum-exp
  carries the softmax's state and takes the log of its sum;
- `ignores`: which value a position must hold to contribute nothing (0 to a sum, -inf to
  a max or a softmax), so that positions past the end of `s` can be filled with it and
  tiles that a mask fills wholly with it can be skipped.

FlashAttention's algorithm is these pieces put together by `ncd-to-hbm`: the softmax's
step, and the sum (the contraction with V) whose input is linear in its values.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.ir import Attribute, Block, Operation, SSAValue

from napkin_ir.dialects import ncd

Known = float | None  # what every position of a region holds, when that is known (0.0 or -inf; nan: maybe not finite)


class TileMath:
    """Appends ncd ops on tiles to a block, working out each result's type: a map's result
    has the union of its operands' axes (first operand's order first), a reduction drops
    the axes it reduces; element types follow the first operand unless cast."""

    def __init__(self, block: Block):
        self.block = block

    def add(self, op: Operation, name: str | None = None) -> SSAValue:
        self.block.add_op(op)
        op.results[0].name_hint = name
        return op.results[0]

    def map(self, fn: str, *xs: SSAValue, by: float | None = None, to: Attribute | None = None, name: str | None = None) -> SSAValue:
        shape: dict[str, int] = {}
        for x in xs:
            shape.update({a: n for a, n in _type(x).shape.items() if a not in shape})
        return self.add(ncd.MapOp(fn, xs, ncd.TensorType(shape, to or _type(xs[0]).element_type), by), name)

    def cast(self, x: SSAValue, to: Attribute) -> SSAValue:
        return x if _type(x).element_type == to else self.map("cast", x, to=to)

    def reduce(self, kind: str, x: SSAValue, along: Sequence[str], name: str | None = None) -> SSAValue:
        t = _type(x)
        kept = {a: n for a, n in t.shape.items() if a not in along}
        return self.add(ncd.ReduceOp(kind, x, list(along), ncd.TensorType(kept, t.element_type)), name)

    def mask_bound(self, x: SSAValue, axis: str, bound: int, fill: float, start: SSAValue) -> SSAValue:
        return self.add(ncd.MaskBoundOp(x, axis, bound, fill, _type(x), [start]), "in_bounds")


def _type(v: SSAValue) -> ncd.TensorType:
    assert isinstance(v.type, ncd.TensorType)
    return v.type


@dataclass
class Step:
    """What one tile does to a streamed reduction."""

    state: tuple[SSAValue, ...]  # the new state, in the order of `StreamedReduction.init`
    values: SSAValue | None = None  # a normalisation's tile of values, before the final normalisation
    rescale: SSAValue | None = None  # the factor for partial sums linear in earlier tiles' values (None: 1)


class StreamedReduction(ABC):
    """A reduction along the streamed axis `axis`, run one tile at a time."""

    keeps_axis = False  # a normalisation's result keeps the axis; a reduction's drops it
    state_names: tuple[str, ...] = ()

    def __init__(self, op: Operation, axis: str):
        self.op = op
        self.axis = axis

    @abstractmethod
    def init(self) -> tuple[float, ...]:
        """The state before the first tile, one number per state value (tiles filled with it)."""

    @property
    @abstractmethod
    def neutral(self) -> float:
        """What a position filled in before `step` must hold to contribute nothing."""

    def ignores(self, known: Known) -> bool:
        """Whether positions that hold `known` contribute nothing."""
        return known is not None and known == self.neutral

    @abstractmethod
    def step(self, m: TileMath, state: Sequence[SSAValue], tile: SSAValue, rescale: SSAValue | None = None) -> Step:
        """Absorb `tile` (f32) into `state`; for a reduction, earlier partial results are
        first multiplied by `rescale` when its input is linear in a normalisation's values."""


class Accumulation(StreamedReduction):
    """A reduction whose result drops the streamed axis: the per-tile partial (the op
    itself, applied to the tiles) is combined into one accumulator."""

    state_names = ("acc",)
    combine: str  # the ncd.map function that merges partial results
    linear_ok: bool  # whether rescaling the accumulator is sound (see `step`)

    def step(self, m: TileMath, state: Sequence[SSAValue], tile: SSAValue, rescale: SSAValue | None = None) -> Step:
        (acc,) = state
        if rescale is not None:
            acc = m.map("mul", acc, rescale, name="acc_scaled")
        return Step((m.map(self.combine, acc, tile, name="acc_new"),))

    def finalise(self, m: TileMath, state: Sequence[SSAValue]) -> SSAValue:
        return state[0]


class Sum(Accumulation):
    """`ncd.reduce sum` along the axis, or `ncd.contract` over it: partial sums add up,
    and a sum of values scaled by a common factor is that factor times their sum."""

    combine = "add"
    linear_ok = True
    neutral = 0.0

    def init(self) -> tuple[float, ...]:
        return (0.0,)


class Max(Accumulation):
    """`ncd.reduce max` along the axis. Its accumulator starts at -inf, which no rescale
    factor can multiply (the softmax's first factor is 0), so its input may not be linear
    in a normalisation's values."""

    combine = "max"
    linear_ok = False
    neutral = -math.inf

    def init(self) -> tuple[float, ...]:
        return (-math.inf,)


class Normalisation(StreamedReduction):
    """A normalisation along the axis (the result keeps it): each tile's values are known
    only up to a factor that depends on every tile, so whatever consumes them must be
    linear in them until a sum along the axis, which `normalise` finishes after the
    stream. The factors are positive."""

    keeps_axis = True

    @abstractmethod
    def normalise(self, m: TileMath, partial: SSAValue, state: Sequence[SSAValue]) -> SSAValue:
        """Finish a sum that is linear in this normalisation's values, after the stream."""

    def values_known(self, known: Known) -> Known:
        """What this normalisation's values hold where its input holds `known`."""
        return 0.0 if self.ignores(known) else None


class Softmax(Normalisation):
    """The online softmax of `scale * x`, in base 2 as the GPU's ex2 wants it: with
    t = x * scale * log2(e), the state is the running max `m` of t and the running sum `l`
    of 2^(t - m); a tile's values are 2^(t - m_new), and every earlier partial sum, like
    `l` itself, shrinks by 2^(m - m_new). After the stream, a linear result is divided
    by `l`."""

    state_names = ("row_max", "row_sum")

    def __init__(self, op: ncd.SoftmaxOp, axis: str):
        super().__init__(op, axis)
        self.scale = op.scale_value * math.log2(math.e)

    def init(self) -> tuple[float, ...]:
        return (-math.inf, 0.0)

    @property
    def neutral(self) -> float:
        # -inf stays -inf once scaled; a negative scale turns +inf into it
        return -math.inf if self.scale > 0 else math.inf

    def step(self, m: TileMath, state: Sequence[SSAValue], tile: SSAValue, rescale: SSAValue | None = None) -> Step:
        run_max, run_sum = state
        t = m.map("scale", tile, by=self.scale, name="scaled")
        new_max = m.map("max", run_max, m.reduce("max", t, [self.axis], name="tile_max"), name="row_max_new")
        alpha = m.map("exp2", m.map("sub", run_max, new_max), name="rescale")
        values = m.map("exp2", m.map("sub", t, new_max), name="p_unnorm")
        sum_scaled = m.map("mul", run_sum, alpha, name="row_sum_scaled")
        new_sum = m.map("add", sum_scaled, m.reduce("sum", values, [self.axis], name="tile_sum"), name="row_sum_new")
        return Step((new_max, new_sum), values, alpha)

    def normalise(self, m: TileMath, partial: SSAValue, state: Sequence[SSAValue]) -> SSAValue:
        return m.map("div", partial, state[1], name="normalised")

    def log_sum_exp(self, m: TileMath, state: Sequence[SSAValue]) -> SSAValue:
        """After the stream, log(sum exp(scale * x)) from the state: the sum is l 2^m, so the
        natural log is (m + log2 l) ln 2."""
        row_max, row_sum = state
        return m.map("scale", m.map("add", row_max, m.map("log2", row_sum)), by=math.log(2.0), name="lse")


class LogSumExp(StreamedReduction):
    """`ncd.logsumexp` along the axis: the online softmax's state (its running max and sum,
    by its step without the values), finished after the stream as `Softmax.log_sum_exp`.
    Beside a softmax of the same input and scale (attention that saves its row statistic
    for the gradient) it carries nothing of its own: `ncd-to-hbm` finishes it from that
    softmax's state (`shares`)."""

    state_names = ("lse_max", "lse_sum")

    def __init__(self, op: ncd.LogSumExpOp, axis: str):
        super().__init__(op, axis)
        self.softmax = Softmax(op, axis)  # type: ignore[arg-type]

    def init(self) -> tuple[float, ...]:
        return self.softmax.init()

    @property
    def neutral(self) -> float:
        return self.softmax.neutral

    def step(self, m: TileMath, state: Sequence[SSAValue], tile: SSAValue, rescale: SSAValue | None = None) -> Step:
        return Step(self.softmax.step(m, state, tile).state)

    def finalise(self, m: TileMath, state: Sequence[SSAValue]) -> SSAValue:
        return self.softmax.log_sum_exp(m, state)

    def shares(self, other: StreamedReduction) -> bool:
        """Whether `other` is a softmax whose state is this log-sum-exp's: of the same input
        along the same axis, with the same scale."""
        return (isinstance(other, Softmax) and other.axis == self.axis and other.op.operands[0] is self.op.operands[0]
                and other.scale == self.softmax.scale)


class L2Norm(Normalisation):
    """x / ||x|| along the axis: the state is the running sum of squares; the values are
    x itself (no max, no exp, nothing to rescale). After the stream, a linear result is
    divided by the square root of the sum."""

    state_names = ("sum_sq",)
    neutral = 0.0

    def init(self) -> tuple[float, ...]:
        return (0.0,)

    def step(self, m: TileMath, state: Sequence[SSAValue], tile: SSAValue, rescale: SSAValue | None = None) -> Step:
        (sum_sq,) = state
        squares = m.reduce("sum", m.map("mul", tile, tile), [self.axis], name="tile_sum_sq")
        return Step((m.map("add", sum_sq, squares, name="sum_sq_new"),), tile)

    def normalise(self, m: TileMath, partial: SSAValue, state: Sequence[SSAValue]) -> SSAValue:
        return m.map("div", partial, m.map("sqrt", state[0], name="norm"), name="normalised")


class StreamingError(Exception):
    """A reduction along the streamed axis that has no streamed form here."""


def describe(op: Operation, axis: str) -> StreamedReduction | None:
    """The streamed form of `op` if it reduces or normalises along `axis`, else None."""
    if isinstance(op, ncd.ContractOp) and axis in op.over_axes:
        return Sum(op, axis)
    if isinstance(op, ncd.ReduceOp) and axis in op.along_axes:
        return Sum(op, axis) if op.kind.data == "sum" else Max(op, axis)
    if isinstance(op, ncd.SoftmaxOp) and op.axis.data == axis:
        if op.scale_value == 0:
            raise StreamingError("has scale 0: it weighs every position alike, so no value can keep the "
                                 "positions past the end out of it")
        return Softmax(op, axis)
    if isinstance(op, ncd.L2NormOp) and op.axis.data == axis:
        return L2Norm(op, axis)
    if isinstance(op, ncd.LogSumExpOp) and op.axis.data == axis:
        if op.scale_value == 0:
            raise StreamingError("has scale 0: it weighs every position alike, so no value can keep the "
                                 "positions past the end out of it")
        return LogSumExp(op, axis)
    return None

