"""tools/bench_gemm.py's interleaved timing, on a stand-in for torch's CUDA events: every
function is timed once a round, the starting one moving along the list, and the warm-up
rounds are not counted."""

import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))
import bench_gemm  # noqa: E402


class _Clock:
    """Events that read a clock the launched functions advance."""

    def __init__(self):
        self.now = 0.0

    def event(self, enable_timing=True):
        clock = self

        class Event:
            def record(self):
                self.t = clock.now

            def synchronize(self):
                pass

            def elapsed_time(self, other):
                return other.t - self.t

        return Event()


def _torch(clock):
    return SimpleNamespace(cuda=SimpleNamespace(Event=clock.event, synchronize=lambda: None))


def test_every_function_is_timed_once_a_round_from_a_moving_start():
    clock, log = _Clock(), []

    def launcher(name, ms):
        def fn():
            clock.now += ms
            log.append(name)
        return fn

    fns = [launcher("a", 1.0), launcher("b", 2.0), launcher("c", 3.0)]
    times = bench_gemm.time_interleaved(_torch(clock), fns, rounds=4, per_batch=2, warm_s=0.0)
    assert times == [[1.0] * 4, [2.0] * 4, [3.0] * 4]  # ms a launch, per round
    batches = log[9:][::2]  # after 3 warm-up launches of each, batches of 2
    assert batches == list("abc" "bca" "cab" "abc")


def test_time_paired_alternates_and_reports_the_ratio():
    clock = _Clock()

    def fn(ms):
        def run():
            clock.now += ms
        return run

    mine, peer, ratio = bench_gemm.time_paired(_torch(clock), fn(2.0), fn(3.0), rounds=3, per_batch=1)
    assert (mine, peer, ratio) == (2.0, 3.0, 1.5)
