"""The `ptx` ops for asynchronous copies and tensor cores (Ampere and Hopper).

Ampere: cp.async with its groups, ldmatrix/stmatrix, mma.sync. Hopper: mbarriers,
the bulk tensor copies of the TMA unit, wgmma and setmaxnreg. The verifiers check what
ptxas would otherwise reject late and obscurely: fragment register counts per shape,
wgmma's N, copy sizes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import IntegerAttr, StringAttr, UnitAttr
from xdsl.ir import SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    var_operand_def,
    var_result_def,
)

from napkin_ir.dialects.ptx.ops import InstrOp, Namer, PtxOp, _addr, _i, _need_class, _props, _vec
from napkin_ir.dialects.utils import require
from napkin_ir.dialects.ptx.registers import RegType, reg_class_of

class NullaryOp(InstrOp):
    """An instruction with no operands and a fixed text (commits and fences)."""

    TEXT: ClassVar[str]

    def __init__(self):
        super().__init__(operands=[[]], result_types=[[]])

    def ptx_lines(self, names: Namer) -> list[str]:
        return [self.TEXT]


class WaitGroupOp(InstrOp):
    """Wait until at most `n` (0..7) groups of asynchronous operations are pending."""

    TEXT: ClassVar[str]  # a format string with {n}
    n = prop_def(IntegerAttr)

    def __init__(self, n: int, **props: object):
        super().__init__(operands=[[]], result_types=[[]], properties=_props(n=n, **props))

    def verify_(self) -> None:
        require(0 <= _i(self.n) <= 7, self, f"n must be in 0..7, got {_i(self.n)}")

    def ptx_lines(self, names: Namer) -> list[str]:
        return [self.TEXT.format(n=_i(self.n))]


# --------------------------------------------------------------------------------------
# Ampere: cp.async, ldmatrix, stmatrix, mma.sync
# --------------------------------------------------------------------------------------


@irdl_op_definition
class CpAsyncOp(InstrOp):
    """Asynchronous global -> shared copy:
    `{@p} cp.async.{ca,cg}.shared.global [dst{+dst_offset}], [src{+src_offset}], size{, src_size};`.

    Sources: the shared address (b32), the global address (b64), for zero-fill the number
    of bytes to read (b32; the rest of `size` is filled with zeros), and last an optional
    guard predicate (the copy happens only where it holds). The offsets are immediates
    added to the addresses: a loop keeps one base register and varies the immediates.
    """

    name = "ptx.cp_async"
    cache = prop_def(StringAttr)
    size = prop_def(IntegerAttr)
    dst_offset = opt_prop_def(IntegerAttr)
    src_offset = opt_prop_def(IntegerAttr)

    def __init__(self, dst: SSAValue, src: SSAValue, size: int, *, cache: str = "cg", src_size: SSAValue | None = None,
                 dst_offset: int = 0, src_offset: int = 0, guard: SSAValue | None = None):
        srcs = [dst, src] + ([src_size] if src_size else []) + ([guard] if guard else [])
        super().__init__(operands=[srcs], result_types=[[]],
                         properties=_props(cache=cache, size=size, dst_offset=dst_offset or None, src_offset=src_offset or None))

    @property
    def guard(self) -> SSAValue | None:
        if len(self.srcs) < 3:
            return None
        cls = reg_class_of(self.srcs[-1])
        return self.srcs[-1] if cls is not None and cls.name == "pred" else None

    @property
    def src_size(self) -> SSAValue | None:
        extra = list(self.srcs[2:])
        if self.guard is not None:
            extra.pop()
        return extra[0] if extra else None

    def verify_(self) -> None:
        cache, size = self.cache.data, _i(self.size)
        require(cache in ("ca", "cg"), self, f"cache must be ca or cg, got '{cache}'")
        require(size in (4, 8, 16), self, f"copies 4, 8 or 16 bytes, got {size}")
        require(cache == "ca" or size == 16, self, "cp.async.cg copies 16 bytes only")
        extra = len(self.srcs) - 2 - (self.guard is not None)
        require(len(self.srcs) >= 2 and extra in (0, 1) and not self.dsts, self,
                "takes a shared address, a global address, an optional source size and an optional guard predicate")
        _need_class(self, "the shared address", self.srcs[0], "b32")
        _need_class(self, "the global address", self.srcs[1], "b64")
        if self.src_size is not None:
            _need_class(self, "the source size", self.src_size, "b32")
        require(_i(self.dst_offset) % size == 0 and _i(self.src_offset) % size == 0, self,
                f"the offsets must keep the {size}-byte alignment, got {_i(self.dst_offset)} and {_i(self.src_offset)}")

    def ptx_lines(self, names: Namer) -> list[str]:
        guard = f"@{names(self.guard)} " if self.guard is not None else ""
        extra = f", {names(self.src_size)}" if self.src_size is not None else ""
        dst, src = _addr(names, self.srcs[0], _i(self.dst_offset)), _addr(names, self.srcs[1], _i(self.src_offset))
        return [f"{guard}cp.async.{self.cache.data}.shared.global {dst}, {src}, {_i(self.size)}{extra};"]


@irdl_op_definition
class CpAsyncCommitGroupOp(NullaryOp):
    """Close the current group of cp.async copies: `cp.async.commit_group;`."""

    name = "ptx.cp_async_commit_group"
    TEXT: ClassVar[str] = "cp.async.commit_group;"


@irdl_op_definition
class CpAsyncWaitGroupOp(WaitGroupOp):
    """Wait until at most `n` cp.async groups are pending: `cp.async.wait_group n;`."""

    name = "ptx.cp_async_wait_group"
    TEXT: ClassVar[str] = "cp.async.wait_group {n};"


@irdl_op_definition
class LdmatrixOp(InstrOp):
    """Load 8x8 b16 matrices from shared memory into fragments:
    `ldmatrix.sync.aligned.m8n8.x4{.trans}.shared.b16 {d0, d1, d2, d3}, [addr{+offset}];`
    (`offset`: an immediate added to the address)."""

    name = "ptx.ldmatrix"
    num = prop_def(IntegerAttr)
    trans = opt_prop_def(IntegerAttr)
    offset = opt_prop_def(IntegerAttr)

    def __init__(self, addr: SSAValue, num: int, trans: bool = False, offset: int = 0):
        super().__init__(operands=[[addr]], result_types=[[RegType("b32")] * num], properties=_props(num=num, trans=trans or None, offset=offset or None))

    def verify_(self) -> None:
        num = _i(self.num)
        require(num in (1, 2, 4), self, f"loads 1, 2 or 4 matrices (x1, x2, x4), got {num}")
        require(len(self.dsts) == num, self, f"x{num} gives {num} registers, got {len(self.dsts)} results")
        require(len(self.srcs) == 1, self, "takes one shared address")
        _need_class(self, "the address", self.srcs[0], "b32")
        require(_i(self.offset) % 16 == 0, self, f"the offset must keep the rows' 16-byte alignment, got {_i(self.offset)}")
        for n, v in enumerate(self.dsts):
            _need_class(self, f"result #{n}", v, "b32", "bf16x2", "f16x2")

    def ptx_lines(self, names: Namer) -> list[str]:
        trans = ".trans" if _i(self.trans) else ""
        return [f"ldmatrix.sync.aligned.m8n8.x{_i(self.num)}{trans}.shared.b16 {_vec(names, self.dsts)}, {_addr(names, self.srcs[0], _i(self.offset))};"]


@irdl_op_definition
class StmatrixOp(InstrOp):
    """Store fragments as 8x8 b16 matrices to shared memory (sm_90):
    `stmatrix.sync.aligned.m8n8.x4{.trans}.shared.b16 [addr], {r0, r1, r2, r3};`."""

    name = "ptx.stmatrix"
    trans = opt_prop_def(IntegerAttr)

    def __init__(self, addr: SSAValue, values: Sequence[SSAValue], trans: bool = False):
        super().__init__(operands=[[addr, *values]], result_types=[[]], properties=_props(trans=trans or None))

    def verify_(self) -> None:
        require(len(self.srcs) - 1 in (1, 2, 4), self, f"stores 1, 2 or 4 matrices, got {len(self.srcs) - 1} registers")
        _need_class(self, "the address", self.srcs[0], "b32")
        for n, v in enumerate(self.srcs[1:]):
            _need_class(self, f"register #{n}", v, "b32", "bf16x2", "f16x2")

    def ptx_lines(self, names: Namer) -> list[str]:
        trans = ".trans" if _i(self.trans) else ""
        return [f"stmatrix.sync.aligned.m8n8.x{len(self.srcs) - 1}{trans}.shared.b16 [{names(self.srcs[0])}], {_vec(names, self.srcs[1:])};"]


MMA_SHAPES = {"m16n8k16": (4, 2), "m16n8k8": (2, 1)}  # A and B registers per thread


@irdl_op_definition
class MmaSyncOp(PtxOp):
    """Warp-level tensor-core product: `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 d, a, b, c;`.

    Per thread: m16n8k16 takes 4 A registers, 2 B registers (b32, two bf16/f16 each) and
    4 f32 accumulators; m16n8k8 takes 2 A and 1 B.
    """

    name = "ptx.mma_sync"
    a = var_operand_def(RegType)
    b = var_operand_def(RegType)
    c = var_operand_def(RegType)
    d = var_result_def(RegType)
    shape = prop_def(StringAttr)
    atype = prop_def(StringAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = (
        "`a` `(` $a `)` `b` `(` $b `)` `c` `(` $c `)` attr-dict "
        "`:` `(` type($a) `)` `(` type($b) `)` `(` type($c) `)` `->` `(` type($d) `)`"
    )

    def __init__(self, shape: str, atype: str, a: Sequence[SSAValue], b: Sequence[SSAValue], c: Sequence[SSAValue]):
        super().__init__(operands=[list(a), list(b), list(c)], result_types=[[RegType("f32")] * 4], properties=_props(shape=shape, atype=atype))

    def verify_(self) -> None:
        shape, atype = self.shape.data, self.atype.data
        require(shape in MMA_SHAPES, self, f"shape must be one of {', '.join(MMA_SHAPES)}, got {shape}")
        require(atype in ("bf16", "f16"), self, f"inputs must be bf16 or f16, got {atype}")
        na, nb = MMA_SHAPES[shape]
        for what, got, want in (("A", len(self.a), na), ("B", len(self.b), nb), ("C", len(self.c), 4), ("D", len(self.d), 4)):
            require(got == want, self, f"{shape} takes {want} {what} registers per thread, got {got}")
        for n, v in enumerate([*self.a, *self.b]):
            _need_class(self, f"A/B register #{n}", v, "b32", f"{atype}x2")
        for n, v in enumerate([*self.c, *self.d]):
            _need_class(self, f"accumulator #{n}", v, "f32")

    def ptx_lines(self, names: Namer) -> list[str]:
        t = self.atype.data
        return [f"mma.sync.aligned.{self.shape.data}.row.col.f32.{t}.{t}.f32 {_vec(names, self.d)}, {_vec(names, self.a)}, {_vec(names, self.b)}, {_vec(names, self.c)};"]


# --------------------------------------------------------------------------------------
# Hopper: mbarrier, fences, TMA bulk tensor copies
# --------------------------------------------------------------------------------------


class MbarrierOp(InstrOp):
    def _verify_addr(self) -> None:
        require(len(self.srcs) >= 1, self, "takes the barrier's shared address")
        _need_class(self, "the barrier address", self.srcs[0], "b32")


@irdl_op_definition
class MbarrierInitOp(MbarrierOp):
    """`mbarrier.init.shared::cta.b64 [addr], count;` (count: a b32 register)."""

    name = "ptx.mbarrier_init"

    def __init__(self, addr: SSAValue, count: SSAValue):
        super().__init__(operands=[[addr, count]], result_types=[[]])

    def verify_(self) -> None:
        self._verify_addr()
        require(len(self.srcs) == 2, self, "takes an address and an arrival count")
        _need_class(self, "the count", self.srcs[1], "b32")

    def ptx_lines(self, names: Namer) -> list[str]:
        return [f"mbarrier.init.shared::cta.b64 [{names(self.srcs[0])}], {names(self.srcs[1])};"]


@irdl_op_definition
class MbarrierArriveOp(MbarrierOp):
    """`mbarrier.arrive.shared::cta.b64 state, [addr];`, or with a transaction count
    (`expect_tx`): `mbarrier.arrive.expect_tx.shared::cta.b64 state, [addr], tx;`."""

    name = "ptx.mbarrier_arrive"

    def __init__(self, addr: SSAValue, tx: SSAValue | None = None):
        super().__init__(operands=[[addr] + ([tx] if tx else [])], result_types=[[RegType("b64")]])

    def verify_(self) -> None:
        self._verify_addr()
        require(len(self.srcs) in (1, 2) and len(self.dsts) == 1, self, "takes an address and an optional transaction count; gives the state")
        if len(self.srcs) == 2:
            _need_class(self, "the transaction count", self.srcs[1], "b32")
        _need_class(self, "the state", self.dsts[0], "b64")

    def ptx_lines(self, names: Namer) -> list[str]:
        if len(self.srcs) == 2:
            return [f"mbarrier.arrive.expect_tx.shared::cta.b64 {names(self.dsts[0])}, [{names(self.srcs[0])}], {names(self.srcs[1])};"]
        return [f"mbarrier.arrive.shared::cta.b64 {names(self.dsts[0])}, [{names(self.srcs[0])}];"]


@irdl_op_definition
class MbarrierExpectTxOp(MbarrierOp):
    """Raise the expected transaction count without arriving: `mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [addr], tx;`."""

    name = "ptx.mbarrier_expect_tx"

    def __init__(self, addr: SSAValue, tx: SSAValue):
        super().__init__(operands=[[addr, tx]], result_types=[[]])

    def verify_(self) -> None:
        self._verify_addr()
        require(len(self.srcs) == 2, self, "takes an address and a transaction count")
        _need_class(self, "the transaction count", self.srcs[1], "b32")

    def ptx_lines(self, names: Namer) -> list[str]:
        return [f"mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [{names(self.srcs[0])}], {names(self.srcs[1])};"]


@irdl_op_definition
class MbarrierTryWaitParityOp(MbarrierOp):
    """Test whether the phase of the given parity completed: `mbarrier.try_wait.parity.shared::cta.b64 p, [addr], parity;`."""

    name = "ptx.mbarrier_try_wait_parity"

    def __init__(self, addr: SSAValue, parity: SSAValue):
        super().__init__(operands=[[addr, parity]], result_types=[[RegType("pred")]])

    def verify_(self) -> None:
        self._verify_addr()
        require(len(self.srcs) == 2 and len(self.dsts) == 1, self, "takes an address and a parity; gives a predicate")
        _need_class(self, "the parity", self.srcs[1], "b32")
        _need_class(self, "the result", self.dsts[0], "pred")

    def ptx_lines(self, names: Namer) -> list[str]:
        return [f"mbarrier.try_wait.parity.shared::cta.b64 {names(self.dsts[0])}, [{names(self.srcs[0])}], {names(self.srcs[1])};"]


@irdl_op_definition
class MbarrierInvalOp(MbarrierOp):
    """`mbarrier.inval.shared::cta.b64 [addr];` before the memory is reused."""

    name = "ptx.mbarrier_inval"

    def __init__(self, addr: SSAValue):
        super().__init__(operands=[[addr]], result_types=[[]])

    def verify_(self) -> None:
        self._verify_addr()

    def ptx_lines(self, names: Namer) -> list[str]:
        return [f"mbarrier.inval.shared::cta.b64 [{names(self.srcs[0])}];"]


@irdl_op_definition
class FenceOp(InstrOp):
    """Fences: `fence.proxy.async.shared::cta;` (generic-proxy writes made visible to TMA and
    wgmma), `fence.mbarrier_init.release.cluster;`, `fence.acq_rel.cta;` ..."""

    name = "ptx.fence"
    kind = prop_def(StringAttr)

    KINDS: ClassVar[tuple[str, ...]] = ("proxy.async.shared::cta", "proxy.async", "mbarrier_init.release.cluster", "acq_rel.cta", "acq_rel.gpu", "sc.cta")

    def __init__(self, kind: str = "proxy.async.shared::cta"):
        super().__init__(operands=[[]], result_types=[[]], properties=_props(kind=kind))

    def verify_(self) -> None:
        require(self.kind.data in self.KINDS, self, f"unknown fence '{self.kind.data}'; expected one of {', '.join(self.KINDS)}")

    def ptx_lines(self, names: Namer) -> list[str]:
        return [f"fence.{self.kind.data};"]


@irdl_op_definition
class CpAsyncBulkTensorLoadOp(PtxOp):
    """TMA load of a box into shared memory, completing on an mbarrier:
    `cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [tmap, {x, y}], [mbar];`.

    Coordinates are b32 registers, innermost dimension first, as the tensor map has them.
    """

    name = "ptx.cp_async_bulk_tensor_load"
    dst = operand_def(RegType)
    tmap = operand_def(RegType)
    coords = var_operand_def(RegType)
    mbar = operand_def(RegType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "` ` `[` $dst `]` `,` `[` $tmap `,` `(` $coords `)` `]` `,` `[` $mbar `]` attr-dict "
        "`:` type($dst) `,` type($tmap) `,` `(` type($coords) `)` `,` type($mbar)"
    )

    def __init__(self, dst: SSAValue, tmap: SSAValue, coords: Sequence[SSAValue], mbar: SSAValue):
        super().__init__(operands=[dst, tmap, list(coords), mbar])

    def verify_(self) -> None:
        _verify_tensor_load(self)

    def ptx_lines(self, names: Namer) -> list[str]:
        return [f"cp.async.bulk.tensor.{len(self.coords)}d.shared::cluster.global.mbarrier::complete_tx::bytes "
                f"[{names(self.dst)}], [{names(self.tmap)}, {_vec(names, self.coords)}], [{names(self.mbar)}];"]


def _verify_tensor_load(op) -> None:
    """What a TMA load and its multicast form check alike: box rank and register classes."""
    require(1 <= len(op.coords) <= 5, op, f"copies a 1D to 5D box, got {len(op.coords)} coordinates")
    _need_class(op, "the destination", op.dst, "b32")
    _need_class(op, "the tensor map address", op.tmap, "b64")
    _need_class(op, "the barrier", op.mbar, "b32")
    for n, v in enumerate(op.coords):
        _need_class(op, f"coordinate #{n}", v, "b32")


@irdl_op_definition
class PrefetchTensormapOp(InstrOp):
    """Bring a tensor map (a kernel parameter's generic address) into the cache the TMA unit
    reads descriptors from, ahead of the first copy that names it: `prefetch.tensormap [a];`."""

    name = "ptx.prefetch_tensormap"

    def __init__(self, tmap: SSAValue):
        super().__init__(operands=[[tmap]], result_types=[[]])

    def verify_(self) -> None:
        require(len(self.srcs) == 1 and not self.dsts, self, "takes a tensor map's address and gives nothing")
        _need_class(self, "the tensor map", self.srcs[0], "b64")

    def ptx_lines(self, names: Namer) -> list[str]:
        return [f"prefetch.tensormap [{names(self.srcs[0])}];"]


@irdl_op_definition
class CpAsyncBulkTensorStoreOp(PtxOp):
    """TMA store of a shared-memory box: `cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [tmap, {x, y}], [src];`,
    or with `add`, the box added into global memory by the TMA (a reduce-add):
    `cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [tmap, {x, y}], [src];`."""

    name = "ptx.cp_async_bulk_tensor_store"
    tmap = operand_def(RegType)
    coords = var_operand_def(RegType)
    src = operand_def(RegType)
    add = opt_prop_def(UnitAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "` ` `[` $tmap `,` `(` $coords `)` `]` `,` `[` $src `]` attr-dict `:` type($tmap) `,` `(` type($coords) `)` `,` type($src)"

    def __init__(self, tmap: SSAValue, coords: Sequence[SSAValue], src: SSAValue, add: bool = False):
        super().__init__(operands=[tmap, list(coords), src], properties={"add": UnitAttr()} if add else {})

    def verify_(self) -> None:
        require(1 <= len(self.coords) <= 5, self, f"copies a 1D to 5D box, got {len(self.coords)} coordinates")
        _need_class(self, "the tensor map address", self.tmap, "b64")
        _need_class(self, "the source", self.src, "b32")
        for n, v in enumerate(self.coords):
            _need_class(self, f"coordinate #{n}", v, "b32")

    def ptx_lines(self, names: Namer) -> list[str]:
        if self.add is not None:
            return [f"cp.reduce.async.bulk.tensor.{len(self.coords)}d.global.shared::cta.add.tile.bulk_group "
                    f"[{names(self.tmap)}, {_vec(names, self.coords)}], [{names(self.src)}];"]
        return [f"cp.async.bulk.tensor.{len(self.coords)}d.global.shared::cta.bulk_group [{names(self.tmap)}, {_vec(names, self.coords)}], [{names(self.src)}];"]


@irdl_op_definition
class CpAsyncBulkCommitGroupOp(NullaryOp):
    """`cp.async.bulk.commit_group;`"""

    name = "ptx.cp_async_bulk_commit_group"
    TEXT: ClassVar[str] = "cp.async.bulk.commit_group;"


@irdl_op_definition
class CpAsyncBulkWaitGroupOp(WaitGroupOp):
    """`cp.async.bulk.wait_group{.read} n;` (.read: only until the sources may be reused)."""

    name = "ptx.cp_async_bulk_wait_group"
    read = opt_prop_def(IntegerAttr)

    def __init__(self, n: int, read: bool = False):
        super().__init__(n, read=read or None)

    def ptx_lines(self, names: Namer) -> list[str]:
        return [f"cp.async.bulk.wait_group{'.read' if _i(self.read) else ''} {_i(self.n)};"]


# --------------------------------------------------------------------------------------
# Hopper: wgmma and setmaxnreg
# --------------------------------------------------------------------------------------


@irdl_op_definition
class WgmmaFenceOp(NullaryOp):
    """`wgmma.fence.sync.aligned;` before the first wgmma that reads registers written since."""

    name = "ptx.wgmma_fence"
    TEXT: ClassVar[str] = "wgmma.fence.sync.aligned;"


@irdl_op_definition
class WgmmaCommitGroupOp(NullaryOp):
    """`wgmma.commit_group.sync.aligned;`"""

    name = "ptx.wgmma_commit_group"
    TEXT: ClassVar[str] = "wgmma.commit_group.sync.aligned;"


@irdl_op_definition
class WgmmaWaitGroupOp(WaitGroupOp):
    """`wgmma.wait_group.sync.aligned n;`: at most n wgmma groups left in flight."""

    name = "ptx.wgmma_wait_group"
    TEXT: ClassVar[str] = "wgmma.wait_group.sync.aligned {n};"


WGMMA_SWIZZLE_MODES = {"none": 0, "128B": 1, "64B": 2, "32B": 3}


def wgmma_descriptor_bits(lbo: int, sbo: int, swizzle: str) -> int:
    """The constant part of a wgmma shared-memory matrix descriptor: the leading (LBO: between
    core matrices along K) and stride (SBO: along M or N) byte offsets in bits 16-29 and
    32-45, each shifted right by 4, and the swizzle mode in bits 62-63."""
    return ((lbo >> 4) & 0x3FFF) << 16 | ((sbo >> 4) & 0x3FFF) << 32 | WGMMA_SWIZZLE_MODES[swizzle] << 62


@irdl_op_definition
class WgmmaDescOp(InstrOp):
    """Build a wgmma shared-memory matrix descriptor from a shared address (b32):
    `(addr >> 4) & 0x3FFF | LBO/16 << 16 | SBO/16 << 32 | swizzle << 62`.

    Swizzle modes: none, 128B, 64B, 32B (the layout the data was stored with, e.g. by a
    TMA load with the same swizzle). Printed as four instructions on the result register.
    """

    name = "ptx.wgmma_desc"
    lbo = prop_def(IntegerAttr)
    sbo = prop_def(IntegerAttr)
    swizzle = prop_def(StringAttr)

    def __init__(self, addr: SSAValue, lbo: int, sbo: int, swizzle: str = "none"):
        super().__init__(operands=[[addr]], result_types=[[RegType("b64")]], properties=_props(lbo=lbo, sbo=sbo, swizzle=swizzle))

    def verify_(self) -> None:
        require(self.swizzle.data in WGMMA_SWIZZLE_MODES, self, f"swizzle must be one of {', '.join(WGMMA_SWIZZLE_MODES)}, got '{self.swizzle.data}'")
        for what, v in (("LBO", _i(self.lbo)), ("SBO", _i(self.sbo))):
            require(v % 16 == 0 and 0 <= v < (1 << 18), self, f"{what} must be a multiple of 16 below 262144 bytes, got {v}")
        require(len(self.srcs) == 1 and len(self.dsts) == 1, self, "takes one shared address and gives one descriptor")
        _need_class(self, "the shared address", self.srcs[0], "b32")
        _need_class(self, "the descriptor", self.dsts[0], "b64")

    def ptx_lines(self, names: Namer) -> list[str]:
        d, a = names(self.dsts[0]), names(self.srcs[0])
        bits = wgmma_descriptor_bits(_i(self.lbo), _i(self.sbo), self.swizzle.data)
        return [f"cvt.u64.u32 {d}, {a};", f"shr.u64 {d}, {d}, 4;", f"and.b64 {d}, {d}, 16383;", f"or.b64 {d}, {d}, {bits};"]


@irdl_op_definition
class WgmmaMmaAsyncOp(PtxOp):
    """Warpgroup product m64nNk16, f32 accumulators, B (and A, or A from registers) from
    shared-memory matrix descriptors:
    `wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {d...}, adesc, bdesc, p, 1, 1, 0, 0;`.

    The accumulators are read and written in place: where an `acc` operand has no other
    use, its result prints as the same register; otherwise the printer copies it into a
    fresh register first (and fences again). `scale_d` is a predicate: false ignores the
    accumulators (the first product of a tile).
    """

    name = "ptx.wgmma_mma_async"
    acc = var_operand_def(RegType)
    a = var_operand_def(RegType)  # one b64 descriptor, or 4 b32 registers
    b = operand_def(RegType)  # one b64 descriptor
    scale_d = operand_def(RegType)
    d = var_result_def(RegType)
    n = prop_def(IntegerAttr)
    atype = prop_def(StringAttr)
    trans_a = opt_prop_def(IntegerAttr)
    trans_b = opt_prop_def(IntegerAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = (
        "`acc` `(` $acc `)` `a` `(` $a `)` `b` `(` $b `)` `scale_d` `(` $scale_d `)` attr-dict "
        "`:` `(` type($acc) `)` `(` type($a) `)` type($b) type($scale_d) `->` `(` type($d) `)`"
    )
    TIED: ClassVar[str] = "acc"

    def __init__(self, n: int, atype: str, acc: Sequence[SSAValue], a: Sequence[SSAValue], b: SSAValue, scale_d: SSAValue,
                 *, trans_a: bool = False, trans_b: bool = False):
        super().__init__(operands=[list(acc), list(a), b, scale_d], result_types=[[RegType("f32")] * len(acc)],
                         properties=_props(n=n, atype=atype, trans_a=trans_a or None, trans_b=trans_b or None))

    def verify_(self) -> None:
        n, atype = _i(self.n), self.atype.data
        require(8 <= n <= 256 and n % 8 == 0, self, f"N must be a multiple of 8 from 8 to 256, got {n}")
        require(atype in ("bf16", "f16"), self, f"inputs must be bf16 or f16, got {atype}")
        require(len(self.acc) == n // 2 and len(self.d) == n // 2, self,
              f"m64n{n}k16 keeps {n // 2} f32 accumulators per thread, got {len(self.acc)} operands and {len(self.d)} results")
        for k, v in enumerate([*self.acc, *self.d]):
            _need_class(self, f"accumulator #{k}", v, "f32")
        require(len(self.a) in (1, 4), self, f"A is one descriptor (b64) or 4 registers (b32), got {len(self.a)} operands")
        if len(self.a) == 1:
            _need_class(self, "the A descriptor", self.a[0], "b64")
        else:
            for k, v in enumerate(self.a):
                _need_class(self, f"A register #{k}", v, "b32", f"{atype}x2")
            require(not _i(self.trans_a), self, "A from registers cannot be transposed")
        _need_class(self, "the B descriptor", self.b, "b64")
        _need_class(self, "scale-d", self.scale_d, "pred")

    def ptx_lines(self, names: Namer) -> list[str]:
        t = self.atype.data
        a = names(self.a[0]) if len(self.a) == 1 else _vec(names, self.a)
        tail = f"1, 1, {_i(self.trans_a)}, {_i(self.trans_b)}" if len(self.a) == 1 else f"1, 1, {_i(self.trans_b)}"
        # the printer gives the results the accumulators' registers (or copies into fresh ones)
        return [f"wgmma.mma_async.sync.aligned.m64n{_i(self.n)}k16.f32.{t}.{t} {_vec(names, self.d)}, {a}, {names(self.b)}, {names(self.scale_d)}, {tail};"]


@irdl_op_definition
class SetmaxnregOp(InstrOp):
    """Move registers between warpgroups: `setmaxnreg.{inc,dec}.sync.aligned.u32 n;` (n a multiple of 8 in 24..256)."""

    name = "ptx.setmaxnreg"
    action = prop_def(StringAttr)
    count = prop_def(IntegerAttr)

    def __init__(self, action: str, count: int):
        super().__init__(operands=[[]], result_types=[[]], properties=_props(action=action, count=count))

    def verify_(self) -> None:
        c = _i(self.count)
        require(self.action.data in ("inc", "dec"), self, f"action must be inc or dec, got '{self.action.data}'")
        require(24 <= c <= 256 and c % 8 == 0, self, f"register count must be a multiple of 8 in 24..256, got {c}")

    def ptx_lines(self, names: Namer) -> list[str]:
        return [f"setmaxnreg.{self.action.data}.sync.aligned.u32 {_i(self.count)};"]




# --------------------------------------------------------------------------------------
# Hopper: thread-block clusters (TMA multicast, remote mbarrier arrivals, cluster barrier)
# --------------------------------------------------------------------------------------


@irdl_op_definition
class CpAsyncBulkTensorLoadMulticastOp(PtxOp):
    """TMA load of a box written to the same shared offset of every CTA of the cluster in
    `mask` (a b16 register), each CTA's mbarrier at `mbar` counting the bytes:
    `cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [dst], [tmap, {x, y}], [mbar], mask;`.
    """

    name = "ptx.cp_async_bulk_tensor_load_multicast"
    dst = operand_def(RegType)
    tmap = operand_def(RegType)
    coords = var_operand_def(RegType)
    mbar = operand_def(RegType)
    mask = operand_def(RegType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "` ` `[` $dst `]` `,` `[` $tmap `,` `(` $coords `)` `]` `,` `[` $mbar `]` `,` $mask attr-dict "
        "`:` type($dst) `,` type($tmap) `,` `(` type($coords) `)` `,` type($mbar) `,` type($mask)"
    )

    def __init__(self, dst: SSAValue, tmap: SSAValue, coords: Sequence[SSAValue], mbar: SSAValue, mask: SSAValue):
        super().__init__(operands=[dst, tmap, list(coords), mbar, mask])

    def verify_(self) -> None:
        _verify_tensor_load(self)
        _need_class(self, "the CTA mask", self.mask, "b16")

    def ptx_lines(self, names: Namer) -> list[str]:
        return [f"cp.async.bulk.tensor.{len(self.coords)}d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
                f"[{names(self.dst)}], [{names(self.tmap)}, {_vec(names, self.coords)}], [{names(self.mbar)}], {names(self.mask)};"]


@irdl_op_definition
class MapaOp(InstrOp):
    """The address in CTA `rank` of the cluster of a shared variable of this CTA:
    `mapa.shared::cluster.u32 d, addr, rank;`."""

    name = "ptx.mapa"

    def __init__(self, addr: SSAValue, rank: SSAValue):
        super().__init__(operands=[[addr, rank]], result_types=[[RegType("b32")]])

    def verify_(self) -> None:
        require(len(self.srcs) == 2 and len(self.dsts) == 1, self, "takes an address and a CTA rank; gives an address")
        for what, v in (("the address", self.srcs[0]), ("the rank", self.srcs[1]), ("the result", self.dsts[0])):
            _need_class(self, what, v, "b32")

    def ptx_lines(self, names: Namer) -> list[str]:
        return [f"mapa.shared::cluster.u32 {names(self.dsts[0])}, {names(self.srcs[0])}, {names(self.srcs[1])};"]


@irdl_op_definition
class MbarrierArriveClusterOp(MbarrierOp):
    """Arrive on an mbarrier of any CTA of the cluster (an address from `mapa`), with the
    default semantics (release at CTA scope), as CUTLASS's cluster pipelines release a
    stage to the block whose TMA multicast refills it: what is released is the end of
    reads the thread waited for (wgmma's), not writes the peer reads; a cluster-scope
    release here stalled each warp about 11 cycles an instruction on a memory barrier
    (ncu, H200, 2026-11-28):
    `mbarrier.arrive.shared::cluster.b64 _, [addr];`."""

    name = "ptx.mbarrier_arrive_cluster"

    def __init__(self, addr: SSAValue):
        super().__init__(operands=[[addr]], result_types=[[]])

    def verify_(self) -> None:
        self._verify_addr()
        require(len(self.srcs) == 1 and not self.dsts, self, "takes the barrier's cluster address alone")

    def ptx_lines(self, names: Namer) -> list[str]:
        return [f"mbarrier.arrive.shared::cluster.b64 _, [{names(self.srcs[0])}];"]


CLUSTER_BARRIER = {"arrive": "barrier.cluster.arrive.release;", "wait": "barrier.cluster.wait.acquire;"}


@irdl_op_definition
class BarrierClusterOp(InstrOp):
    """Every thread of every CTA of the cluster meets: `barrier.cluster.arrive.release;`
    then `barrier.cluster.wait.acquire;` (`kind` arrive or wait; not `.aligned`, so threads
    of a warp may come from different branches)."""

    name = "ptx.barrier_cluster"
    kind = prop_def(StringAttr)

    def __init__(self, kind: str):
        super().__init__(operands=[[]], result_types=[[]], properties=_props(kind=kind))

    def verify_(self) -> None:
        require(self.kind.data in CLUSTER_BARRIER, self, f"kind must be arrive or wait, got '{self.kind.data}'")

    def ptx_lines(self, names: Namer) -> list[str]:
        return [CLUSTER_BARRIER[self.kind.data]]
