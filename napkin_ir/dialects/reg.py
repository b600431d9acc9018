"""The `reg` dialect: per-warp register fragments and the tensor-core steps on them.

Below `smem-to-reg`, the block's warps split each tile: the kernel's `reg.warps` labels
(`#hbm.labels<m=2, n=2>`) say how many warps share each axis (the first axis varies
slowest over the warps; an axis whose every place has warps of its own, as a group's
query heads in `<r=4, i=2>`, is held a place a warp: fragments lack it, and a warp's
place along it is its index there), and a fragment type
(`!reg.frag<c, m=64, n=32 : f32>`) is one warp's part, held across its 32 lanes in the
layout the sm_80 `mma.sync.m16n8k16` instruction fixes for its role: `a` (rows x 16, bf16
or f16), `b` (16 x columns), `c` (rows x columns, f32 accumulators). `reg.ldmatrix` loads
a warp's fragment from a shared-memory stage, `reg.mma` multiplies and accumulates, and
`reg.store` converts the accumulators to the global's type and writes the warp's tile
(or `reg.stmatrix` writes them into a shared-memory stage, for a TMA store).
`lane_layout` gives, for each role, which element every lane's every value holds: the
interpreter computes through it, and `reg-to-ptx` addresses by it.

Attention computes on its accumulators in registers: a `row` fragment
(`!reg.frag<row, i=16 : f32>`) holds one value per row of a `c` fragment, in the lanes
that hold that row (the 4 lanes of a quad hold the same value), and a `col` fragment
(`!reg.frag<col, n=64 : f32>`) one value per column, in the lanes that hold that column
(the 8 lanes with one place in their quads, two values each per 8 columns); `reg.load`
reads either straight from global memory (a GEMM's bias); `reg.map` applies an
elementwise function to `c`, `row` and `col` fragments (a `row` operand is broadcast
along the columns, a `col` operand along the rows), `reg.row_reduce` reduces a `c`
fragment along its columns (within each lane, then across its quad), `reg.mask` and `reg.mask_bound` fill positions by their place in
the block's tile, and `reg.to_a` reuses 16 columns of a `c` fragment, rounded to bf16 or
f16, as an `a` fragment: the accumulator layout of two adjacent 8-column tiles is the
operand layout of a 16-wide slice, so no value moves between lanes.

A running row sum (attention's softmax denominator) can be kept a lane at a time: a
`row_part` fragment (`!reg.frag<row_part, i=16 : f32>`) has a `row` fragment's layout, but
each of the 4 lanes of a quad holds its own part, the row's value being their sum.
`reg.row_accumulate` adds a lane's values of each row of a `c` fragment onto its parts,
`reg.map` multiplies parts by a `row` fragment (the trip's correction) or adds parts, and
`reg.row_combine` adds the quad's parts into a `row` fragment once, where the sum is read.

A running row max can be let stay behind (`reg.lazy_max`, FlashAttention-4's lazy rescale):
a warp keeps its max until one of its rows outgrows it by a slack, so the trip's
correction is exactly 1 in the whole warp most trips, and `reg.rescale` (a `c` fragment
times a `row` one, as `reg.map mul`) skips its products there, a branch the warp takes
together.

A kernel with no product (a row softmax, an L2 norm, a row sum) holds its tiles in
`line` fragments instead (`!reg.frag<line, i=2, j=1024 : f32>`): a warp holds whole rows,
and in each row lane l the 8 columns 8 l .. 8 l + 7 of every 256 (one 16-byte chunk of a
bf16 row), so that a lane reads and writes its values with vector accesses. A row shorter
than 256 columns lies across fewer lanes: the fragment's `span` (`!reg.frag<line, i=8,
d=64 : f32, span=64>`; 256 where it is not written) is the columns that the lanes of one
row cover once, span / 8 lanes a row, 8 columns a lane, so that the warp holds 256 / span
rows at a time (lanes 0-7 row 0, lanes 8-15 row 1, ... for span 64). A `line` fragment of
one axis (`!reg.frag<line, i=2 : f32>`) holds one value per row, in every lane that holds
the row. `reg.read` loads a `line` fragment from a shared-memory stage, widened to f32
(and, in kernels with products, a `c` fragment: a staged tile in the accumulators' layout);
`reg.map`, `reg.row_reduce` (within the lane, then across the lanes of the row) and
`reg.store` take `line` fragments as they take `c` and `row` ones.

A kernel that reduces down its columns (a bias's gradient: the sum of a tile's rows)
holds its tiles the same way, rows streamed through shared memory and the block's columns
split over its warps, and `reg.col_reduce` sums each column: within the lane over the rows
it holds, then across the lanes that hold the column's other rows. Its result, one value
per column, is a `line_col` fragment (`!reg.frag<line_col, n=64 : f32, span=64>`): the
lanes that hold a column in the `line` fragment (every row slot) hold its value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache

import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    Float32Type,
    FloatAttr,
    IndexType,
    IntAttr,
    StringAttr,
    UnitAttr,
    f32,
)
from xdsl.ir import Attribute, Block, Dialect, Operation, ParametrizedAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from napkin_ir.dialects.hbm import GlobalType, LabelsAttr, enclosing_kernel, format_labels, parse_labels
from napkin_ir.dialects.ncd import MapOp as NcdMapOp
from napkin_ir.dialects.ncd import NamedAxesType, NcdOp, _parse_float, format_float, parameters_hash, same_parameters
from napkin_ir.dialects.smem import BufferType, PendingWaitOp, WindowWriteOp
from napkin_ir.dialects.utils import require

ROLES = ("a", "b", "c", "row", "row_part", "col", "line", "line_col")
LINES = ("line", "line_col")  # whole rows a warp; one value per column of such rows
VECTORS = ("row", "col")  # one value per row, per column of a `c` fragment
ROW_VALUES = ("row", "row_part")  # one value per row of a `c` fragment in each lane that holds it: the row's, or the lane's part
LINE_CHUNK = 8  # a `line` fragment's columns a lane holds together (16 bytes of bf16)
LINE_SPAN = 32 * LINE_CHUNK  # the columns a warp's lanes cover once
LINE_SPANS = tuple(LINE_CHUNK * 2**n for n in range(6))  # a row across 1, 2, 4 ... 32 lanes: 8, 16, 32, 64, 128, 256 columns


def is_tile(t: Attribute) -> bool:
    """Whether a fragment type holds rows by columns of f32 values: `c`, or `line` of two axes."""
    return isinstance(t, FragType) and (t.role.data == "c" or (t.role.data == "line" and len(t.dims) == 2))


@irdl_attr_definition
class FragType(NamedAxesType):
    """One warp's fragment: `!reg.frag<a, m=64, k=16 : bf16>`, `!reg.frag<c, m=64, n=32 : f32>`,
    `!reg.frag<row, m=64 : f32>` (one value per row of a `c` fragment with those rows),
    `!reg.frag<col, n=32 : f32>` (one value per column of a `c` fragment with those columns),
    `!reg.frag<line, i=2, j=1024 : f32>` (whole rows a warp, 8 columns of every 256 a lane),
    `!reg.frag<line, i=8, d=64 : f32, span=64>` (rows of 64 columns, 8 lanes a row, 4 rows at
    a time), `!reg.frag<line, i=2 : f32>` (one value per row of such a fragment, in the lanes
    that hold the row), `!reg.frag<line_col, j=64 : f32, span=64>` (one value per column of
    such a fragment, in the lanes that hold the column). `span` belongs to `line` and
    `line_col` fragments; the others keep its default.

    `!reg.frag<c, d=16, i=64 : f32, split=8>`: a warp's 16 rows of a tile whose rows (here
    128 of `d`) lie along no `reg.warps` axis: `split` consumer warps, in order, hold 16
    each. The attention gradient's dQ^T = K^T dS^T, rows the head dim, in a block whose
    warps split the keys. Where the block has more consumer warps than `split` (8 warps,
    `!reg.frag<c, d=16, i=32 : f32, split=4>`: 64 rows of `d`), each further `split` warps
    (a warpgroup) hold the same rows of the next columns, the fragment's columns on: warp w
    rows 16 (w mod split), columns (w / split) times the fragment's. 1 (not printed) for
    every other fragment."""

    name = "reg.frag"
    role: StringAttr
    span: IntAttr  # of a `line` fragment: the columns one row's lanes cover once (LINE_SPAN for every other role)
    split: IntAttr  # of a `c` fragment of rows along no warps axis: the warps that share them, 16 rows each (else 1)

    def split_place(self, warp: int) -> tuple[int, int]:
        """Of a `split` fragment: warp `warp`'s (first row, first column) in the block's tile."""
        return 16 * (warp % self.split.data), warp // self.split.data * self.dims[1]

    def __init__(self, role: str, shape: dict[str, int], element_type: Attribute, span: int = LINE_SPAN, split: int = 1):
        ParametrizedAttribute.__init__(
            self, ArrayAttr([StringAttr(a) for a in shape]), ArrayAttr([IntAttr(v) for v in shape.values()]),
            element_type, StringAttr(role), IntAttr(span), IntAttr(split),
        )

    def verify(self) -> None:
        super().verify()
        role, dims, dt = self.role.data, self.dims, self.dtype
        if role not in ROLES:
            raise VerifyException(f"!reg.frag: role must be a, b, c, row, row_part, col, line or line_col, got '{role}'")
        span = self.span.data
        if self.split.data != 1 and (role != "c" or self.split.data < 1 or self.dims[0] != 16):
            raise VerifyException(f"!reg.frag: split={self.split.data} belongs to a 'c' fragment of one warp's 16 rows, got "
                                  f"a '{role}' fragment of {self.shape}")
        if role not in LINES and span != LINE_SPAN:
            raise VerifyException(f"!reg.frag: only a 'line' fragment has a span, got span={span} on a '{role}' fragment")
        if role == "line":
            if span not in LINE_SPANS:
                raise VerifyException(f"!reg.frag: a 'line' fragment's span is the columns one row's lanes cover, 8 a lane, over "
                                      f"1, 2, 4, 8, 16 or 32 lanes: one of {', '.join(map(str, LINE_SPANS))}; got {span}")
            if len(dims) not in (1, 2) or dt != "f32" or (len(dims) == 2 and dims[1] % span):
                short = len(dims) == 2 and dims[1] in LINE_SPANS and dims[1] != span
                raise VerifyException(f"!reg.frag: a 'line' fragment is rows by columns, a multiple of its span {span} (8 a lane), "
                                      f"or rows alone (one value per row), of f32; got {self.shape} : {dt}"
                                      + (f" (rows of {dims[1]} columns take span={dims[1]})" if short else ""))
            if dims[0] % self.rows_a_step:
                raise VerifyException(f"!reg.frag: a 'line' fragment of span {span} holds {self.rows_axis}'s rows {self.rows_a_step} at "
                                      f"a time ({self.lanes_a_row} lanes a row); its {dims[0]} rows must be a multiple of {self.rows_a_step}")
            return
        if role == "line_col":
            if span not in LINE_SPANS or len(dims) != 1 or dims[0] % span or dt != "f32":
                raise VerifyException(f"!reg.frag: a 'line_col' fragment is one value per column of a 'line' fragment: one axis, a "
                                      f"multiple of its span (one of {', '.join(map(str, LINE_SPANS))}), of f32; got {self.shape} : {dt}, span={span}")
            return
        if role in (*VECTORS, "row_part"):
            tile, what = (8, "column") if role == "col" else (16, "row")
            if len(dims) != 1 or dims[0] % tile or dt != "f32":
                raise VerifyException(f"!reg.frag: a '{role}' fragment has one axis, a multiple of {tile} long, of f32 (one value "
                                      f"per {what} of a 'c' fragment), got {self.shape} : {dt}")
            return
        if len(dims) != 2:
            raise VerifyException(f"!reg.frag: a fragment has two axes, got {len(dims)}")
        rows, cols = dims
        want = {"a": (16, 16), "b": (16, 8), "c": (16, 8)}[role]
        if rows % want[0] or cols % want[1] or (role == "a" and cols != 16) or (role == "b" and rows != 16):
            shape = {"a": "rows a multiple of 16 by 16", "b": "16 by columns a multiple of 8", "c": "rows a multiple of 16 by columns a multiple of 8"}[role]
            raise VerifyException(f"!reg.frag: an '{role}' fragment is {shape} (mma.sync m16n8k16), got {rows} x {cols}")
        if (role == "c") != (dt == "f32") or dt not in ("f32", "bf16", "f16"):
            raise VerifyException(f"!reg.frag: '{role}' fragments hold {'f32' if role == 'c' else 'bf16 or f16'}, got {dt}")

    __eq__ = same_parameters  # the base's parameters count (see same_parameters)
    __hash__ = parameters_hash

    def values_per_lane(self) -> int:
        if self.role.data in ROW_VALUES:
            return self.dims[0] // 8  # rows g and g + 8 of each 16
        if self.role.data == "col":
            return self.dims[0] // 4  # columns 2 t and 2 t + 1 of each 8
        if self.role.data == "line":
            return self.dims[0] * self.dims[1] // 32 if len(self.dims) == 2 else self.dims[0] // self.rows_a_step
        if self.role.data == "line_col":
            return self.dims[0] // self.lanes_a_row
        rows, cols = self.dims
        return rows * cols // 32

    @property
    def lanes_a_row(self) -> int:
        """Of a `line` fragment: the lanes that hold one row (8 columns each of every span)."""
        return self.span.data // LINE_CHUNK

    @property
    def rows_a_step(self) -> int:
        """Of a `line` fragment: the rows the warp's lanes hold at a time (lane l, row l / lanes_a_row)."""
        return 32 // self.lanes_a_row

    @property
    def rows_axis(self) -> str:
        return self.axis_names[0]

    @property
    def cols_axis(self) -> str | None:
        """The columns' axis: a `c` fragment's second, a `col` fragment's only; None for a `row`
        (and a `line` of one axis)."""
        if self.role.data in ROW_VALUES or (self.role.data == "line" and len(self.dims) == 1):
            return None
        if self.role.data == "line_col":
            return self.axis_names[0]
        return self.axis_names[-1]

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(f"{self.role.data}, ")
            self.print_shape(printer)
            if self.span.data != LINE_SPAN:
                printer.print_string(f", span={self.span.data}")
            if self.split.data != 1:
                printer.print_string(f", split={self.split.data}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<", " to open !reg.frag")
        pos = parser.pos
        role = parser.parse_identifier(" (a, b, c, row, row_part, col, line or line_col)")
        if role not in ROLES:
            parser.raise_error(f"a fragment's role is a, b, c, row, row_part, col, line or line_col, got '{role}'", pos, parser.pos)
        parser.parse_punctuation(",")
        axes, sizes, et = cls.parse_shape(parser)
        span, split = LINE_SPAN, 1
        if parser.parse_optional_punctuation(","):
            pos = parser.pos
            if parser.parse_optional_keyword("split"):
                parser.parse_punctuation("=", " after split")
                split = parser.parse_integer(allow_boolean=False, allow_negative=False)
            else:
                parser.parse_keyword("span", " (a 'line' fragment's span, or a 'c' fragment's split)")
                if role not in LINES:
                    parser.raise_error(f"only a 'line' fragment has a span, got a '{role}' fragment", pos, parser.pos)
                parser.parse_punctuation("=", " after span")
                span = parser.parse_integer(allow_boolean=False, allow_negative=False)
        parser.parse_punctuation(">", " to close !reg.frag")
        return axes, sizes, et, StringAttr(role), IntAttr(span), IntAttr(split)


@cache
def lane_layout(role: str, rows: int, cols: int = 1, span: int = LINE_SPAN) -> tuple[np.ndarray, np.ndarray]:
    """(row, col) of value v of lane l, as two [32, values] arrays, for a warp's fragment.

    The fragment is a grid of mma.sync m16n8k16 operand tiles, taken row-major; within a
    tile, lane l = 4 g + t holds (PTX ISA, mma.m16n8k16 fragment layouts):
      a (16 x 16): register i, half j -> row g + 8 (i % 2), col 2 t + j + 8 (i // 2)
      b (16 x 8):  register i, half j -> row 2 t + j + 8 i,  col g
      c (16 x 8):  value q            -> row g + 8 (q // 2), col 2 t + q % 2
    a `row` fragment (rows x 1) holds, per 16 rows, value h at row g + 8 h (the rows of
    the lane's `c` values), col 0, and a `col` fragment (1 x `rows` columns: its one length
    comes first) holds, per 8 columns, value j at column 2 t + j (the columns of the lane's
    `c` values), row 0. A `line` fragment of `rows` by `cols` and `span` puts each row in
    q = span / 8 lanes, 32 / q rows at a time: lane l = q s + p holds row 32 / q x (step) + s
    and in it the 8 columns from 8 p of every span (value v: step v / (cols / q), column
    span c + 8 p + e for the rest 8 c + e); of one axis (`cols` = 1), value v at row
    32 / q x v + s, col 0 (the q lanes of a row hold the same value). With span 256, one
    row at a time: lane l holds the 8 columns from 8 l of every 256. A `line_col` fragment
    of `rows` columns (its one length comes first) holds, in lane l = q s + p, the columns
    of lane l's values in a `line` fragment's row: value v at column span (v / 8) + 8 p +
    v mod 8, row 0 (the 32 / q lanes of a column hold the same value).
    """
    lanes = np.arange(32)[:, None]
    g, t = lanes // 4, lanes % 4
    if role == "line_col":
        q = span // LINE_CHUNK
        v = np.arange(rows // q)[None, :]
        c = span * (v // LINE_CHUNK) + LINE_CHUNK * (lanes % q) + v % LINE_CHUNK
        return 0 * c, c
    if role == "line":
        q = span // LINE_CHUNK  # lanes a row
        slot, place = lanes // q, lanes % q
        if cols == 1:
            r = (32 // q) * np.arange(rows // (32 // q))[None, :] + slot
            return r, 0 * r
        per = cols // q
        v = np.arange(rows * cols // 32)[None, :]
        within = v % per
        c = span * (within // LINE_CHUNK) + LINE_CHUNK * place + within % LINE_CHUNK
        return (32 // q) * (v // per) + slot, c
    if role in ROW_VALUES:
        h = np.arange(2)[None, :]
        r = np.concatenate([16 * m + g + 8 * h + 0 * t for m in range(rows // 16)], axis=1)
        return r, 0 * r
    if role == "col":
        j = np.arange(2)[None, :]
        c = np.concatenate([8 * n + 2 * t + j + 0 * g for n in range(rows // 8)], axis=1)
        return 0 * c, c
    if role == "a":
        i, j = np.arange(4).repeat(2)[None, :], np.tile(np.arange(2), 4)[None, :]
        r, c, tiles = g + 8 * (i % 2), 2 * t + j + 8 * (i // 2), [(16 * m, 0) for m in range(rows // 16)]
    elif role == "b":
        i, j = np.arange(2).repeat(2)[None, :], np.tile(np.arange(2), 2)[None, :]
        r, c, tiles = 2 * t + j + 8 * i, g + 0 * i, [(0, 8 * n) for n in range(cols // 8)]
    else:
        q = np.arange(4)[None, :]
        r, c, tiles = g + 8 * (q // 2), 2 * t + q % 2, [(16 * m, 8 * n) for m in range(rows // 16) for n in range(cols // 8)]
    rr = np.concatenate([r + r0 + 0 * c for r0, _ in tiles], axis=1)
    cc = np.concatenate([c + c0 + 0 * r for _, c0 in tiles], axis=1)
    return rr, cc




def kernel_warps(op: IRDLOperation) -> dict[str, int] | None:
    """The `reg.warps` of the kernel around `op`; None before `smem-to-reg` has set them."""
    k = enclosing_kernel(op)
    if k is None or not k.warp_grid:
        return None
    return k.warp_grid


def _held(op: IRDLOperation, axes: Sequence[str], shape: dict[str, int]) -> bool:
    """Whether every place of each of `axes` has warps of its own in the kernel around `op`
    (`reg.warps`), so that a fragment may lack them."""
    warps = kernel_warps(op) or {}
    return all(warps.get(a) == shape[a] for a in axes)


def _frag(v: SSAValue) -> FragType:
    assert isinstance(v.type, FragType)
    return v.type


@irdl_op_definition
class ZerosOp(IRDLOperation):
    """Accumulators set to zero: `%c = reg.zeros : !reg.frag<c, m=64, n=32 : f32>`."""

    name = "reg.zeros"
    result = result_def(FragType)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, t: FragType):
        super().__init__(result_types=[t])

    def verify_(self) -> None:
        require(_frag(self.result).role.data == "c", self, "makes accumulators (role c)")


@irdl_op_definition
class LdmatrixOp(IRDLOperation):
    """Load this warp's fragment of one stage of a shared-memory buffer (ldmatrix).

    The fragment's axes are the buffer's. Along an axis that `reg.warps` splits, the warp
    starts at its warp index times the fragment's size; along the others at `at`
    (`#hbm.labels<k=16>`: the second 16-wide slice of k). The buffer's axes the fragment
    lacks have one place, or are `reg.warps` axes whose every place has its own warps (a
    group's query heads): the warp reads the place of its index.

        %a = reg.ldmatrix %buf[%s] {at = #hbm.labels<k=16>} : !smem.buffer<m=128, k=32 : bf16, stages=3, layout=row> -> !reg.frag<a, m=64, k=16 : bf16>
    """

    name = "reg.ldmatrix"
    source = operand_def(BufferType)
    stage = operand_def(IndexType)
    at = prop_def(LabelsAttr)
    result = result_def(FragType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$source `[` $stage `]` attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, stage: SSAValue, at: dict[str, int], t: FragType):
        super().__init__(operands=[source, stage], properties={"at": LabelsAttr(at)}, result_types=[t])

    def verify_(self) -> None:
        b, f = self.source.type, _frag(self.result)
        assert isinstance(b, BufferType)
        require(f.role.data in ("a", "b"), self, "loads a or b fragments")
        extra = [a for a in b.axis_names if a not in f.shape and b.shape[a] > 1]
        require(set(f.axis_names) <= set(b.axis_names) and _held(self, extra, b.shape), self,
                f"the fragment's axes {list(f.axis_names)} must be the buffer's {list(b.axis_names)} but for axes of size 1 "
                "or held a place a warp (reg.warps)")
        require(f.element_type == b.element_type, self, f"the fragment's element type {f.element_type} differs from the buffer's {b.element_type}")
        for a, o in parse_labels(self.at).items():
            require(a in b.shape and 0 <= o and o + f.shape[a] <= b.shape[a], self, f"a slice of {f.shape.get(a)} at {o} along '{a}' does not fit the buffer's {b.shape.get(a)}")


@irdl_op_definition
class MmaOp(IRDLOperation):
    """c + a . b over the axis a and b share, with mma.sync m16n8k16 steps.

        %c2 = reg.mma %a, %b, %c : !reg.frag<a, m=64, k=16 : bf16>, !reg.frag<b, k=16, n=32 : bf16>, !reg.frag<c, m=64, n=32 : f32> -> !reg.frag<c, m=64, n=32 : f32>
    """

    name = "reg.mma"
    a = operand_def(FragType)
    b = operand_def(FragType)
    c = operand_def(FragType)
    result = result_def(FragType)
    assembly_format = "$a `,` $b `,` $c attr-dict `:` type($a) `,` type($b) `,` type($c) `->` type($result)"

    def __init__(self, a: SSAValue, b: SSAValue, c: SSAValue):
        super().__init__(operands=[a, b, c], result_types=[c.type])

    def verify_(self) -> None:
        a, b, c, d = _frag(self.a), _frag(self.b), _frag(self.c), _frag(self.result)
        require((a.role.data, b.role.data, c.role.data) == ("a", "b", "c"), self, "takes fragments of roles a, b and c, in that order")
        (am, ak), (bk, bn), (cm, cn) = a.axis_names, b.axis_names, c.axis_names
        require(ak == bk and (am, bn) == (cm, cn), self, f"expects a<{am}, {ak}> . b<{ak}, {cn}> + c<{am}, {cn}>, got a{list(a.axis_names)} b{list(b.axis_names)} c{list(c.axis_names)}")
        require(a.shape[am] == c.shape[cm] and b.shape[bn] == c.shape[cn], self, "the fragments' sizes disagree")
        require(a.element_type == b.element_type, self, f"a and b element types differ ({a.element_type}, {b.element_type})")
        require(d == c, self, "the result has the accumulators' type")


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Convert this warp's accumulators to the global's element type and write the part of
    its tile that lies inside, at the block's origin (one offset per axis of the global).
    The fragment's axes are the global's, in order, but for axes the tile has one place of;
    accumulators' rows may be the global's last axis (a product computed transposed, so
    that its A is a tile computed in registers), stored transposed. A `line` fragment
    (whole rows a warp, or one value per row) is stored the same way, and
    so is a `line_col` one (one value per column: a sum down the columns), and
    so is a `row` fragment (one value per row of the accumulators: attention's log-sum-exp),
    each row written once.

        reg.store %c, %out[%m0, %n0] : !reg.frag<c, m=64, n=32 : f32>, !hbm.global<m=512, n=384 : bf16>
        reg.store %p, %out[%i0, %c0] : !reg.frag<line, i=2, j=1024 : f32>, !hbm.global<i=4096, j=1024 : bf16>
        reg.store %lse, %out1[%b0, %h0, %i0] : !reg.frag<row, i=16 : f32>, !hbm.global<b=2, h=4, i=256 : f32>

    With `accumulate`, the accumulators are a block's part of a contraction split over the
    grid: added to what an f32 global holds (`red.global.add`, or in turn where the kernel's
    parts take turns); into a 16-bit global, each part's sums written to an f32 scratch and
    added in order and rounded into the global by the part that finishes last (`hbm.store`'s
    `accumulate`).

        reg.store %c, %out[%m0, %n0] {accumulate} : !reg.frag<c, m=64, n=32 : f32>, !hbm.global<m=512, n=384 : f32>
        reg.store %c, %out[%m0, %n0] {accumulate} : !reg.frag<c, m=64, n=32 : f32>, !hbm.global<m=512, n=384 : bf16>
    """

    name = "reg.store"
    value = operand_def(FragType)
    dest = operand_def(GlobalType)
    offsets = var_operand_def(IndexType)
    accumulate = opt_prop_def(UnitAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$value `,` $dest `[` $offsets `]` attr-dict `:` type($value) `,` type($dest)"

    def __init__(self, value: SSAValue, dest: SSAValue, offsets: Sequence[SSAValue], accumulate: bool = False):
        super().__init__(operands=[value, dest, list(offsets)], properties={"accumulate": UnitAttr()} if accumulate else {})

    def verify_(self) -> None:
        f, g = _frag(self.value), self.dest.type
        assert isinstance(g, GlobalType)
        require(f.role.data in ("c", "line", "line_col", "row"), self, f"stores accumulators (role c), a 'line', 'line_col' or a 'row' fragment, got {f}")
        if self.accumulate is not None:
            require(f.role.data == "c", self, f"accumulate adds accumulators (role c), a block's part of a split sum, got {f}")
        placed = tuple(a for a in g.axis_names if a in f.shape)
        require(placed == f.axis_names or f.role.data == "c" and placed == f.axis_names[::-1], self,
                f"the fragment's axes {list(f.axis_names)} must be the global's {list(g.axis_names)}, in order "
                "(accumulators' two either way round)")
        require(len(self.offsets) == len(g.axis_names), self, f"takes one offset per axis of the global ({len(g.axis_names)}), got {len(self.offsets)}")


@irdl_op_definition
class LoadOp(IRDLOperation):
    """Read this warp's `row` or `col` fragment of a vector tile straight from global memory,
    widened to f32: each lane the values of the rows (columns) its `c` values lie in (of a
    `line` fragment of one axis, the rows the lane holds: a kernel with no product reading
    a statistic of its rows, as a softmax's gradient reads the log-sum-exp). The
    tile starts at the block's origin (one offset per axis of the global); along an axis
    that `reg.warps` splits the warp starts its fragment's length times its index further
    on. Positions past the global's edge read as zero. A GEMM's bias is read so, once per
    tile, where it is added.

        %bias = reg.load %g[%n0] : !hbm.global<n=384 : f32> -> !reg.frag<col, n=64 : f32>
        %lse = reg.load %g[%i0] : !hbm.global<i=4096 : f32> -> !reg.frag<line, i=1 : f32>
    """

    name = "reg.load"
    source = operand_def(GlobalType)
    offsets = var_operand_def(IndexType)
    result = result_def(FragType)
    assembly_format = "$source `[` $offsets `]` attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, offsets: Sequence[SSAValue], t: FragType):
        super().__init__(operands=[source, list(offsets)], result_types=[t])

    def verify_(self) -> None:
        f, g = _frag(self.result), self.source.type
        assert isinstance(g, GlobalType)
        require(f.role.data in VECTORS or (f.role.data == "line" and len(f.dims) == 1), self,
                f"loads a 'row' or 'col' fragment, or a 'line' fragment of one axis (one value per row or column), got {f}")
        require(f.axis_names[0] in g.axis_names, self, f"the fragment's axis '{f.axis_names[0]}' is not an axis of {g}")
        require(g.dtype in ("f32", "bf16", "f16"), self, f"reads f32, bf16 or f16 values, got {g.dtype}")
        require(len(self.offsets) == len(g.axis_names), self, f"takes one offset per axis of the global ({len(g.axis_names)}), got {len(self.offsets)}")


@irdl_op_definition
class ReadOp(IRDLOperation):
    """Load this warp's `line` or `c` fragment of one stage of a shared-memory buffer,
    widened to f32.

    A `line` fragment: the warp's rows start at its index along the `reg.warps` axis times
    the fragment's rows, and each lane reads its 8 columns of every span of its row as one
    16-byte chunk. The buffer's innermost axis is the fragment's columns, whole, or split
    over warps (a kernel that reduces down its columns: each warp's start at its index times
    the fragment's columns); its other axes of more than one place are the fragment's rows.

    A `row` or `col` fragment: a plain f32 vector staged with a stream's tiles (the attention
    gradient's log-sum-exp and D), each lane's values as `reg.load` reads them from global
    memory.

    A `c` fragment: the tile's values where the accumulators of a product of the same rows
    and columns lie (a staged tile entering elementwise math with them: a gradient's dC
    times the recomputed exp(A B)). Its two axes are the buffer's of more than one place,
    in either order (the buffer's rows may be the fragment's columns: the tile is read
    transposed); along an axis that `reg.warps` splits the warp starts at its index times
    the fragment's size there.

        %x = reg.read %buf[%s] : !smem.buffer<i=4, j=1024 : bf16, stages=1, layout=row> -> !reg.frag<line, i=1, j=1024 : f32>
        %y = reg.read %b[%s] : !smem.buffer<i=16, d=64 : bf16, stages=1, layout=row> -> !reg.frag<line, i=4, d=64 : f32, span=64>
        %z = reg.read %d[%s] : !smem.buffer<m=64, n=128 : bf16, stages=3, layout=pad8> -> !reg.frag<c, n=64, m=32 : f32>
    """

    name = "reg.read"
    source = operand_def(BufferType)
    stage = operand_def(IndexType)
    result = result_def(FragType)
    assembly_format = "$source `[` $stage `]` attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, stage: SSAValue, t: FragType):
        super().__init__(operands=[source, stage], result_types=[t])

    @property
    def vector(self) -> bool:
        """Whether this reads a staged statistic (a `row` or `col` fragment): a stage that no
        product writes, released only after its last use."""
        return _frag(self.result).role.data in ("row", "col")

    def verify_(self) -> None:
        b, f = self.source.type, _frag(self.result)
        assert isinstance(b, BufferType)
        if f.role.data in ("row", "col"):  # a staged vector, as reg.load reads one from global memory
            (axis,) = f.axis_names
            tiled = [a for a in b.axis_names if b.shape[a] > 1]
            require(b.dtype == "f32" and b.layout.data == "row" and tiled == [axis], self,
                    f"reads a '{f.role.data}' fragment from a plain f32 vector along '{axis}' (layout=row), got {b}")
            require(b.shape[axis] % f.shape[axis] == 0, self, f"the buffer's {b.shape[axis]} along '{axis}' are not whole warps' {f.shape[axis]}")
            return
        require(f.role.data == "c" or (f.role.data == "line" and len(f.dims) == 2), self,
                f"loads a 'line' fragment of rows and columns, a 'c' fragment, or a 'row' or 'col' fragment of a vector, got {f}")
        if f.role.data == "c":
            require(b.dtype in ("bf16", "f16"), self, f"widens bf16 or f16 values to f32; the buffer holds {b.dtype}")
            tiled = [a for a in b.axis_names if b.shape[a] > 1]
            require(sorted(tiled) == sorted(f.axis_names), self,
                    f"the buffer's axes of more than one place must be the fragment's {list(f.axis_names)} (in either order), got {b}")
            for a in f.axis_names:
                require(b.shape[a] % f.shape[a] == 0, self, f"the buffer's {b.shape[a]} along '{a}' are not whole warps' {f.shape[a]}")
            return
        rows, cols = f.axis_names
        tiled = [a for a in b.axis_names if b.shape[a] > 1]
        split = (kernel_warps(self) or {}).get(cols, 1)  # warps that split the columns (a sum down them)
        require(b.axis_names[-1] == cols and b.shape[cols] == f.shape[cols] * split and tiled in ([rows, cols], [cols]) and rows in b.shape, self,
                f"the buffer's rows and whole columns must be the fragment's <{rows}, {cols}> (axes of one place aside"
                + (f"; the columns split over {split} warps" if split > 1 else "") + f"), got {b}")
        require(b.shape[rows] % f.shape[rows] == 0, self, f"the buffer's {b.shape[rows]} rows are not whole warps' {f.shape[rows]}")
        require(b.layout.data != "swizzle", self, f"reads rows as they lie (layout=row or pad8), got layout={b.layout.data}")


@irdl_op_definition
class WriteOp(WindowWriteOp):
    """Write each warp's f32 accumulators, value by value, into one stage of an f32 buffer
    of 128-byte swizzled panels (what a TMA store or reduce-add reads), each value at its
    place by axis name: the buffer may hold the fragment's axes the other way round (dQ^T's
    rows, the head dim, are the buffer's columns). Each warp writes its place in the
    block's tile (its index along the `reg.warps` axes, or 16 rows a warp for a `split`
    fragment); the buffer's axes the fragment lacks have one place. The stage must not be
    one a TMA store still reads.

        reg.write %dq -> %c[%s] {at = #hbm.labels<>} : !reg.frag<c, d=16, i=64 : f32, split=8>, !smem.buffer<i=64, d=128 : f32, stages=2, layout=swizzle>
    """

    name = "reg.write"
    value = operand_def(FragType)

    def verify_(self) -> None:
        f, b = _frag(self.value), self.dest.type
        assert isinstance(b, BufferType)
        require(f.role.data == "c" and f.dtype == "f32", self, f"writes f32 accumulators (role c), got {f}")
        require(b.dtype == "f32" and b.layout.data == "swizzle", self, f"writes into an f32 buffer of swizzled panels (layout=swizzle), got {b}")
        require(not parse_labels(self.at), self, "writes the whole tile (no window)")
        require(set(f.axis_names) <= set(b.axis_names) and all(b.shape[a] == 1 for a in b.axis_names if a not in f.shape), self,
                f"the buffer's axes of more than one place must be the fragment's {list(f.axis_names)}, got {b}")


@irdl_op_definition
class StmatrixOp(WindowWriteOp):
    """Round each warp's accumulators to the buffer's element type and write the window
    `at` of them (the buffer's shape; 0 along axes not named) into one stage of a
    shared-memory buffer, each warp at its place in the block's tile (its index along the
    `reg.warps` axes times its fragment's size), with `stmatrix`. The buffer's axes the
    fragment lacks have one place, or are `reg.warps` axes whose every place has its own
    warps (a group's query heads: the buffer's rows are its heads' positions, head by
    head): the warp writes the place of its index. The stage must not be one a
    `smem.tma_store` still reads.

        reg.stmatrix %acc -> %c[%s] {at = #hbm.labels<n=64>} : !reg.frag<c, m=16, n=256 : f32>, !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>

    Transposed (`stmatrix.trans`): a fragment whose rows are the buffer's columns (a
    product computed transposed, wgmma's rows over the output's columns) writes its
    columns as the buffer's rows, whole, and its rows into the window `at` of the buffer's
    columns: the warps whose rows lie in the window write them, the others nothing.

        reg.stmatrix %acc -> %c[%s] {at = #hbm.labels<n=64>} : !reg.frag<c, n=16, m=152 : f32>, !smem.buffer<m=152, n=64 : bf16, stages=2, layout=swizzle>
    """

    name = "reg.stmatrix"
    value = operand_def(FragType)

    @property
    def transposed(self) -> bool:
        """Whether the fragment's rows are the buffer's columns (`stmatrix.trans`)."""
        f, b = _frag(self.value), self.dest.type
        assert isinstance(b, BufferType)
        return [a for a in b.axis_names if a in f.shape] == list(f.axis_names)[::-1] and b.axis_names[-1] == f.axis_names[0]

    def verify_(self) -> None:
        f, b = _frag(self.value), self.dest.type
        assert isinstance(b, BufferType)
        require(f.role.data == "c", self, f"stores accumulators (role c), got {f}")
        require(b.dtype in ("bf16", "f16"), self, f"stmatrix writes 16-bit elements; the buffer holds {b.dtype}")
        if self.transposed:
            rows, cols = f.axis_names
            at = parse_labels(self.at)
            require(cols not in at and b.shape[cols] == f.shape[cols] and f.shape[cols] % 8 == 0, self,
                    f"written transposed, the fragment's columns '{cols}' are the buffer's rows, whole (a multiple of 8): "
                    f"got {f.shape[cols]} into {b.shape[cols]}")
            require(all(b.shape[a] == 1 for a in b.axis_names if a not in f.shape), self,
                    f"written transposed, the buffer's other axes have one place, got {b}")
            require(at.get(rows, 0) % b.shape[rows] == 0 and b.shape[rows] % f.shape[rows] == 0, self,
                    f"written transposed, the window of the buffer's {b.shape[rows]} columns '{rows}' holds whole warps' rows")
            return
        extra = [a for a in b.axis_names if a not in f.shape and b.shape[a] > 1]
        require([a for a in b.axis_names if a in f.shape] == list(f.axis_names) and b.axis_names[-1] == f.axis_names[-1]
                and _held(self, extra, b.shape), self,
                f"the fragment's axes {list(f.axis_names)} must be the buffer's {list(b.axis_names)}, in order, but for axes of "
                "one place, or held a place a warp (reg.warps), before them")
        at = parse_labels(self.at)
        rows, cols = f.axis_names
        require(rows not in at, self, f"each warp writes its own rows; `at` may name only the columns '{cols}'")
        require(b.shape[rows] % f.shape[rows] == 0, self, f"the buffer's {b.shape[rows]} rows are not whole warps' {f.shape[rows]}")
        o = at.get(cols, 0)
        require(o % 8 == 0 and o + b.shape[cols] <= f.shape[cols] and b.shape[cols] % 16 == 0, self,
                f"a window of {b.shape[cols]} columns (a multiple of 16) at {o} (a multiple of 8) must fit the fragment's {f.shape[cols]}")


@irdl_op_definition
class WgmmaOp(IRDLOperation):
    """acc + A . B for one 16-wide slice of the contracted axis (at `at`), read by the tensor
    cores straight from two shared-memory stages (sm_90a `wgmma.mma_async` m64nNk16).

    The instruction belongs to a warpgroup (4 warps, 64 rows); the accumulator type is one
    warp's part of it, 16 rows by all N columns, in the same lane layout as a `c` fragment.
    The warp's rows follow its index along the `reg.warps` axis; B is read whole. A's rows
    may be folded from more axes than the accumulators' (grouped-query attention's query
    heads r and positions i: A<r=4, i=32, d=64>, its rows r x i, r outermost, with
    `reg.warps = <r=4, i=2>`): the warp's 16 rows are then at its place along each. The
    product runs asynchronously: it is complete only after a `reg.wgmma_wait` retires its
    group (`reg.wgmma_commit` closes one), and only then may its stages be released.

        %d = reg.wgmma %a[%s], %b[%s], %c {at = #hbm.labels<k=16>} : !smem.buffer<m=128, k=64 : bf16, stages=4, layout=swizzle>, !smem.buffer<k=64, n=256 : bf16, stages=4, layout=swizzle>, !reg.frag<c, m=16, n=256 : f32> -> !reg.frag<c, m=16, n=256 : f32>
    """

    name = "reg.wgmma"
    a = operand_def(BufferType)
    a_stage = operand_def(IndexType)
    b = operand_def(BufferType)
    b_stage = operand_def(IndexType)
    c = operand_def(FragType)
    at = prop_def(LabelsAttr)
    result = result_def(FragType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = ("$a `[` $a_stage `]` `,` $b `[` $b_stage `]` `,` $c attr-dict `:` type($a) `,` type($b) `,` type($c) "
                       "`->` type($result)")

    def __init__(self, a: SSAValue, a_stage: SSAValue, b: SSAValue, b_stage: SSAValue, c: SSAValue, at: dict[str, int]):
        super().__init__(operands=[a, a_stage, b, b_stage, c], result_types=[c.type],
                         properties={"at": LabelsAttr(at)})

    def axes(self) -> tuple[str, str, str]:
        """(rows, cols, contracted)."""
        return _wgmma_axes(self)

    def verify_(self) -> None:
        a = self.a.type
        assert isinstance(a, BufferType)
        rows, _, k = _verify_wgmma(self, a.element_type)
        ta = tile_axes(a)
        outer = [x for x in ta if x not in (rows, k)]
        require({rows, k} <= set(ta) and ta[len(outer):] in ((rows, k), (k, rows)) and _held(self, outer, a.shape), self,
                f"expects A<{rows}, {k}> for accumulators with rows '{rows}' (or A<..., {rows}, {k}>, its rows folded from axes "
                f"before '{rows}' whose every place has warps of its own), got A{list(a.axis_names)}")
        require(a.shape[k] == self.b.type.shape[k], self, f"A's {a.shape[k]} along '{k}' differ from B's {self.b.type.shape[k]}")  # type: ignore[attr-defined]
        require(a.layout.data == "swizzle", self, f"A must be in a 128-byte swizzled buffer (layout=swizzle), got layout={a.layout.data}")


def _wgmma_axes(op: WgmmaOp | WgmmaRsOp) -> tuple[str, str, str]:
    """(rows, cols, contracted) of a wgmma: the accumulators' axes, and B's other one."""
    rows, cols = _frag(op.c).axis_names
    (k,) = [x for x in tile_axes(op.b.type) if x != cols]  # type: ignore[arg-type]
    return rows, cols, k


def tile_axes(buf: BufferType) -> tuple[str, ...]:
    """A buffer's axes of more than one place (those of one place, like a head, drop out)."""
    return tuple(a for a, n in buf.shape.items() if n > 1)


def _verify_wgmma(op: WgmmaOp | WgmmaRsOp, a_type: Attribute) -> tuple[str, str, str]:
    """What a wgmma checks whether A comes from shared memory or registers: the accumulators,
    B, the element types and the slice; (rows, cols, contracted)."""
    b, c = op.b.type, _frag(op.c)
    assert isinstance(b, BufferType)
    require(c.role.data == "c" and c.dims[0] == 16, op, f"accumulates into one warp's 16 rows of a warpgroup tile (role c, 16 rows), got {c}")
    require(8 <= c.dims[1] <= 256 and c.dims[1] % 8 == 0, op, f"N must be a multiple of 8 from 8 to 256, got {c.dims[1]}")
    require(_frag(op.result) == c, op, "the result has the accumulators' type")
    rows, cols = c.axis_names
    tb = tile_axes(b)
    ks = [x for x in tb if x != cols]
    require(len(tb) == 2 and cols in tb and len(ks) == 1, op, f"expects B<k, {cols}> for accumulators <{rows}, {cols}>, got B{list(b.axis_names)}")
    require(a_type == b.element_type and b.dtype in ("bf16", "f16"), op, f"A and B are both bf16 or both f16, got {a_type} and {b.element_type}")
    if c.split.data > 1:  # each warpgroup of the split its own columns of B
        require(b.shape[cols] % c.shape[cols] == 0, op, f"B's {b.shape[cols]} columns are not whole multiples of a warpgroup's "
                f"{c.shape[cols]} columns of the split accumulators")
    else:
        require(b.shape[cols] == c.shape[cols], op, f"B's {b.shape[cols]} columns differ from the accumulators' {c.shape[cols]}")
    require(b.layout.data == "swizzle", op, f"B must be in a 128-byte swizzled buffer (layout=swizzle), got layout={b.layout.data}")
    at = parse_labels(op.at)
    require(set(at) == set(ks), op, f"`at` names the contracted axis '{ks[0]}' alone, got {list(at)}")
    o = at[ks[0]]
    require(o % 16 == 0 and 0 <= o and o + 16 <= b.shape[ks[0]], op, f"a 16-wide slice at {o} along '{ks[0]}' does not fit the tile's {b.shape[ks[0]]}")
    return rows, cols, ks[0]


@irdl_op_definition
class WgmmaRsOp(IRDLOperation):
    """`reg.wgmma` with A from registers: acc + A . B for one 16-wide slice, A this warp's
    `a` fragment of the slice (16 rows by 16, the lane layout of mma.sync's A operand:
    attention's probabilities, `reg.to_a` of its scores), B read by the tensor cores from a
    shared-memory stage. A's registers must stay unchanged until the group is retired.

        %d = reg.wgmma_rs %p, %v[%s], %c {at = #hbm.labels<j=16>} : !reg.frag<a, i=16, j=16 : bf16>, !smem.buffer<j=64, d=128 : bf16, stages=2, layout=swizzle>, !reg.frag<c, i=16, d=128 : f32> -> !reg.frag<c, i=16, d=128 : f32>
    """

    name = "reg.wgmma_rs"
    a = operand_def(FragType)
    b = operand_def(BufferType)
    b_stage = operand_def(IndexType)
    c = operand_def(FragType)
    at = prop_def(LabelsAttr)
    result = result_def(FragType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$a `,` $b `[` $b_stage `]` `,` $c attr-dict `:` type($a) `,` type($b) `,` type($c) `->` type($result)"

    def __init__(self, a: SSAValue, b: SSAValue, b_stage: SSAValue, c: SSAValue, at: dict[str, int]):
        super().__init__(operands=[a, b, b_stage, c], result_types=[c.type],
                         properties={"at": format_labels(at)})

    def axes(self) -> tuple[str, str, str]:
        """(rows, cols, contracted)."""
        return _wgmma_axes(self)

    def verify_(self) -> None:
        a = _frag(self.a)
        rows, _, k = _verify_wgmma(self, a.element_type)
        require(a.role.data == "a" and a.axis_names == (rows, k) and a.dims == (16, 16), self,
                f"A is one warp's 16 x 16 `a` fragment <{rows}, {k}>, got {a}")


@irdl_op_definition
class WgmmaCommitOp(IRDLOperation):
    """Close the group of `reg.wgmma` products issued since the last commit."""

    name = "reg.wgmma_commit"
    assembly_format = "attr-dict"


@irdl_op_definition
class WgmmaWaitOp(PendingWaitOp):
    """Wait until at most `pending` committed wgmma groups are still running."""

    name = "reg.wgmma_wait"


def wait_spans(block: Block) -> list[tuple[WgmmaWaitOp, list[Operation], WgmmaWaitOp | None]]:
    """Each `reg.wgmma_wait` of `block`, in order, with the ops after it up to its next one
    (or the block's end) and that next one: what retires with a wait is read in its span,
    before the next group retires."""
    waits = [op for op in block.ops if isinstance(op, WgmmaWaitOp)]
    spans = []
    for wait, after in zip(waits, [*waits[1:], None]):
        span: list[Operation] = []
        op = wait.next_op
        while op is not None and op is not after:
            span.append(op)
            op = op.next_op
        spans.append((wait, span, after))
    return spans


def first_wait_span(block: Block) -> tuple[WgmmaWaitOp, list[Operation], WgmmaWaitOp | None] | None:
    """`block`'s first wait span (`wait_spans`); None where the block waits for no wgmma
    group. What retires with the first wait (a loop's scores) is read there."""
    spans = wait_spans(block)
    return spans[0] if spans else None


@irdl_op_definition
class TurnStartOp(IRDLOperation):
    """The consumer warpgroups take turns issuing products, the first warpgroup first:
    once, before any `reg.turn_wait`, the last one hands the first turn over."""

    name = "reg.turn_start"
    assembly_format = "attr-dict"


@irdl_op_definition
class TurnWaitOp(IRDLOperation):
    """Wait for this warpgroup's turn to issue products (after the one before it passed)."""

    name = "reg.turn_wait"
    assembly_format = "attr-dict"


@irdl_op_definition
class TurnPassOp(IRDLOperation):
    """Pass the turn to the next warpgroup (having issued this turn's products)."""

    name = "reg.turn_pass"
    assembly_format = "attr-dict"


# -- fragment math: what attention does to its scores between the two products ----------


def _math_frag(op: IRDLOperation, v: SSAValue, what: str) -> FragType:
    t = v.type
    require(isinstance(t, FragType) and t.role.data in ("c", *VECTORS, "row_part", *LINES), op,
            f"{what} must be a 'c', 'row', 'row_part', 'col', 'line' or 'line_col' fragment (f32), got {t}")
    return t  # type: ignore[return-value]


class FragMathOp(IRDLOperation):
    """Shared syntax tail of the fragment math ops, as ncd's: `attr-dict : operand types -> result type`."""

    _print_tail = NcdOp._print_tail
    _parse_tail = staticmethod(NcdOp._parse_tail)


@irdl_op_definition
class FillOp(IRDLOperation):
    """A `c`, `row`, `row_part`, `line` or `line_col` fragment with every value `value` (a
    running max starts at -inf; a running sum kept a lane at a time at 0: each lane's part).

        %m = reg.fill {value = 0xFF800000 : f32} : !reg.frag<row, i=16 : f32>
    """

    name = "reg.fill"
    value = prop_def(FloatAttr[Float32Type])
    result = result_def(FragType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, value: float, t: FragType):
        super().__init__(properties={"value": FloatAttr(value, f32)}, result_types=[t])

    def verify_(self) -> None:
        _math_frag(self, self.result, "the result")


MAP_UNARY = ("scale", "exp2", "log2", "sqrt", "neg")
MAP_BINARY = ("add", "sub", "mul", "div", "max", "ge")  # ge: 1.0 where the first is at least the second, else 0.0


@irdl_op_definition
class MapOp(FragMathOp):
    """An elementwise function of `c`, `row` and `col` fragments: scale (by the constant
    `by`), exp2, log2, sqrt, neg; add, sub, mul, div, max. A `row` operand is broadcast along the
    columns of a `c` one (it has the `c` operand's rows), a `col` operand along its rows
    (it has its columns); the result is a `c` fragment if any operand is one. A `line`
    fragment of one axis is broadcast along the columns of a `line` fragment of two, a
    `line_col` fragment along its rows.

    A `row_part` fragment (each lane's part of a row's sum) is multiplied by a `row` one
    (each part by its row's value, the sum with it), scaled, or added to or subtracted from
    another `row_part`: the functions that distribute over the sum of the parts.

        %y = reg.map sub %s, %m : !reg.frag<c, i=16, j=64 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<c, i=16, j=64 : f32>
        %z = reg.map add %c, %bias : !reg.frag<c, m=64, n=32 : f32>, !reg.frag<col, n=32 : f32> -> !reg.frag<c, m=64, n=32 : f32>
        %t = reg.map scale %s by 0.125 : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<c, i=16, j=64 : f32>
    """

    name = "reg.map"
    inputs = var_operand_def(FragType)
    fn = prop_def(StringAttr)
    by = opt_prop_def(FloatAttr[Float32Type])
    result = result_def(FragType)

    def __init__(self, fn: str, inputs: Sequence[SSAValue], by: float | None = None):
        ts = [v.type for v in inputs]
        rt = next((t for t in ts if is_tile(t)), next((t for t in ts if t.role.data == "row_part"), ts[0]))
        props: dict[str, Attribute] = {"fn": StringAttr(fn)}
        if by is not None:
            props["by"] = FloatAttr(by, f32)
        super().__init__(operands=[list(inputs)], properties=props, result_types=[rt])

    def verify_(self) -> None:
        fn = self.fn.data
        require(fn in MAP_UNARY + MAP_BINARY, self, f"unknown function '{fn}'; expected one of {', '.join(MAP_UNARY + MAP_BINARY)}")
        arity = 1 if fn in MAP_UNARY or self.by is not None else 2
        require(len(self.inputs) == arity, self, f"{fn} takes {arity} operand(s)" + (" and 'by'" if self.by is not None else "")
                + f", got {len(self.inputs)}")
        require(not (fn == "scale" and self.by is None or fn in MAP_UNARY and fn != "scale" and self.by is not None), self,
                "'by' is required for scale, and takes the place of the second operand of a binary function")
        ts = [_math_frag(self, v, f"operand #{n}") for n, v in enumerate(self.inputs)]
        if any(t.role.data == "row_part" for t in ts):
            self._verify_parts(fn, ts)
            return
        cs = {t for t in ts if is_tile(t)}
        require(len(cs) <= 1, self, f"'c' (or 'line') operands must have one type, got {', '.join(str(t) for t in cs)}")
        want = next(iter(cs)) if cs else ts[0]
        for t in ts:
            if want.role.data in LINES or t.role.data in LINES:
                if t.role.data == "line_col" or want.role.data == "line_col":
                    same = t == want or (t.role.data == "line_col" and is_tile(want) and want.role.data == "line"
                                         and (t.cols_axis, t.dims[0], t.span) == (want.cols_axis, want.dims[1], want.span))
                    require(same, self, f"a 'line_col' fragment meets only 'line' fragments of its columns and span, got "
                                        f"{', '.join(str(t) for t in ts)}")
                    continue
                require(t.role.data == want.role.data == "line" and (t.rows_axis, t.dims[0], t.span) == (want.rows_axis, want.dims[0], want.span),
                        self, f"a 'line' fragment meets only 'line' fragments of its rows and span, got {', '.join(str(t) for t in ts)}")
                continue
            require(t.role.data in (want.role.data, *(VECTORS if cs else ())), self,
                    f"a 'row' and a 'col' fragment broadcast only along a 'c' one, got {', '.join(str(t) for t in ts)}")
            if t.role.data == "col":
                require((t.cols_axis, t.dims[0]) == (want.cols_axis, want.dims[-1]), self,
                        f"the operands' columns differ: {', '.join(str(t) for t in ts)}")
            else:
                require((t.rows_axis, t.dims[0]) == (want.rows_axis, want.dims[0]), self,
                        f"the operands' rows differ: {', '.join(str(t) for t in ts)}")
        require(self.result.type == want, self, f"the result should be {want}, got {self.result.type}")

    def _verify_parts(self, fn: str, ts: list[FragType]) -> None:
        """A map of a `row_part` fragment: the functions that keep the sum of each row's parts
        the function of the sums."""
        part = next(t for t in ts if t.role.data == "row_part")
        roles = sorted(t.role.data for t in ts)
        ok = (fn == "scale" or (fn == "mul" and roles == ["row", "row_part"])
              or (fn in ("add", "sub") and roles == ["row_part", "row_part"] and self.by is None))
        require(ok, self, f"a 'row_part' fragment is multiplied by a 'row' one, scaled, or added to or subtracted from "
                          f"another 'row_part' (each lane's part of a row's sum), got {fn} of {', '.join(str(t) for t in ts)}")
        for t in ts:
            require((t.rows_axis, t.dims[0]) == (part.rows_axis, part.dims[0]), self,
                    f"the operands' rows differ: {', '.join(str(t) for t in ts)}")
        require(self.result.type == part, self, f"the result should be {part}, got {self.result.type}")

    print = NcdMapOp.print  # `fn operands [by c] : types -> type`, as ncd.map

    @classmethod
    def parse(cls, parser: Parser) -> MapOp:
        pos = parser.pos
        fn = parser.parse_identifier(" (the map function)")
        if fn not in MAP_UNARY + MAP_BINARY:
            parser.raise_error(f"unknown reg.map function '{fn}'; expected one of {', '.join(MAP_UNARY + MAP_BINARY)}", pos, parser.pos)
        operands = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_unresolved_operand)
        by = _parse_float(parser, "the scale factor") if parser.parse_optional_keyword("by") else None
        inputs, rt, attrs = cls._parse_tail(parser, operands)
        op = cls.create(operands=inputs, result_types=[rt], properties={"fn": StringAttr(fn), **({"by": FloatAttr(by, f32)} if by is not None else {})})
        op.attributes.update(attrs)
        return op  # type: ignore[return-value]


ROW_REDUCE_KINDS = ("sum", "max")


def _row_values(t: FragType) -> FragType:
    """The fragment of one value per row of `t`: a `row` fragment of a `c` one, a `line` of
    one axis (its span) of a `line` of two."""
    if t.role.data == "line":
        return FragType("line", {t.rows_axis: t.dims[0]}, f32, t.span.data)
    return FragType("row", {t.rows_axis: t.dims[0]}, f32)


class FragReduceOp(FragMathOp):
    """What the reductions of a fragment's rows and columns share: `kind` (sum or max), one
    input, the result's type `values(input)`, and the syntax `kind %x : in -> out`. Each
    names the inputs it takes (`takes`)."""

    def __init__(self, kind: str, input: SSAValue):
        t = input.type
        assert isinstance(t, FragType)
        super().__init__(operands=[input], properties={"kind": StringAttr(kind)}, result_types=[self.values(t)])

    def verify_(self) -> None:
        require(self.kind.data in ROW_REDUCE_KINDS, self, f"unknown reduction '{self.kind.data}'; expected one of {', '.join(ROW_REDUCE_KINDS)}")  # type: ignore[attr-defined]
        t = _math_frag(self, self.input, "the input")  # type: ignore[attr-defined]
        self.takes(t)
        want = self.values(t)
        require(self.result.type == want, self, f"the result should be {want}, got {self.result.type}")  # type: ignore[attr-defined]

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.kind.data} ")  # type: ignore[attr-defined]
        printer.print_operand(self.input)  # type: ignore[attr-defined]
        self._print_tail(printer, [self.input])  # type: ignore[attr-defined]

    @classmethod
    def parse(cls, parser: Parser) -> FragReduceOp:
        pos = parser.pos
        kind = parser.parse_identifier(" (sum or max)")
        if kind not in ROW_REDUCE_KINDS:
            parser.raise_error(f"unknown {cls.name} kind '{kind}'; expected one of {', '.join(ROW_REDUCE_KINDS)}", pos, parser.pos)
        operand = parser.parse_unresolved_operand()
        (inp,), rt, attrs = cls._parse_tail(parser, [operand])
        op = cls.create(operands=[inp], result_types=[rt], properties={"kind": StringAttr(kind)})
        op.attributes.update(attrs)
        return op  # type: ignore[return-value]


@irdl_op_definition
class RowReduceOp(FragReduceOp):
    """Sum or max of each row of a `c` fragment: each lane reduces its own values of a row,
    then the 4 lanes of its quad exchange theirs, so every lane holding the row has the result.
    Of a `line` fragment the same, across the lanes of each row (all 32 where the span is
    256), into a `line` fragment of its rows and span.

        %m = reg.row_reduce max %s : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<row, i=16 : f32>
        %n = reg.row_reduce sum %x : !reg.frag<line, i=2, j=1024 : f32> -> !reg.frag<line, i=2 : f32>
    """

    name = "reg.row_reduce"
    input = operand_def(FragType)
    kind = prop_def(StringAttr)
    result = result_def(FragType)
    values = staticmethod(_row_values)

    def takes(self, t: FragType) -> None:
        require(is_tile(t), self, f"reduces the rows of a 'c' or two-axis 'line' fragment, got {t}")


def _parts_of_rows(op: IRDLOperation, part: SSAValue, rows: FragType) -> None:
    t = part.type
    require(isinstance(t, FragType) and t.role.data == "row_part" and (t.rows_axis, t.dims[0]) == (rows.rows_axis, rows.dims[0]),
            op, f"the parts must be a 'row_part' fragment of {rows.rows_axis}={rows.dims[0]}, got {t}")


class FragPairOp(FragMathOp):
    """What the ops of two fragment operands share: the syntax `%a, %b [more] : types ->
    type`, `more` being the op's own (`_print_more`, `_parse_more`: its properties), and
    the phrase a missing comma is reported with (`_between`)."""

    @classmethod
    def _between(cls) -> str:
        raise NotImplementedError

    def _print_more(self, printer: Printer) -> None:
        pass

    @classmethod
    def _parse_more(cls, parser: Parser) -> dict[str, Attribute]:
        return {}

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        self._print_more(printer)
        self._print_tail(printer, list(self.operands))

    @classmethod
    def parse(cls, parser: Parser) -> FragPairOp:
        operands = [parser.parse_unresolved_operand()]
        parser.parse_punctuation(",", f" between {cls._between()}")
        operands.append(parser.parse_unresolved_operand())
        props = cls._parse_more(parser)
        inputs, rt, attrs = cls._parse_tail(parser, operands)
        op = cls.create(operands=inputs, result_types=[rt], properties=props)
        op.attributes.update(attrs)
        return op


@irdl_op_definition
class RowAccumulateOp(FragPairOp):
    """Each lane's own values of each row of a `c` fragment added onto its part of the row's
    sum (`acc`, a `row_part` fragment), one chain a row, the part first; no lane exchanges
    values. A running row sum kept so across a loop costs no shuffle a trip:
    `reg.row_combine` adds the quad's parts once, where the sum is read. The chain starting
    from the part (the sum so far times the trip's correction, in attention) puts that
    product first in the dependences, so ptxas issues its exponential before the trip's.

        %l = reg.row_accumulate %acc, %p : !reg.frag<row_part, i=16 : f32>, !reg.frag<c, i=16, j=128 : f32> -> !reg.frag<row_part, i=16 : f32>
    """

    name = "reg.row_accumulate"
    acc = operand_def(FragType)
    input = operand_def(FragType)
    result = result_def(FragType)

    def __init__(self, acc: SSAValue, input: SSAValue):
        super().__init__(operands=[acc, input], result_types=[acc.type])

    def verify_(self) -> None:
        t = self.input.type
        require(isinstance(t, FragType) and t.role.data == "c", self, f"accumulates the rows of a 'c' fragment, got {t}")
        _parts_of_rows(self, self.acc, t)  # type: ignore[arg-type]
        require(self.result.type == self.acc.type, self, f"the result should be {self.acc.type}, got {self.result.type}")

    @classmethod
    def _between(cls) -> str:
        return "the parts and the fragment"


@irdl_op_definition
class RowCombineOp(FragMathOp):
    """Each row's sum from its parts (a `row_part` fragment): the 4 lanes of a quad add
    theirs (two butterfly shuffles), so that every lane holding the row has the sum, a `row`
    fragment.

        %s = reg.row_combine %l : !reg.frag<row_part, i=16 : f32> -> !reg.frag<row, i=16 : f32>
    """

    name = "reg.row_combine"
    input = operand_def(FragType)
    result = result_def(FragType)

    def __init__(self, input: SSAValue):
        t = input.type
        assert isinstance(t, FragType)
        super().__init__(operands=[input], result_types=[FragType("row", {t.rows_axis: t.dims[0]}, f32)])

    def verify_(self) -> None:
        t = self.input.type
        require(isinstance(t, FragType) and t.role.data == "row_part", self, f"combines a 'row_part' fragment, got {t}")
        want = FragType("row", {t.rows_axis: t.dims[0]}, f32)  # type: ignore[union-attr]
        require(self.result.type == want, self, f"the result should be {want}, got {self.result.type}")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.input)
        self._print_tail(printer, [self.input])

    @classmethod
    def parse(cls, parser: Parser) -> RowCombineOp:
        operand = parser.parse_unresolved_operand()
        (inp,), rt, attrs = cls._parse_tail(parser, [operand])
        op = cls.create(operands=[inp], result_types=[rt])
        op.attributes.update(attrs)
        return op


MAX_SLACK = 64.0  # the most log2 units a `reg.lazy_max` may stay below a row's values


@irdl_op_definition
class LazyMaxOp(FragPairOp):
    """A running row max that moves only where it must (FlashAttention-4's lazy rescale):
    `old` in every lane of a warp where none of the warp's rows has a `new` value more than
    `slack` above its `old`; else each row's max of the two. All of a warp's lanes take the
    same side (a vote), so the trip's correction exp2(old - max) is exactly 1 in a whole
    warp whenever the max stays, and `reg.rescale` skips its products there. With the max
    stale by at most `slack` (log2 units, attention's scores being scaled by log2 e), the
    exponentials stay at most 2^slack: a softmax's numerator and denominator both carry the
    same stale max, so their quotient is unchanged.

        %m = reg.lazy_max %old, %new slack 8.0 : !reg.frag<row, i=16 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<row, i=16 : f32>
    """

    name = "reg.lazy_max"
    old = operand_def(FragType)
    new = operand_def(FragType)
    slack = prop_def(FloatAttr[Float32Type])
    result = result_def(FragType)

    def __init__(self, old: SSAValue, new: SSAValue, slack: float):
        super().__init__(operands=[old, new], properties={"slack": FloatAttr(slack, f32)}, result_types=[old.type])

    def verify_(self) -> None:
        t = self.old.type
        require(isinstance(t, FragType) and t.role.data == "row", self, f"keeps a running max of a 'row' fragment, got {t}")
        require(self.new.type == t and self.result.type == t, self,
                f"the new values and the result are of the running max's type {t}, got {self.new.type} and {self.result.type}")
        slack = self.slack.value.data
        require(0.0 <= slack <= MAX_SLACK, self,
                f"the slack is the log2 units a max may stay below the values (0 to {MAX_SLACK:g}), got {slack}")

    @classmethod
    def _between(cls) -> str:
        return "the running max and the new values"

    def _print_more(self, printer: Printer) -> None:
        printer.print_string(f" slack {format_float(self.slack.value.data)}")

    @classmethod
    def _parse_more(cls, parser: Parser) -> dict[str, Attribute]:
        parser.parse_keyword("slack", " (the log2 units the max may stay below the values)")
        return {"slack": FloatAttr(_parse_float(parser, "the slack"), f32)}


@irdl_op_definition
class RescaleOp(FragPairOp):
    """`acc` times each row's `factor` (a `c` fragment times a `row` fragment of its rows),
    as `reg.map mul`, but the products are skipped, a branch every lane of a warp takes
    together, where each factor of the warp is 1: an accumulator's correction after a
    `reg.lazy_max` that kept the max, most trips of a long stream.

        %o = reg.rescale %acc, %corr : !reg.frag<c, i=16, d=128 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<c, i=16, d=128 : f32>
    """

    name = "reg.rescale"
    acc = operand_def(FragType)
    factor = operand_def(FragType)
    result = result_def(FragType)

    def __init__(self, acc: SSAValue, factor: SSAValue):
        super().__init__(operands=[acc, factor], result_types=[acc.type])

    def verify_(self) -> None:
        t, f = self.acc.type, self.factor.type
        require(isinstance(t, FragType) and t.role.data == "c" and t.dtype == "f32", self, f"rescales a 'c' fragment of f32, got {t}")
        want = FragType("row", {t.rows_axis: t.dims[0]}, f32)  # type: ignore[union-attr]
        require(f == want, self, f"the factors are one a row: {want}, got {f}")
        require(self.result.type == t, self, f"the result should be {t}, got {self.result.type}")

    @classmethod
    def _between(cls) -> str:
        return "the accumulator and its factors"


def _col_values(t: FragType) -> FragType:
    """The fragment of one value per column of a two-axis `line` fragment: a `line_col` of its
    columns and span."""
    return FragType("line_col", {t.axis_names[1]: t.dims[1]}, f32, t.span.data)


@irdl_op_definition
class ColReduceOp(FragReduceOp):
    """Sum or max of each column of a two-axis `line` fragment, down its rows: each lane
    reduces its own values of a column (one a row it holds), then the lanes that hold the
    column's other rows (256 / span of them, lanes 8 apart for span 64) exchange theirs, so
    every lane holding the column has the result, a `line_col` fragment of its columns and
    span (a bias's gradient: the sum of a tile's rows).

        %s = reg.col_reduce sum %x : !reg.frag<line, m=64, n=64 : f32, span=64> -> !reg.frag<line_col, n=64 : f32, span=64>
    """

    name = "reg.col_reduce"
    input = operand_def(FragType)
    kind = prop_def(StringAttr)
    result = result_def(FragType)
    values = staticmethod(_col_values)

    def takes(self, t: FragType) -> None:
        require(is_tile(t) and t.role.data == "line", self, f"reduces the columns of a two-axis 'line' fragment, got {t}")


class FragFillOutsideOp(FragMathOp):
    """Base of the masks on a `c` fragment: keep the values whose positions satisfy a
    condition, put `fill` in the others. `at [...]` gives where the block's tile starts along
    the axes the condition reads; the warp's own place in the tile (its index along the
    `reg.warps` axis times the fragment's rows) is added to it."""

    input = operand_def(FragType)
    offsets = var_operand_def(IndexType)
    fill = prop_def(FloatAttr[Float32Type])
    result = result_def(FragType)

    def _verify_fill(self, axes: Sequence[str]) -> FragType:
        t = _math_frag(self, self.input, "the input")
        require(t.role.data == "c", self, f"masks a 'c' fragment, got {t}")
        for a in axes:
            require(a in t.shape, self, f"axis '{a}' is not an axis of {t}")
        require(len(self.offsets) == len(axes), self, f"takes {len(axes)} offset(s) (where the tile starts along {', '.join(axes)}), got {len(self.offsets)}")
        require(not math.isnan(self.fill.value.data), self, "the fill value must be a number, got NaN")
        require(self.result.type == t, self, f"the result has the input's type {t}, got {self.result.type}")
        return t

    def _print_fill(self, printer: Printer) -> None:
        printer.print_string(f" fill {format_float(self.fill.value.data)} at [")
        printer.print_list(self.offsets, printer.print_operand)
        printer.print_string("]")
        self._print_tail(printer, [self.input])

    @classmethod
    def _parse_fill(cls, parser: Parser) -> tuple[float, list[SSAValue]]:
        parser.parse_keyword("fill")
        fill = _parse_float(parser, "the fill value")
        parser.parse_keyword("at")
        pos = parser.pos
        unresolved = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_unresolved_operand)
        return fill, parser.resolve_operands(unresolved, [IndexType()] * len(unresolved), pos)

    @classmethod
    def _parse_rest(cls, parser: Parser, operand: Parser.UnresolvedOperand, props: dict[str, Attribute]) -> FragFillOutsideOp:
        """`fill F at [offsets] attr-dict : type -> type`, after the op's own words."""
        fill, offsets = cls._parse_fill(parser)
        (inp,), rt, attrs = cls._parse_tail(parser, [operand])
        op = cls.create(operands=[inp, *offsets], result_types=[rt], properties={**props, "fill": FloatAttr(fill, f32)})
        op.attributes.update(attrs)
        return op  # type: ignore[return-value]


@irdl_op_definition
class MaskOp(FragFillOutsideOp):
    """The causal mask on a `c` fragment: keep the value at (row, col) where the row's
    position is at least the column's, fill the others. The mask's row axis is the
    fragment's rows, or its columns (a block that holds keys and streams queries: the
    offsets stay in the mask's order, row first).

        %m = reg.mask causal %s keep i >= j fill -inf at [%i0, %j0] : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<c, i=16, j=64 : f32>
    """

    name = "reg.mask"
    row = prop_def(StringAttr)
    col = prop_def(StringAttr)

    def __init__(self, input: SSAValue, row: str, col: str, fill: float, offsets: Sequence[SSAValue]):
        super().__init__(operands=[input, list(offsets)], result_types=[input.type],
                         properties={"row": StringAttr(row), "col": StringAttr(col), "fill": FloatAttr(fill, f32)})

    def verify_(self) -> None:
        t = self._verify_fill([self.row.data, self.col.data])
        require(set(t.axis_names) == {self.row.data, self.col.data}, self,
                f"compares the fragment's rows and columns ({', '.join(t.axis_names)}), got {self.row.data} >= {self.col.data}")

    def print(self, printer: Printer) -> None:
        printer.print_string(" causal ")
        printer.print_operand(self.input)
        printer.print_string(f" keep {self.row.data} >= {self.col.data}")
        self._print_fill(printer)

    @classmethod
    def parse(cls, parser: Parser) -> MaskOp:
        parser.parse_keyword("causal")
        operand = parser.parse_unresolved_operand()
        parser.parse_keyword("keep")
        row = parser.parse_identifier(" (the row axis)")
        parser.parse_punctuation(">", " (the mask keeps row >= column)")
        parser.parse_punctuation("=", " (the mask keeps row >= column)")
        col = parser.parse_identifier(" (the column axis)")
        return cls._parse_rest(parser, operand, {"row": StringAttr(row), "col": StringAttr(col)})  # type: ignore[return-value]


@irdl_op_definition
class MaskBoundOp(FragFillOutsideOp):
    """Keep the values whose position along one axis is below `bound`, fill the others.

        %t = reg.mask_bound %s keep j < 200 fill -inf at [%j0] : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<c, i=16, j=64 : f32>
    """

    name = "reg.mask_bound"
    axis = prop_def(StringAttr)
    bound = prop_def(IntAttr)

    def __init__(self, input: SSAValue, axis: str, bound: int, fill: float, offsets: Sequence[SSAValue]):
        super().__init__(operands=[input, list(offsets)], result_types=[input.type],
                         properties={"axis": StringAttr(axis), "bound": IntAttr(bound), "fill": FloatAttr(fill, f32)})

    def verify_(self) -> None:
        require(self.bound.data >= 0, self, f"the bound must not be negative, got {self.bound.data}")
        self._verify_fill([self.axis.data])

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.input)
        printer.print_string(f" keep {self.axis.data} < {self.bound.data}")
        self._print_fill(printer)

    @classmethod
    def parse(cls, parser: Parser) -> MaskBoundOp:
        operand = parser.parse_unresolved_operand()
        parser.parse_keyword("keep")
        axis = parser.parse_identifier(" (the bounded axis)")
        parser.parse_punctuation("<", " (the mask keeps axis < bound)")
        bound = parser.parse_integer(allow_boolean=False, allow_negative=True, context_msg=" (the bound)")
        return cls._parse_rest(parser, operand, {"axis": StringAttr(axis), "bound": IntAttr(bound)})  # type: ignore[return-value]


@irdl_op_definition
class ToAOp(IRDLOperation):
    """The 16 columns of a `c` fragment that start at `at`, rounded to bf16 or f16, as an `a`
    fragment: the scores of attention become the first operand of its second product.
    In mma.sync m16n8k16 the accumulators of two adjacent 8-column tiles sit in the lanes
    and the order that the `a` operand of a 16-wide slice wants them, so this only packs
    each lane's pairs of values (cvt.rn.bf16x2.f32); nothing crosses lanes.

        %p = reg.to_a %s {at = #hbm.labels<j=16>} : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<a, i=16, j=16 : bf16>
    """

    name = "reg.to_a"
    input = operand_def(FragType)
    at = prop_def(LabelsAttr)
    result = result_def(FragType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, at: int, element_type: Attribute):
        t = input.type
        assert isinstance(t, FragType)
        rows, cols = t.axis_names
        super().__init__(operands=[input], properties={"at": LabelsAttr({cols: at})},
                         result_types=[FragType("a", {rows: t.shape[rows], cols: 16}, element_type)])

    def verify_(self) -> None:
        c, a = _frag(self.input), _frag(self.result)
        require(c.role.data == "c" and a.role.data == "a", self, f"takes a 'c' fragment to an 'a' fragment, got {c} -> {a}")
        require(a.axis_names == c.axis_names and a.dims[0] == c.dims[0], self, f"keeps the rows and the axes of {c}, got {a}")
        at = parse_labels(self.at)
        cols = c.axis_names[1]
        require(list(at) == [cols], self, f"`at` names the column axis '{cols}' alone, got {list(at)}")
        o = at[cols]
        require(o % 16 == 0 and 0 <= o and o + 16 <= c.dims[1], self, f"a 16-wide slice at {o} along '{cols}' does not fit {c}")

    @property
    def start(self) -> int:
        return parse_labels(self.at)[_frag(self.input).axis_names[1]]


REG = Dialect("reg", [ZerosOp, LdmatrixOp, LoadOp, ReadOp, MmaOp, StoreOp, StmatrixOp, WriteOp, WgmmaOp, WgmmaRsOp, TurnStartOp, TurnWaitOp, TurnPassOp, WgmmaCommitOp, WgmmaWaitOp, FillOp, MapOp, RowReduceOp, RowAccumulateOp, RowCombineOp, LazyMaxOp, RescaleOp, ColReduceOp,
                      MaskOp, MaskBoundOp, ToAOp], [FragType])

__all__ = ["LINES", "REG", "VECTORS", "ColReduceOp", "FillOp", "FragType", "LazyMaxOp", "LdmatrixOp", "LoadOp", "MapOp", "MaskBoundOp", "MaskOp", "MmaOp", "ReadOp", "RescaleOp", "RowAccumulateOp", "RowCombineOp", "RowReduceOp", "StmatrixOp", "StoreOp", "ToAOp", "TurnPassOp", "TurnStartOp", "TurnWaitOp",
           "WgmmaCommitOp", "WgmmaOp", "WgmmaRsOp", "WgmmaWaitOp", "WriteOp", "ZerosOp", "lane_layout"]
