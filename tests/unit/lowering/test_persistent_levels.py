"""Persistent sm_90a kernels keep their numbers at every level, and the interpreters check
their protocol from tile to tile.

A persistent launch (`hbm-launch{persistent=true}`) is interpreted as reg-to-ptx runs it:
a few blocks (`PERSISTENT_BLOCKS`), each looping over its tiles in the lowering's order,
its shared memory and mbarrier phases living on from one tile to the next, its rings
moved on by each tile's stream steps (`smem.ring_position`) and Q's by one a tile
(`smem.tile_position`). A wrong parity or a missing release then fails in a later tile.
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest
from xdsl.utils.exceptions import InterpretationError

from napkin_ir import reference
from napkin_ir.attention_diagrams import NAMES, attention_diagram
from napkin_ir.diagrams import gemm
from napkin_ir.interpreters.run import find_entry, persistent_tiles
from napkin_ir.passmanager import run_pipeline

SM90 = "hbm-to-smem{stages=3 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-overlap,reg-pingpong"


def _launch(bm: int, tj: int, order: str = "last") -> str:
    return f'ncd-relabel{{grid="b,h,i:{bm}" stream="j:{tj}"}},ncd-to-hbm,hbm-launch{{order={order} persistent=true}}'


# (kind, heads, queries = keys, block rows): 5 and 4 query blocks a head (odd: a middle
# block without a partner), causal streams of every length from one to five tiles
CASES = [("softmax", 2, 300), ("causal", 2, 300), ("causal", 3, 256), ("spherical", 2, 300)]


@pytest.mark.parametrize("kind,h,n", CASES)
def test_persistent_levels_match_the_diagram(kind, h, n):
    text = attention_diagram(kind, 1, h, n, 64)
    diagram = find_entry(run_pipeline(text))
    inputs = diagram.random_inputs(n + h)
    want = reference.REFERENCES[NAMES[kind]](*inputs)
    hbm_level = find_entry(run_pipeline(text, _launch(64, 64)))
    expected = hbm_level.run(inputs)[0]
    assert reference.relative_error(expected, want) <= reference.TOLERANCE["bf16"]
    got = find_entry(run_pipeline(text, f"{_launch(64, 64)},{SM90}")).run(inputs)[0]
    assert not np.isnan(got).any(), "a tile was not computed"
    assert reference.relative_error(got, want) <= reference.TOLERANCE["bf16"]


def _broken(text: str, pattern: str, repl: str) -> str:
    out = re.sub(pattern, repl, text, count=1)
    assert out != text
    return out


def _persistent_causal() -> str:
    return str(run_pipeline(attention_diagram("causal", 1, 2, 300, 64), f"{_launch(64, 64)},{SM90}"))


def test_the_printed_persistent_kernel_runs(run_printed):
    out = run_printed(_persistent_causal(), 1)[0]
    assert not np.isnan(out).any()


def test_a_q_never_released_deadlocks_the_next_tile(run_printed):
    text = _persistent_causal()
    for _ in range(3):  # the release in each branch of the pipelined loops
        text = re.sub(r"\n *smem.arrive %\d+\[%\d+\] : !smem.mbarrier<stages=1, arrivals=1>", "", text, count=1)
    assert "smem.arrive" in text and not re.search(r"smem.arrive %\d+\[%\d+\] : !smem.mbarrier<stages=1", text)
    with pytest.raises(InterpretationError, match="deadlock"):
        run_printed(text, 1)


def test_q_waited_for_at_the_first_tile_parity_is_refused(run_printed):
    # the consumers wait for phase 0 of Q's full barrier at every tile: in the second tile
    # that phase's data was taken already (refused), or, once the next copy has landed,
    # the phase waited for never comes (deadlock)
    text = _broken(_persistent_causal(), r"\n    smem.mbarrier_wait (%\d+)\[(%\d+)\] parity %\d+ : (!smem.mbarrier<stages=1, arrivals=1>)",
                   r"\n    smem.mbarrier_wait \1[\2] parity \2 : \3")
    with pytest.raises(InterpretationError, match="the parity is wrong|deadlock"):
        run_printed(text, 1)


def test_rings_that_restart_each_tile_are_refused(run_printed):
    # the stream's steps counted from 0 in every tile: the producer waits for a release of
    # the last tile's phase that already happened, and fills a stage the consumers hold
    text = _broken(_persistent_causal(), r"(%\d+) = smem.ring_position : index", r"\1 = arith.constant 0 : index")
    with pytest.raises(InterpretationError):
        run_printed(text, 1)


def _persistent_q_in_registers(kind: str = "causal") -> str:
    sm90 = SM90.replace("smem-to-reg{mma=wgmma}", "smem-to-reg{mma=wgmma a_registers=true}")
    return str(run_pipeline(attention_diagram(kind, 1, 2, 300, 64), f"{_launch(64, 64)},{sm90}"))


@pytest.mark.parametrize("kind", ["softmax", "causal", "spherical"])
def test_q_in_registers_is_released_after_its_loads(kind, run_printed):
    # with a_registers Q's stage is released right after the fragments are loaded (the
    # producer loads the next tile's Q while this tile's stream runs): the numbers hold
    # over every tile of the persistent blocks
    text = _persistent_q_in_registers(kind)
    assert re.search(r"reg.ldmatrix [^\n]*d=48>[^\n]*\n *smem.arrive %\d+\[%\d+\] : !smem.mbarrier<stages=1, arrivals=1>", text)
    diagram = find_entry(run_pipeline(attention_diagram(kind, 1, 2, 300, 64)))
    inputs = diagram.random_inputs(7)
    got = find_entry(run_pipeline(text)).run(inputs)[0]
    assert not np.isnan(got).any()
    assert reference.relative_error(got, reference.REFERENCES[NAMES[kind]](*inputs)) <= reference.TOLERANCE["bf16"]


def test_q_released_before_its_loads_is_refused(run_printed):
    # the release moved above the loads: the producer may refill Q's stage while they read
    text = _persistent_q_in_registers()
    release = re.search(r"\n *smem.arrive %\d+\[%\d+\] : !smem.mbarrier<stages=1, arrivals=1>", text)
    assert release is not None
    text = text[: release.start()] + text[release.end():]
    first = re.search(r"\n *%\d+ = reg.ldmatrix", text)
    assert first is not None
    text = text[: first.start()] + release.group(0) + text[first.start():]
    with pytest.raises(InterpretationError, match="after the consumers released it"):
        run_printed(text, 1)


class _Grid:
    """What persistent_tiles reads of a kernel."""

    def __init__(self, counts: tuple[int, ...], order: str, group: int):
        self.shape = dict(zip("abc", counts))
        self.last_axis_fastest = order.startswith("last")
        self.last_from_end = order == "last"
        self.group_rows = group

    def grid_shape(self) -> dict[str, int]:
        return self.shape


@pytest.mark.parametrize("order,counts,group", [("last", (2, 3, 5), 0), ("last", (1, 4), 0), ("last", (3, 8), 0),
                                                ("last_from_start", (2, 3, 5), 0), ("last_from_start", (3, 8), 0),
                                                ("first", (4, 6), 0), ("first", (7, 5), 3)])
@pytest.mark.parametrize("blocks", [1, 2, 3, 7])
def test_persistent_tiles_cover_the_grid_once(order, counts, group, blocks):
    """Every tile once, over the blocks; longest first in pairs of equal work (a causal
    forward's query blocks stream more keys along the last axis, the gradient's key blocks
    fewer queries)."""
    tiles = persistent_tiles(_Grid(counts, order, group), blocks)  # type: ignore[arg-type]
    seen = Counter(t for block in tiles for t in block)
    assert sorted(seen) == sorted(np.ndindex(*counts)) and set(seen.values()) == {1}, seen
    if order != "first":
        def cost(t):  # a causal tile streams its row block's keys, or its key block's queries
            return t[-1] + 1 if order == "last" else counts[-1] - t[-1]
        assert cost(tiles[0][0]) == counts[-1]  # the first block's first tile the longest
        if blocks > 1 and int(np.prod(counts)) >= 4 * blocks:
            work = [sum(cost(t) for t in block) for block in tiles]
            assert max(work) <= 1.34 * sum(work) / blocks, work


def test_a_persistent_gemm_keeps_its_numbers_over_tiles():
    text = gemm(200, 264, 192, "bf16")
    spec = ('ncd-relabel{grid="m:64,n:64" stream="k:64"},ncd-to-hbm,hbm-launch{persistent=true group=2},'
            "hbm-to-smem{stages=2 copy=tma store=tma},smem-to-reg{mma=wgmma}")
    entry = find_entry(run_pipeline(text, spec))
    inputs = entry.random_inputs(3)
    got = entry.run(inputs)[0]
    want = reference.matmul(*(np.asarray(x, np.float64) for x in inputs))
    assert not np.isnan(got).any()
    assert reference.relative_error(got, want) < 1e-2


# the output leaves from Q's room where no panel stage fits beside Q (8 KiB) and three
# stages of K and V (48 KiB)
ROOM = "hbm-to-smem{stages=3 copy=tma store=tma smem_bytes=61440},smem-to-reg{mma=wgmma},reg-wgmma-overlap,reg-pingpong"


@pytest.mark.parametrize("kind,q_registers", [("softmax", False), ("causal", False), ("spherical", False), ("causal", True)])
def test_the_output_stored_from_qs_room_keeps_the_numbers_over_tiles(kind, q_registers):
    # each persistent block writes each tile's output into Q's room and stores it from
    # there; the producer refills the room for the next tile once that store has read it.
    # With Q's fragments in registers its release stays after the store (not moved up to
    # after the fragments' loads, as where Q's room holds nothing else)
    text = attention_diagram(kind, 1, 2, 300, 64)
    room = ROOM.replace("smem-to-reg{mma=wgmma}", "smem-to-reg{mma=wgmma a_registers=true}") if q_registers else ROOM
    lowered = run_pipeline(text, f"{_launch(64, 64)},{room}")
    lines = [line.strip() for line in str(lowered).splitlines()]
    assert sum("smem.alloc" in line for line in lines) == 3  # Q, K and V: none for the output
    release = next(n for n, line in enumerate(lines) if line.startswith("smem.arrive %") and "stages=1" in line)
    assert lines[release - 1] == "smem.tma_store_wait {pending = 0 : i32}"
    inputs = find_entry(run_pipeline(text)).random_inputs(11)
    got = find_entry(lowered).run(inputs)[0]
    assert not np.isnan(got).any(), "a tile was not computed"
    assert reference.relative_error(got, reference.REFERENCES[NAMES[kind]](*inputs)) <= reference.TOLERANCE["bf16"]


def test_the_training_forward_stores_its_output_from_qs_room_beside_its_log_sum_exp():
    # the forward with the log-sum-exp (the op's, for training): O leaves from Q's room,
    # the log-sum-exp from registers after it
    text = attention_diagram("causal", 1, 2, 300, 64, lse=True)
    diagram = find_entry(run_pipeline(text))
    inputs = diagram.random_inputs(13)
    want = diagram.run(inputs)
    lowered = run_pipeline(text, f"{_launch(64, 64)},{ROOM}")
    assert sum(1 for line in str(lowered).splitlines() if "smem.alloc" in line) == 3
    got = find_entry(lowered).run(inputs)
    assert reference.relative_error(got[0], want[0]) <= reference.TOLERANCE["bf16"]
    assert reference.relative_error(got[1], want[1]) <= 1e-6


def test_q_released_before_its_rooms_store_has_read_it_is_refused(run_printed):
    # the wait between the output's store and Q's release taken out: the producer could
    # copy the next tile's Q over the output while the TMA still reads it
    text = str(run_pipeline(attention_diagram("causal", 1, 2, 300, 64), f"{_launch(64, 64)},{ROOM.split(',smem-to-reg')[0]}"))
    text = _broken(text, r"(smem.tma_store %\d+\[%\d+\] -> %out[^\n]*)\n *smem.tma_store_wait \{pending = 0 : i32\}", r"\1")
    with pytest.raises(InterpretationError, match="while a TMA store still reads it"):
        run_printed(text, 1)
