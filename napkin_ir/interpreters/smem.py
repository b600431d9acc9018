"""Numpy implementations of the `smem` ops, with the copy protocol checked.

A copy does not land when it is issued: it joins the open group, the group is queued at
`smem.commit`, and its data reaches the buffer when a `smem.wait` retires it; a
`smem.barrier` then makes it visible to the block. Reading a stage with a copy still in
flight, or one completed since the last barrier, is an error: on the GPU it would read
stale or torn data, here it stops with the place and the reason.

The sm_90a pipeline runs its roles concurrently: `smem.producer` starts its region on a
thread of its own, which meets the kernel body (the consumers) only at mbarriers. A
phase completes when its arrivals and announced bytes are all in; TMA data lands in the
buffer then, not before. The protocol is checked: a copy into a stage still held by the
consumers (not yet released through its `empty` barrier), bytes beyond those announced,
a read of a stage whose phase has not completed, a read of a stage the consumers have
released (each empty ring frees the buffers the producer copies into after waiting on
it), a release while a wgmma still reads the stage, a write into a stage a TMA store
still reads, a consumer's wait that passes on a phase whose data it already took (a
wrong parity), and a deadlock (every role waiting) each stop with the reason. A persistent block's buffers and barriers (one per alloc op)
live on from tile to tile, its rings' positions given by the hbm interpreter.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import scf
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.utils.exceptions import InterpretationError
from xdsl.ir import Operation
from xdsl.utils.scoped_dict import ScopedDict

from napkin_ir.dialects import smem
from napkin_ir.dialects.hbm import parse_labels
from napkin_ir.interpreters.tensors import NamedArray, round_to
from napkin_ir.interpreters.tiles import overlap, read_tile


class Buffer:
    def __init__(self, t: smem.BufferType):
        self.type = t
        self.data = np.zeros((t.stages.data, *t.dims), np.float32)
        self.in_flight: dict[int, int] = {}  # stage -> copies not yet retired by a wait
        self.unsynced: set[int] = set()  # stages written since the last barrier
        self.held: set[int] = set()  # TMA-filled stages the consumers have not released
        # stages a TMA copy may fill: all at first, then each again once the producer has
        # waited for its release. Kept apart from `held` so that a missing wait is refused
        # however the roles' threads happen to be scheduled.
        self.free: set[int] = set(range(t.stages.data))
        self.wgmma_reads: dict[int, int] = {}  # stage -> wgmma products not yet retired
        self.tma_filled = False  # filled by TMA copies: its stages are held until released
        self.storing: dict[int, int] = {}  # stage -> TMA stores not yet retired (still reading it)
        # a buffer a store role stores (smem.storer): the stages written since the consumers
        # last handed theirs over, and those handed over that the role has not given back
        # (its arrival on the empty barrier after retiring the store, and the consumers'
        # wait on it): a missing wait is refused however the threads are scheduled
        self.role_stored = False
        self.fresh: set[int] = set()
        self.owed: set[int] = set()

    def check_writable(self, stage: int, op_name: str) -> None:
        """A stage may be written when no TMA store and no wgmma still reads it."""
        if not 0 <= stage < self.type.stages.data:
            raise InterpretationError(f"{op_name}: stage {stage} of a buffer with {self.type.stages.data} stages")
        if self.storing.get(stage, 0):
            raise InterpretationError(f"{op_name}: writes stage {stage} of {self.type} while a TMA store still reads it; "
                                      "retire its group first (smem.tma_store_wait)")
        if stage in self.owed:
            raise InterpretationError(f"{op_name}: writes stage {stage} of {self.type}, handed to the store role, before it gave "
                                      "the stage back; wait on the stage's empty barrier first")
        if self.role_stored:
            self.fresh.add(stage)
        if self.wgmma_reads.get(stage, 0):
            raise InterpretationError(f"{op_name}: writes stage {stage} of {self.type} while a wgmma still reads it; "
                                      "retire its group first (reg.wgmma_wait) and meet the other warps (smem.barrier)")


class Ring:
    """A ring of mbarriers: per stage the completed phases, the arrivals still expected in
    the current one, its announced bytes not yet delivered, and the data to land."""

    def __init__(self, t: smem.MbarrierType):
        self.type = t
        n = t.stages.data
        self.phase = [0] * n
        self.pending = [t.arrivals.data] * n
        self.tx = [0] * n
        self.landing: list[list[tuple[Buffer, int, np.ndarray]]] = [[] for _ in range(n)]
        self.releases = False  # consumers arrive on it: a completed phase frees its stage
        self.guards: list[Any] = []  # the alloc ops of the buffers it frees (none known: all)
        self.taken = [0] * n  # phases of a full ring the consumers have waited for, per stage
        self.freed: list[list[tuple[Buffer, int]]] = [[] for _ in range(n)]  # stages a store role gives back with the phase

    def check(self, stage: int, op_name: str) -> None:
        if not 0 <= stage < len(self.phase):
            raise InterpretationError(f"{op_name}: stage {stage} of a ring of {len(self.phase)} mbarriers")


class Roles:
    """The threads of a block's roles and the condition they wait on."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.live: set[int] = {threading.get_ident()}
        self.blocked: set[int] = set()
        self.threads: list[threading.Thread] = []
        self.errors: list[BaseException] = []

    def wait_until(self, ready, what: str) -> None:
        me = threading.get_ident()
        with self.cond:
            while not ready():
                if self.errors:
                    raise InterpretationError(f"{what}: another role failed: {self.errors[0]}")
                self.blocked.add(me)
                if self.blocked >= self.live:
                    err = InterpretationError(f"{what}: deadlock, every role is waiting on an mbarrier")
                    self.errors.append(err)
                    self.cond.notify_all()
                    raise err
                self.cond.wait(timeout=1.0)
                self.blocked.discard(me)
            self.blocked.discard(me)

    def changed(self) -> None:
        """Wake every waiter to look again (the caller holds the condition). Until each has
        looked, none counts as blocked, so a deadlock is only seen when none can go on."""
        self.blocked.clear()
        self.cond.notify_all()

    def start(self, target) -> None:
        def run() -> None:
            try:
                target()
            except BaseException as e:  # reported by join
                self.errors.append(e)
            finally:
                with self.cond:
                    self.live.discard(threading.get_ident())
                    self.cond.notify_all()

        thread = threading.Thread(target=run, daemon=True)
        with self.cond:
            self.threads.append(thread)
            thread.start()
            self.live.add(thread.ident)  # type: ignore[arg-type]

    def join(self) -> None:
        me = threading.get_ident()
        with self.cond:
            self.live.discard(me)
            self.cond.notify_all()
        for t in self.threads:
            t.join()
        if self.errors:
            raise self.errors[0]


@register_impls
@dataclass
class SmemFunctions(InterpreterFunctions):
    open_group: list[tuple[Buffer, int, np.ndarray]] = field(default_factory=list)
    groups: list[list[tuple[Buffer, int, np.ndarray]]] = field(default_factory=list)
    buffers: list[Buffer] = field(default_factory=list)
    roles: Roles = field(default_factory=Roles)
    # TMA stores in flight, oldest first, per issuing role (a bulk group is its thread's)
    store_groups: dict[int, list[tuple[Buffer, int]]] = field(default_factory=dict)
    retired: dict[int, list[tuple[Buffer, int]]] = field(default_factory=dict)  # a store role's, not yet given back
    # a persistent block's shared memory and barriers live on from tile to tile
    allocated: dict[Operation, Any] = field(default_factory=dict)
    ring_position: int = 0  # stream steps the rings took before this tile
    tile_position: int = 0  # tiles the block computed before this one
    tile_trips: int = 0  # steps the producer's stream loop takes in this tile

    @impl(smem.AllocOp)
    def run_alloc(self, interpreter: Interpreter, op: smem.AllocOp, args: tuple[Any, ...]):
        if op not in self.allocated:
            self.allocated[op] = Buffer(op.result.type)  # type: ignore[arg-type]
            self.allocated[op].role_stored = smem.stored_by_role(op.result)
            self.buffers.append(self.allocated[op])
        return (self.allocated[op],)

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


    # -- the sm_90a epilogue ---------------------------------------------------------------
    @impl(smem.WriteOp)
    def run_write(self, interpreter: Interpreter, op: smem.WriteOp, args: tuple[Any, ...]):
        value, buf, stage = args
        buf.check_writable(stage, op.name)
        at = parse_labels(op.at)
        window = tuple(slice(at.get(a, 0), at.get(a, 0) + n) for a, n in buf.type.shape.items())
        buf.data[stage] = round_to(buf.type.dtype, value.aligned(buf.type.axis_names)[window])
        buf.unsynced.add(stage)  # the other threads' rows of it are visible after a barrier
        return ()

    @impl(smem.TmaStoreOp)
    def run_tma_store(self, interpreter: Interpreter, op: smem.TmaStoreOp, args: tuple[Any, ...]):
        buf, stage, g, *offsets = args
        buf.unsynced.discard(stage)  # the store's own barrier: every consumer's writes are in
        check_readable(buf, stage, op.name)
        # what lands is the stage as it is now: writing it before the group retires is refused
        src, dst = overlap(g, offsets, buf.type.dims)
        if op.accumulate is not None:  # a block's part of a split sum, added by the TMA
            g.data[src] += buf.data[stage][dst]
        else:
            g.data[src] = buf.data[stage][dst]
        with self.roles.cond:
            buf.storing[stage] = buf.storing.get(stage, 0) + 1
            self.store_groups.setdefault(threading.get_ident(), []).append((buf, stage))
        return ()

    @impl(smem.TmaStoreWaitOp)
    def run_tma_store_wait(self, interpreter: Interpreter, op: smem.TmaStoreWaitOp, args: tuple[Any, ...]):
        groups = self.store_groups.setdefault(threading.get_ident(), [])
        with self.roles.cond:
            while len(groups) > op.pending.value.data:
                buf, stage = groups.pop(0)
                buf.storing[stage] -= 1
                if buf.role_stored:
                    self.retired.setdefault(threading.get_ident(), []).append((buf, stage))
        return ()

    # -- the sm_90a pipeline -------------------------------------------------------------
    @impl(smem.MbarrierAllocOp)
    def run_mbarrier_alloc(self, interpreter: Interpreter, op: smem.MbarrierAllocOp, args: tuple[Any, ...]):
        if op not in self.allocated:
            ring = Ring(op.result.type)  # type: ignore[arg-type]
            ring.releases = any(isinstance(u.operation, smem.ArriveOp) and _releases(u.operation) for u in op.result.uses)
            ring.guards = _guarded_allocs(op) if ring.releases else []
            self.allocated[op] = ring
        return (self.allocated[op],)

    def _guarded(self, ring: Ring) -> list[Buffer]:
        """The buffers a release ring frees: those the producer copies into after waiting
        on it, or, where none is known, every buffer."""
        bufs = [self.allocated[a] for a in ring.guards if a in self.allocated]
        return bufs or self.buffers

    @impl(smem.RingPositionOp)
    def run_ring_position(self, interpreter: Interpreter, op: smem.RingPositionOp, args: tuple[Any, ...]):
        return (self.ring_position,)

    @impl(smem.TilePositionOp)
    def run_tile_position(self, interpreter: Interpreter, op: smem.TilePositionOp, args: tuple[Any, ...]):
        return (self.tile_position,)

    @impl(smem.ProducerOp)
    def run_producer(self, interpreter: Interpreter, op: smem.ProducerOp, args: tuple[Any, ...]):
        self.tile_trips = 0
        for loop in (o for o in op.body.block.ops if isinstance(o, scf.ForOp)):
            lb, ub, step = interpreter.get_values((loop.lb, loop.ub, loop.step))
            self.tile_trips += max(0, -(-(ub - lb) // step))
        self._start_role(interpreter, op, "producer")
        return ()

    @impl(smem.StorerOp)
    def run_storer(self, interpreter: Interpreter, op: smem.StorerOp, args: tuple[Any, ...]):
        self._start_role(interpreter, op, "storer")
        return ()

    def _start_role(self, interpreter: Interpreter, op: smem.RoleOp, name: str) -> None:
        """Run a role's region on a thread of its own, in a child interpreter that sees the
        kernel body's values."""
        child = Interpreter(interpreter.module)
        child._impls = interpreter._impls
        child._ctx = ScopedDict(parent=interpreter._ctx, name=name)
        self.roles.start(lambda: child.run_ssacfg_region(op.body, (), name))

    def _arrive(self, ring: Ring, stage: int) -> None:
        with self.roles.cond:
            ring.pending[stage] -= 1
            self._maybe_complete(ring, stage)
            self.roles.changed()

    def _maybe_complete(self, ring: Ring, stage: int) -> None:
        if ring.pending[stage] > 0 or ring.tx[stage] != 0:
            return
        for buf, s, tile in ring.landing[stage]:
            buf.data[s] = tile
            buf.in_flight[s] -= 1
            buf.held.add(s)
        ring.landing[stage] = []
        if ring.releases:
            for buf in self._guarded(ring):
                buf.held.discard(stage)
        ring.phase[stage] += 1
        ring.pending[stage] = ring.type.arrivals.data

    @impl(smem.ArriveExpectOp)
    def run_arrive_expect(self, interpreter: Interpreter, op: smem.ArriveExpectOp, args: tuple[Any, ...]):
        ring, stage = args
        ring.check(stage, op.name)
        with self.roles.cond:
            ring.tx[stage] += op.bytes.value.data
        self._arrive(ring, stage)
        return ()

    @impl(smem.ArriveOp)
    def run_arrive(self, interpreter: Interpreter, op: smem.ArriveOp, args: tuple[Any, ...]):
        ring, stage = args
        ring.check(stage, op.name)
        for buf in self.buffers if _releases(op) else []:
            if buf.wgmma_reads.get(stage, 0):
                raise InterpretationError(f"{op.name}: releases stage {stage} while a wgmma still reads {buf.type}; wait for its group first")
        for buf in self._guarded(ring) if _releases(op) else []:  # a store from a loaded tile's room (O in Q's)
            if buf.storing.get(stage, 0):
                raise InterpretationError(f"{op.name}: releases stage {stage} of {buf.type} to the producer while a TMA store still "
                                          "reads it; retire its group first (smem.tma_store_wait)")
        with self.roles.cond:
            if op.by_role:  # the stages whose stores it retired go back with this phase
                ring.freed[stage] += self.retired.pop(threading.get_ident(), [])
            elif op.async_proxy is not None:  # the consumers hand what they wrote to the store role
                for buf in self.buffers:
                    buf.owed |= buf.fresh
                    buf.fresh.clear()
        self._arrive(ring, stage)
        return ()

    @impl(smem.TmaCopyOp)
    def run_tma_copy(self, interpreter: Interpreter, op: smem.TmaCopyOp, args: tuple[Any, ...]):
        g, *offsets, buf, stage, ring, bar_stage = args
        ring.check(bar_stage, op.name)
        with self.roles.cond:
            if stage not in buf.free:  # a free stage is neither held nor being filled
                raise InterpretationError(f"{op.name}: copies into stage {stage} of {buf.type} while the consumers still "
                                          "hold it (wait for its empty barrier first)")
            nbytes = op.copied_bytes()
            if ring.tx[bar_stage] < nbytes:
                raise InterpretationError(f"{op.name}: delivers {nbytes} bytes to stage {bar_stage}'s barrier, but only "
                                          f"{ring.tx[bar_stage]} were announced (smem.arrive_expect)")
            ring.tx[bar_stage] -= nbytes
            buf.free.discard(stage)
            buf.tma_filled = True
            buf.in_flight[stage] = buf.in_flight.get(stage, 0) + 1
            tile = read_tile(g, offsets, buf.type.dims)
            if op.rows is not None:  # rows past the box keep what the stage held: NaN here, so that a result they reach shows it
                tile[op.box_rows:] = np.nan
            ring.landing[bar_stage].append((buf, stage, tile))
            self._maybe_complete(ring, bar_stage)
            self.roles.changed()
        return ()

    @impl(smem.MbarrierWaitOp)
    def run_mbarrier_wait(self, interpreter: Interpreter, op: smem.MbarrierWaitOp, args: tuple[Any, ...]):
        ring, stage, parity = args
        ring.check(stage, op.name)
        if parity not in (0, 1):
            raise InterpretationError(f"{op.name}: parity must be 0 or 1, got {parity}")
        # the phase of this parity is complete when the current one has the other parity
        self.roles.wait_until(lambda: ring.phase[stage] % 2 != parity, f"{op.name} on stage {stage}, parity {parity}")
        with self.roles.cond:
            if ring.releases:  # the producer has seen the stage released: it may fill it again
                for buf in self._guarded(ring):
                    if stage < buf.type.stages.data and stage not in buf.held and not buf.in_flight.get(stage, 0):
                        buf.free.add(stage)
            else:  # the consumers take the phase that completed last: one they have not taken
                seen = ring.phase[stage] - 1  # -1: the phase before the first, a producer's start
                if 0 <= seen < ring.taken[stage]:
                    raise InterpretationError(f"{op.name}: waits on stage {stage} with parity {parity} and passes on phase "
                                              f"{seen}, which its data already came with; the parity is wrong (phases run "
                                              "on from step to step, and in a persistent block from tile to tile)")
                ring.taken[stage] = seen + 1
                for buf, s in ring.freed[stage]:
                    buf.owed.discard(s)
                ring.freed[stage] = []
        return ()


def _releases(arrive: smem.ArriveOp) -> bool:
    """Whether an arrival is the consumers' release of a stage a producer fills (not their
    handing a written stage to a store role, nor the store role's arrival)."""
    return arrive.async_proxy is None and not arrive.by_role


def _guarded_allocs(ring: smem.MbarrierAllocOp) -> list[Operation]:
    """The alloc ops of the buffers the producer copies into after a wait on `ring`
    (`smem.filled_after`): the buffers the consumers' releases on `ring` free."""
    out: list[Operation] = []
    for use in ring.result.uses:
        if isinstance(use.operation, smem.MbarrierWaitOp):
            out += [b.owner for b in smem.filled_after(use.operation) if isinstance(b.owner, smem.AllocOp) and b.owner not in out]
    return out


def check_readable(buf: Buffer, stage: int, op_name: str) -> None:
    """A stage may be read once its copies have landed and a barrier has passed since."""
    if not 0 <= stage < buf.type.stages.data:
        raise InterpretationError(f"{op_name}: stage {stage} of a buffer with {buf.type.stages.data} stages")
    if buf.in_flight.get(stage, 0):
        raise InterpretationError(f"{op_name}: stage {stage} of {buf.type} still has a copy in flight; wait for its group first")
    if buf.tma_filled and stage not in buf.held:
        raise InterpretationError(f"{op_name}: reads stage {stage} of {buf.type} after the consumers released it (the producer "
                                  "may be filling it again); read it before the release")
    if stage in buf.unsynced:
        raise InterpretationError(f"{op_name}: stage {stage} of {buf.type} was filled since the last barrier; "
                                  "other threads' copies are not visible yet")
