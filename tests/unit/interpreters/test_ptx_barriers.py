"""The PTX emulator's barriers: every warp meets at `bar.sync 0`; at a barrier of some of
the block's threads (`bar.sync 1, 256`, the consumer warpgroups beside a producer) that
many warps meet and the rest may have left; anything else is a kernel that would hang."""

from __future__ import annotations

import pytest

from napkin_ir.interpreters.ptx import _meet


def test_every_warp_at_the_block_barrier_or_done():
    _meet([("bar", 0, 0)] * 4)
    _meet(["done"] * 12)


def test_the_consumers_meet_while_the_producer_has_left():
    _meet(["done"] * 4 + [("bar", 1, 256)] * 8)


@pytest.mark.parametrize("states", [["done", ("bar", 0, 0), ("bar", 0, 0)],  # a block-wide barrier a warp never reaches
                                    ["done"] * 5 + [("bar", 1, 256)] * 7,  # 7 warps of the 8 it counts
                                    [("bar", 1, 256)] * 4 + [("bar", 2, 128)] * 4])  # two barriers at once: the emulator meets one at a time
def test_a_barrier_that_would_hang_is_refused(states):
    with pytest.raises(AssertionError, match="warps disagree at a barrier"):
        _meet(states)
