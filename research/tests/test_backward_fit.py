"""research/backward_fit.py: the tiles a causal backward visits, and the line it fits."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # research/
import backward_fit  # noqa: E402


def test_the_tiles_of_a_causal_backward():
    # over 4k, key block j of 128 streams 64 - 2j query tiles of 64: 1056 a head
    assert backward_fit.tiles(1, 1, 4096) == sum(64 - 2 * j for j in range(32)) == 1056
    assert backward_fit.tiles(4, 16, 4096) == 64 * 1056
    # a key block's first query tile is the one holding its first key
    assert backward_fit.tiles(1, 1, 256, keys=128, queries=128) == 2 + 1


def test_the_fit_recovers_a_line():
    xs = [1.0, 2.0, 4.0, 8.0]
    a, p = backward_fit.fit(xs, [30.0 + 2.5 * x for x in xs])
    assert a == pytest.approx(30.0) and p == pytest.approx(2.5)
