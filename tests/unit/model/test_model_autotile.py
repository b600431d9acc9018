"""autotile: the roles it reads off a diagram, and a choice that fits the budgets and is
the fastest prediction among the candidates it lowered."""

from pathlib import Path

import pytest

from napkin_ir.diagrams import gemm
from napkin_ir.errors import UserError
from napkin_ir.model.analysis import analyse_module
from napkin_ir.plan.autotile import SearchSpace, TileConfig, autotile, axis_roles
from napkin_ir.model.hardware import H100
from napkin_ir.model.timing import predict
from napkin_ir.passmanager import run_pipeline

EXAMPLES = Path(__file__).parents[3] / "examples"
SMALL = SearchSpace(block_sizes=(64, 128), stream_sizes=(32,), stages=(2, 3), warp_counts=(4,))


def _function(text: str):
    from xdsl.dialects import func

    (f,) = [op for op in run_pipeline(text).walk() if isinstance(op, func.FuncOp)]
    return f


def test_roles_of_a_gemm():
    roles = axis_roles(_function(gemm(256, 128, 64)))
    assert (roles.tiled, roles.batch, roles.whole, roles.streamed) == (("m", "n"), (), (), ("k",))


def test_roles_of_attention():
    roles = axis_roles(_function((EXAMPLES / "attention.mlir").read_text()))
    assert roles.tiled == ("i",)  # queries: cut into block tiles
    assert roles.batch == ("b", "h")  # in both operands of both contractions: one block each
    assert roles.whole == ("d",)  # the scores sum over it
    assert roles.streamed == ("j",)  # keys: reduced by the softmax and the second product


def test_config_spells_its_pipeline():
    cfg = TileConfig({"m": 128, "n": 64}, {"k": 32}, {"m": 4, "n": 1}, 4)
    assert cfg.pipeline() == ('ncd-relabel{grid="m:128,n:64" stream="k:32"},ncd-to-hbm,hbm-launch,'
                              'hbm-to-smem{stages=4 layout="pad8"},smem-to-reg{warps="m:4,n:1"}')
    assert cfg.pipeline("hbm") == 'ncd-relabel{grid="m:128,n:64" stream="k:32"},ncd-to-hbm,hbm-launch'


def test_the_choice_is_the_fastest_prediction_within_the_budgets():
    text = gemm(1024, 1024, 512)
    result = autotile(text, "h100", space=SMALL)
    judged = [c for c in result.candidates if c.prediction is not None and c.level == "reg"]
    assert len(judged) >= 8
    fastest = min(c.prediction.seconds for c in judged)
    assert result.prediction.seconds <= fastest * 1.01
    assert result.level == "reg"
    assert result.cost.smem_per_block <= H100.smem_per_block
    assert result.cost.registers is not None and result.cost.registers.total <= H100.regs_per_thread
    # the configuration lowers, and re-analysing it gives the same prediction
    (again,) = analyse_module(run_pipeline(text, result.config.pipeline())).kernels
    assert predict(again, H100).seconds == pytest.approx(result.prediction.seconds)
    assert result.reason.startswith(f"chose {result.config.describe()}: predicted")
    assert "bound by" in result.reason and "per SM, limited by" in result.reason


def test_over_budget_candidates_are_set_aside_with_the_reason():
    space = SearchSpace(block_sizes=(256,), stream_sizes=(64,), stages=(4,), warp_counts=(4, 8))
    result = autotile(gemm(512, 512, 256), "a100", space=space)
    reasons = [c.rejected for c in result.candidates if c.rejected]
    assert any("registers" in r or "shared memory" in r for r in reasons)


def test_nothing_to_tile_is_an_error():
    scalar = "func.func @s(%x: !ncd.tensor<i=64 : f32>) -> !ncd.tensor<: f32> {\n" \
             "  %y = ncd.reduce sum %x along [i] : !ncd.tensor<i=64 : f32> -> !ncd.tensor<: f32>\n" \
             "  func.return %y : !ncd.tensor<: f32>\n}\n"
    with pytest.raises(UserError, match="no axis to spread over the grid"):
        autotile(scalar)


def test_the_sm90_target_searches_tiles_and_stages_for_wgmma():
    space = SearchSpace(block_sizes=(128, 256), stream_sizes=(64,), stages=(3, 4), target="sm90")
    result = autotile(gemm(1024, 1024, 512), "h100", space=space)
    assert result.prediction.instruction == "wgmma" and result.level == "reg"
    assert 'copy="tma"' in result.config.pipeline() and 'mma="wgmma"' in result.config.pipeline()
    judged = [c for c in result.candidates if c.prediction is not None]
    assert result.prediction.seconds <= min(c.prediction.seconds for c in judged) * 1.01
