"""The `reg` dialect: per-warp register fragments and the tensor-core steps on them.

Below `smem-to-reg`, the block's warps split each tile: the kernel's `reg.warps` labels
(`["m:2", "n:2"]`) say how many warps share each axis, and a fragment type
(`!reg.frag<c, m=64, n=32 : f32>`) is one warp's part, held across its 32 lanes in the
layout the sm_80 `mma.sync.m16n8k16` instruction fixes for its role: `a` (rows x 16, bf16
or f16), `b` (16 x columns), `c` (rows x columns, f32 accumulators). `reg.ldmatrix` loads
a warp's fragment from a shared-memory stage, `reg.mma` multiplies and accumulates, and
`reg.store` converts the accumulators to the global's type and writes the warp's tile.
`lane_layout` gives, for each role, which element every lane's every value holds: the
interpreter computes through it, and `reg-to-ptx` addresses by it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, IndexType, IntAttr, IntegerAttr, StringAttr, i32
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from napkin_ir.dialects.hbm import GlobalType, parse_labels
from napkin_ir.dialects.ncd import NamedAxesType
from napkin_ir.dialects.smem import BufferType
from napkin_ir.dialects.utils import require

ROLES = ("a", "b", "c")


@irdl_attr_definition
class FragType(NamedAxesType):
    """One warp's fragment: `!reg.frag<a, m=64, k=16 : bf16>`, `!reg.frag<c, m=64, n=32 : f32>`."""

    name = "reg.frag"
    role: StringAttr

    def __init__(self, role: str, shape: dict[str, int], element_type: Attribute):
        ParametrizedAttribute.__init__(
            self, ArrayAttr([StringAttr(a) for a in shape]), ArrayAttr([IntAttr(v) for v in shape.values()]),
            element_type, StringAttr(role),
        )

    def verify(self) -> None:
        super().verify()
        role, dims, dt = self.role.data, self.dims, self.dtype
        if role not in ROLES:
            raise VerifyException(f"!reg.frag: role must be a, b or c, got '{role}'")
        if len(dims) != 2:
            raise VerifyException(f"!reg.frag: a fragment has two axes, got {len(dims)}")
        rows, cols = dims
        want = {"a": (16, 16), "b": (16, 8), "c": (16, 8)}[role]
        if rows % want[0] or cols % want[1] or (role == "a" and cols != 16) or (role == "b" and rows != 16):
            shape = {"a": "rows a multiple of 16 by 16", "b": "16 by columns a multiple of 8", "c": "rows a multiple of 16 by columns a multiple of 8"}[role]
            raise VerifyException(f"!reg.frag: an '{role}' fragment is {shape} (mma.sync m16n8k16), got {rows} x {cols}")
        if (role == "c") != (dt == "f32") or dt not in ("f32", "bf16", "f16"):
            raise VerifyException(f"!reg.frag: '{role}' fragments hold {'f32' if role == 'c' else 'bf16 or f16'}, got {dt}")

    def values_per_lane(self) -> int:
        rows, cols = self.dims
        return rows * cols // 32

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(f"{self.role.data}, ")
            self.print_shape(printer)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<", " to open !reg.frag")
        pos = parser.pos
        role = parser.parse_identifier(" (a, b or c)")
        if role not in ROLES:
            parser.raise_error(f"a fragment's role is a, b or c, got '{role}'", pos, parser.pos)
        parser.parse_punctuation(",")
        axes, sizes, et = cls.parse_shape(parser)
        parser.parse_punctuation(">", " to close !reg.frag")
        return axes, sizes, et, StringAttr(role)


@lru_cache(maxsize=None)
def lane_layout(role: str, rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """(row, col) of value v of lane l, as two [32, values] arrays, for a warp's fragment.

    The fragment is a grid of mma.sync m16n8k16 operand tiles, taken row-major; within a
    tile, lane l = 4 g + t holds (PTX ISA, mma.m16n8k16 fragment layouts):
      a (16 x 16): register i, half j -> row g + 8 (i % 2), col 2 t + j + 8 (i // 2)
      b (16 x 8):  register i, half j -> row 2 t + j + 8 i,  col g
      c (16 x 8):  value q            -> row g + 8 (q // 2), col 2 t + q % 2
    """
    lanes = np.arange(32)[:, None]
    g, t = lanes // 4, lanes % 4
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
    (`["k:16"]`: the second 16-wide slice of k).

        %a = reg.ldmatrix %buf[%s] {at = ["k:16"]} : !smem.buffer<m=128, k=32 : bf16, stages=3, layout=row> -> !reg.frag<a, m=64, k=16 : bf16>
    """

    name = "reg.ldmatrix"
    source = operand_def(BufferType)
    stage = operand_def(IndexType)
    at = prop_def(ArrayAttr[StringAttr])
    result = result_def(FragType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$source `[` $stage `]` attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, stage: SSAValue, at: dict[str, int], t: FragType):
        super().__init__(operands=[source, stage], properties={"at": ArrayAttr([StringAttr(f"{a}:{o}") for a, o in at.items()])}, result_types=[t])

    def verify_(self) -> None:
        b, f = self.source.type, _frag(self.result)
        assert isinstance(b, BufferType)
        require(f.role.data in ("a", "b"), self, "loads a or b fragments")
        require(set(f.axis_names) == set(b.axis_names), self, f"the fragment's axes {list(f.axis_names)} must be the buffer's {list(b.axis_names)}")
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

        reg.store %c, %out[%m0, %n0] : !reg.frag<c, m=64, n=32 : f32>, !hbm.global<m=512, n=384 : bf16>
    """

    name = "reg.store"
    value = operand_def(FragType)
    dest = operand_def(GlobalType)
    offsets = var_operand_def(IndexType)
    assembly_format = "$value `,` $dest `[` $offsets `]` attr-dict `:` type($value) `,` type($dest)"

    def __init__(self, value: SSAValue, dest: SSAValue, offsets: Sequence[SSAValue]):
        super().__init__(operands=[value, dest, list(offsets)])

    def verify_(self) -> None:
        f, g = _frag(self.value), self.dest.type
        assert isinstance(g, GlobalType)
        require(f.role.data == "c", self, "stores accumulators (role c)")
        require(f.axis_names == g.axis_names, self, f"the fragment's axes {list(f.axis_names)} must be the global's {list(g.axis_names)}, in order")
        require(len(self.offsets) == len(g.axis_names), self, f"takes one offset per axis of the global ({len(g.axis_names)}), got {len(self.offsets)}")


@irdl_op_definition
class WgmmaOp(IRDLOperation):
    """acc + A . B for one 16-wide slice of the contracted axis (at `at`), read by the tensor
    cores straight from two shared-memory stages (sm_90a `wgmma.mma_async` m64nNk16).

    The instruction belongs to a warpgroup (4 warps, 64 rows); the accumulator type is one
    warp's part of it, 16 rows by all N columns, in the same lane layout as a `c` fragment.
    The warp's rows follow its index along the `reg.warps` axis; B is read whole. The
    product runs asynchronously: it is complete only after a `reg.wgmma_wait` retires its
    group (`reg.wgmma_commit` closes one), and only then may its stages be released.

        %d = reg.wgmma %a[%s], %b[%s], %c {at = ["k:16"]} : !smem.buffer<m=128, k=64 : bf16, stages=4, layout=swizzle>, !smem.buffer<k=64, n=256 : bf16, stages=4, layout=swizzle>, !reg.frag<c, m=16, n=256 : f32> -> !reg.frag<c, m=16, n=256 : f32>
    """

    name = "reg.wgmma"
    a = operand_def(BufferType)
    a_stage = operand_def(IndexType)
    b = operand_def(BufferType)
    b_stage = operand_def(IndexType)
    c = operand_def(FragType)
    at = prop_def(ArrayAttr[StringAttr])
    result = result_def(FragType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = ("$a `[` $a_stage `]` `,` $b `[` $b_stage `]` `,` $c attr-dict `:` type($a) `,` type($b) `,` type($c) "
                       "`->` type($result)")

    def __init__(self, a: SSAValue, a_stage: SSAValue, b: SSAValue, b_stage: SSAValue, c: SSAValue, at: dict[str, int]):
        super().__init__(operands=[a, a_stage, b, b_stage, c], result_types=[c.type],
                         properties={"at": ArrayAttr([StringAttr(f"{k}:{o}") for k, o in at.items()])})

    def axes(self) -> tuple[str, str, str]:
        """(rows, cols, contracted)."""
        c = _frag(self.c)
        a = self.a.type
        assert isinstance(a, BufferType)
        rows, cols = c.axis_names
        (k,) = [x for x in a.axis_names if x != rows]
        return rows, cols, k

    def verify_(self) -> None:
        a, b, c = self.a.type, self.b.type, _frag(self.c)
        assert isinstance(a, BufferType) and isinstance(b, BufferType)
        require(c.role.data == "c" and c.dims[0] == 16, self, f"accumulates into one warp's 16 rows of a warpgroup tile (role c, 16 rows), got {c}")
        require(8 <= c.dims[1] <= 256 and c.dims[1] % 8 == 0, self, f"N must be a multiple of 8 from 8 to 256, got {c.dims[1]}")
        require(_frag(self.result) == c, self, "the result has the accumulators' type")
        require(len(a.axis_names) == 2 and len(b.axis_names) == 2, self, "A and B are two-axis tiles")
        rows, cols = c.axis_names
        ks = [x for x in a.axis_names if x != rows]
        require(rows in a.axis_names and len(ks) == 1 and set(b.axis_names) == {ks[0], cols}, self,
                f"expects A<{rows}, k> and B<k, {cols}> for accumulators <{rows}, {cols}>, got A{list(a.axis_names)} B{list(b.axis_names)}")
        require(a.element_type == b.element_type and a.dtype in ("bf16", "f16"), self, f"A and B are both bf16 or both f16, got {a.element_type} and {b.element_type}")
        require(b.shape[cols] == c.shape[cols], self, f"B's {b.shape[cols]} columns differ from the accumulators' {c.shape[cols]}")
        for buf, what in ((a, "A"), (b, "B")):
            require(buf.layout.data == "swizzle", self, f"{what} must be in a 128-byte swizzled buffer (layout=swizzle), got layout={buf.layout.data}")
        at = parse_labels(self.at)
        require(set(at) == set(ks), self, f"`at` names the contracted axis '{ks[0]}' alone, got {list(at)}")
        o = at[ks[0]]
        require(o % 16 == 0 and 0 <= o and o + 16 <= a.shape[ks[0]], self, f"a 16-wide slice at {o} along '{ks[0]}' does not fit the tile's {a.shape[ks[0]]}")


@irdl_op_definition
class WgmmaCommitOp(IRDLOperation):
    """Close the group of `reg.wgmma` products issued since the last commit."""

    name = "reg.wgmma_commit"
    assembly_format = "attr-dict"


@irdl_op_definition
class WgmmaWaitOp(IRDLOperation):
    """Wait until at most `pending` committed wgmma groups are still running."""

    name = "reg.wgmma_wait"
    pending = prop_def(IntegerAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict"

    def __init__(self, pending: int):
        super().__init__(properties={"pending": IntegerAttr(pending, i32)})

    def verify_(self) -> None:
        require(0 <= self.pending.value.data <= 7, self, f"pending must be in 0..7, got {self.pending.value.data}")


REG = Dialect("reg", [ZerosOp, LdmatrixOp, MmaOp, StoreOp, WgmmaOp, WgmmaCommitOp, WgmmaWaitOp], [FragType])

__all__ = ["REG", "FragType", "LdmatrixOp", "MmaOp", "StoreOp", "WgmmaCommitOp", "WgmmaOp", "WgmmaWaitOp", "ZerosOp", "lane_layout"]
