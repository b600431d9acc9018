"""tools/bench_gemm.py's interleaved timing, on a stand-in for torch's CUDA events: every
function is timed once a round, the starting one moving along the list, and the warm-up
rounds are not counted; with time to settle, each timed batch follows untimed launches
of its own function, in an order of each round's own."""

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


def _launchers(clock, log, **ms):
    """A function per name that takes its ms on `clock` and notes its name in `log`."""
    def launcher(name, t):
        def fn():
            clock.now += t
            log.append(name)
        return fn
    return [launcher(name, t) for name, t in ms.items()]


def test_every_function_is_timed_once_a_round_from_a_moving_start():
    clock, log = _Clock(), []
    fns = _launchers(clock, log, a=1.0, b=2.0, c=3.0)
    times = bench_gemm.time_interleaved(_torch(clock), fns, rounds=4, per_batch=2, warm_s=0.0)
    assert times == [[1.0] * 4, [2.0] * 4, [3.0] * 4]  # ms a launch, per round
    batches = log[9:][::2]  # after 3 warm-up launches of each, batches of 2
    assert batches == list("abc" "bca" "cab" "abc")


def test_with_time_to_settle_each_batch_follows_launches_of_its_own():
    clock, log = _Clock(), []
    fns = _launchers(clock, log, a=1.0, b=2.0, c=4.0)
    times = bench_gemm.time_interleaved(_torch(clock), fns, rounds=6, per_batch=2, warm_s=0.0, settle_s=0.008)
    assert times == [[1.0] * 6, [2.0] * 6, [4.0] * 6]
    # after 3 warm-up launches and one batch of each (to size the settling: 8 ms is 8, 4
    # and 2 launches), each round runs every function once: settling, then its batch
    rounds, order = log[9 + 6:], []
    for _ in range(6 * 3):
        name = rounds[0]
        run = {"a": 8 + 2, "b": 4 + 2, "c": 2 + 2}[name]
        assert rounds[:run] == [name] * run
        order.append(name)
        rounds = rounds[run:]
        if len(order) % 3 == 0:
            assert sorted(order[-3:]) == ["a", "b", "c"]
    assert not rounds
    assert len({tuple(order[k:k + 3]) for k in range(0, 18, 3)}) > 1  # the order changes from round to round


def test_time_paired_alternates_and_reports_the_ratio():
    clock = _Clock()

    def fn(ms):
        def run():
            clock.now += ms
        return run

    mine, peer, ratio = bench_gemm.time_paired(_torch(clock), fn(2.0), fn(3.0), rounds=3, per_batch=1)
    assert (mine, peer, ratio) == (2.0, 3.0, 1.5)


def test_graphed_timing_captures_each_function_s_calls_and_gives_a_call_s_ms():
    """`time_graphed`: GRAPH_CALLS calls of each function captured in a graph of its own, the
    graphs replayed in interleaved rounds; the ms of one call, per function."""
    clock, log = _Clock(), []
    fns = _launchers(clock, log, a=1.0, b=2.0)
    by_name = dict(zip("ab", fns))
    graphs = []

    class Graph:
        def replay(self):
            for name in self.captured:
                by_name[name]()

    class Capture:
        def __init__(self, g):
            self.g = g

        def __enter__(self):
            self.start = len(log)

        def __exit__(self, *exc):
            self.g.captured = log[self.start:]
            graphs.append(self.g)

    torch = _torch(clock)
    torch.cuda.CUDAGraph, torch.cuda.graph = Graph, Capture
    assert bench_gemm.time_graphed(torch, fns, rounds=3, warm_s=0.0) == [1.0, 2.0]
    assert [g.captured for g in graphs] == [["a"] * bench_gemm.GRAPH_CALLS, ["b"] * bench_gemm.GRAPH_CALLS]


def test_time_alternating_runs_each_in_turn_and_averages_its_runs(monkeypatch):
    """`time_alternating`: every function sustained once a repeat, in the order given, and
    per function the mean of its runs' (ms, MHz, W)."""
    calls = []
    figures = {"a": iter([(1.0, 1500.0, 690.0), (3.0, 1700.0, 650.0)]), "b": iter([(2.0, 1600.0, 680.0), (2.0, 1600.0, 700.0)])}

    def sustained(torch, fn, seconds):
        calls.append((fn, seconds))
        return next(figures[fn])

    monkeypatch.setattr(bench_gemm, "time_sustained", sustained)
    runs = bench_gemm.time_alternating(None, {"a": "a", "b": "b"}, 3.0)
    assert calls == [("a", 3.0), ("b", 3.0), ("a", 3.0), ("b", 3.0)]
    assert runs == {"a": (2.0, 1600.0, 670.0), "b": (2.0, 1600.0, 690.0)}
