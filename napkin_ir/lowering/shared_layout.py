"""Where reg-to-ptx places a kernel's shared buffers and mbarriers in the dynamic shared
array, and so how many bytes a block asks for: the buffers first (the 1024-aligned ones,
then the others, each in order), each at its alignment (1024 bytes for a buffer of swizzled
panels the TMA or wgmma reads, since a 128-byte swizzle repeats every 1024; 128 for the
rest, a statistic's stages 128 bytes apart), then each mbarrier ring (8 bytes a stage);
where any panels live in it, 1024 more, to round the array's start up to a repeat. The
lowering (`ptx_rules.copies`, `ptx_rules.tma`) reserves by these rules and the
model (`model.analysis`) counts a kernel's footprint by them, so that a plan the search
keeps is one reg-to-ptx takes."""

from __future__ import annotations

from math import prod

from xdsl.ir import Operation, SSAValue

from napkin_ir.dialects import hbm, reg, smem
from napkin_ir.target import dtype

PANEL_ALIGN = 1024  # a 128-byte swizzle's repeat
BUFFER_ALIGN = 128


def panel_buffer(buf: SSAValue) -> bool:
    """Whether the TMA, wgmma or stmatrix reach `buf` (it holds swizzled 128-byte panels)."""
    return any(isinstance(u.operation, smem.TmaCopyOp | smem.TmaStoreOp | reg.WgmmaOp | reg.WgmmaRsOp | reg.StmatrixOp | reg.WriteOp)
               for u in buf.uses)


def has_panels(kernel: hbm.KernelOp) -> bool:
    """Whether any panels live in `kernel`'s shared memory (its start is then rounded up)."""
    return any(isinstance(o, smem.TmaCopyOp | smem.TmaStoreOp | reg.WgmmaOp) for o in kernel.walk())


def vector_row_bytes(t: smem.BufferType) -> tuple[str, int]:
    """A plain f32 vector buffer's axis and the bytes of one stage of it."""
    (axis,) = [a for a in t.axis_names if t.shape[a] > 1]
    return axis, dtype(t.dtype).size(t.shape[axis])


def vector_stage_bytes(t: smem.BufferType) -> int:
    """Where a plain f32 vector buffer's stages lie apart: its row rounded up to 128 bytes,
    the alignment the TMA writes a stage at (80 queries' statistics: 320 bytes a row, 384
    a stage)."""
    return -(-vector_row_bytes(t)[1] // BUFFER_ALIGN) * BUFFER_ALIGN


def padded_row_bytes(t: smem.BufferType) -> int:
    """A row of a buffer without panels: its innermost axis, 16 bytes more with pad8."""
    return dtype(t.dtype).size(t.shape[t.axis_names[-1]]) + (16 if t.layout.data == "pad8" else 0)


def reserved(t: smem.BufferType, panels: bool) -> tuple[int, int]:
    """(bytes, alignment) reg-to-ptx reserves for a buffer of type `t`; `panels`: whether
    it holds panels (`panel_buffer`)."""
    if t.vector:
        return t.stages.data * vector_stage_bytes(t), BUFFER_ALIGN
    if panels:
        return t.bytes(), PANEL_ALIGN
    rows = prod(t.shape[a] for a in t.axis_names[:-1])  # its outer axes' places
    return t.stages.data * rows * padded_row_bytes(t), BUFFER_ALIGN


def ring_reserved(t: smem.MbarrierType) -> tuple[int, int]:
    """(bytes, alignment) reg-to-ptx reserves for an mbarrier ring: 8 bytes a stage."""
    return 8 * t.stages.data, 8


def placing_order(op: Operation) -> int:
    """Where `op` goes among a kernel's ops as reg-to-ptx lowers them (a stable sort): the
    1024-aligned buffers (of panels) first, then the other buffers (a statistic's vector
    among them), then the rest (the mbarrier rings among them). A 1024-aligned buffer after
    a ring or a small buffer would leave a gap of up to 1 KB (2 KB in all in the attention
    gradient's one kernel; at 80 queries a tile its statistics' stages left 768 bytes,
    which it did not have)."""
    if isinstance(op, smem.AllocOp):
        return 0 if reserved(op.result.type, panel_buffer(op.result))[1] == PANEL_ALIGN else 1  # type: ignore[arg-type]
    return 2


def shared_bytes(kernel: hbm.KernelOp) -> int:
    """The dynamic shared memory a block of `kernel` asks for, as reg-to-ptx lays it out
    (a store's staging region that reuses the buffers once they are done aside)."""
    size = 0

    def place(nbytes: int, align: int) -> None:
        nonlocal size
        size = -(-size // align) * align + nbytes

    ops = sorted(kernel.walk(), key=placing_order)
    for op in ops:
        if isinstance(op, smem.AllocOp):
            place(*reserved(op.result.type, panel_buffer(op.result)))  # type: ignore[arg-type]
    for op in ops:
        if isinstance(op, smem.MbarrierAllocOp):
            place(*ring_reserved(op.result.type))  # type: ignore[arg-type]
    return size + (PANEL_ALIGN if has_panels(kernel) and size else 0)
