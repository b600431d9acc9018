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


def test_the_longest_streams_launch_first_either_way():
    """`order=last` walks the last axis from the end whose blocks stream the most: a causal
    forward's last query block (all keys), the causal gradient's first key block (all
    queries). The model's launch order and the streams' trips agree."""
    from napkin_ir.dialects import hbm
    from napkin_ir.model.space import kernel_space, stream_trips

    text = attention_diagram("causal", 1, 2, 512, 64, "bf16")
    grad = 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="causal_attention_grad" results="1,2" cut="delta"},'
    for derive, grid, stream in (("", "i", "j"), (grad, "j", "i")):
        module = run_pipeline(text, f'{derive}ncd-relabel{{grid="b,h,{grid}:64" stream="{stream}:64"}},ncd-to-hbm,hbm-launch{{order=last}}')
        (kernel,) = [op for op in module.walk() if isinstance(op, hbm.KernelOp)]
        trips = stream_trips(kernel)[0, 0]  # b=0, h=0: along the last axis
        first = int(kernel_space(kernel).block_ids().reshape(1, 2, -1)[0, 0].argmin())
        assert trips[first] == trips.max() > trips.min(), (grid, trips)
        assert kernel.last_from_end == (grid == "i")
