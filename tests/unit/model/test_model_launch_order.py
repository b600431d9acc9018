"""The L2 estimate follows the launch order: with the query tiles of one head launched
together (`hbm-launch{order=last}`, what napkin-sm80 does for attention) K and V come from
DRAM about once per head; with the batch axis fastest they come again in every wave."""

from napkin_ir.attention_diagrams import attention_diagram
from napkin_ir.model.analysis import analyse_module
from napkin_ir.model.hardware import hardware
from napkin_ir.model.timing import predict
from napkin_ir.passmanager import run_pipeline

B, H, N, D, TILE = 4, 16, 2048, 64, 128


def _dram(order: str) -> dict[str, float]:
    text = attention_diagram("softmax", B, H, N, D, "bf16")
    spec = f'ncd-relabel{{grid="b,h,i:{TILE}" stream="j:64"}},ncd-to-hbm,hbm-launch{{order={order}}}'
    (cost,) = analyse_module(run_pipeline(text, spec)).kernels
    return predict(cost, hardware("h200")).dram


def test_query_tiles_of_a_head_together_read_k_and_v_about_once():
    once = B * H * N * D * 2  # one pass over K (or V), bf16
    dram = _dram("last")
    # a wave of 132 blocks holds several heads' 16 query tiles whole: only heads cut by a
    # wave boundary are read twice
    assert once <= dram["k"] <= 1.25 * once
    assert once <= dram["v"] <= 1.25 * once
    assert dram["q"] == once  # Q once whatever the order


def test_batch_axis_fastest_reads_k_and_v_in_every_wave():
    once = B * H * N * D * 2
    # a head's 16 query tiles are 64 blocks apart: they fall into more than one wave
    first, last = _dram("first"), _dram("last")
    assert first["k"] >= 1.5 * once and first["k"] > last["k"]
    assert first["v"] >= 1.5 * once and first["v"] > last["v"]
