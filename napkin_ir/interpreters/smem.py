"""Numpy implementations of the `smem` ops, with the copy protocol checked.

A copy does not land when it is issued: it joins the open group, the group is queued at
`smem.commit`, and its data reaches the buffer when a `smem.wait` retires it; a
`smem.barrier` then makes it visible to the block. Reading a stage with a copy still in
flight, or one completed since the last barrier, is an error: on the GPU it would read
stale or torn data, here it stops with the place and the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.utils.exceptions import InterpretationError

from napkin_ir.dialects import smem
from napkin_ir.interpreters.hbm import read_tile
from napkin_ir.interpreters.tensors import NamedArray


class Buffer:
    def __init__(self, t: smem.BufferType):
        self.type = t
        self.data = np.zeros((t.stages.data, *t.dims), np.float32)
        self.in_flight: dict[int, int] = {}  # stage -> copies not yet retired by a wait
        self.unsynced: set[int] = set()  # stages written since the last barrier


@register_impls
@dataclass
class SmemFunctions(InterpreterFunctions):
    open_group: list[tuple[Buffer, int, np.ndarray]] = field(default_factory=list)
    groups: list[list[tuple[Buffer, int, np.ndarray]]] = field(default_factory=list)
    buffers: list[Buffer] = field(default_factory=list)

    @impl(smem.AllocOp)
    def run_alloc(self, interpreter: Interpreter, op: smem.AllocOp, args: tuple[Any, ...]):
        buf = Buffer(op.result.type)  # type: ignore[arg-type]
        self.buffers.append(buf)
        return (buf,)

    @impl(smem.CopyOp)
    def run_copy(self, interpreter: Interpreter, op: smem.CopyOp, args: tuple[Any, ...]):
        g, *offsets, buf, stage = args
        tile = read_tile(g, offsets, buf.type.dims)  # the global is not written meanwhile
        self.open_group.append((buf, stage, tile))
        buf.in_flight[stage] = buf.in_flight.get(stage, 0) + 1
        return ()

    @impl(smem.CommitOp)
    def run_commit(self, interpreter: Interpreter, op: smem.CommitOp, args: tuple[Any, ...]):
        self.groups.append(self.open_group)
        self.open_group = []
        return ()

    @impl(smem.WaitOp)
    def run_wait(self, interpreter: Interpreter, op: smem.WaitOp, args: tuple[Any, ...]):
        while len(self.groups) > op.pending.value.data:
            for buf, stage, tile in self.groups.pop(0):
                buf.data[stage] = tile
                buf.in_flight[stage] -= 1
                buf.unsynced.add(stage)
        return ()

    @impl(smem.BarrierOp)
    def run_barrier(self, interpreter: Interpreter, op: smem.BarrierOp, args: tuple[Any, ...]):
        for buf in self.buffers:
            buf.unsynced.clear()
        return ()

    @impl(smem.ReadOp)
    def run_read(self, interpreter: Interpreter, op: smem.ReadOp, args: tuple[Any, ...]):
        buf, stage = args
        check_readable(buf, stage, op.name)
        return (NamedArray(buf.type.axis_names, buf.data[stage].copy()),)


def check_readable(buf: Buffer, stage: int, op_name: str) -> None:
    """A stage may be read once its copies have landed and a barrier has passed since."""
    if not 0 <= stage < buf.type.stages.data:
        raise InterpretationError(f"{op_name}: stage {stage} of a buffer with {buf.type.stages.data} stages")
    if buf.in_flight.get(stage, 0):
        raise InterpretationError(f"{op_name}: stage {stage} of {buf.type} still has a copy in flight; wait for its group first")
    if stage in buf.unsynced:
        raise InterpretationError(f"{op_name}: stage {stage} of {buf.type} was filled since the last barrier; "
                                  "other threads' copies are not visible yet")
