"""The DRAM estimate: a kernel's tile accesses replayed in time order through an LRU cache.

Closed forms on a GEMM small enough to follow by hand: 512 x 256 x 128 in bf16, 128 x 128
blocks streaming k by 64, at the hbm level. The grid is 4 block rows by 2 block columns,
the first axis fastest (block (m, n) is launched (m + 4 n)-th); each block takes two steps
(k = 0, 64), reading A[m, k] and B[k, n] at each and writing its output tile at the second.
An A or B tile is 16 KiB, an output tile 32 KiB. The tests make the L2 one cache
(`L2_PARTITIONS` 1) of the size they give, except those of the partitions, and fully
associative (`L2_WAYS` None), LRU by its definition, except the tests of the sets. Output
tiles the cache still holds dirty when the kernel ends are not written while it runs.
"""

import itertools
import math

import numpy as np
import pytest

from napkin_ir.attention_diagrams import attention_diagram
from napkin_ir.diagrams import gemm
from napkin_ir.model import l2
from napkin_ir.model.hardware import hardware
from napkin_ir.model.analysis import analyse_module
from napkin_ir.passmanager import run_pipeline

KIB = 1024
TILE = 16 * KIB  # an A or a B tile
OUT_TILE = 32 * KIB
A_BYTES, B_BYTES, OUT_BYTES = 512 * 128 * 2, 128 * 256 * 2, 512 * 256 * 2


@pytest.fixture(autouse=True)
def one_fully_associative_cache(monkeypatch):
    monkeypatch.setattr(l2, "L2_WAYS", None)
    monkeypatch.setattr(l2, "L2_PARTITIONS", 1)


@pytest.fixture(scope="module")
def gemm_cost():
    (cost,) = analyse_module(run_pipeline(gemm(512, 256, 128), 'ncd-relabel{grid="m:128,n:128" stream="k:64"},ncd-to-hbm')).kernels
    return cost


@pytest.fixture
def exact():
    """`dram_bytes` with an L2 of exactly `capacity` bytes for tiles."""
    return lambda cost, slots, capacity: l2.dram_bytes(cost, slots, capacity)


def test_a_tiles_are_reused_by_the_next_wave_only_while_the_cache_holds_them(gemm_cost, exact):
    # Waves of 4: block column 0 at steps 0-1, column 1 at steps 2-3. Column 1 reads the same
    # A tiles two steps after column 0. Between A[m, 0] at step 0 and at step 2 the cache
    # takes step 1 (4 A[m, 64], B[64, 0], 4 output tiles: 208 KiB) and step 2 (4 A[m, 0],
    # B[0, 1]: 80 KiB): 288 KiB, A[m, 0] included. A[m, 64] (steps 1 and 3) likewise.
    distance = 4 * TILE + TILE + 4 * OUT_TILE + 4 * TILE + TILE
    assert distance == 288 * KIB
    # Column 1's output tiles, written at the last step, are still dirty at the end (128 KiB
    # after them, themselves included); column 0's, written at step 1, are pushed out by
    # steps 2-3 (288 KiB) and themselves: written while the kernel runs.
    held = exact(gemm_cost, 4, distance)
    assert held == {"a": A_BYTES, "b": B_BYTES, "out": OUT_BYTES // 2}
    # one byte less and the second column reads A again; without the output tiles in the
    # cache the distance would be 160 KiB and this would still hit
    assert exact(gemm_cost, 4, distance - 1) == {"a": 2 * A_BYTES, "b": B_BYTES, "out": OUT_BYTES // 2}
    # B[k, n] is read by one column only: once whatever the cache
    assert exact(gemm_cost, 4, 0)["b"] == B_BYTES


def test_a_working_set_over_the_capacity_is_read_again_by_every_block(gemm_cost, exact):
    # One block at a time, in launch order: (0,0) (1,0) (2,0) (3,0) (0,1) ... two steps each.
    # The next block of a column reads the same B[k, n] two steps later; between them: the
    # block's other A and B tiles and its output, the next block's A tile, B[k, n] itself:
    # 16 + 16 + 32 + 16 + 16 = 96 KiB.
    distance = TILE + TILE + OUT_TILE + TILE + TILE
    once = exact(gemm_cost, 1, distance)
    assert once["b"] == B_BYTES
    # A[m, k] comes back four blocks later, after every other A tile (128 KiB): gone
    assert once["a"] == 2 * A_BYTES
    # below the distance, every block fetches both its B tiles: 8 blocks x 2 tiles
    assert exact(gemm_cost, 1, distance - 1)["b"] == 8 * 2 * TILE
    # a cache that holds A, B and the output together: each read once, and every output tile
    # still dirty in it when the kernel ends
    assert exact(gemm_cost, 1, A_BYTES + B_BYTES + OUT_BYTES) == {"a": A_BYTES, "b": B_BYTES, "out": 0}


def test_merging_steps_keeps_the_estimate_between_one_read_and_every_read(gemm_cost, monkeypatch):
    monkeypatch.setattr(l2, "MAX_STEPS", 3)  # 16 steps of one block at a time into 3
    got = l2.dram_bytes(gemm_cost, 1, 2 * 96 * KIB)
    assert A_BYTES <= got["a"] <= 2 * A_BYTES
    assert B_BYTES <= got["b"] <= 8 * 2 * TILE
    # each output tile written once; what stays dirty at the end fits in the cache
    assert OUT_BYTES - 2 * 96 * KIB <= got["out"] <= OUT_BYTES


def test_blocks_take_the_first_slot_to_come_free():
    # equal blocks: waves
    assert l2.block_schedule(np.array([2] * 5), 2).tolist() == [0, 0, 2, 2, 4]
    # a long block keeps its slot; the short ones follow each other in the other
    assert l2.block_schedule(np.array([4, 1, 1, 1, 2]), 2).tolist() == [0, 0, 1, 2, 3]
    assert l2.block_schedule(np.array([3, 1, 2]), 8).tolist() == [0, 0, 0]


def test_a_causal_block_lasts_its_two_loops_one_after_the_other():
    # query tile t (128 rows) streams 2t key tiles of 64 below the diagonal, then 2 on it
    text = attention_diagram("causal", 1, 1, 512, 64, "bf16")
    (cost,) = analyse_module(run_pipeline(text, 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm')).kernels
    accesses = [a for a in cost.accesses if a.space.count()]
    clock, duration = l2._block_clock(accesses, 4)
    assert duration.tolist() == [2, 4, 6, 8]
    stores = [c for a, c in zip(accesses, clock) if a.write]
    assert all(c[:, 0].tolist() == [1, 3, 5, 7] for c in stores)  # at the block's last step


def _definition(trace: l2.Trace, capacity: float) -> dict[tuple[int, int], bool]:
    """LRU by its definition: a tile touched at step t, last touched at p, is held when the
    distinct tiles touched in steps p+1..t weigh at most `capacity`."""
    touched: dict[int, set[int]] = {}
    size = {}
    for s, k, b in zip(trace.step.tolist(), trace.key.tolist(), trace.size.tolist()):
        touched.setdefault(s, set()).add(k)
        size[k] = b
    last: dict[int, int] = {}
    held = {}
    for s in sorted(touched):
        for k in sorted(touched[s]):
            if k in last:
                between = set().union(*(touched.get(x, set()) for x in range(last[k] + 1, s + 1)))
                held[(s, k)] = sum(size[x] for x in between) <= capacity
            else:
                held[(s, k)] = False
        for k in touched[s]:
            last[k] = s
    return held


@pytest.mark.parametrize("seed", range(6))
def test_the_replay_is_lru_by_its_definition(seed):
    rng = np.random.default_rng(seed)
    n, keys = 400, 30
    key = rng.integers(0, keys, n)
    tile_size = rng.integers(1, 9, keys).astype(np.float64)
    trace = l2.Trace(step=np.sort(rng.integers(0, 60, n)), key=key, size=tile_size[key], tensor=key % 3,
                     write=rng.random(n) < 0.2, names=["x", "y", "z"])
    for capacity in (0, 10, 25, 60):
        touches = l2.replay(trace, capacity)
        want = _definition(trace, capacity)
        got = {(int(s), int(k)): bool(h) for s, k, h in zip(touches.step, _event_keys(trace), touches.held)}
        assert got == want


def _event_keys(trace: l2.Trace) -> list[int]:
    """The tiles of the distinct (step, tile) pairs, in the replay's order (by step, then tile)."""
    return [k for _, k in sorted(set(zip(trace.step.tolist(), trace.key.tolist())))]


def _written_then_read(after: int) -> l2.Trace:
    """One 8-byte tile written at steps 0, 1 and 5, other 8-byte tiles read at 2, 3, 4, and
    `after` more read one a step after 5."""
    steps = [0, 1, 2, 3, 4, 5] + list(range(6, 6 + after))
    keys = [0, 0, 1, 2, 3, 0] + list(range(4, 4 + after))
    return l2.Trace(step=np.array(steps), key=np.array(keys), size=np.full(len(steps), 8.0),
                    tensor=np.array([0 if k == 0 else 1 for k in keys]), write=np.array([k == 0 and s != 2 for s, k in zip(steps, keys)]),
                    names=["out", "in"])


def test_a_write_reaches_dram_once_while_its_tile_stays_dirty():
    # 8 tiles (64 bytes) read after the last write push the tile out before the end (72
    # bytes of distinct tiles, itself included)
    trace = _written_then_read(8)
    big = l2.replay(trace, 64).dram_bytes(2)  # all held until the end: written back once
    assert big.tolist() == [8, 24 + 64]
    small = l2.replay(trace, 16).dram_bytes(2)  # evicted between step 1 and step 5 as well: twice
    assert small.tolist() == [16, 24 + 64]


def test_a_tile_still_dirty_when_the_kernel_ends_is_not_written_while_it_runs():
    trace = _written_then_read(8)
    # a cache of the 72 bytes after the last write holds it dirty at the end
    assert l2.replay(trace, 72).dram_bytes(2).tolist() == [0, 24 + 64]
    assert l2.replay(trace, 71).dram_bytes(2).tolist() == [8, 24 + 64]
    # evicted between steps 1 and 5 (32 bytes, itself included, came between), written once
    # then; dirty again at the end, with nothing after it
    short = _written_then_read(0)
    assert l2.replay(short, 16).dram_bytes(2).tolist() == [8, 24]
    # a cache of nothing keeps nothing dirty: three writes, three write-backs
    assert l2.replay(short, 0).dram_bytes(2).tolist() == [24, 24]


def test_query_tiles_of_a_head_cut_by_a_wave_keep_its_keys_in_the_cache(monkeypatch):
    # 2 x 4 heads of 16 query tiles, launched head by head, 132 x 6 blocks at a time at the
    # hbm level: with the cache at its H200 size each head's K and V come once
    from napkin_ir.model.timing import predict

    b, h, n, d = 2, 4, 2048, 64
    text = attention_diagram("softmax", b, h, n, d, "bf16")
    spec = 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-launch{order=last}'
    (cost,) = analyse_module(run_pipeline(text, spec)).kernels
    for slots in (24, 40):  # 1.5 and 2.5 heads a wave: every wave boundary cuts a head
        dram = l2.dram_bytes(cost, slots, hardware("h200").l2_bytes)
        # the 2 MiB output is still dirty in the cache when the kernel ends
        assert dram == {"q": b * h * n * d * 2, "k": b * h * n * d * 2, "v": b * h * n * d * 2, "out": 0}
    assert predict(cost, hardware("h200")).dram["k"] == b * h * n * d * 2
    # a cache too small to keep a head's keys from one wave to the next: the blocks of a wave
    # start together (one block an SM), so the query tiles of a head in one wave share each
    # key tile (they stream in step), and the 3 heads that a boundary of the waves of 24 cuts
    # (at 24, 72 and 120 of 128 blocks) read theirs twice
    tiny = l2.dram_bytes(cost, 24, 64 * KIB)
    head = n * d * 2
    assert tiny["k"] == (b * h + 3) * head and tiny["v"] == (b * h + 3) * head


def test_the_slots_of_one_sm_are_staggered():
    # 8 blocks of 8 steps on 4 slots: 4 SMs of one slot start theirs in waves; 2 SMs of two
    # slots start one block per SM every half block
    durations = np.array([8] * 8)
    assert l2.block_schedule(durations, 4).tolist() == [0, 0, 0, 0, 8, 8, 8, 8]
    assert l2.block_schedule(durations, 4, per_sm=2).tolist() == [0, 0, 4, 4, 8, 8, 12, 12]
    # unequal blocks: each SM's second slot first frees at half the mean duration (10/3,
    # so step 1), then each block takes the slot that frees first
    assert l2.block_schedule(np.array([4, 4, 4, 4, 2, 2]), 4, per_sm=2).tolist() == [0, 0, 1, 1, 4, 4]
    # in step: an SM's two slots free at 0, so the 4 slots start blocks 4 at a time
    assert l2.block_schedule(durations, 4, per_sm=2, stagger=False).tolist() == [0, 0, 0, 0, 8, 8, 8, 8]
    assert l2.block_placement(durations, 4, per_sm=2, stagger=False)[1].tolist() == [0, 1, 0, 1, 0, 1, 0, 1]
    assert l2.block_schedule(np.array([4, 4, 4, 4, 2, 2]), 4, per_sm=2, stagger=False).tolist() == [0, 0, 0, 0, 4, 4]


def test_blocks_of_one_sm_in_step_share_a_fetch():
    # the 512 x 256 x 512 GEMM below on one SM of two slots: in step, blocks (m, 0) and
    # (m + 1, 0) read B[k, 0] at the same step and fetch it once (as two SMs of one slot do);
    # staggered, each fetches it
    (cost,) = analyse_module(run_pipeline(gemm(512, 256, 512), 'ncd-relabel{grid="m:128,n:128" stream="k:64"},ncd-to-hbm')).kernels
    b_bytes = 512 * 256 * 2
    together, = l2.dram_estimates(cost, 2, [0], per_sm=2, stagger=False)
    apart, = l2.dram_estimates(cost, 2, [0], per_sm=2)
    assert together.moved["b"] == 2 * b_bytes and apart.moved["b"] == 4 * b_bytes


def test_blocks_that_start_together_share_a_fetch_and_staggered_ones_do_not(exact):
    # 512 x 256 x 512: blocks of 8 steps (k by 64), 2 slots. Block (m, 0) and (m + 1, 0) read
    # B[k, 0] each. On 2 SMs of one slot they start together and read it at the same step:
    # with no cache, fetched once a wave, twice in all. On one SM of two slots the second
    # starts half a block later: each fetches it.
    (cost,) = analyse_module(run_pipeline(gemm(512, 256, 512), 'ncd-relabel{grid="m:128,n:128" stream="k:64"},ncd-to-hbm')).kernels
    b_bytes = 512 * 256 * 2
    assert exact(cost, 2, 0)["b"] == 2 * b_bytes
    assert l2.dram_bytes(cost, 2, 0, per_sm=2)["b"] == 4 * b_bytes
    # a cache that holds everything: each read once either way
    assert l2.dram_bytes(cost, 2, 1 << 30, per_sm=2)["b"] == b_bytes


def test_every_tile_of_an_uneven_grid_is_read_at_least_once(exact):
    # 3 x 3 blocks of 128 over 320 x 320: edge tiles are clipped, every byte read at least once
    (cost,) = analyse_module(run_pipeline(gemm(320, 320, 128), 'ncd-relabel{grid="m:128,n:128" stream="k:64"},ncd-to-hbm')).kernels
    for slots, capacity in itertools.product((1, 4, 9), (0, 1 << 30)):
        got = exact(cost, slots, capacity)
        assert got["a"] >= 320 * 128 * 2 and got["b"] >= 128 * 320 * 2
        assert got["out"] == (320 * 320 * 2 if capacity == 0 else 0)  # a cache of 1 GiB keeps it all dirty
    assert exact(cost, 9, 1 << 30) == {"a": 320 * 128 * 2, "b": 128 * 320 * 2, "out": 0}


def test_a_set_associative_cache_keeps_a_line_while_fewer_than_its_ways_came_into_its_set(monkeypatch):
    # 2 ways: a line survives d bytes of other lines when at most one of them fell into its
    # set; their count is Poisson with mean 2 d / C, so the chance is e^-m (1 + m)
    monkeypatch.setattr(l2, "L2_WAYS", 2)
    got = l2.survival(np.array([0.0, 0.5, 1.0, 2.0]), 1.0)
    assert got.tolist() == pytest.approx([1.0, 2 * np.exp(-1), 3 * np.exp(-2), 5 * np.exp(-4)])
    # 16 ways: the edge softens around the capacity; a line 60% of the way is mostly held, one
    # past it mostly not, nothing is held by a cache of no size
    monkeypatch.setattr(l2, "L2_WAYS", 16)
    soft = l2.survival(np.array([0.6, 1.0, 1.5]), 1.0)
    assert soft[0] > 0.9 and 0.4 < soft[1] < 0.6 and soft[2] < 0.1
    assert l2.survival(np.array([0.0]), 0).tolist() == [0.0]


def test_the_replay_fetches_the_share_of_a_tile_that_its_set_lost(monkeypatch):
    # one 4-byte tile touched at steps 0 and 2, another of 4 bytes at step 1: at the second
    # touch 8 bytes (both tiles) came since, so with 2 ways and a cache of 8 bytes the mean
    # is 2 and the tile was held with chance 3 e^-2; the rest is fetched again
    monkeypatch.setattr(l2, "L2_WAYS", 2)
    trace = l2.Trace(np.array([0, 1, 2]), np.array([0, 1, 0]), np.array([4.0, 4.0, 4.0]), np.zeros(3, np.int64),
                     np.zeros(3, bool), ["x"])
    got = l2.replay(trace, 8).dram_bytes(1)
    assert got[0] == pytest.approx(8 + 4 * (1 - 3 * np.exp(-2)))


def test_a_measured_schedule_replaces_the_modelled_one(gemm_cost):
    # (start, end) per block in launch order, in nanoseconds: waves of 4 blocks of two steps
    # (2 us) as block_schedule lays them out; the replay over them is the modelled one in step
    waves = np.array([[(i // 4) * 2000, (i // 4) * 2000 + 2000] for i in range(8)])
    capacity = 288 * KIB  # column 1 finds column 0's A tiles (the first test)
    assert l2.dram_estimate(gemm_cost, 1, capacity, ran=waves).moved == l2.dram_bytes(gemm_cost, 4, capacity)
    # one block at a time, 2 us each: the schedule of one slot, whatever `slots` says
    serial = np.array([[i * 2000, i * 2000 + 2000] for i in range(8)])
    assert l2.dram_estimate(gemm_cost, 4, 96 * KIB, ran=serial).moved == l2.dram_bytes(gemm_cost, 1, 96 * KIB)


def _passes(readers: list[list[int]], part: list[int], size: float, passes: int = 2) -> l2.Trace:
    """SM q reads tiles readers[q] (one a step, all SMs at once), `passes` times over; tile
    i is `size` bytes. part[q]: SM q's partition."""
    rows = [(p * 1000 + j, tile, q) for p in range(passes) for q, tiles in enumerate(readers) for j, tile in enumerate(tiles)]
    step, key, sm = (np.array(c) for c in zip(*rows))
    return l2.Trace(step, key, np.full(len(rows), size), np.zeros(len(rows), np.int64), np.zeros(len(rows), bool), ["x"],
                    np.array(part)[sm])


@pytest.fixture
def two_partitions(monkeypatch):
    monkeypatch.setattr(l2, "L2_PARTITIONS", 2)


def test_a_buffer_every_sm_reads_is_kept_while_it_fits_one_partition(two_partitions):
    # research/l2_probe.cu's all_read: 4 SMs, two on each partition, each read all 10 tiles of 8
    # bytes (80) twice. Each partition holds its own SMs' reads of every line (80 bytes
    # between two touches of a line): kept by partitions of 80 bytes, not of 79. The first
    # pass fetches each line once: its home, then the other partition, finds it there.
    trace = _passes([list(range(10))] * 4, [0, 0, 1, 1], 8.0)
    assert l2.replay_partitioned(trace, 80, trace.sm)[0].tolist() == [80]
    assert l2.replay_partitioned(trace, 79, trace.sm)[0].tolist() == [160]


def _reuse_and_stream(write: bool) -> l2.Trace:
    """research/l2_stream.cu in small: 4 SMs, two on each partition, each read all 10 tiles of 8
    bytes of R (80) at step p, then at step p + 1 touch 2 fresh tiles of 8 bytes each (64 in
    all), reading or writing them; three passes."""
    rows = []
    for p in range(3):
        rows += [(10 * p, tile, q, False) for q in range(4) for tile in range(10)]
        rows += [(10 * p + 1, 100 + 8 * p + 2 * q + j, q, write) for q in range(4) for j in range(2)]
    step, key, sm, wr = (np.array(c) for c in zip(*rows))
    tensor = (key >= 100).astype(np.int64)
    return l2.Trace(step, key, np.full(len(rows), 8.0), tensor, wr, ["r", "s"], np.array([0, 0, 1, 1])[sm])


def test_written_lines_push_a_reused_buffer_out_as_read_ones_do(two_partitions):
    # research/l2_stream.cu on an H200: a stream of fresh lines each pass pushes a reused buffer
    # out of the L2 as much when it is written as when it is read. A partition holds R whole
    # (80) and, between two passes, its own two SMs' 32 streamed bytes and the half homed in
    # it of the other two's (16): 128. Partitions of 128 keep R either way, of 127 lose it
    # either way (R read three times: 240).
    for capacity, r_bytes in ((128, 80), (127, 240)):
        got = [l2.replay_partitioned(_reuse_and_stream(write), capacity, _reuse_and_stream(write).sm)[0][0]
               for write in (False, True)]
        assert got == [r_bytes, r_bytes]


def test_a_buffer_each_sm_reads_its_own_slice_of_is_kept_up_to_two_thirds_of_the_l2(two_partitions):
    # l2_probe's own_read: 4 SMs read their own 4 of 16 tiles of 8 bytes (128) twice. A
    # partition sees its own two SMs' 64 bytes and the half homed in it of the other two's
    # (32): 96 bytes between two touches of a line, so partitions of 96 bytes keep it (an L2
    # of 192, 1.5 x the buffer: the H200's 60 MiB keep 40) and of 95 lose it
    slices = [list(range(q * 4, q * 4 + 4)) for q in range(4)]
    trace = _passes(slices, [0, 1, 0, 1], 8.0)
    assert l2.replay_partitioned(trace, 96, trace.sm)[0].tolist() == [128]
    assert l2.replay_partitioned(trace, 95, trace.sm)[0].tolist() == [256]
    # one cache of 128 (`L2_PARTITIONS` 1) keeps the same buffer, held once
    assert l2.replay(trace, 128).dram_bytes(1).tolist() == [128]


def test_a_reader_on_the_far_partition_is_served_by_the_home_or_its_own_copy(two_partitions):
    # tile 0 (8 bytes) read by SM 0 (partition 0) at step 0, by SM 1 (partition 1) at step 2;
    # 3 other tiles of 8 read by SM 0 at step 1. Each tile is two halves of 4 bytes, one
    # homed in each partition. At step 2 partition 1 has never seen the half homed in 0; it
    # looks there, where SM 0's 24 bytes of step 1 and the half itself came since (28). The
    # half homed in partition 1 was put there at step 0 (SM 0's miss went to its home), and
    # only the halves of step 1 homed there came since (12, and itself: 16).
    trace = l2.Trace(np.array([0, 1, 1, 1, 2]), np.array([0, 1, 2, 3, 0]), np.full(5, 8.0), np.zeros(5, np.int64),
                     np.zeros(5, bool), ["x"], np.array([0, 0, 0, 0, 1]))
    assert l2.replay_partitioned(trace, 28, trace.sm)[0].tolist() == [32]  # every tile fetched once
    assert l2.replay_partitioned(trace, 27, trace.sm)[0].tolist() == [36]  # the half homed in partition 0 again
    assert l2.replay_partitioned(trace, 15, trace.sm)[0].tolist() == [40]  # both halves again


def test_partitions_split_the_sms_evenly(two_partitions):
    part = l2.partition_of(np.arange(132))
    assert sorted(np.bincount(part).tolist()) == [66, 66]
    # an SM's partition is the GPU's, whichever SMs a kernel uses
    assert l2.partition_of(np.array([5, 5, 7]), 132).tolist() == part[[5, 5, 7]].tolist()


@pytest.mark.parametrize("seed", range(3))
def test_accesses_repeated_on_one_partition_are_one_to_the_partitions(two_partitions, seed):
    # several blocks of one partition reading a tile at one step fetch it once: the replay
    # over a trace with every access repeated (and interleaved with the others) is the same
    rng = np.random.default_rng(seed)
    n, keys = 300, 25
    key = rng.integers(0, keys, n)
    tile = rng.integers(1, 9, keys).astype(np.float64)
    trace = l2.Trace(np.sort(rng.integers(0, 50, n)), key, tile[key], key % 2, rng.random(n) < 0.2, ["x", "y"],
                     rng.integers(0, 4, n))
    twice = np.repeat(np.arange(n), 2)
    doubled = l2.Trace(trace.step[twice], trace.key[twice], trace.size[twice], trace.tensor[twice], trace.write[twice],
                       trace.names, trace.sm[twice])
    part = np.array([0, 1, 1, 0])
    for capacity in (0, 12, 40):
        once = l2.replay_partitioned(trace, capacity, part[trace.sm])
        again = l2.replay_partitioned(doubled, capacity, part[doubled.sm])
        assert np.allclose(once[0], again[0]) and np.allclose(once[1], again[1])


def test_a_kernel_whose_tiles_fit_a_partition_reads_each_once_however_its_blocks_are_dealt(gemm_cost, two_partitions):
    # the hand-worked GEMM through dram_estimate with both partitions: with room for all of it
    # in each, every tile is fetched once whichever partition its blocks' SMs are on, and the
    # output stays dirty; with no room, blocks one at a time each fetch their tiles, and all
    # eight at once fetch a tile they read at one step once, across the partitions too
    for slots in (1, 4, 8):
        assert l2.dram_bytes(gemm_cost, slots, 2 << 20) == {"a": A_BYTES, "b": B_BYTES, "out": 0}
    assert l2.dram_bytes(gemm_cost, 1, 0) == {"a": 8 * 2 * TILE, "b": 8 * 2 * TILE, "out": OUT_BYTES}
    assert l2.dram_bytes(gemm_cost, 8, 0) == {"a": A_BYTES, "b": B_BYTES, "out": OUT_BYTES}


def _pair_probe(readers: list[int], part: list[int], lines: int = 36, passes: int = 4) -> l2.Trace:
    """research/l2_partition.cu: SM q reads a buffer of `lines` one-byte lines `passes` times,
    starting at line readers[q] (the SMs at once, a line a step); part[q]: its partition."""
    rows = [(p * lines + j, (start + j) % lines, q) for q, start in enumerate(readers)
            for p in range(passes) for j in range(lines)]
    step, key, sm = (np.array(c) for c in zip(*rows))
    return l2.Trace(step, key, np.ones(len(rows)), np.zeros(len(rows), np.int64), np.zeros(len(rows), bool), ["x"],
                    np.array(part)[sm])


def test_two_readers_of_one_buffer_share_it_across_the_partitions_and_not_within_one(two_partitions):
    # l2_partition.cu on an H200 (research/model-validation.md): a 36 MiB buffer read four times, partitions
    # of 30 MiB. Here 36 lines, partitions of 30.
    # - SM 0 alone: its partition sees all 36 lines between two reads of one, so it holds
    #   none; the 18 homed there come from DRAM on each of the 4 passes, the 18 homed in the
    #   other partition (which sees only those) once: 90 = 2.5 x the buffer (measured 2.50).
    alone = _pair_probe([0], [0])
    assert l2.replay_partitioned(alone, 30, alone.sm)[0].tolist() == [90]
    # - with a second SM on its partition, reading from the middle: between SM 0's read of a
    #   line and SM 1's, half a pass of each, all 36 lines again; each of the two reads the
    #   18 lines homed there from DRAM on every pass (144), the other 18 once: 162 = 4.5 x
    #   (measured 4.4-4.5 for SMs 1, 8-11, 70-75, 125, all on SM 0's partition).
    same = _pair_probe([0, 18], [0, 0])
    assert l2.replay_partitioned(same, 30, same.sm)[0].tolist() == [162]
    # - with it on the other partition: between SM 0's read of a line homed in partition 0
    #   and SM 1's, partition 0 sees SM 0's 18 lines and SM 1's 9 of those homed there: 27,
    #   kept; the same for SM 1's copy in partition 1: each line is read from DRAM once, 36 =
    #   1 x (measured 1.25-1.9 for SMs 2-7, 14-15, 64-69, 76-77, all on the other partition)
    other = _pair_probe([0, 18], [0, 1])
    assert l2.replay_partitioned(other, 30, other.sm)[0].tolist() == [36]
    # the partitions as the H200's table has them: SM 0 with SMs 1 and 2
    h200 = hardware("h200")
    assert l2.partition_of(np.array([0, 1, 2]), 132, h200.l2_partition).tolist() == [0, 0, 1]


def test_the_gh100_tables_split_its_sms_by_pairs_and_dispatch_in_runs_on_one_partition():
    h200 = hardware("h200")
    part, order = np.array(h200.l2_partition), np.array(h200.dispatch_order)
    assert len(part) == len(order) == h200.sms
    assert np.bincount(part).tolist() == [66, 66]
    assert (part[0::2] == part[1::2]).all()  # an SM pair (a TPC) is on one partition
    assert sorted(order.tolist()) == list(range(h200.sms))
    # in launch order, the partition changes five times: runs of 16, 48, 50 and 18 blocks
    along = part[order]
    changes = np.flatnonzero(along[1:] != along[:-1]) + 1
    assert np.diff(np.concatenate([[0], changes, [h200.sms]])).tolist() == [16, 48, 50, 18]
    # the H100 and H200 are one GH100 (the same tables, measured on both); the A100's is not
    # measured: the random dealing stands in for it
    assert hardware("h100").l2_partition == h200.l2_partition
    assert hardware("h100").dispatch_order == h200.dispatch_order
    assert hardware("a100").l2_partition is None and hardware("a100").dispatch_order is None


def test_a_launch_hands_its_blocks_to_the_sms_in_dispatch_order(gemm_cost):
    plain = l2._trace(gemm_cost, 8)
    reversed_order = l2._trace(gemm_cost, 8, dispatch=tuple(range(7, -1, -1)))
    assert (reversed_order.sm == 7 - plain.sm).all()
    assert (reversed_order.step == plain.step).all() and (reversed_order.key == plain.key).all()


def test_the_edge_is_sharp_where_the_schedule_is_known(gemm_cost, monkeypatch):
    monkeypatch.setattr(l2, "L2_WAYS", 16)
    # one block an SM, or a measured schedule: a reuse distance known to L2_EDGE_SPREAD
    assert l2._trace(gemm_cost, 8, 1).spread == l2.L2_EDGE_SPREAD
    ran = np.array([[0, 2], [0, 2], [2, 4], [2, 4], [4, 6], [4, 6], [6, 8], [6, 8]])
    assert l2._trace(gemm_cost, 4, 2, ran).spread == l2.L2_EDGE_SPREAD
    # several blocks an SM, modelled: the chance of the 16-way sets
    assert l2._trace(gemm_cost, 8, 2).spread is None

    def normal(z):
        return 0.5 * (1 + math.erf(z / math.sqrt(2)))

    c, s = 100.0, 0.05
    got = l2.survival(np.array([90.0, 100.0, 110.0]), c, s)
    want = [normal(10 / (s * 90)), 0.5, normal(-10 / (s * 110))]  # 0.987, 0.5, 0.035
    assert got == pytest.approx(want, abs=1e-6)
    # the sets' chance at 90% of the capacity: P(Poisson(14.4) < 16) = 0.65, far softer
    mean = 16 * 0.9
    poisson = sum(math.exp(-mean) * mean**j / math.factorial(j) for j in range(16))
    assert l2.survival(np.array([90.0]), c)[0] == pytest.approx(poisson, abs=1e-9)
    assert poisson < 0.7 < got[0]


def test_without_the_partitions_the_replay_keeps_the_soft_edge(gemm_cost, two_partitions, monkeypatch):
    # a GPU whose table has no partitions: the SMs dealt at random, and the 16-way edge, as
    # if the schedule were not known; with the table, one block an SM takes the sharp edge
    monkeypatch.setattr(l2, "L2_WAYS", 16)
    capacity = 3 * TILE

    def by_hand(spread, part):
        tr = l2._trace(gemm_cost, 8)
        tr.spread = spread
        return l2.replay_partitioned(tr, capacity / 2, part(tr.sm))[0].sum()

    dealt = by_hand(None, lambda sm: l2.partition_of(sm, 8))
    table = (0, 1, 1, 0, 0, 1, 1, 0)
    measured = by_hand(l2.L2_EDGE_SPREAD, lambda sm: np.array(table)[sm])
    assert sum(l2.dram_estimate(gemm_cost, 8, capacity).moved.values()) == pytest.approx(dealt, abs=1)
    assert sum(l2.dram_estimate(gemm_cost, 8, capacity, partition=table).moved.values()) == pytest.approx(measured, abs=1)
    assert dealt != pytest.approx(measured, abs=1)  # the two differ here


def test_a_launch_gives_every_sm_a_block_before_any_sm_a_second(gemm_cost):
    # 132 SMs of 4 slots: 12 blocks take 12 SMs, one each; 200 take all 132 and a second slot
    # of 68; 1000 fill all four slots
    assert l2.resident(12, 132 * 4, 4) == (12, 1)
    assert l2.resident(200, 132 * 4, 4) == (132, 2)
    assert l2.resident(1000, 132 * 4, 4) == (132, 4)
    start, sm = l2.block_placement(np.full(200, 10), 132 * 4, 4)
    assert start[:132].tolist() == [0] * 132 and sm[:132].tolist() == list(range(132))
    assert start[132:].tolist() == [5] * 68 and sm[132:].tolist() == list(range(68))  # half a block on: 2 an SM
    # so the one-block-an-SM edge applies to a small grid whatever its occupancy allows
    assert l2._trace(gemm_cost, 132 * 4, 4).spread == l2.L2_EDGE_SPREAD  # its 8 blocks


@pytest.mark.parametrize("parts", [1, 2])
def test_estimates_at_several_sizes_are_each_size_s_own(gemm_cost, monkeypatch, parts):
    # the reuse distances are found once for all the sizes; each estimate is the one made alone
    monkeypatch.setattr(l2, "L2_PARTITIONS", parts)
    monkeypatch.setattr(l2, "L2_WAYS", 16)
    sizes = [0, 2 * TILE, 3 * TILE, 5 * TILE, 1 << 20]
    table = (0, 1, 1, 0, 0, 1, 1, 0)
    together = l2.dram_estimates(gemm_cost, 4, sizes, partition=table)
    for size, got in zip(sizes, together):
        assert got == l2.dram_estimate(gemm_cost, 4, size, partition=table)
    assert len({sum(e.moved.values()) for e in together}) > 2  # the sizes do differ here


def test_the_prediction_s_edge_is_the_estimate_with_the_l2_5_percent_smaller_and_larger(monkeypatch):
    from napkin_ir.model.timing import predict

    monkeypatch.setattr(l2, "L2_PARTITIONS", 2)
    monkeypatch.setattr(l2, "L2_WAYS", 16)
    (cost,) = analyse_module(run_pipeline(gemm(2048, 2048, 512), 'ncd-relabel{grid="m:128,n:128" stream="k:64"},ncd-to-hbm')).kernels
    hw = hardware("h200")
    p = predict(cost, hw, edge=True)
    slots = hw.sms * p.occupancy.blocks_per_sm

    def alone(size):
        return sum(l2.dram_estimate(cost, slots, size, p.occupancy.blocks_per_sm, partition=hw.l2_partition,
                                    dispatch=hw.dispatch_order).moved.values())

    assert p.dram_edge == (alone(hw.l2_bytes * 0.95), alone(hw.l2_bytes * 1.05))
    assert sum(p.dram.values()) == alone(hw.l2_bytes)
    assert predict(cost, hw).dram_edge is None  # only when asked: autotile does not pay for it


def test_the_prediction_gives_the_estimate_in_step_where_blocks_share_an_sm(monkeypatch):
    from napkin_ir.model.timing import predict

    monkeypatch.setattr(l2, "L2_PARTITIONS", 2)
    monkeypatch.setattr(l2, "L2_WAYS", 16)
    hw = hardware("h200")
    # 64 x 64 blocks of a 4096^3 GEMM at the hbm level: several an SM (4 warps assumed)
    (cost,) = analyse_module(run_pipeline(gemm(4096, 4096, 1024), 'ncd-relabel{grid="m:64,n:64" stream="k:64"},ncd-to-hbm')).kernels
    p = predict(cost, hw, edge=True)
    per_sm = p.occupancy.blocks_per_sm
    assert per_sm > 1
    (together,) = l2.dram_estimates(cost, hw.sms * per_sm, [hw.l2_bytes], per_sm, partition=hw.l2_partition,
                                    dispatch=hw.dispatch_order, stagger=False)
    assert p.dram_in_step == sum(together.moved.values())
    assert predict(cost, hw).dram_in_step is None  # only when asked
    # 64 blocks on 132 SMs: one an SM whatever the occupancy allows, nothing to put in step
    (one,) = analyse_module(run_pipeline(gemm(1024, 1024, 512), 'ncd-relabel{grid="m:128,n:128" stream="k:64"},ncd-to-hbm')).kernels
    assert predict(one, hw, edge=True).dram_in_step is None
