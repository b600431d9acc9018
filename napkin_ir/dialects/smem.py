"""The `smem` dialect: how tiles arrive in shared memory, and the software pipeline.

Below `hbm-to-smem`, a tile that a streaming loop reads from global memory is copied
asynchronously into a multi-stage shared-memory buffer (`!smem.buffer`, with a layout
and a stage count) a few iterations ahead of its use: `smem.copy` (cp.async on sm_80;
the TMA on sm_90a), grouped by `smem.commit`, awaited with `smem.wait` (at most
`pending` newer groups left in flight) and made visible to the whole block by
`smem.barrier`; `smem.read` hands the tile of one stage to the computation. The loop
says how it is pipelined: `smem.pipeline = #smem.pipeline<stages=3, copy=cp_async>`
(a typed fact of `napkin_ir.dialects.loop_facts`). The interpreter defers every copy
until a wait completes its group, so a pipeline that reads a stage too early fails on
the CPU, not only on the GPU.

On the way out (sm_90a), `smem.write` puts a window of a computed tile into a stage and
`smem.tma_store` copies the stage to global memory asynchronously, in a bulk group that
`smem.tma_store_wait` retires before the stage is written again; the interpreter refuses a
write into a stage a store still reads.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, IndexType, IntAttr, IntegerAttr, StringAttr, UnitAttr, i32
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, Region, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import NoTerminator
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from napkin_ir.dialects.hbm import GlobalType, LabelsAttr, check_axes, check_tile_of_global, parse_labels
from napkin_ir.dialects.loop_facts import CopyEngine, CopyEngineAttr, PipelineAttr, StagedBufferType, TileWrite
from napkin_ir.dialects.ncd import ELEMENT_BYTES, NamedAxesType, TensorType, parameters_hash, same_parameters
from napkin_ir.dialects.utils import require

# row: the buffer's axis order, row-major; padN: each row padded by N elements;
# swizzle: 16-byte chunks XOR-permuted within 128-byte lines (conflict-free ldmatrix)
LAYOUTS = ("row", "pad8", "swizzle")


def swizzle_fits(row_bytes: int) -> bool:
    """Whether `layout=swizzle` can permute rows of `row_bytes`: the chunks of a 128-byte
    line, so rows of 64 bytes (two a line) or of whole lines."""
    return row_bytes == 64 or row_bytes % 128 == 0


@irdl_attr_definition
class BufferType(NamedAxesType, StagedBufferType):
    """A shared-memory buffer holding `stages` tiles, e.g.
    `!smem.buffer<m=128, k=32 : bf16, stages=3, layout=swizzle>`."""

    name = "smem.buffer"
    stages: IntAttr
    layout: StringAttr

    def __init__(self, shape: dict[str, int], element_type: Attribute, stages: int, layout: str = "row"):
        ParametrizedAttribute.__init__(
            self, ArrayAttr([StringAttr(a) for a in shape]), ArrayAttr([IntAttr(v) for v in shape.values()]),
            element_type, IntAttr(stages), StringAttr(layout),
        )

    __eq__ = same_parameters  # the base's parameters count (see same_parameters)
    __hash__ = parameters_hash

    @property
    def tile(self) -> TensorType:
        return TensorType(self.shape, self.element_type)

    @property
    def stage_count(self) -> int:
        return self.stages.data

    @property
    def vector(self) -> bool:
        """Whether this is a plain f32 vector (layout=row, one axis of more than one place):
        a statistic of a stream's rows that the TMA brings with their tiles."""
        return self.layout.data == "row" and self.dtype == "f32" and sum(n > 1 for n in self.dims) == 1

    def bytes(self) -> int:
        per = ELEMENT_BYTES[self.dtype]
        rows = 1
        for s in self.dims[:-1]:
            rows *= s
        row = (self.dims[-1] if self.dims else 1) + (8 if self.layout.data == "pad8" else 0)
        return self.stages.data * rows * row * per

    def verify(self) -> None:
        super().verify()
        if self.stages.data < 1:
            raise VerifyException(f"!smem.buffer: stages must be at least 1, got {self.stages.data}")
        if self.layout.data not in LAYOUTS:
            raise VerifyException(f"!smem.buffer: unknown layout '{self.layout.data}'; expected one of {', '.join(LAYOUTS)}")

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            self.print_shape(printer)
            printer.print_string(f", stages={self.stages.data}, layout={self.layout.data}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<", " to open !smem.buffer")
        axes, sizes, et = cls.parse_shape(parser)
        parser.parse_punctuation(",")
        parser.parse_keyword("stages")
        parser.parse_punctuation("=")
        stages = parser.parse_integer(allow_boolean=False)
        parser.parse_punctuation(",")
        parser.parse_keyword("layout")
        parser.parse_punctuation("=")
        pos = parser.pos
        layout = parser.parse_identifier(" (a layout)")
        if layout not in LAYOUTS:
            parser.raise_error(f"unknown layout '{layout}'; expected one of {', '.join(LAYOUTS)}", pos, parser.pos)
        parser.parse_punctuation(">", " to close !smem.buffer")
        return axes, sizes, et, IntAttr(stages), StringAttr(layout)




@irdl_op_definition
class AllocOp(IRDLOperation):
    """A shared-memory buffer for this block: `%buf = smem.alloc : !smem.buffer<...>`."""

    name = "smem.alloc"
    result = result_def(BufferType)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, t: BufferType):
        super().__init__(result_types=[t])


@irdl_op_definition
class CopyOp(IRDLOperation):
    """Start copying the tile of a global tensor at the given offsets into one stage of a
    buffer (elements past the edge become zero). It completes at a `smem.wait` that
    covers the group it was committed in.

        smem.copy %a[%m0, %k0] -> %buf[%stage] : !hbm.global<m=512, k=256 : bf16>, !smem.buffer<m=128, k=32 : bf16, stages=3, layout=row>
    """

    name = "smem.copy"
    source = operand_def(GlobalType)
    offsets = var_operand_def(IndexType)
    dest = operand_def(BufferType)
    stage = operand_def(IndexType)
    assembly_format = "$source `[` $offsets `]` `->` $dest `[` $stage `]` attr-dict `:` type($source) `,` type($dest)"

    def __init__(self, source: SSAValue, offsets: Sequence[SSAValue], dest: SSAValue, stage: SSAValue):
        super().__init__(operands=[source, list(offsets), dest, stage])

    def verify_(self) -> None:
        g, b = self.source.type, self.dest.type
        assert isinstance(g, GlobalType) and isinstance(b, BufferType)
        check_tile_of_global(self, b, g, self.offsets, "buffer")


@irdl_op_definition
class CommitOp(IRDLOperation):
    """Close the group of copies started since the last commit."""

    name = "smem.commit"
    assembly_format = "attr-dict"


class PendingWaitOp(IRDLOperation):
    """Base of the waits for committed groups: at most `pending` (0..7) still in flight."""

    pending = prop_def(IntegerAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict"

    def __init__(self, pending: int):
        super().__init__(properties={"pending": IntegerAttr(pending, i32)})

    def verify_(self) -> None:
        require(0 <= self.pending.value.data <= 7, self, f"pending must be in 0..7, got {self.pending.value.data}")


@irdl_op_definition
class WaitOp(PendingWaitOp):
    """Wait until at most `pending` committed groups of copies are still in flight."""

    name = "smem.wait"


@irdl_op_definition
class BarrierOp(IRDLOperation):
    """Every thread of the block arrives before any goes on (what one thread's completed
    copies wrote becomes visible to all; a stage read by all may be overwritten after).
    Beside a producer warpgroup, the consumers meet. With `async_proxy`, each thread's
    writes to shared memory are first fenced for the async proxy, so that the tensor
    cores (wgmma) and the TMA, which read through it, see them.

        smem.barrier
        smem.barrier {async_proxy}
    """

    name = "smem.barrier"
    async_proxy = opt_prop_def(UnitAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict"

    def __init__(self, async_proxy: bool = False):
        super().__init__(properties={"async_proxy": UnitAttr()} if async_proxy else {})


@irdl_op_definition
class ReadOp(IRDLOperation):
    """The tile in one stage of a buffer, for the computation.

        %t = smem.read %buf[%stage] : !smem.buffer<m=128, k=32 : bf16, stages=3, layout=row> -> !ncd.tensor<m=128, k=32 : bf16>
    """

    name = "smem.read"
    source = operand_def(BufferType)
    stage = operand_def(IndexType)
    result = result_def(TensorType)
    assembly_format = "$source `[` $stage `]` attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, stage: SSAValue):
        b = source.type
        assert isinstance(b, BufferType)
        super().__init__(operands=[source, stage], result_types=[b.tile])

    def verify_(self) -> None:
        b, t = self.source.type, self.result.type
        assert isinstance(b, BufferType) and isinstance(t, TensorType)
        require(t.shape == b.shape and t.axis_names == b.axis_names and t.element_type == b.element_type, self,
              f"reads a tile of the buffer's shape {b.shape} : {b.element_type}, got {t}")


# -- the sm_90a pipeline: TMA copies completing on mbarriers, producer and consumer roles --


@irdl_attr_definition
class MbarrierType(ParametrizedAttribute, TypeAttribute):
    """A ring of `stages` mbarriers, one per buffer stage: `!smem.mbarrier<stages=4, arrivals=1>`.

    A phase of one barrier completes when `arrivals` parties have arrived and every byte
    they announced (`smem.arrive_expect`) has landed; waiters name the phase by its parity.
    At this level a party is a role (the producer, the consumers as a whole); the lowering
    counts the threads that arrive for it.
    """

    name = "smem.mbarrier"
    stages: IntAttr
    arrivals: IntAttr

    def __init__(self, stages: int, arrivals: int = 1):
        super().__init__(IntAttr(stages), IntAttr(arrivals))

    def verify(self) -> None:
        if not 1 <= self.stages.data <= 16:
            raise VerifyException(f"!smem.mbarrier: stages must be in 1..16, got {self.stages.data}")
        if self.arrivals.data < 1:
            raise VerifyException(f"!smem.mbarrier: arrivals must be at least 1, got {self.arrivals.data}")

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<stages={self.stages.data}, arrivals={self.arrivals.data}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<", " to open !smem.mbarrier")
        values = []
        for n, key in enumerate(("stages", "arrivals")):
            if n:
                parser.parse_punctuation(",")
            parser.parse_keyword(key)
            parser.parse_punctuation("=")
            values.append(IntAttr(parser.parse_integer(allow_boolean=False)))
        parser.parse_punctuation(">", " to close !smem.mbarrier")
        return values


@irdl_op_definition
class MbarrierAllocOp(IRDLOperation):
    """A ring of mbarriers for this block: `%full = smem.mbarrier_alloc : !smem.mbarrier<stages=4, arrivals=1>`."""

    name = "smem.mbarrier_alloc"
    result = result_def(MbarrierType)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, t: MbarrierType):
        super().__init__(result_types=[t])


def _check_ring(op: IRDLOperation, bars: SSAValue, buf: BufferType | None = None) -> None:
    t = bars.type
    assert isinstance(t, MbarrierType)
    if buf is not None:
        require(t.stages.data == buf.stages.data, op, f"the buffer has {buf.stages.data} stages but the barrier ring {t.stages.data}")


@irdl_op_definition
class TmaCopyOp(IRDLOperation):
    """Copy a tile of a global tensor into one stage of a buffer with the tensor memory
    accelerator; its bytes count towards the current phase of the stage's mbarrier.
    Elements past the global's edge become zero (and still count). The buffer is 128-byte
    swizzled panels, or a plain f32 vector (a statistic of the streamed rows that rides with
    their tiles: the attention gradient's log-sum-exp and D).

        smem.tma_copy %a[%m0, %k0] -> %buf[%s], %full[%s] : !hbm.global<m=512, k=256 : bf16>, !smem.buffer<m=128, k=64 : bf16, stages=4, layout=swizzle>, !smem.mbarrier<stages=4, arrivals=1>

    `rows` (a multiple of 8, fewer than the tile's): only the tile's first `rows` rows are
    copied, and only their bytes count; the rest of the stage keeps what it held. For a
    global shorter than the tile along an axis no product or reduction of the kernel sums
    over (a decode's few rows of A): what lies past its edge reaches only results past it,
    which are not stored, and the TMA does not fill rows of zeros every stage.

        smem.tma_copy %a[%m0, %k0] -> %buf[%s], %full[%s] {rows = 8 : i32} : !hbm.global<m=1, k=256 : bf16>, !smem.buffer<m=64, k=64 : bf16, stages=4, layout=swizzle>, !smem.mbarrier<stages=4, arrivals=1>
    """

    name = "smem.tma_copy"
    source = operand_def(GlobalType)
    offsets = var_operand_def(IndexType)
    dest = operand_def(BufferType)
    stage = operand_def(IndexType)
    bars = operand_def(MbarrierType)
    bar_stage = operand_def(IndexType)
    rows = opt_prop_def(IntegerAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = ("$source `[` $offsets `]` `->` $dest `[` $stage `]` `,` $bars `[` $bar_stage `]` attr-dict "
                       "`:` type($source) `,` type($dest) `,` type($bars)")

    def __init__(self, source: SSAValue, offsets: Sequence[SSAValue], dest: SSAValue, stage: SSAValue, bars: SSAValue, bar_stage: SSAValue,
                 rows: int | None = None):
        super().__init__(operands=[source, list(offsets), dest, stage, bars, bar_stage],
                         properties={"rows": IntegerAttr(rows, i32)} if rows is not None else {})

    @property
    def box_rows(self) -> int:
        """The rows of the tile one copy writes: `rows`, else all of them."""
        b = self.dest.type
        assert isinstance(b, BufferType)
        return self.rows.value.data if self.rows is not None else b.dims[0]

    def copied_bytes(self) -> int:
        """The bytes one copy delivers to its stage's barrier."""
        b = self.dest.type
        assert isinstance(b, BufferType)
        return b.bytes() // b.stages.data * self.box_rows // b.dims[0]

    def verify_(self) -> None:
        g, b = self.source.type, self.dest.type
        assert isinstance(g, GlobalType) and isinstance(b, BufferType)
        check_tile_of_global(self, b, g, self.offsets, "buffer")
        require(b.layout.data == "swizzle" or b.vector, self, f"TMA copies here fill 128-byte swizzled buffers (layout=swizzle), or "
                f"an f32 vector into a plain one (layout=row), got {b}")
        _check_ring(self, self.bars, b)
        if self.rows is not None:
            n = self.rows.value.data
            require(not b.vector and len(b.dims) == 2 and n % 8 == 0 and 8 <= n < b.dims[0], self,
                    f"rows must be a multiple of 8 below the tile's {b.dims[0]} rows of a two-axis swizzled buffer, got {n}")


@irdl_op_definition
class ArriveExpectOp(IRDLOperation):
    """Arrive on a stage's mbarrier announcing `bytes` that copies will deliver in this phase."""

    name = "smem.arrive_expect"
    bars = operand_def(MbarrierType)
    stage = operand_def(IndexType)
    bytes = prop_def(IntegerAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$bars `[` $stage `]` attr-dict `:` type($bars)"

    def __init__(self, bars: SSAValue, stage: SSAValue, nbytes: int):
        super().__init__(operands=[bars, stage], properties={"bytes": IntegerAttr(nbytes, i32)})

    def verify_(self) -> None:
        n = self.bytes.value.data
        require(0 < n < (1 << 20), self, f"expects between 1 byte and 1 MiB per phase, got {n}")


@irdl_op_definition
class ArriveOp(IRDLOperation):
    """Arrive on a stage's mbarrier: a consumer saying it is done with the stage, or has
    filled it (every consumer thread arrives), or a store role that its store has read the
    stage (its one thread arrives). With `async_proxy`, each arriving thread's writes to
    shared memory are first fenced for the async proxy, so that a TMA store the arrival
    lets go reads them.

        smem.arrive %empty[%s] : !smem.mbarrier<stages=3, arrivals=1>
        smem.arrive %full[%s] {async_proxy} : !smem.mbarrier<stages=2, arrivals=1>
    """

    name = "smem.arrive"
    bars = operand_def(MbarrierType)
    stage = operand_def(IndexType)
    async_proxy = opt_prop_def(UnitAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$bars `[` $stage `]` attr-dict `:` type($bars)"

    def __init__(self, bars: SSAValue, stage: SSAValue, async_proxy: bool = False):
        super().__init__(operands=[bars, stage], properties={"async_proxy": UnitAttr()} if async_proxy else {})

    @property
    def by_role(self) -> bool:
        """Whether a store role's one thread arrives, not every consumer."""
        return in_store_role(self)


@irdl_op_definition
class MbarrierWaitOp(IRDLOperation):
    """Wait until the phase of parity `parity` (0 or 1) of a stage's mbarrier completes.
    A fresh barrier counts its phase before the first as complete, with parity 1."""

    name = "smem.mbarrier_wait"
    bars = operand_def(MbarrierType)
    stage = operand_def(IndexType)
    parity = operand_def(IndexType)
    assembly_format = "$bars `[` $stage `]` `parity` $parity attr-dict `:` type($bars)"

    def __init__(self, bars: SSAValue, stage: SSAValue, parity: SSAValue):
        super().__init__(operands=[bars, stage, parity])


class _PositionOp(IRDLOperation):
    """An index a persistent block's loop over tiles binds for each tile."""

    result = result_def(IndexType)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self):
        super().__init__(result_types=[IndexType()])


@irdl_op_definition
class RingPositionOp(_PositionOp):
    """How many stream steps this block's mbarrier rings have already taken before its
    current tile: 0 for a block that computes one tile; a persistent block (one that loops
    over tiles, `hbm-launch{persistent=true}`) has taken one per step of each earlier tile.
    A step's stage and phase parity count from here.

        %pos = smem.ring_position : index
    """

    name = "smem.ring_position"


@irdl_op_definition
class TilePositionOp(_PositionOp):
    """How many tiles this block computed before its current one: 0 for a block that
    computes one tile; a persistent block counts one per tile it looped over. A tile copied
    once per tile (attention's Q) takes one step of its one-stage rings per tile: its phase
    parities count from here.

        %tile = smem.tile_position : index
    """

    name = "smem.tile_position"


# -- the sm_90a epilogue: tiles out through shared memory and TMA stores --


def _window(op: IRDLOperation, at_attr: LabelsAttr, tile: NamedAxesType, buf: BufferType) -> dict[str, int]:
    """The window of `tile` a buffer stage holds: the buffer's shape at `at` (axes not
    named start at 0), the tile's axes matched by name."""
    check_axes(op, tile.axis_names, buf.axis_names, "the tile's", "the buffer's", any_order=True)
    at = parse_labels(at_attr)
    for a, o in at.items():
        require(a in tile.shape, op, f"`at` names '{a}', which the tile lacks")
    for a, size in buf.shape.items():
        o = at.get(a, 0)
        require(0 <= o and o + size <= tile.shape[a], op, f"a window of {size} at {o} along '{a}' does not fit the tile's {tile.shape[a]}")
    return at


class WindowWriteOp(IRDLOperation, TileWrite):
    """Base of the writes of a window (`at`) of a value into one stage of a buffer; the
    subclass names the value's type."""

    dest = operand_def(BufferType)
    stage = operand_def(IndexType)
    at = prop_def(LabelsAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$value `->` $dest `[` $stage `]` attr-dict `:` type($value) `,` type($dest)"

    def __init__(self, value: SSAValue, dest: SSAValue, stage: SSAValue, at: dict[str, int]):
        super().__init__(operands=[value, dest, stage], properties={"at": LabelsAttr(at)})

    @property
    def written(self) -> SSAValue:
        return self.dest


@irdl_op_definition
class WriteOp(WindowWriteOp):
    """Write a window of a tile the block computed into one stage of a buffer, rounded to
    the buffer's element type: the buffer's shape, starting at `at` along the axes named
    (0 along the others), the tile's axes matched by name (a product computed transposed
    is written transposed). The stage must not be one a `smem.tma_store` still reads.

        smem.write %t -> %c[%s] {at = #hbm.labels<n=64>} : !ncd.tensor<m=128, n=256 : bf16>, !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>
    """

    name = "smem.write"
    value = operand_def(TensorType)

    def verify_(self) -> None:
        t, b = self.value.type, self.dest.type
        assert isinstance(t, TensorType) and isinstance(b, BufferType)
        require(t.element_type == b.element_type, self, f"writes {t.element_type} into a buffer of {b.element_type}; cast first")
        _window(self, self.at, t, b)


@irdl_op_definition
class TmaStoreOp(IRDLOperation):
    """Store one stage of a buffer to the tile of a global at the given offsets with the
    tensor memory accelerator (elements past the global's edge are not written). It runs
    asynchronously, as a bulk group of its own: the stage may be written again only after a
    `smem.tma_store_wait` has retired the group. What the block wrote into the stage before
    it (`smem.write`, `reg.stmatrix`) is what it stores. With `accumulate`, the TMA adds the
    stage into what the f32 global holds (a reduce-add; the blocks that split a sum each
    add their part: the attention gradient's dQ, tile by tile of the stream).

        smem.tma_store %c[%s] -> %out[%m0, %n1] : !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>, !hbm.global<m=512, n=384 : bf16>
        smem.tma_store %q[%s] -> %dq[%i0, %c0] {accumulate} : !smem.buffer<i=64, d=128 : f32, stages=2, layout=swizzle>, !hbm.global<i=1000, d=128 : f32>
    """

    name = "smem.tma_store"
    source = operand_def(BufferType)
    stage = operand_def(IndexType)
    dest = operand_def(GlobalType)
    offsets = var_operand_def(IndexType)
    accumulate = opt_prop_def(UnitAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$source `[` $stage `]` `->` $dest `[` $offsets `]` attr-dict `:` type($source) `,` type($dest)"

    def __init__(self, source: SSAValue, stage: SSAValue, dest: SSAValue, offsets: Sequence[SSAValue], accumulate: bool = False):
        super().__init__(operands=[source, stage, dest, list(offsets)], properties={"accumulate": UnitAttr()} if accumulate else {})

    def verify_(self) -> None:
        b, g = self.source.type, self.dest.type
        assert isinstance(g, GlobalType) and isinstance(b, BufferType)
        check_tile_of_global(self, b, g, self.offsets, "buffer")
        require(b.layout.data == "swizzle", self, f"TMA stores here read 128-byte swizzled buffers (layout=swizzle), got layout={b.layout.data}")
        if self.accumulate is not None:
            require(g.dtype == "f32", self, f"accumulate adds into an f32 global (partial sums rounded to {g.dtype} would not add up)")


@irdl_op_definition
class TmaStoreWaitOp(PendingWaitOp):
    """Wait until at most `pending` of the latest `smem.tma_store` groups still read their
    stages; the stages of the others may be written again."""

    name = "smem.tma_store_wait"


class RoleOp(IRDLOperation):
    """Base of the regions that warps of their own run beside the kernel body (which the
    consumer warps run): they meet the consumers through mbarriers alone."""

    body = region_def("single_block")
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(NoTerminator())
    assembly_format = "attr-dict-with-keyword $body"


@irdl_op_definition
class ProducerOp(RoleOp):
    """The producer role: its region runs on its own `warps` (a warpgroup of 4 on sm_90a)
    alongside the rest of the kernel body, which the consumer warps run. They meet only
    through mbarriers, so the region issues copies and waits for free stages.

        smem.producer {warps = 4 : i32} {
          ...
        }
    """

    name = "smem.producer"
    warps = prop_def(IntegerAttr)

    def __init__(self, warps: int, body: Region):
        super().__init__(properties={"warps": IntegerAttr(warps, i32)}, regions=[body])

    def verify_(self) -> None:
        w = self.warps.value.data
        require(w in (1, 4), self, f"a producer is one warp or one warpgroup (4 warps), got {w}")
        for op in self.body.walk():
            require(not isinstance(op, ReadOp | RoleOp | WriteOp | TmaStoreOp), self, f"a producer only copies and waits; {op.name} belongs to the consumers")


@irdl_op_definition
class StorerOp(RoleOp):
    """The store role: one thread of the producer warpgroup's second warp runs its region
    beside the producer's loads and the consumers. It takes tiles the consumers wrote into
    a buffer's stages from them on an mbarrier ring (they arrive on a stage's full barrier,
    their writes fenced for the async proxy), stores or adds each stage with the TMA, waits
    until the store has read it and arrives on the stage's empty barrier, on which the
    consumers wait before writing the stage again. So the consumers never meet to hand a
    tile over, nor wait for its store (the attention gradient's dQ, added tile by tile).

        smem.storer {
          smem.mbarrier_wait %full[%s] parity %p : !smem.mbarrier<stages=2, arrivals=1>
          smem.tma_store %q[%s] -> %dq[%i0, %c0] {accumulate} : !smem.buffer<i=64, d=64 : f32, stages=2, layout=swizzle>, !hbm.global<i=1024, d=64 : f32>
          smem.tma_store_wait {pending = 0 : i32}
          smem.arrive %empty[%s] : !smem.mbarrier<stages=2, arrivals=1>
        }
    """

    name = "smem.storer"

    def __init__(self, body: Region):
        super().__init__(regions=[body])

    def verify_(self) -> None:
        for op in self.body.walk():
            require(not isinstance(op, ReadOp | RoleOp | TileWrite | TmaCopyOp | ArriveExpectOp | BarrierOp), self,
                    f"a store role only waits, stores and arrives; {op.name} belongs to another role")
        block = self.parent_block()
        if block is not None:
            require(any(isinstance(o, ProducerOp) for o in block.ops), self,
                    "a store role runs on the producer warpgroup's second warp: the kernel needs an smem.producer beside it")


def in_store_role(op: Operation) -> bool:
    """Whether `op` is in an `smem.storer`'s region (its one thread runs it)."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, RoleOp):
        parent = parent.parent_op()
    return isinstance(parent, StorerOp)


def stored_by_role(buf: SSAValue) -> bool:
    """Whether a store role stores the buffer `buf` (the consumers hand its stages over)."""
    return any(isinstance(u.operation, TmaStoreOp) and in_store_role(u.operation) for u in buf.uses)


def returned_by_store_role(bars: SSAValue) -> bool:
    """Whether a store role arrives on the ring `bars` (giving the consumers stages back)."""
    return any(isinstance(u.operation, ArriveOp) and u.operation.by_role for u in bars.uses)


def filled_after(wait: MbarrierWaitOp) -> list[SSAValue]:
    """The buffers a producer copies into after `wait`, up to its next wait: where `wait` is
    on an empty ring, the buffers the consumers' releases on that ring free."""
    out: list[SSAValue] = []
    op = wait.next_op
    while op is not None and not isinstance(op, MbarrierWaitOp):
        if isinstance(op, TmaCopyOp) and op.dest not in out:
            out.append(op.dest)
        op = op.next_op
    return out


SMEM = Dialect("smem", [AllocOp, CopyOp, CommitOp, WaitOp, BarrierOp, ReadOp, MbarrierAllocOp, TmaCopyOp, ArriveExpectOp,
                        ArriveOp, MbarrierWaitOp, RingPositionOp, TilePositionOp, ProducerOp, StorerOp, WriteOp, TmaStoreOp, TmaStoreWaitOp],
               [BufferType, MbarrierType, PipelineAttr, CopyEngineAttr])

__all__ = ["SMEM", "AllocOp", "ArriveExpectOp", "ArriveOp", "BarrierOp", "BufferType", "CommitOp", "CopyEngine", "CopyEngineAttr", "CopyOp", "MbarrierAllocOp",
           "MbarrierType", "MbarrierWaitOp", "PipelineAttr", "ProducerOp", "RingPositionOp", "ReadOp", "RoleOp", "StorerOp", "TilePositionOp", "TmaCopyOp",
           "TmaStoreOp", "TmaStoreWaitOp",
           "WaitOp", "WriteOp", "filled_after", "in_store_role", "returned_by_store_role", "stored_by_role"]
