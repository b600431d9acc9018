"""research/backward_ways.py: its shapes, and the ways it makes the op run (no GPU needed)."""

import sys
import types
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # research/
import backward_ways  # noqa: E402


def test_a_shape_is_parsed_over_16k_tokens_and_hidden_2048():
    s = backward_ways.parse("128:4096:causal")
    assert s == (128, 4096, "causal", 1) and (s.batch, s.heads) == (4, 16)
    assert s.flops() == 2.5 * 4 * 4 * 16 * 4096 * 4096 * 128 / 2
    g = backward_ways.parse("64:32768:softmax:4")
    assert (g.group, g.batch, g.heads) == (4, 1, 32) and g.flops() == 2.5 * 4 * 32 * 32768 * 32768 * 64


@pytest.mark.parametrize("text,says", [("128:4096", "d:n:kind"), ("128:4k:causal", "whole numbers"),
                                       ("128:4096:sigmoid", "one of softmax"), ("96:4096:causal", "must divide"),
                                       ("128:4096:causal:3", "must divide")])
def test_a_bad_shape_is_named(text, says):
    with pytest.raises(ValueError, match=says):
        backward_ways.parse(text)


def test_bad_arguments_exit_2_with_the_reason(capsys):
    assert backward_ways.main(["128:4096:sigmoid"]) == 2
    assert "backward_ways: the kind of '128:4096:sigmoid'" in capsys.readouterr().err
    assert backward_ways.main([]) == 2 and backward_ways.main(["--help"]) == 0


def _op_module():
    calls = []
    nt = types.SimpleNamespace(FUSED_DQ_DIMS=(64, 128), FUSED_DQ_MIN_KEYS=512, FUSED_DQ_MASKED_MIN_KEYS=1024)
    nt._compiled = lambda key, candidates, what: calls.append((key, candidates)) or "kernel"
    return nt, calls


@pytest.mark.parametrize("persistent", [True, False])
def test_one_kernel_on_lifts_the_thresholds_and_gives_the_grid(persistent):
    nt, calls = _op_module()
    original = nt._compiled
    with backward_ways.one_kernel_on(nt, persistent):
        assert (nt.FUSED_DQ_MIN_KEYS, nt.FUSED_DQ_MASKED_MIN_KEYS) == (0, 0)
        nt._compiled(("attention_grad", "qkv", "causal"), [("sm90", "text", {"a": 1})], "dq")
        nt._compiled(("attention_grad", "kv", "causal"), [("sm90", "text", {})], "dk")
    # the one kernel's key and options carry the grid; dK's and dV's kernel is untouched
    assert calls[0] == (("attention_grad", "qkv", "causal", ("persistent", persistent)), [("sm90", "text", {"a": 1, "persistent": persistent})])
    assert calls[1] == (("attention_grad", "kv", "causal"), [("sm90", "text", {})])
    assert nt._compiled is original and (nt.FUSED_DQ_MIN_KEYS, nt.FUSED_DQ_MASKED_MIN_KEYS) == (512, 1024)


def test_two_kernels_and_restores_even_when_the_call_fails():
    nt, _ = _op_module()
    with pytest.raises(RuntimeError), backward_ways.two_kernels(nt):
        assert nt.FUSED_DQ_DIMS == ()
        raise RuntimeError
    assert nt.FUSED_DQ_DIMS == (64, 128)
    seen = []
    backward_ways.within(lambda: backward_ways.two_kernels(nt), lambda: seen.append(nt.FUSED_DQ_DIMS))()
    assert seen == [()] and nt.FUSED_DQ_DIMS == (64, 128)
