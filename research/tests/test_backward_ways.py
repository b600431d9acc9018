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
def test_grid_gives_the_parts_kernels_their_grid_and_a_key_of_their_own(persistent):
    nt, calls = _op_module()
    original = nt._compiled
    with backward_ways.grid(nt, {"qkv"}, persistent):
        nt._compiled(("attention_grad", "qkv", "causal"), [("sm90", "text", {"a": 1})], "dq")
        nt._compiled(("attention_grad", "kv", "causal"), [("sm90", "text", {})], "dk")
        nt._compiled(("attention", "causal"), [("sm90", "text", {})], "forward")
    assert calls[0] == (("attention_grad", "qkv", "causal", ("persistent", persistent)), [("sm90", "text", {"a": 1, "persistent": persistent})])
    assert calls[1:] == [(("attention_grad", "kv", "causal"), [("sm90", "text", {})]), (("attention", "causal"), [("sm90", "text", {})])]
    assert nt._compiled is original


def test_the_ways_set_and_restore_the_ops_rules_even_when_a_call_fails():
    nt, calls = _op_module()
    seen = []

    def op():
        seen.append((nt.FUSED_DQ_DIMS, nt.FUSED_DQ_MIN_KEYS, nt.FUSED_DQ_MASKED_MIN_KEYS))
        nt._compiled(("attention_grad", "q", "causal"), [("sm90", "t", {})], "dq")
        nt._compiled(("attention_grad", "qkv", "causal"), [("sm90", "t", {})], "all")
        return "grads"

    runs = backward_ways.ways(nt, op, 128)
    assert list(runs) == ["op", "persistent", "plain", "split", "split plain"]
    assert [runs[w]() for w in runs] == ["grads"] * 5
    fused, default, split = ((128,), 0, 0), ((64, 128), 512, 1024), ((), 0, 0)
    assert seen == [default, fused, fused, split, split]
    keys = [k for k, _ in calls]
    assert keys[2:6] == [("attention_grad", "q", "causal"), ("attention_grad", "qkv", "causal", ("persistent", True)),
                         ("attention_grad", "q", "causal"), ("attention_grad", "qkv", "causal", ("persistent", False))]
    assert keys[8] == ("attention_grad", "q", "causal", ("persistent", False))  # split plain: the two kernels a block a tile
    assert (nt.FUSED_DQ_DIMS, nt.FUSED_DQ_MIN_KEYS, nt.FUSED_DQ_MASKED_MIN_KEYS) == default

    def fails():
        raise RuntimeError

    with pytest.raises(RuntimeError):
        backward_ways.ways(nt, fails, 128)["split plain"]()
    assert (nt.FUSED_DQ_DIMS, nt.FUSED_DQ_MIN_KEYS, nt.FUSED_DQ_MASKED_MIN_KEYS) == default and nt._compiled.__name__ == "<lambda>"


def test_a_way_with_no_kernel_is_left_out_and_a_wrong_one_ends_the_run(capsys):
    torch = pytest.importorskip("torch")
    grads = [torch.ones(2, 3), torch.full((2, 3), 2.0)]

    def no_kernel():
        raise ValueError("dq and dk and dv of napkin::attention does not compile: head dim 256\nmore")

    runs = {"op": lambda: grads, "plain": no_kernel, "split": lambda: [g.clone() for g in grads]}
    kept = backward_ways.checked(runs, "d256 n4096 causal")
    assert list(kept) == ["op", "split"]
    assert "d256 n4096 causal | plain: left out, no kernel (dq and dk and dv of napkin::attention does not compile: head dim 256)" \
        in capsys.readouterr().out
    runs["wrong"] = lambda: [grads[0], grads[1] * 1.1]
    with pytest.raises(SystemExit, match="d256 n4096 causal wrong differs from the two kernels by 1.0e-01"):
        backward_ways.checked(runs, "d256 n4096 causal")
