"""How much of a kernel's tile traffic reaches DRAM once the L2 cache serves repeats.

The napkin count reads every tile from HBM each time a block asks for it; on the GPU the
requests go through the L2, and a tile still there is not read again. `dram_estimate` (the
HBM term of `napkin_ir.model.timing.predict`) replays the kernel's tile accesses in time
order through the L2's two partitions:

- **When blocks run.** Blocks start in launch order (`Space.block_ids`: the first grid axis
  fastest, `hbm.group` bands, `hbm.order`) on `slots` slots (SMs x blocks per SM, from the
  occupancy calculation); each takes the slot that frees first, as the hardware's block
  scheduler does. A block lasts one step per iteration of its loops, loops one after another
  in program order (a causal block's stream is shorter). The slots of one SM are staggered:
  with k blocks an SM, the j-th slot of each SM first frees at j/k of a block's duration
  (`block_schedule`), so equal blocks start one per SM at a time, every 1/k of a block. This
  is what the GPU settles into: research/block_trace.py, which records when each block starts
  and on which SM, finds consecutive starts on one SM 0.35-0.65 of a block apart with 2
  blocks an SM, 0.2-0.35 with 3, 0.05-0.35 with 5, and whole blocks with one (H200,
  2026-11-23; research/model-validation.md). Across SMs, the blocks that start together stay in step. A
  persistent kernel (`hbm.persistent`) takes its tiles in the same order, one per slot at a
  time, so it needs no case of its own.
- **When a tile is touched.** An access in a loop happens at its block's start plus the
  loop's start plus the iteration (the linear index over nested loops); one outside loops at
  the end of the loop before it (the output tile), or at the block's start if none came
  before (Q, the pipeline's first stages). What blocks touch at one step is one group: a
  tile several of them read at the same step is fetched once.
- **What the cache keeps.** A tile (an op's tile shape at an offset into a tensor, clipped
  to its edge) touched at step t, last touched at step p, has d bytes of other distinct
  tiles touched in steps p+1..t before it (its reuse distance, itself included), and
  counts the share of its lines still held (`survival`). Where the schedule is known (one
  block an SM, whose waves start and run in step, on a GPU whose SMs' partitions are
  measured; or a measured schedule), the distance is known to `L2_EDGE_SPREAD` (5%) and
  the cache's edge is that sharp: research/l2_probe.cu finds a buffer kept whole to 28 MiB
  and lost from 32, about a partition's 30, and the pair probe (below) fits an LRU. With
  several blocks an SM the blocks sharing one start in step and drift apart
  (research/block_trace.py: the first two end at 0.89 and 1.14 of a block, later ones start
  about half a block apart), which the schedule here does not follow, and where the
  partitions are not known the SMs are dealt to them at random; there the replay takes the
  softer edge of `L2_WAYS` (16)-way sets filled at random, a line surviving d bytes when
  fewer than 16 of them fell into its set (their number Poisson with mean 16 d / C, C the
  partition's size). That edge stands for the spread of the distances, not for the cache
  (whose sets the probes find filled evenly), and was chosen by its fit to Nsight
  Compute's readings (research/model-validation.md). Reads that miss are fetched from DRAM; written tiles
  occupy the cache like read ones, and reach DRAM once each time they become dirty, except
  the lines still dirty when the kernel ends (the tiles written at their last touch whose
  distance to a touch after the last step keeps them): the L2 writes them back later, as
  the next kernel's lines displace them, not while this one runs (Nsight Compute's DRAM
  bytes written fall 4-9 MB short of each output by as much). The distances come from one
  2-d histogram of (step, next step the tile is touched) over the distinct (step, tile)
  pairs, so the replay is a few numpy passes, not a loop over accesses.

- **Where a line is held.** An A100, H100 or H200's L2 is two partitions
  (`L2_PARTITIONS`), each half of it, each attached to half of the SMs (the A100
  whitepaper, on its L2). A line has a home partition (lines are hashed over them, so each
  tile is half homed in each); a partition also keeps a copy of a line homed in the other
  when its own SMs read or write it. So the replay (`replay_partitioned`) is one LRU replay
  per partition, of the accesses it sees: its own SMs' reads and writes of every line, and
  every access of the other SMs to the lines homed in it (a read its own partition missed
  looks there next; a write reaches the home, which writes it back). That a written line
  takes room in the writer's partition as a read one does is measured (research/l2_stream.cu,
  H200, 2026-11-24: a stream of fresh lines pushes a reused buffer out of the L2 as much
  written as read, at every size tried). A read reaches DRAM when the home missed and the reader
  needed it: a reader on the home partition always, one on the other when its own
  partition missed too. Which SMs are on which partition is measured on the H200 and the
  H100, alike (research/l2_latency.cu; `Hardware.l2_partition`: 66 and 66, by pairs of SMs),
  and so is the order a launch hands its blocks to SMs (research/block_trace.py;
  `Hardware.dispatch_order`): the schedule's i-th SM is the i-th a launch fills, so
  consecutive blocks share a partition in runs of 16 to 50. Where the hardware table has
  neither (the A100), the SMs are dealt evenly at random (`PARTITION_SEED`). The pair
  probe (research/l2_partition.cu) follows from this rule and the measured partitions: two
  SMs reading one 36 MiB buffer four times, from its start and its middle, thrash one
  partition (4.5 x the buffer from DRAM; measured 4.4-4.5) and share two (1 x; measured
  1.25-1.9), and one SM alone reads it 2.5 x (measured 2.50). Measured (research/l2_probe.cu,
  H200, 2026-11-23), and what this gives with no constant: a buffer every SM reads is kept
  whole between passes up to 28 MiB of the 60 MiB and lost from 32 MiB on (each partition
  sees every line: kept up to 30 MiB); one of which each SM reads its own slice is kept up
  to 40 MiB (a partition sees its own SMs' half of the buffer and the other SMs' lines
  homed in it, a quarter: kept up to 4/3 x 30 MiB). A tile read by blocks on both
  partitions is held twice; one read by a few SMs, like a GEMM's B tile that one block of
  each block row reads in turn, is held 1.5 times on average. Steps are merged evenly when
  a kernel has more than `MAX_STEPS` of them, which only puts tiles of neighbouring steps
  in one group.

How far to trust it (research/model-validation.md, "GPU validation"): against Nsight Compute's DRAM bytes
for 302 configurations (GEMMs of both paths at nine shapes, attention at five; H200 and
H100), 263 are within 10% (and 27 of 37 at a fifth set of shapes, predicted before they
were measured): attention 54 of 54, sm_90a 86 of 88, sm_80 with one block an SM
60 of 64, sm_80 with several blocks an SM launched in bands of block rows (`hbm.group`) 29
of 30 and in the plain order 34 of 66, up to +125% (64x64 tiles at 8192x8192x2048 on the
H100): whether the blocks of an SM run in step or staggered changes their traffic by up to
2x, and the kernel does not say which (research/block_trace.py: 128x128x32 tiles in step with 3
stages, staggered with 4). Past the cache's edge the hardware keeps data read again in part
while other data streams past (research/l2_stream.cu: half of a reused buffer kept where an LRU
keeps none), which the replay's edge does not model. The constants are the cache's size, its
partitions and the dispatch order (measured), the edge's spread (the probe's and the blocks'
durations) and, for several blocks an SM, the 16 ways (fitted). napkin-model notes where the
estimate is least sure: reuse at the cache's edge (the estimate moving by more than 10% with
the L2 5% smaller or larger), and several blocks an SM whose estimate moves by more than 10%
with them in step (`timing.predict(edge=True)`, `block_schedule(stagger=False)`); where it
gives no note, the estimate was within 10% for 211 of 214 readings.

What it does not see: blocks of one SM progressing at different rates within a block (a
block moves one step per iteration), drift that differs from SM to SM, which SM takes a
block after the first wave (the schedule keeps each slot on its SM, where the GPU gives it
to the SM that frees first), the row a launch's dispatch starts from (it moves from launch
to launch; the table's first is taken), two loops of equal trip counts one after the other
(taken as one), slices, and sectors (a tile's lines are held or lost alike)."""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

from napkin_ir.model.analysis import Access, KernelCost

# The L2's partitions: each holds 1/L2_PARTITIONS of it, the lines of its half of memory
# (their home) and copies of the other half's that its SMs read (see the module docstring).
# 1: one cache of the whole L2.
L2_PARTITIONS = 2
# Which partition an SM is attached to, when the hardware table does not say (the H100's and
# H200's are measured, `Hardware.l2_partition`; the A100's is not): the replay takes a fixed
# pseudo-random half of the SMs, drawn with this seed.
PARTITION_SEED = 0
# The associativity of the L2: a line is hashed to one set of L2_WAYS lines and evicted when
# L2_WAYS other distinct lines of its set came after it; with lines falling into sets at
# random, a soft edge (`survival`). The replay uses it where it does not know the schedule
# well: kernels with several blocks an SM, and any on a GPU whose SMs' partitions are not
# measured (see the module docstring). None: one fully associative LRU, everywhere (the
# tests' exact cache).
L2_WAYS: int | None = 16
# Where the schedule is known (one block an SM on a GPU whose SMs' partitions are measured,
# or a measured schedule), a tile's reuse distance is known to this relative spread, and the
# cache's edge is that sharp: research/l2_probe.cu finds a buffer every SM reads kept whole up
# to 28 MiB and lost from 32 (an edge of about +-2 MiB about the partition's 30), and
# research/block_trace.py one-block-an-SM blocks lasting within 2-6% of each other ((p90 -
# p10) / 2.56 of the median; H200, 2026-11-23).
L2_EDGE_SPREAD = 0.05
# The most time steps the replay resolves: its histogram is MAX_STEPS^2 numbers.
MAX_STEPS = 2048
_KEY_LIMIT = 1 << 62


@dataclass
class Trace:
    """Every access of a kernel, one row per context that touches a tile: its time step,
    its tile (a number, equal for the same tile of the same tensor), its bytes, its tensor
    (a number into `names`), whether it writes."""

    step: np.ndarray
    key: np.ndarray
    size: np.ndarray
    tensor: np.ndarray
    write: np.ndarray
    names: list[str]
    sm: np.ndarray | None = None  # the SM of the access's block (any numbering); None: one SM
    # the relative spread of its reuse distances: the cache's edge (`survival`); None: the
    # chance of L2_WAYS-way sets
    spread: float | None = None


@dataclass
class Touches:
    """The distinct (step, tile) pairs of a trace, in step order, and what the cache did."""

    step: np.ndarray
    tensor: np.ndarray
    size: np.ndarray
    read: np.ndarray  # some context reads the tile at this step
    write: np.ndarray  # some context writes it
    held: np.ndarray  # the share of the tile's lines the cache still held from its previous touch
    dirtied: np.ndarray  # the share a write makes dirty anew: written back once
    left_dirty: np.ndarray  # the share a tile's last touch, a write, leaves dirty in the cache at the end
    event: np.ndarray  # per access of the trace: its (step, tile) pair, an index into the arrays above

    def dram_bytes(self, n_tensors: int) -> np.ndarray:
        """Per tensor, the bytes fetched for reads that miss plus the bytes written back
        while the kernel runs (lines still dirty when it ends are written back later)."""
        fetched = np.bincount(self.tensor, weights=self.size * self.read * (1 - self.held), minlength=n_tensors)
        written = np.bincount(self.tensor, weights=self.size * (self.dirtied - self.left_dirty), minlength=n_tensors)
        return fetched + written

    def dirty_at_end(self, n_tensors: int) -> np.ndarray:
        """Per tensor, the bytes still dirty in the cache when the kernel ends."""
        return np.bincount(self.tensor, weights=self.size * self.left_dirty, minlength=n_tensors)


def block_schedule(durations: np.ndarray, slots: int, per_sm: int = 1, stagger: bool = True) -> np.ndarray:
    """Start step of each block, given in launch order with its duration in steps, on `slots`
    slots, `per_sm` of them on each SM: each block takes the slot that frees first. The
    slots of one SM are staggered: the j-th of an SM's `per_sm` slots first frees at j x the
    mean duration / `per_sm`, so equal blocks start `slots / per_sm` at a time (one per SM)
    every duration / `per_sm` steps. Without `stagger`, all of an SM's slots first free at 0:
    the blocks sharing an SM start, and run, in step."""
    return block_placement(durations, slots, per_sm, stagger)[0]


def resident(n_blocks: int, slots: int, per_sm: int = 1) -> tuple[int, int]:
    """The SMs a launch of `n_blocks` uses and the blocks each holds at once, on `slots`
    slots, `per_sm` of them an SM: a launch gives every SM a block before any SM a second
    (research/block_trace.py), so a grid of fewer blocks than slots is spread over all the SMs,
    not packed onto a few."""
    per_sm = max(1, per_sm)
    sms = max(1, slots // per_sm)
    k = max(1, min(per_sm, -(-n_blocks // sms)))
    return max(1, min(sms, n_blocks)), k


def block_placement(durations: np.ndarray, slots: int, per_sm: int = 1, stagger: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """`block_schedule`'s start steps, and the SM each block runs on (slot s is on SM s mod
    the number of SMs)."""
    n = len(durations)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    sms, k = resident(n, slots, per_sm)
    slots = sms * k
    if np.all(durations == durations[0]):  # waves of one block an SM, duration / k apart (or k at once)
        i = np.arange(n, dtype=np.int64)
        return ((i // sms) * int(durations[0]) // k if stagger else (i // slots) * int(durations[0])), i % sms
    start, sm = np.zeros(n, np.int64), np.zeros(n, np.int64)
    mean = float(np.mean(durations))
    free = [(int((s // sms) * mean / k) if stagger else 0, s) for s in range(slots)]
    heapq.heapify(free)
    for i in range(n):
        t, s = heapq.heappop(free)
        start[i], sm[i] = t, s % sms
        heapq.heappush(free, (t + int(durations[i]), s))
    return start, sm


def survival(distance: np.ndarray, capacity: float, spread: float | None = None) -> np.ndarray:
    """The share of a tile's lines still in the cache after `distance` bytes of other distinct
    lines. A fully associative LRU (`L2_WAYS` None) keeps them all up to `capacity`. With a
    `spread`, the distance is known to that relative (normal) spread: the chance that it
    falls within the capacity. Otherwise, in a cache of `L2_WAYS`-way sets that lines are
    hashed to at random, the chance that fewer than L2_WAYS of those lines fell into the
    line's set, their count being Poisson with mean L2_WAYS x distance / capacity."""
    distance = np.asarray(distance, np.float64)
    if capacity <= 0:
        return np.zeros(distance.shape)
    if L2_WAYS is None:
        return (distance <= capacity).astype(np.float64)
    if spread is not None:
        return _normal_cdf((capacity - distance) / np.maximum(spread * distance, 1e-300))
    mean = L2_WAYS * distance / capacity
    term = np.exp(-mean)
    total = term.copy()
    for j in range(1, L2_WAYS):
        term = term * mean / j
        total += term
    return np.minimum(total, 1.0)


def _normal_cdf(z: np.ndarray) -> np.ndarray:
    """The standard normal distribution function, to 1e-7 (Abramowitz and Stegun 7.1.26)."""
    x = np.abs(z) / math.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf = 1.0 - poly * np.exp(-x * x)
    return 0.5 * (1.0 + np.sign(z) * erf)


def _iterations(a: Access) -> int:
    return math.prod(a.space.shape[len(a.space.grid_axes):])


def _block_clock(accesses: list[Access], n_blocks: int) -> tuple[list[np.ndarray], np.ndarray]:
    """Per access, the step of each of its contexts counted from its block's start; and each
    block's duration. Accesses come in program order: a run of accesses in loops of one shape
    is one loop (its step: the linear index over the loops' iterations), which starts when
    the loop before it ends; an access outside loops happens at the end of the loop before
    it, or at the start."""
    segment, shapes = [], []
    for a in accesses:
        loops = a.space.shape[len(a.space.grid_axes):]
        if loops and (not shapes or shapes[-1] != loops):
            shapes.append(loops)
        segment.append(len(shapes) - 1)
    length = np.zeros((len(shapes), n_blocks), np.int64)  # steps of each loop, per block
    for a, seg in zip(accesses, segment):
        if len(a.space.shape) > len(a.space.grid_axes):
            live = a.space.full_mask().reshape(n_blocks, _iterations(a))
            length[seg] = np.maximum(length[seg], np.where(live, np.arange(1, live.shape[1] + 1), 0).max(axis=1))
    begin = np.concatenate([np.zeros((1, n_blocks), np.int64), length.cumsum(axis=0)])
    clock = []
    for a, seg in zip(accesses, segment):
        iters = _iterations(a)
        if len(a.space.shape) > len(a.space.grid_axes):
            clock.append(begin[seg][:, None] + np.arange(iters))
        elif seg < 0:
            clock.append(np.zeros((n_blocks, 1), np.int64))
        else:
            clock.append(np.maximum(begin[seg + 1] - 1, 0)[:, None])
    return clock, np.maximum(begin[-1], 1)


def _trace(cost: KernelCost, slots: int, per_sm: int = 1, ran: np.ndarray | None = None,
           dispatch: tuple[int, ...] | None = None, partitions_known: bool = True, stagger: bool = True) -> Trace | None:
    accesses = [a for a in cost.accesses if a.space.count()]
    if not accesses:
        return None
    first = accesses[0]
    n_blocks = math.prod(first.space.shape[:len(first.space.grid_axes)])
    launch = first.space.block_ids().reshape(n_blocks, _iterations(first))[:, 0]
    clock, duration = _block_clock(accesses, n_blocks)
    order = np.argsort(launch, kind="stable")
    if ran is not None:  # measured: (start, end[, SM]) per block in launch order, any time unit
        start = _measured_starts(ran, launch, duration)
        ran = np.asarray(ran)
        sm = ran[launch, 2].astype(np.int64) if ran.shape[1] > 2 else np.arange(n_blocks) % max(1, slots // per_sm)
    else:
        start, sm = np.empty(n_blocks, np.int64), np.empty(n_blocks, np.int64)
        start[order], sm[order] = block_placement(duration[order], slots, per_sm, stagger)
        if dispatch:  # the model's SM i is the i-th a launch hands a block to
            sm = np.asarray(dispatch, np.int64)[sm % len(dispatch)]

    tensors = {name: n for n, name in enumerate(dict.fromkeys(a.tensor for a in accesses))}
    bases, radices = _key_space(accesses)
    steps, keys, sizes, names, writes, sms = [], [], [], [], [], []
    for a, local in zip(accesses, clock):
        size = a.space.full(a.per_context_bytes())
        ctx = np.flatnonzero(a.space.full_mask() & (size > 0))
        steps.append((start[:, None] + local).reshape(-1)[ctx])  # local: blocks x iterations (1 outside loops)
        sms.append(np.broadcast_to(sm[:, None], local.shape).reshape(-1)[ctx])
        # the tile's number: its group's base plus its offsets in mixed radix
        lows, strides = radices[(a.tensor, a.tile)]
        key = np.array(bases[(a.tensor, a.tile)], np.int64)
        for o, lo, stride in zip(a.offsets, lows, strides):
            key = key + (o - lo) * stride
        keys.append(a.space.full(key)[ctx])
        sizes.append(size[ctx])
        names.append(np.full(len(ctx), tensors[a.tensor], np.int64))
        writes.append(np.full(len(ctx), a.write))
    if not sum(len(k) for k in keys):
        return None
    # the schedule is measured, or its waves run in step on SMs whose partitions are known:
    # the sharp edge; otherwise the 16-way one, which also stands for SMs dealt at random
    known = ran is not None or (partitions_known and resident(n_blocks, slots, per_sm)[1] == 1)
    return Trace(np.concatenate(steps), np.concatenate(keys), np.concatenate(sizes).astype(np.float64),
                 np.concatenate(names), np.concatenate(writes), list(tensors), np.concatenate(sms),
                 L2_EDGE_SPREAD if known else None)


def _measured_starts(ran: np.ndarray, launch: np.ndarray, duration: np.ndarray) -> np.ndarray:
    """The start steps of blocks that started at measured times: `ran` holds (start, end) per
    block in launch order; a step is the median block's time over its steps. The blocks keep
    the replay's clock within them (a step per iteration)."""
    t = np.asarray(ran, np.float64)[launch]
    step = float(np.median(np.maximum(t[:, 1] - t[:, 0], 1e-9) / duration))
    return np.round((t[:, 0] - t[:, 0].min()) / step).astype(np.int64)


def _key_space(accesses: list[Access]) -> tuple[dict, dict]:
    """Numbers for tiles: per (tensor, tile shape), a base and, per axis, the lowest offset
    and a stride, so that distinct tiles get distinct numbers."""
    lows: dict[tuple, list[int]] = {}
    highs: dict[tuple, list[int]] = {}
    for a in accesses:
        g = (a.tensor, a.tile)
        lo, hi = [int(np.min(o)) for o in a.offsets], [int(np.max(o)) for o in a.offsets]
        lows[g] = [min(x, y) for x, y in zip(lows.get(g, lo), lo)]
        highs[g] = [max(x, y) for x, y in zip(highs.get(g, hi), hi)]
    bases, radices, base = {}, {}, 0
    for g, low in lows.items():
        strides, stride = [], 1
        for lo, hi in zip(reversed(low), reversed(highs[g])):
            strides.append(stride)
            stride *= hi - lo + 1
        bases[g], radices[g] = base, (low, strides[::-1])
        base += stride
    return bases, radices


@dataclass
class _Reuse:
    """What `replay` finds of a trace whatever the cache's size: its distinct (step, tile)
    pairs and, for each touched again, its reuse distance."""

    step: np.ndarray
    tensor: np.ndarray
    size: np.ndarray
    read: np.ndarray
    write: np.ndarray
    again: np.ndarray  # touched before
    distance: np.ndarray  # of those touched before, the bytes since
    final: np.ndarray  # the last touch is a write
    final_distance: np.ndarray  # of those, the bytes after it, itself included
    written_before: np.ndarray  # the touch before was a write
    event: np.ndarray
    spread: float | None


def _reuse(tr: Trace, last: int | None = None) -> _Reuse:
    step = tr.step.astype(np.int64)
    last = int(step.max()) if last is None else last
    if last >= MAX_STEPS:  # merge neighbouring steps evenly
        step = step * (MAX_STEPS - 1) // last
        last = MAX_STEPS - 1
    key = tr.key
    n_keys = int(key.max()) + 1
    if n_keys * (last + 1) >= _KEY_LIMIT:
        key = np.unique(key, return_inverse=True)[1].reshape(-1)
        n_keys = int(key.max()) + 1
    events, inverse = np.unique(step * n_keys + key, return_inverse=True)
    inverse = inverse.reshape(-1)
    ev_step, ev_key = events // n_keys, events % n_keys
    n = len(events)
    reads = np.zeros(n, bool)
    reads[inverse[~tr.write]] = True
    writes = np.zeros(n, bool)
    writes[inverse[tr.write]] = True
    size = np.zeros(n)
    size[inverse] = tr.size
    tensor = np.zeros(n, np.int64)
    tensor[inverse] = tr.tensor

    # `events` is sorted by (step, key); the previous and next touch of the same tile
    by_key = np.argsort(ev_key, kind="stable")  # events come by step: stable keeps that within a tile
    same = ev_key[by_key][1:] == ev_key[by_key][:-1]
    prev = np.full(n, -1, np.int64)
    nxt = np.full(n, last + 1, np.int64)  # last + 1: never again
    prev[by_key[1:][same]] = ev_step[by_key[:-1][same]]
    nxt[by_key[:-1][same]] = ev_step[by_key[1:][same]]

    # reuse distance of a touch at t last touched at p: the bytes of the tiles whose last
    # touch up to t lies in p+1..t, i.e. touches at s in (p, t] with next touch > t;
    # w[a, b] = bytes of touches at s >= a with next touch >= b
    side = last + 3
    hist = np.bincount(ev_step * side + nxt, weights=size, minlength=side * side).reshape(side, side)
    w = hist[::-1, ::-1].cumsum(axis=0).cumsum(axis=1)[::-1, ::-1]
    again = prev >= 0
    t, p = ev_step[again], prev[again]
    distance = w[p + 1, t + 1] - w[t + 1, t + 1]
    # a write makes the tile dirty anew unless the cache held it from a write
    written_before = np.zeros(n, bool)
    written_before[by_key[1:][same]] = writes[by_key[:-1][same]]
    # a tile last touched by a write is still dirty when the kernel ends unless the distinct
    # tiles touched after it, itself included, pushed it out: its reuse distance to a touch
    # after the last step
    final = writes & (nxt == last + 1)
    final_distance = w[ev_step[final] + 1, last + 1] + size[final]
    return _Reuse(ev_step, tensor, size, reads, writes, again, distance, final, final_distance, written_before,
                  inverse, tr.spread)


def _touches(r: _Reuse, capacity: float) -> Touches:
    held = np.zeros(len(r.step))
    held[r.again] = survival(r.distance, capacity, r.spread)
    left_dirty = np.zeros(len(r.step))
    left_dirty[r.final] = survival(r.final_distance, capacity, r.spread)
    return Touches(r.step, r.tensor, r.size, r.read, r.write, held, r.write * (1 - held * r.written_before), left_dirty,
                   r.event)


def replay(tr: Trace, capacity: float, last: int | None = None) -> Touches:
    """The trace through an LRU cache of `capacity` bytes: per distinct (step, tile), whether
    the cache still held the tile from the last step that touched it (never at its first
    touch). Steps are merged evenly past `MAX_STEPS`; `last`, the last step of a trace this
    one is part of (one partition's share), merges them as that trace's are."""
    return _touches(_reuse(tr, last), capacity)


def partition_of(sm: np.ndarray, sms: int = 0, table: tuple[int, ...] | None = None) -> np.ndarray:
    """The L2 partition (0 .. L2_PARTITIONS - 1) each SM is attached to: `table[sm]`, the
    hardware's (`Hardware.l2_partition`, by %smid), where it is known; otherwise the GPU's
    `sms` SMs (at least as many as the numbers given) dealt evenly at random
    (`PARTITION_SEED`), so an SM's partition does not depend on how many of them a kernel
    uses."""
    sm = np.asarray(sm, np.int64)
    if table:
        return np.asarray(table, np.int64)[sm % len(table)]
    n = max(sms, int(sm.max()) + 1 if len(sm) else 1)
    dealt = np.random.default_rng(PARTITION_SEED).permutation(n) * L2_PARTITIONS // n
    return dealt[sm]


def _distinct(tr: Trace, part: np.ndarray) -> tuple[Trace, np.ndarray]:
    """The trace's accesses with steps merged as `replay` merges them, one per distinct (step,
    tile, partition, read or write): accesses that agree on all four are one to the cache."""
    step = tr.step.astype(np.int64)
    last = int(step.max())
    if last >= MAX_STEPS:
        step = step * (MAX_STEPS - 1) // last
    key = tr.key
    n_keys = int(key.max()) + 1
    if (int(step.max()) + 1) * n_keys * 2 * L2_PARTITIONS >= _KEY_LIMIT:
        key = np.unique(key, return_inverse=True)[1].reshape(-1)
        n_keys = int(key.max()) + 1
    _, first = np.unique(((step * n_keys + key) * L2_PARTITIONS + part) * 2 + tr.write, return_index=True)
    return (Trace(step[first], tr.key[first], tr.size[first], tr.tensor[first], tr.write[first], tr.names,
                  spread=tr.spread), part[first])


def replay_partitioned(tr: Trace, capacity: float, part: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per tensor, the DRAM bytes moved while the kernel runs and those left dirty at its end,
    when the L2 is `L2_PARTITIONS` caches of `capacity` bytes and access i comes from an SM
    attached to partition part[i]. A tile's lines are homed evenly over the partitions (the
    hash spreads every tile's lines over all of them). A partition sees its own SMs' reads and
    writes of every line, and every access of another SM to a line homed in it (a read that
    its own partition missed looks there next; a write reaches the home); each is one LRU replay. A
    read is fetched from DRAM when its home misses and its reader needs it: a reader on the
    home partition always, another when its own partition missed too. Writes are written
    back from the home, as `replay` counts them."""
    return replay_partitioned_at(tr, [capacity], part)[0]


def replay_partitioned_at(tr: Trace, capacities: list[float], part: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """`replay_partitioned` for each of `capacities`, the reuse distances found once."""
    parts = L2_PARTITIONS
    tr, part = _distinct(tr, np.asarray(part, np.int64))
    last = int(tr.step.max())
    n_tensors = len(tr.names)
    share = tr.size / parts
    reads = ~tr.write
    streams = []
    for p in range(parts):
        own = np.flatnonzero(part == p)  # read or written by p's SMs: every home's share
        home = np.flatnonzero((part != p) | tr.write)  # the share homed here of the others' accesses and all writes
        rows = np.concatenate([np.tile(own, parts), home])
        homes = np.concatenate([np.repeat(np.arange(parts), len(own)), np.full(len(home), p)])
        sub = Trace(tr.step[rows], tr.key[rows] * parts + homes, share[rows], tr.tensor[rows], tr.write[rows], tr.names,
                    spread=tr.spread)
        streams.append((own, rows, homes, _reuse(sub, last)))
    results = []
    for capacity in capacities:
        touches = [_touches(reuse, capacity) for *_, reuse in streams]
        moved, dirty = np.zeros(n_tensors), np.zeros(n_tensors)
        for p, ((_, rows, homes, _), t) in enumerate(zip(streams, touches)):
            at_home = homes == p
            need = np.ones(len(rows))
            far = at_home & (part[rows] != p) & reads[rows]
            for q, ((own_q, *_), t_q) in enumerate(zip(streams, touches)):  # a far reader needs the line when its own partition missed
                from_q = far & (part[rows] == q)
                local = p * len(own_q) + np.searchsorted(own_q, rows[from_q])  # its read of the share homed at p in q's stream
                need[from_q] = 1 - t_q.held[t_q.event[local]]
            needed = np.zeros(len(t.held))
            np.maximum.at(needed, t.event[at_home], need[at_home])
            homed = np.zeros(len(t.held), bool)
            homed[t.event[at_home]] = True
            moved += np.bincount(t.tensor, weights=homed * t.size * (t.read * (1 - t.held) * needed + t.dirtied - t.left_dirty),
                                 minlength=n_tensors)
            dirty += np.bincount(t.tensor, weights=homed * t.size * t.left_dirty, minlength=n_tensors)
        results.append((moved, dirty))
    return results


@dataclass(frozen=True)
class DramEstimate:
    """Per global tensor: the bytes read from or written to DRAM while the kernel runs, and
    the bytes it leaves dirty in the L2 (written back after it ends)."""

    moved: dict[str, float]
    dirty_at_end: dict[str, float]


def dram_estimate(cost: KernelCost, slots: int, l2_bytes: float, per_sm: int = 1,
                  ran: np.ndarray | None = None, partition: tuple[int, ...] | None = None,
                  dispatch: tuple[int, ...] | None = None) -> DramEstimate:
    """The DRAM traffic of `cost` when blocks run `slots` at a time, `per_sm` of them on each
    SM (whose slots are staggered: `block_schedule`), and the L2 holds `l2_bytes` in
    `L2_PARTITIONS` partitions. `partition`: the partition of each SM by its number, and
    `dispatch`: the SMs in the order a launch hands them blocks, where the hardware table
    has them (`Hardware.l2_partition`, `Hardware.dispatch_order`); without `partition`,
    the SMs are dealt at random and the replay keeps the 16-way edge, which then stands for
    the partitions not known as well (`survival`). `ran`, (start, end) per block in launch
    order and optionally its SM (as research/block_trace.py measures them), replaces the
    modelled start times (and SMs)."""
    return dram_estimates(cost, slots, [l2_bytes], per_sm, ran, partition, dispatch)[0]


def dram_estimates(cost: KernelCost, slots: int, l2_sizes: list[float], per_sm: int = 1,
                   ran: np.ndarray | None = None, partition: tuple[int, ...] | None = None,
                   dispatch: tuple[int, ...] | None = None, stagger: bool = True) -> list[DramEstimate]:
    """`dram_estimate` for each of `l2_sizes`, the trace and its reuse distances found once.
    Without `stagger`, the blocks sharing an SM run in step (`block_schedule`)."""
    touched = [name for name in cost.globals if any(a.tensor == name for a in cost.accesses)]
    tr = _trace(cost, slots, per_sm, ran, dispatch, partition is not None, stagger)
    if tr is None:
        return [DramEstimate({name: 0.0 for name in touched}, {name: 0.0 for name in touched}) for _ in l2_sizes]
    if L2_PARTITIONS > 1:
        part = partition_of(tr.sm, slots // max(1, per_sm), partition)
        results = replay_partitioned_at(tr, [size / L2_PARTITIONS for size in l2_sizes], part)
    else:
        reuse = _reuse(tr)
        results = [(t.dram_bytes(len(tr.names)), t.dirty_at_end(len(tr.names)))
                   for t in (_touches(reuse, size) for size in l2_sizes)]
    estimates = []
    for got in results:
        moved, dirty = {name: 0.0 for name in touched}, {name: 0.0 for name in touched}
        for n, (m, d) in enumerate(zip(*got)):
            moved[tr.names[n]], dirty[tr.names[n]] = float(round(m)), float(round(d))  # whole bytes: no float residue
        estimates.append(DramEstimate(moved, dirty))
    return estimates


def dram_bytes(cost: KernelCost, slots: int, l2_bytes: int, per_sm: int = 1) -> dict[str, float]:
    """Per global tensor, the bytes read from or written to DRAM while the kernel runs
    (`dram_estimate`)."""
    return dram_estimate(cost, slots, l2_bytes, per_sm).moved
