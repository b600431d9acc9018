"""The napkin model on napkin-sm90's attention kernel (TMA, wgmma, P V with P from
registers): the work of both products, what they read from shared memory, the registers
setmaxnreg moves from the producer to the consumers, the time of products and softmax
that wait on one another, as the schedule overlaps them; and the search over
napkin-sm90's attention configurations."""

import pytest

from napkin_ir import registry
from napkin_ir.attention_diagrams import attention_diagram
from napkin_ir.plan.recipes.attention import sm90_passes
from napkin_ir.errors import UserError
from napkin_ir.model.analysis import analyse_module
from napkin_ir.plan.recipes.attention import AttentionConfig, AttentionSpace, attention_configs, autotile_attention, sm90_tiles
from napkin_ir.model.hardware import H200
from napkin_ir.model.timing import REDUCTION_LATENCY_S, launch_registers, predict, register_budget
from napkin_ir.passmanager import run_passes, run_pipeline


def _kernel(kind: str = "softmax", n: int = 512, d: int = 128, b: int = 2, h: int = 2, **config):
    """The kernel's cost at the reg level, as napkin-sm90 lowers it (all but reg-to-ptx)."""
    module = run_pipeline(attention_diagram(kind, b=b, h=h, n=n, d=d))
    run_passes(registry.make_context(), module, sm90_passes(module, **config)[:-1])
    (cost,) = analyse_module(module).kernels
    return cost


def test_both_products_are_tensor_core_work():
    cost = _kernel(n=512, d=128, stream=128)
    assert cost.instruction == "wgmma"
    assert cost.work.tensor_flops == 4 * 2 * 2 * 512 * 512 * 128  # S = Q K^T and P V, 2 n^2 d each
    assert not cost.estimated_ops  # reg.wgmma_rs is no unknown op


def test_p_v_reads_only_v_from_shared_memory():
    # per 64 query rows and 128 keys at d=128: Q K^T reads Q's 64 rows and K's tile, P V
    # reads V's tile (P is in registers): (64 + 128 + 128) x 128 x 2 bytes
    cost = _kernel(n=512, d=128, block=128, stream=128, store="direct", q_registers=False)
    per_warpgroup_tile = (64 + 128 + 128) * 128 * 2
    assert cost.smem_read == 2 * 2 * (512 // 64) * (512 // 128) * per_warpgroup_tile


def test_q_in_registers_is_read_once_a_query_tile():
    # q_registers (the default here): each warpgroup's 64 rows of Q are read by ldmatrix
    # once, then each key tile reads only K's and V's tiles
    cost = _kernel(n=512, d=128, block=128, stream=128, store="direct")
    warpgroup_tiles = 2 * 2 * (512 // 64)
    assert cost.smem_read == warpgroup_tiles * (64 * 128 * 2 + (512 // 128) * (128 + 128) * 128 * 2)


def test_the_consumers_registers_are_what_setmaxnreg_gives_them():
    # two consumer warpgroups and a producer: 384 threads, 168 registers each at launch
    # (the cap ptxas allocates); the producer keeps 24, the consumers get 240
    cost = _kernel(n=512, d=128, stream=128)
    assert (cost.producer_warps, cost.warps, cost.blocks_per_sm) == (4, 12, 1)
    assert launch_registers(cost, H200) == 168
    assert register_budget(cost, H200) == 240
    assert cost.registers is not None and cost.registers.total <= 240
    p = predict(cost, H200)
    assert p.registers == 168 and p.occupancy.blocks_per_sm == 1 and "registers" in p.occupancy.limiter


def test_two_blocks_of_one_warpgroup_share_the_register_file():
    cost = _kernel(n=512, d=64, block=64, blocks_per_sm=2)
    assert launch_registers(cost, H200) == 128
    assert predict(cost, H200).occupancy.blocks_per_sm == 2


def _seconds(kind: str = "softmax", n: int = 2048, d: int = 128, **config) -> float:
    return predict(_kernel(kind, n=n, d=d, b=2, h=4, **config), H200).seconds


def test_the_schedule_is_read_off_the_kernel():
    assert [(c.chained, c.overlapped, c.pingpong) for c in (_kernel(), _kernel(overlap=False, pingpong=False), _kernel(pingpong=False),
                                                            _kernel(stages=2))] == \
        [(True, True, True), (True, False, False), (True, True, False), (True, True, True)]  # two stages overlap too


def test_overlap_and_ping_pong_hide_part_of_the_softmax():
    serial, overlap, both = _seconds(overlap=False, pingpong=False), _seconds(pingpong=False), _seconds()
    assert both < overlap < serial
    # neither: the products, then the softmax (the longer of its ALU and MUFU work), and
    # the latency of each row reduction on the busiest SM
    cost = _kernel(n=2048, d=128, b=2, h=4, overlap=False, pingpong=False)
    p = predict(cost, H200)
    reductions = cost.reductions / H200.sms * p.tail
    assert p.bound == "chain" and p.times["chain"] == pytest.approx(p.times["tensor"] + max(p.times["alu"], p.times["sfu"])
                                                                    + reductions * REDUCTION_LATENCY_S)


def test_each_row_reduction_costs_a_latency():
    # a softmax exchanges each row's values across lanes twice a stream tile (its max, its
    # sum): 2048 keys in tiles of 176 (12, the last partly past the end), where the sums
    # are exchanged a trip; in tiles of 128 (16) the sums stay each lane's part
    # (`reg-partial-row-sums`), exchanged once after the loop. With the sums exchanged,
    # fewer, wider tiles cost less though they compute a little more; with the parts the
    # narrow tiles exchange less. Spherical attention reduces once a tile.
    narrow, wide = _kernel(n=2048, stream=128), _kernel(n=2048, stream=176)
    exchanged = _kernel(n=2048, stream=128, partial_sums=False)
    assert narrow.reductions == narrow.n_blocks * (16 + 1) and wide.reductions == wide.n_blocks * 12 * 2
    assert exchanged.reductions == exchanged.n_blocks * 16 * 2
    assert wide.work.tensor_flops > narrow.work.tensor_flops
    assert predict(wide, H200).seconds < predict(exchanged, H200).seconds
    assert predict(narrow, H200).seconds < predict(exchanged, H200).seconds
    sph = _kernel("spherical", n=2048, stream=128)
    assert sph.reductions == sph.n_blocks * 16


def test_spherical_attention_is_predicted_faster_than_softmax():
    # the L2 norm needs no exp2: at d=128 the softmax's MUFU time is half the products'
    assert _seconds("spherical", d=128) < _seconds("softmax", d=128) / 1.1
    assert _seconds("spherical", d=64) < _seconds("softmax", d=64) / 1.2


def test_causal_attention_costs_about_half():
    ratio = _seconds("causal", n=4096) / _seconds("softmax", n=4096)
    assert 0.45 < ratio < 0.6  # half the tiles, and the diagonal ones whole


# --------------------------------------------------------------------------------------
# the search over napkin-sm90's attention configurations
# --------------------------------------------------------------------------------------


def _autotile(kind: str = "softmax", n: int = 2048, d: int = 128, space: AttentionSpace = AttentionSpace()):
    return autotile_attention(attention_diagram(kind, b=2, h=4, n=n, d=d), "h200", space=space, progress=lambda *_: None)


def test_the_configurations_are_those_that_differ():
    module = run_pipeline(attention_diagram("softmax", b=1, h=1, n=2048, d=64))
    configs = attention_configs(module)
    # per stream tile (64, 128, 176) and stage count: overlap on or off with 64 rows (one
    # warpgroup takes no turns), and ping-pong on or off too with 128 and 192
    assert len(configs) == 3 * 2 * (2 + 2 * 4)
    assert not any(c.pingpong for c in configs if c.block == 64)
    assert any(c.overlap and c.pingpong for c in configs if c.stages == 2)  # K and V released apart
    # a short sequence: the tiles fit its axes as napkin-sm90 fits them, and some coincide
    short = attention_configs(run_pipeline(attention_diagram("softmax", b=1, h=1, n=64, d=64)))
    assert {(c.block, c.stream) for c in short} == {(64, 64)}


def test_the_choice_at_d128():
    # 128 keys a tile, two stages, TMA stores: with the running sums kept as each lane's
    # part (`reg-partial-row-sums`, at up to 128 keys a tile) the model counts one exchange
    # a trip fewer and moves from 176 keys (its pick before) to 128, which measured 4.1-4.5%
    # faster than 176 (H200, research/benchmarks.md, session 66)
    result = _autotile(d=128)
    assert result.config == AttentionConfig("i", "j", 128, 128, 2, overlap=True, pingpong=True, store="tma")
    assert result.reason.startswith("chose grid i:128, stream j:128, 2 stages, overlap and ping-pong: predicted ")
    judged = [c for c in result.candidates if c.prediction]
    assert result.prediction.seconds <= min(c.prediction.seconds for c in judged) * 1.01
    # it lowers as napkin-sm90 lowers it, and predicts the same there
    assert result.prediction.seconds == pytest.approx(_seconds(n=2048, d=128, stream=128, stages=2, store="tma"))


def test_at_d256_only_two_stages_of_64_keys_fit_beside_q():
    # overlapped all the same (K and V released apart), and the output's panels fit beside
    result = _autotile(d=256)
    assert (result.config.block, result.config.stream, result.config.stages, result.config.store) == (128, 64, 2, "tma")
    assert result.config.overlap and result.config.pingpong


def test_a_configuration_over_the_shared_memory_is_never_chosen():
    result = _autotile(d=128)
    over = [c for c in result.candidates if c.rejected and "shared memory" in c.rejected]
    assert {(c.config.block, c.config.stream, c.config.stages) for c in over} == {(192, 128, 3), (64, 176, 3), (128, 176, 3),
                                                                                  (192, 176, 3)}
    assert result.cost.smem_per_block <= H200.smem_per_block
    with pytest.raises(UserError, match="none of 4 candidates fits or lowers: does not lower: hbm-to-smem"):
        _autotile(d=128, space=AttentionSpace(block_rows=(192,), stream_sizes=(128,), stages=(3,)))


def test_a_configuration_over_the_consumers_registers_is_set_aside():
    # three consumer warpgroups get 160 registers: 176 keys a tile need about 184-190 (ptxas
    # spills 56 bytes with overlap and ping-pong), 128 keys about 154 (no spills)
    result = _autotile(d=64, n=256)
    over = [c for c in result.candidates if c.rejected and "registers" in c.rejected]
    assert over and all(c.config.block == 192 and c.config.stream == 176 for c in over)
    assert all("over the 160 setmaxnreg gives the consumers" in c.rejected for c in over)


def test_q_in_registers_is_given_to_the_search_not_searched():
    # q_registers=None: each candidate holds Q in registers where napkin-sm90 would for its
    # tile (128 keys and up to 128 rows at d=128); False or True: every candidate as given
    from napkin_ir.passmanager import spec

    module = run_pipeline(attention_diagram("softmax", b=1, h=2, n=512, d=128))
    for given in (None, False, True):
        configs = attention_configs(module, AttentionSpace(block_rows=(128,), stream_sizes=(128, 176), q_registers=given))
        for c in configs:
            held = "a_registers=true" in spec(c.passes(module))
            assert held == (c.stream <= 128 if given is None else given)
    # Q in registers beside 176 keys: more than setmaxnreg gives the consumers
    with pytest.raises(UserError, match="over the 240 setmaxnreg gives the consumers"):
        autotile_attention(module, H200, space=AttentionSpace(block_rows=(128,), stream_sizes=(176,), stages=(2,), q_registers=True),
                           progress=lambda *_: None)


@pytest.mark.parametrize("part", ["q", "kv"])
def test_the_gradients_kernels_are_searched_within_the_tiles_they_take(part):
    """The gradient's kernels of three or four products at d=128 take at most 64 keys (or
    queries) a tile: the search leaves the wider tiles out, rather than failing on them, and
    chooses among the rest."""
    from napkin_ir.attention_diagrams import gradient_passes

    module = run_pipeline(attention_diagram("softmax", b=1, h=2, n=512, d=128), gradient_passes("softmax", part))
    configs = attention_configs(module)
    assert configs and all(c.stream == 64 for c in configs)
    result = autotile_attention(module, H200, progress=lambda *_: None)
    assert result.config.stream == 64


@pytest.mark.parametrize("kind,part", [("softmax", "q"), ("softmax", "kv"), ("causal", "q"), ("causal", "kv")])
def test_near_ties_go_to_outputs_stored_by_the_tma(kind, part):
    """The gradient's dQ and dK/dV kernels at d=128 over 1k tokens: two and three stages are
    predicted alike, but only two leave room for the output's TMA store panels (three store
    from registers); the near-tie goes to the TMA stores, 1.09-1.17x three stages on an H200
    (kernels alone, research/benchmarks.md 2026-11-29), before more stages."""
    from napkin_ir.attention_diagrams import gradient_passes
    from napkin_ir.plan.autotile import preference

    module = run_pipeline(attention_diagram(kind, b=16, h=16, n=1024, d=128), gradient_passes(kind, part))
    result = autotile_attention(module, H200, progress=lambda *_: None)
    assert (result.config.block, result.config.stages) == (128, 2) and result.cost.tma_stores
    three = [c for c in result.candidates if c.config.block == 128 and c.config.stages == 3 and c.config.overlap == result.config.overlap
             and c.config.pingpong == result.config.pingpong and c.prediction]
    assert three and not three[0].cost.tma_stores and three[0].prediction.seconds == result.prediction.seconds
    assert preference(1.0, 1.0, 5.0, 2, tma_stores=True) < preference(1.0, 1.0, 5.0, 3, tma_stores=False)
    assert preference(1.0, 1.0, 5.0, 3, tma_stores=True) < preference(1.0, 1.0, 5.0, 2, tma_stores=True)


def test_the_gradients_one_kernel_takes_128_queries_a_tile_at_d64():
    """dQ, dK and dV from one kernel at d=64 stream 128 queries a tile, by default and in the
    search: 1.06-1.14x the 64-query kernel on an H200 once the schedule keeps P's registers
    free over dS's math (research/benchmarks.md, 2026-11-29). The model picks 128 keys by
    128 queries a tile and two stages, the fastest measured: one consumer warpgroup (64
    keys) waits out its products alone (`SOLO_CHAIN`), 64 queries a tile read more shared
    memory for the same products, and of two and three stages, which it predicts alike, a
    kernel that spills (estimated a few registers over, `SPILL_SLACK`) takes the one that
    leaves the L1 more room."""
    from napkin_ir.attention_diagrams import gradient_passes

    for kind in ("softmax", "causal"):
        module = run_pipeline(attention_diagram(kind, b=4, h=32, n=4096, d=64), gradient_passes(kind, "qkv"))
        assert sm90_tiles(module)[:3] == (128, 128, 2)
        configs = attention_configs(module)
        assert {c.stream for c in configs} == {64, 128} and {c.block for c in configs} == {64, 128}
        config = autotile_attention(module, H200, progress=lambda *_: None).config
        assert (config.block, config.stream, config.stages) == (128, 128, 2)


@pytest.mark.parametrize("kind,d,part,tiles", [
    ("softmax", 128, None, {}), ("causal", 64, None, {"block": 64, "stream": 128, "stages": 3}), ("softmax", 128, "qkv", {}),
    ("causal", 64, "qkv", {}), ("softmax", 128, "qkv", {"stream": 64, "stages": 3}), ("softmax", 256, "kv", {})])
def test_the_models_shared_memory_is_what_reg_to_ptx_lays_out(kind, d, part, tiles):
    """The model counts a block's shared memory as reg-to-ptx places it
    (`lowering.shared_layout`: panel buffers 1024-aligned, the mbarriers after the buffers,
    the start rounded up), so that it sets aside a plan reg-to-ptx refuses: at d=128 the
    gradient's one kernel with three stages (64 queries a tile) needs 232576 bytes, 128
    more than a block may take, which the buffers alone hid. Its default at d=128 streams
    80 queries a tile (the statistics' stages 384 bytes apart, after the panels)."""
    import napkin_ir
    from napkin_ir.attention_diagrams import gradient_passes
    from napkin_ir.passes.composite import spec

    text = str(run_pipeline(attention_diagram(kind, b=1, h=2, n=1024, d=d), gradient_passes(kind, part) if part else ""))
    full = spec(sm90_passes(run_pipeline(text), **tiles))
    (cost,) = analyse_module(run_pipeline(text, full.split(",reg-to-ptx")[0])).kernels
    try:
        laid_out = napkin_ir.compile(text, pipeline=full, cache=False).smem
    except napkin_ir.NapkinError as e:  # reg-to-ptx refuses what does not fit, naming the bytes it counted
        assert cost.smem_per_block > H200.smem_per_block
        laid_out = int(str(e).split("needs ")[1].split(" bytes")[0])
    assert cost.smem_per_block == laid_out


def test_one_consumer_warpgroup_waits_out_its_chain_alone():
    """A chained kernel's products run no faster than their operands are read from shared
    memory, and where an SM holds one consumer warpgroup (the gradient's one kernel in
    blocks of 64 keys) its chain takes `SOLO_CHAIN` as long: no other warpgroup's math runs
    under its products."""
    from napkin_ir.attention_diagrams import gradient_passes
    from napkin_ir.model.timing import SOLO_CHAIN, chain_time

    text = str(run_pipeline(attention_diagram("softmax", b=1, h=2, n=1024, d=64), gradient_passes("softmax", "qkv")))
    for block, alone in ((64, True), (128, False)):
        module = run_pipeline(text)
        run_passes(registry.make_context(), module, sm90_passes(module, block=block, stream=128, stages=2)[:-1])
        (cost,) = analyse_module(module).kernels
        assert (cost.warps - cost.producer_warps == 4) == alone and cost.chained and not cost.reductions
        t = predict(cost, H200).times
        products = max(t["tensor"], t["smem"])
        assert t["chain"] == pytest.approx(chain_time(products, max(t["alu"], t["sfu"]), False, False) * (SOLO_CHAIN if alone else 1))
