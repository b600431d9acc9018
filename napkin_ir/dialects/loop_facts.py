"""The facts the lowering records on a stream loop, as typed attributes, and one reader each.

A stream loop (an `scf.for` over the tiles of a streamed axis) collects what the passes
decide about it as discardable attributes, each of its own type, named by the level that
decides it:

    scf.for ... {hbm.stream = #hbm.stream<k>,
                 smem.pipeline = #smem.pipeline<stages=3, copy=cp_async, unrolled=3>,
                 reg.overlapped}

- `hbm.stream` (`ncd-to-hbm`): the axis the loop streams, one of the kernel's.
- `hbm.nonempty` (`ncd-to-hbm`): the loop, whose bounds are computed, runs at least one
  trip (a split's part of the axis is never empty), so it may be tested at its bottom.
- `smem.pipeline` (`hbm-to-smem`, amended by `smem-unroll-stages`): the stages the loop's
  buffers cycle through, how its tiles arrive (`#smem<copy cp_async>` or `#smem<copy tma>`),
  and, once unrolled, the bodies a trip. One attribute, so a rewrite keeps or drops the
  three together, never the stage count without its engine.
- `reg.overlapped` (`reg-wgmma-overlap`): the loop's second product runs under the next
  trip's math.

Passes read and write them through the functions below, never through the attribute
dictionary, and `hbm.kernel`'s verifier calls `verify_loop_facts`: a fact of the wrong
type, or a stream loop that reads staged buffers without its pipeline (a rewrite that
rebuilt the loop and dropped it), is refused with the loop and the missing fact named.
The attribute classes live here, below both dialects, because the kernel (an `hbm` op)
verifies facts of the `smem` level; `hbm` and `smem` register them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence

from xdsl.dialects import scf
from xdsl.dialects.builtin import IntAttr, StringAttr, UnitAttr
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, Operation, ParametrizedAttribute, SpacedOpaqueSyntaxAttribute, SSAValue
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

STREAM = "hbm.stream"
PIPELINE = "smem.pipeline"
OVERLAPPED = "reg.overlapped"
NONEMPTY = "hbm.nonempty"
# the untyped facts smem.pipeline replaced; a loop that still carries one is refused
RETIRED = ("smem.stages", "smem.copy", "smem.unrolled")
MAX_STAGES = 16  # the most hbm-to-smem asks for (copy=tma; cp.async stops at 8)


@irdl_attr_definition
class StreamAttr(ParametrizedAttribute):
    """The axis a loop streams: `hbm.stream = #hbm.stream<k>`."""

    name = "hbm.stream"
    axis: StringAttr

    def __init__(self, axis: str):
        super().__init__(StringAttr(axis))

    def verify(self) -> None:
        if not self.axis.data:
            raise VerifyException("#hbm.stream: the streamed axis needs a name")

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.axis.data}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<", " to open #hbm.stream")
        axis = parser.parse_identifier(" (the streamed axis)")
        parser.parse_punctuation(">", " to close #hbm.stream")
        return (StringAttr(axis),)


class CopyEngine(StrEnum):
    """How a pipelined loop's tiles arrive in shared memory."""

    CP_ASYNC = "cp_async"  # each thread copies 16-byte chunks (sm_80 on)
    TMA = "tma"  # one thread starts a bulk tensor copy that an mbarrier counts (sm_90a)


@irdl_attr_definition
class CopyEngineAttr(EnumAttribute[CopyEngine], SpacedOpaqueSyntaxAttribute):
    """`#smem<copy tma>`; inside `#smem.pipeline<...>` it is written `copy=tma`."""

    name = "smem.copy"


@irdl_attr_definition
class PipelineAttr(ParametrizedAttribute):
    """How a stream loop's tiles are multi-buffered in shared memory:
    `#smem.pipeline<stages=3, copy=cp_async>`, and after `smem-unroll-stages`
    `#smem.pipeline<stages=3, copy=cp_async, unrolled=6>` (bodies a trip, a multiple of
    the stages; 0 and not printed: not unrolled)."""

    name = "smem.pipeline"
    stages: IntAttr
    engine: CopyEngineAttr
    unrolled: IntAttr

    def __init__(self, stages: int, engine: CopyEngine, unrolled: int = 0):
        super().__init__(IntAttr(stages), CopyEngineAttr(engine), IntAttr(unrolled))

    @property
    def stage_count(self) -> int:
        return self.stages.data

    @property
    def copy_engine(self) -> CopyEngine:
        return self.engine.data

    @property
    def bodies(self) -> int:
        """Bodies a trip of the unrolled loop; 0 where it is not unrolled."""
        return self.unrolled.data

    def with_unrolled(self, bodies: int) -> PipelineAttr:
        return PipelineAttr(self.stage_count, self.copy_engine, bodies)

    @staticmethod
    def problem(stages: int, unrolled: int) -> str | None:
        if not 1 <= stages <= MAX_STAGES:
            return f"stages must be 1 to {MAX_STAGES}, got {stages}"
        if unrolled and (unrolled < 0 or unrolled % stages):
            return f"unrolled counts the bodies a trip, a positive multiple of the {stages} stages, got {unrolled}"
        return None

    def verify(self) -> None:
        problem = self.problem(self.stages.data, self.unrolled.data)
        if problem:
            raise VerifyException(f"#{self.name}: {problem}")

    def print_parameters(self, printer: Printer) -> None:
        unrolled = f", unrolled={self.bodies}" if self.bodies else ""
        printer.print_string(f"<stages={self.stage_count}, copy={self.copy_engine.value}{unrolled}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        def field(name: str) -> None:
            parser.parse_keyword(name, f" in #{cls.name}<stages=N, copy=cp_async|tma[, unrolled=N]>")
            parser.parse_punctuation("=")

        parser.parse_punctuation("<", f" to open #{cls.name}")
        start = parser.pos
        field("stages")
        stages = parser.parse_integer(allow_boolean=False, allow_negative=False)
        parser.parse_punctuation(",")
        field("copy")
        engine = parser.parse_str_enum(CopyEngine)
        unrolled = 0
        if parser.parse_optional_punctuation(",") is not None:
            field("unrolled")
            unrolled = parser.parse_integer(allow_boolean=False, allow_negative=False)
        parser.parse_punctuation(">", f" to close #{cls.name}")
        problem = cls.problem(stages, unrolled)
        if problem:
            parser.raise_error(f"#{cls.name}: {problem}", start, parser.pos)
        return IntAttr(stages), CopyEngineAttr(engine), IntAttr(unrolled)


class StagedBufferType(ABC):
    """What the facts' verifier needs of a shared-memory buffer type (smem's `!smem.buffer`):
    how many stages it cycles through."""

    @property
    @abstractmethod
    def stage_count(self) -> int: ...


class TileWrite(ABC):
    """What the facts' verifier needs of an op that writes a tile the block computed into a
    stage of a buffer (smem's `smem.write`, reg's `reg.stmatrix` and `reg.write`): the
    buffer, which then keeps stages of its own, not the pipeline's."""

    @property
    @abstractmethod
    def written(self) -> SSAValue: ...


def _fact(op: Operation, key: str, kind: type[Attribute], syntax: str) -> Attribute | None:
    attr = op.attributes.get(key)
    if attr is not None and not isinstance(attr, kind):
        raise VerifyException(f"{describe_loop(op)}: {key} must be {syntax}, got {attr}")
    return attr


# -- readers ------------------------------------------------------------------------------


def stream_axis(loop: Operation) -> str | None:
    """The axis `loop` streams (`hbm.stream`); None: not a stream loop."""
    attr = _fact(loop, STREAM, StreamAttr, "#hbm.stream<axis>")
    return attr.axis.data if isinstance(attr, StreamAttr) else None


def pipeline(loop: Operation) -> PipelineAttr | None:
    """The loop's `smem.pipeline`; None before hbm-to-smem and on loops it does not pipeline."""
    attr = _fact(loop, PIPELINE, PipelineAttr, "#smem.pipeline<stages=N, copy=cp_async|tma>")
    return attr if isinstance(attr, PipelineAttr) else None


def stages(loop: Operation) -> int | None:
    """The stages a pipelined loop's buffers cycle through; None: not pipelined."""
    p = pipeline(loop)
    return p.stage_count if p is not None else None


def copy_engine(loop: Operation) -> CopyEngine | None:
    """How a pipelined loop's tiles arrive; None: not pipelined."""
    p = pipeline(loop)
    return p.copy_engine if p is not None else None


def unrolled(loop: Operation) -> int | None:
    """Bodies a trip of a loop `smem-unroll-stages` unrolled; None: not unrolled."""
    p = pipeline(loop)
    return p.bodies if p is not None and p.bodies else None


def overlapped(loop: Operation) -> bool:
    """Whether `reg-wgmma-overlap` rotated the loop's products (`reg.overlapped`)."""
    return _fact(loop, OVERLAPPED, UnitAttr, "a unit attribute (no value)") is not None


def nonempty(loop: Operation) -> bool:
    """Whether ncd-to-hbm knows the loop runs at least one trip (`hbm.nonempty`)."""
    return _fact(loop, NONEMPTY, UnitAttr, "a unit attribute (no value)") is not None


def stream_loops(op: Operation) -> list[scf.ForOp]:
    """The stream loops under `op`, in order."""
    return [o for o in op.walk() if isinstance(o, scf.ForOp) and stream_axis(o) is not None]


def pipelined_loops(op: Operation) -> list[scf.ForOp]:
    """The loops under `op` that hbm-to-smem pipelined, in order."""
    return [o for o in op.walk() if isinstance(o, scf.ForOp) and pipeline(o) is not None]


# -- writers ------------------------------------------------------------------------------


def set_stream_axis(loop: Operation, axis: str) -> None:
    loop.attributes[STREAM] = StreamAttr(axis)


def set_pipeline(loop: Operation, stages: int, engine: CopyEngine) -> None:
    loop.attributes[PIPELINE] = PipelineAttr(stages, engine)


def set_unrolled(loop: Operation, bodies: int) -> None:
    p = pipeline(loop)
    if p is None:
        raise VerifyException(f"{describe_loop(loop)}: only a pipelined loop is unrolled by its stages")
    loop.attributes[PIPELINE] = p.with_unrolled(bodies)


def set_nonempty(loop: Operation) -> None:
    loop.attributes[NONEMPTY] = UnitAttr()


def set_overlapped(loop: Operation) -> None:
    loop.attributes[OVERLAPPED] = UnitAttr()


# -- the kernel's check -------------------------------------------------------------------


def describe_loop(op: Operation) -> str:
    """A loop as a message names it: by its counter where it has a name, and its stream."""
    what = op.name
    if isinstance(op, scf.ForOp) and op.body.block.args and op.body.block.args[0].name_hint:
        what = f"{op.name} %{op.body.block.args[0].name_hint}"
    axis = op.attributes.get(STREAM)
    if isinstance(axis, StreamAttr):
        what += f" streaming '{axis.axis.data}'"
    return f"the {what}"


def _staged_reads(loop: scf.ForOp) -> list[tuple[Operation, int]]:
    """The ops in `loop` that read a value out of a buffer of two or more stages, with its
    stage count: an op with results and such an operand.
    Copies into a stage produce nothing, so a producer's loop reads none. A buffer the
    loop writes a computed tile into (`TileWrite`: the attention gradient's dS, staged for
    a product) keeps stages of its own."""
    out: list[tuple[Operation, int]] = []
    own = {op.written for op in loop.body.walk() if isinstance(op, TileWrite)}
    for op in loop.body.walk():
        if op.results and not isinstance(op, scf.ForOp):
            for v in op.operands:
                if isinstance(v.type, StagedBufferType) and v.type.stage_count >= 2 and v not in own:
                    out.append((op, v.type.stage_count))
                    break
    return out


def verify_loop_facts(kernel: Operation, axes: Mapping[str, int]) -> None:
    """Each fact under `kernel` of its type; each pipelined or overlapped loop a stream loop;
    each stream loop that reads staged buffers pipelined, through as many stages as they have."""
    prefix = f"{kernel.name}: "
    for op in kernel.walk():
        if op is kernel:
            continue
        try:
            for key in RETIRED:
                if key in op.attributes:
                    raise VerifyException(f"{describe_loop(op)}: {key} = {op.attributes[key]} is no longer a loop fact; "
                                          "a pipelined loop carries smem.pipeline = #smem.pipeline<stages=N, copy=cp_async|tma>")
            axis = stream_axis(op)
            p = pipeline(op)
            is_overlapped = overlapped(op)
            nonempty(op)
        except VerifyException as e:
            raise VerifyException(prefix + str(e)) from None
        where = describe_loop(op)
        if axis is not None and axis not in axes:
            raise VerifyException(f"{prefix}{where}: hbm.stream names the streamed axis, one of the kernel's ({', '.join(axes)}), got '{axis}'")
        if (p is not None or is_overlapped) and axis is None:
            raise VerifyException(f"{prefix}{where}: {PIPELINE if p is not None else OVERLAPPED} is a fact of a stream loop, "
                                  "and this one has no hbm.stream")
        if is_overlapped and p is None:
            raise VerifyException(f"{prefix}{where}: reg.overlapped rotates the products of a pipelined loop, and this one has no smem.pipeline")
        if axis is None or not isinstance(op, scf.ForOp):
            continue
        reads = _staged_reads(op)
        if reads and p is None:
            reader, n = reads[0]
            raise VerifyException(f"{prefix}{where} reads a {n}-stage shared-memory buffer ({reader.name}) but has no smem.pipeline: "
                                  "its stage count and copy engine were lost (a rewrite that rebuilt the loop must keep its attributes)")
        for reader, n in reads:
            if p is not None and n != p.stage_count:
                raise VerifyException(f"{prefix}{where} is pipelined through {p.stage_count} stages (smem.pipeline) "
                                      f"but reads a {n}-stage buffer ({reader.name})")


__all__ = ["CopyEngine", "CopyEngineAttr", "PipelineAttr", "StagedBufferType", "TileWrite", "StreamAttr", "copy_engine", "describe_loop",
           "nonempty", "overlapped", "pipeline", "pipelined_loops", "set_nonempty", "set_overlapped", "set_pipeline",
           "set_stream_axis", "set_unrolled",
           "stages", "stream_axis", "stream_loops", "unrolled", "verify_loop_facts"]
