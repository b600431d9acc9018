"""`hbm-to-smem`: stream the tiles of a streaming loop through multi-stage shared memory.

Every `hbm.load` inside an `scf.for` marked `hbm.stream` whose offsets move with the loop
becomes a `stages`-deep `!smem.buffer` fed by asynchronous copies `stages - 1` iterations
ahead: a prologue fills stages 0 .. stages-2; iteration i waits until its own tile's
group has landed (`smem.wait {pending = stages - 2}`), meets the block at a barrier,
reads stage i mod stages, and at once starts the copy of tile i + stages - 1 into the
stage that iteration i - 1 read (every thread has passed the barrier, so none still
reads it). Copies past the end read zeros and are never read; a final wait drains them.
The buffers must fit the shared memory a block may use (`smem_bytes`, by default the
227 KiB of an H100 or H200).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, builtin, scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from napkin_ir.dialects import hbm, smem


def _const(v: int) -> arith.ConstantOp:
    return arith.ConstantOp.from_int_and_width(v, IndexType())


def _constant_value(v: SSAValue, what: str) -> int:
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, builtin.IntegerAttr):
        return op.value.value.data
    raise PassFailedException(f"hbm-to-smem: the stream loop's {what} must be a constant")


@dataclass(frozen=True)
class HbmToSmemPass(ModulePass):
    name = "hbm-to-smem"
    stages: int = 3
    layout: str = "row"
    smem_bytes: int = 227 * 1024

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        if self.stages < 2:
            raise PassFailedException(f"hbm-to-smem: stages must be at least 2 (one buffer cannot overlap copy and compute), got {self.stages}")
        if self.stages > 8:
            raise PassFailedException(f"hbm-to-smem: at most 8 stages (cp.async waits count up to 7 pending groups), got {self.stages}")
        if self.layout not in smem.LAYOUTS:
            raise PassFailedException(f"hbm-to-smem: unknown layout '{self.layout}'; expected one of {', '.join(smem.LAYOUTS)}")
        kernels = [k for k in op.walk() if isinstance(k, hbm.KernelOp)]
        if not kernels:
            raise PassFailedException("hbm-to-smem: the module has no hbm.kernel; run ncd-to-hbm first")
        for kernel in kernels:
            loops = [o for o in kernel.walk() if isinstance(o, scf.ForOp) and "hbm.stream" in o.attributes]
            buffers = [self._pipeline(loop) for loop in loops]
            total = sum(b.bytes() for bs in buffers for b in bs)
            if total > self.smem_bytes:
                detail = ", ".join(f"{b}: {b.bytes()}" for bs in buffers for b in bs)
                raise PassFailedException(f"hbm-to-smem: @{kernel.sym_name.data} needs {total} bytes of shared memory "
                                          f"({detail}), over the budget of {self.smem_bytes}; use fewer stages or smaller tiles")

    def _pipeline(self, loop: scf.ForOp) -> list[smem.BufferType]:
        stages = self.stages
        if _constant_value(loop.lb, "lower bound") != 0:
            raise PassFailedException("hbm-to-smem: the stream loop must start at 0")
        step = _constant_value(loop.step, "step")
        body = loop.body.block
        iv = body.args[0]
        loads = [o for o in body.ops if isinstance(o, hbm.LoadOp) and iv in o.offsets]
        if not loads:
            return []
        types = [smem.BufferType(l.result.type.shape, l.result.type.element_type, stages, self.layout) for l in loads]  # type: ignore[attr-defined]

        def copies(offset: SSAValue, stage: SSAValue) -> list[Operation]:
            ops: list[Operation] = []
            for load, buf in zip(loads, allocs):
                offsets = [offset if o is iv else o for o in load.offsets]
                ops.append(smem.CopyOp(load.source, offsets, buf.result, stage))
            return ops

        # before the loop: the buffers and the prologue
        allocs = [smem.AllocOp(t) for t in types]
        before: list[Operation] = list(allocs)
        for s in range(stages - 1):
            start, stage = _const(s * step), _const(s)
            before += [start, stage, *copies(start.result, stage.result), smem.CommitOp()]
        Rewriter.insert_op(before, InsertPoint.before(loop))
        Rewriter.insert_op([smem.WaitOp(0)], InsertPoint.after(loop))

        # in the loop: wait for this tile, read it, start the one stages - 1 ahead
        c_step, c_stages, c_ahead = _const(step), _const(stages), _const((stages - 1) * step)
        c_ahead_tiles = _const(stages - 1)
        i = arith.DivUIOp(iv, c_step.result)
        stage = arith.RemUIOp(i.result, c_stages.result)
        head: list[Operation] = [c_step, c_stages, c_ahead, c_ahead_tiles, i, stage, smem.WaitOp(stages - 2), smem.BarrierOp()]
        reads = [smem.ReadOp(buf.result, stage.result) for buf in allocs]
        head += reads
        nxt = arith.AddiOp(iv, c_ahead.result)
        nxt_i = arith.AddiOp(i.result, c_ahead_tiles.result)
        nxt_stage = arith.RemUIOp(nxt_i.result, c_stages.result)
        head += [nxt, nxt_i, nxt_stage, *copies(nxt.result, nxt_stage.result), smem.CommitOp()]
        Rewriter.insert_op(head, InsertPoint.at_start(body))
        for load, read in zip(loads, reads):
            load.result.replace_all_uses_with(read.result)
            Rewriter.erase_op(load)
        loop.attributes["smem.stages"] = builtin.IntegerAttr(stages, builtin.i32)
        return types
