"""Attention keeps its numbers at every level on the CPU: softmax, causal and spherical
attention, with sequence lengths that the tiles do not divide, through ncd-to-hbm,
hbm-to-smem (one pipeline across the unmasked and the masked loop) and smem-to-reg
(fragments lane by lane), against the diagram's interpreter and napkin_ir/reference.py."""

from __future__ import annotations

import re

import numpy as np
import pytest
from xdsl.utils.exceptions import InterpretationError

from napkin_ir import reference
from napkin_ir.attention_diagrams import NAMES, attention_diagram
from napkin_ir.interpreters.run import find_entry
from napkin_ir.passmanager import spec
from napkin_ir.passmanager import run_pipeline

# (kind, b, h, n queries, n keys, d, block rows, stream tile, stages): tiles that divide the
# axes, that do not (ragged queries and keys), fewer tiles than stages, a causal block
# whose rows end inside a stream tile
CASES = [
    ("softmax", 1, 2, 64, 64, 32, 32, 16, 2),
    ("softmax", 1, 1, 70, 45, 32, 32, 16, 3),
    ("causal", 1, 2, 96, 96, 32, 32, 16, 3),
    ("causal", 2, 1, 77, 77, 16, 32, 32, 2),
    ("causal", 1, 1, 40, 40, 32, 16, 32, 4),
    ("spherical", 1, 2, 50, 61, 32, 32, 16, 2),
    ("spherical", 1, 1, 64, 16, 16, 64, 16, 3),
]


def _text(kind, b, h, n, nj, d, dtype="bf16"):
    return attention_diagram(kind, b, h, n, d, dtype, n_keys=nj)


def _labels(bm: int, tj: int) -> str:
    return f'ncd-relabel{{grid="b,h,i:{bm}" stream="j:{tj}"}},ncd-to-hbm'


@pytest.mark.parametrize("kind,b,h,n,nj,d,bm,tj,stages", CASES)
def test_smem_level_equals_hbm_level(kind, b, h, n, nj, d, bm, tj, stages):
    text = _text(kind, b, h, n, nj, d)
    diagram = find_entry(run_pipeline(text))
    hbm_level = find_entry(run_pipeline(text, _labels(bm, tj)))
    smem_level = find_entry(run_pipeline(text, f"{_labels(bm, tj)},hbm-to-smem{{stages={stages} layout=pad8}}"))
    inputs = diagram.random_inputs(n * nj + d)
    got = smem_level.run(inputs)[0]
    np.testing.assert_array_equal(got, hbm_level.run(inputs)[0])
    want = diagram.run(inputs)[0]
    assert reference.relative_error(got, want) <= reference.TOLERANCE["bf16"]
    assert reference.relative_error(got, reference.REFERENCES[NAMES[kind]](*inputs)) <= reference.TOLERANCE["bf16"]


def _warps(bm: int) -> str:
    return f"i:{bm // 16}"


@pytest.mark.parametrize("kind,b,h,n,nj,d,bm,tj,stages", CASES)
def test_reg_level_equals_smem_level(kind, b, h, n, nj, d, bm, tj, stages):
    text = _text(kind, b, h, n, nj, d)
    smem_pipeline = f"{_labels(bm, tj)},hbm-to-smem{{stages={stages} layout=pad8}}"
    smem_level = find_entry(run_pipeline(text, smem_pipeline))
    reg_level = find_entry(run_pipeline(text, f'{smem_pipeline},smem-to-reg{{warps="{_warps(bm)}"}}'))
    inputs = smem_level.random_inputs(n + nj * d)
    got, want = reg_level.run(inputs)[0], smem_level.run(inputs)[0]
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, want, rtol=2**-7, atol=2**-7 * np.abs(want).max())
    assert reference.relative_error(got, reference.REFERENCES[NAMES[kind]](*inputs)) <= reference.TOLERANCE["bf16"]


@pytest.mark.parametrize("kind", ["softmax", "causal", "spherical"])
def test_reg_level_f16_and_warps_of_two_row_tiles(kind):
    # f16, and warps that hold 32 rows each (two m16 tiles per fragment)
    text = _text(kind, 1, 1, 72, 72, 32, "f16")
    pipeline = f'{_labels(64, 32)},hbm-to-smem{{stages=3 layout=pad8}},smem-to-reg{{warps="i:2"}}'
    reg_level = find_entry(run_pipeline(text, pipeline))
    inputs = reg_level.random_inputs(7)
    got = reg_level.run(inputs)[0]
    assert reference.relative_error(got, reference.REFERENCES[NAMES[kind]](*inputs)) <= reference.TOLERANCE["f16"]


# (kind, n queries, n keys, d): fewer queries than a warpgroup's 64 rows, down to one, and
# keys fewer than a stream tile
SM90_SHORT = [("causal", 1, 1, 64), ("softmax", 1, 300, 128), ("causal", 10, 10, 128), ("spherical", 33, 100, 64),
              ("softmax", 63, 5, 256)]


@pytest.mark.parametrize("kind,n,nj,d", SM90_SHORT)
def test_sm90_levels_with_one_partial_query_tile(kind, n, nj, d):
    """napkin-sm90's attention takes a tile of 64 query rows over a shorter sequence: the
    hbm level (a tile longer than its axis) and the register level after overlap and
    ping-pong keep the numbers."""
    from napkin_ir.plan.recipes.attention import sm90_passes
    from napkin_ir.passmanager import spec

    text = _text(kind, 1, 2, n, nj, d)
    passes = sm90_passes(run_pipeline(text))[:-1]  # all but reg-to-ptx
    assert 'i:64"' in spec(passes)
    diagram, reg_level = find_entry(run_pipeline(text)), find_entry(run_pipeline(text, spec(passes)))
    hbm_level = find_entry(run_pipeline(text, spec(passes[:2])))
    inputs = diagram.random_inputs(n + nj + d)
    got, want = reg_level.run(inputs)[0], diagram.run(inputs)[0]
    assert not np.isnan(got).any()
    assert reference.relative_error(hbm_level.run(inputs)[0], want) <= reference.TOLERANCE["bf16"]
    assert reference.relative_error(got, reference.REFERENCES[NAMES[kind]](*inputs)) <= reference.TOLERANCE["bf16"]


# (kind, n queries, n keys, d, stream tile): more key tiles than two stages, ragged keys, a
# causal diagonal inside a tile, a tile that is not a power of two
SM90_TWO_STAGES = [("softmax", 100, 300, 64, 64), ("causal", 200, 200, 64, 64), ("spherical", 70, 230, 64, 48),
                   ("causal", 130, 130, 64, 48)]


def _sm90_two_stages(kind, n, nj, d, tj):
    from napkin_ir.plan.recipes.attention import sm90_passes

    text = _text(kind, 1, 2, n, nj, d)
    return text, sm90_passes(run_pipeline(text), block=128, stream=tj, stages=2)[:-1]  # all but reg-to-ptx


@pytest.mark.parametrize("kind,n,nj,d,tj", SM90_TWO_STAGES)
def test_sm90_two_stages_overlapped_keep_the_numbers(kind, n, nj, d, tj):
    """With two stages, K and V released on rings of their own, reg-wgmma-overlap and
    reg-pingpong still run (the consumers hold a step's V and the next step's K): the smem
    and reg levels keep the numbers, the interpreters checking the mbarrier protocol."""
    text, passes = _sm90_two_stages(kind, n, nj, d, tj)
    assert "reg-wgmma-overlap" in spec(passes) and "reg-pingpong" in spec(passes)
    diagram = find_entry(run_pipeline(text))
    inputs = diagram.random_inputs(n + nj)
    want = reference.REFERENCES[NAMES[kind]](*inputs)

    for upto in (4, len(passes)):  # the smem level, then the reg level after overlap and ping-pong
        got = find_entry(run_pipeline(text, spec(passes[:upto]))).run(inputs)[0]
        assert not np.isnan(got).any()
        assert reference.relative_error(got, want) <= reference.TOLERANCE["bf16"]


def test_sm90_k_and_v_are_released_apart():
    """The smem level releases K's ring after the scores and V's after P V: two empty rings,
    K's arrival before V's wait."""
    text, passes = _sm90_two_stages("softmax", 100, 300, 64, 64)

    smem_text = str(run_pipeline(text, spec(passes[:4])))
    body = smem_text[smem_text.index("iter_args(") :]
    arrives = re.findall(r"smem.arrive (%\w+)\[", body)
    assert len(set(arrives[:2])) == 2
    assert body.index("smem.arrive ") < body.index("%v_tile = smem.read")


def test_sm90_k_released_before_its_scores_retire_is_refused(run_printed):
    """At the reg level K's stage is released after the wait that retires the scores; an
    arrival moved before that wait lets the producer overwrite a stage a wgmma still reads."""
    text, passes = _sm90_two_stages("softmax", 100, 300, 64, 64)

    reg_text = str(run_pipeline(text, spec(passes)))
    # in the overlapped loop: `wait {pending = 1}`, V's wait (`reg-early-waits`), then K's
    # arrival; move the arrival before the first
    broken = re.sub(r"(\n *reg.wgmma_wait \{pending = 1 : i32\})((?:\n *smem.mbarrier_wait [^\n]*)?)(\n *smem.arrive [^\n]*)",
                    r"\3\1\2", reg_text, count=1)
    assert broken != reg_text
    with pytest.raises(InterpretationError, match="wgmma still reads"):
        run_printed(broken, 1)


@pytest.mark.parametrize("kind,n,nj,d,block,tj", [
    ("softmax", 250, 300, 64, 192, 128),  # three consumer warpgroups (d=64's default on long streams)
    ("causal", 200, 200, 64, 192, 128),
    ("softmax", 150, 250, 256, 128, 80),  # 80 keys a tile (d=256's default on long streams), the last partial
    ("causal", 130, 130, 256, 128, 80),
])
def test_sm90_default_long_stream_tiles_keep_the_numbers(kind, n, nj, d, block, tj):
    """The tiles napkin-sm90 takes on long streams, on short ragged ones here: the register
    level after overlap and ping-pong, run on the CPU, against float64."""
    from napkin_ir.plan.recipes.attention import sm90_passes
    from napkin_ir.passmanager import spec

    text = _text(kind, 1, 2, n, nj, d)
    passes = sm90_passes(run_pipeline(text), block=block, stream=tj, stages=2, store="direct")[:-1]
    diagram, reg_level = find_entry(run_pipeline(text)), find_entry(run_pipeline(text, spec(passes)))
    inputs = diagram.random_inputs(n + nj + d)
    got = reg_level.run(inputs)[0]
    assert not np.isnan(got).any()
    assert reference.relative_error(got, reference.REFERENCES[NAMES[kind]](*inputs)) <= reference.TOLERANCE["bf16"]


@pytest.mark.parametrize("kind,n,nj,d,tj,persistent", [
    ("softmax", 100, 300, 128, 128, False),  # Q's two 64-column panels, the last key tile partial
    ("causal", 130, 130, 128, 64, True),  # a persistent block: Q loaded again for each query tile
    ("spherical", 70, 230, 64, 64, True),
    ("softmax", 100, 300, 64, 128, False),  # d=64's one panel, 128 keys, the last tile partial
])
def test_sm90_q_in_registers_keeps_the_numbers(kind, n, nj, d, tj, persistent):
    """q_registers: S = Q K^T by wgmma with A from fragments loaded once a tile (no product
    reads Q's stage); the register level after overlap and ping-pong, run on the CPU,
    against float64."""
    from napkin_ir.plan.recipes.attention import sm90_passes
    from napkin_ir.passmanager import spec

    text = _text(kind, 1, 2, n, nj, d)
    passes = sm90_passes(run_pipeline(text), block=128, stream=tj, stages=2, persistent=persistent, q_registers=True)[:-1]
    module = run_pipeline(text, spec(passes))
    printed = str(module)
    assert "reg.wgmma " not in printed and printed.count("reg.ldmatrix") == d // 16
    reg_level = find_entry(module)
    inputs = reg_level.random_inputs(n + nj + d)
    got = reg_level.run(inputs)[0]
    assert not np.isnan(got).any()
    assert reference.relative_error(got, reference.REFERENCES[NAMES[kind]](*inputs)) <= reference.TOLERANCE["bf16"]


@pytest.mark.parametrize("kind,d,n,options,want", [
    ("softmax", 128, 4096, {}, True),
    ("causal", 128, 16384, {}, True),
    ("softmax", 96, 1000, {}, True),
    ("spherical", 128, 4096, {}, True),
    ("softmax", 64, 4096, {}, False),  # 192 rows at 160 registers a thread
    ("softmax", 64, 1024, {}, True),  # a short stream: 128 rows
    ("causal", 64, 4096, {}, True),  # 2048 keys on average: 128 rows
    ("softmax", 32, 1024, {}, False),  # Q's rows are 64 bytes, not 128-byte panels
    ("softmax", 256, 4096, {}, False),  # 64 registers of Q: spills
    ("softmax", 128, 4096, {"stream": 176}, False),  # 176 keys leave no room
    ("softmax", 128, 4096, {"block": 192}, False),
    ("softmax", 128, 4096, {"blocks_per_sm": 2}, False),
])
def test_sm90_q_registers_pay(kind, d, n, options, want):
    from napkin_ir.plan.recipes.attention import q_registers_pay

    assert q_registers_pay(run_pipeline(_text(kind, 1, 2, n, n, d)), **options) == want


def test_sm90_default_softmax_at_d128_holds_q_in_registers():
    """napkin-sm90's softmax at d=128 takes 128 keys a tile with Q in registers, where it
    would take 176 with Q in shared memory; spherical attention holds Q in registers too."""
    from napkin_ir.plan.recipes.attention import sm90_passes
    from napkin_ir.passmanager import spec

    for kind in ("softmax", "spherical"):
        passes = spec(sm90_passes(run_pipeline(_text(kind, 1, 2, 4096, 4096, 128))))
        assert 'stream="j:128"' in passes and "a_registers=true" in passes
    wide = spec(sm90_passes(run_pipeline(_text("softmax", 1, 2, 4096, 4096, 128)), q_registers=False))
    assert 'stream="j:176"' in wide and "a_registers" not in wide


def test_sm90_spherical_attention_at_d128_is_persistent():
    """persistent_pays: spherical attention at d=128 loops at 16k too, where a softmax
    launches a block a tile."""
    from napkin_ir.plan.recipes.attention import persistent_pays

    assert persistent_pays(run_pipeline(_text("spherical", 1, 2, 16384, 16384, 128)))
    assert not persistent_pays(run_pipeline(_text("softmax", 1, 2, 16384, 16384, 128)))


@pytest.mark.parametrize("kind,d,n,want", [
    ("causal", 256, 8192, True),  # its output from Q's room: twice the work a persistent block
    ("causal", 256, 16384, False),
    ("softmax", 256, 8192, False),  # without a mask the rule is the plain one
    ("softmax", 256, 2048, True),
    ("causal", 128, 16384, False),  # at d=128 the panels fit: the plain rule (twice would loop here)
    ("spherical", 256, 8192, False),  # no softmax (64 keys, its panels beside them)
])
def test_sm90_causal_d256_loops_where_its_output_leaves_from_qs_room(kind, d, n, want):
    from napkin_ir.plan.recipes.attention import persistent_pays

    assert persistent_pays(run_pipeline(_text(kind, 1, 2, n, n, d))) == want


def test_sm90_packed_heads_at_d256_keep_the_plain_rule():
    from napkin_ir.attention_diagrams import gqa_attention_diagram
    from napkin_ir.plan.recipes.attention import persistent_pays

    assert not persistent_pays(run_pipeline(gqa_attention_diagram("causal", 1, 2, 4, 8192, 256, "bf16")))


def test_sm90_gradients_one_kernel_launches_a_block_a_key_tile():
    """persistent_pays: the gradient's one kernel (dQ added along the stream) launches a
    block a key tile at every length, masked or not, d=64 or 128, spherical attention's too,
    so that its blocks' dK and dV leave through the consumers' shared memory; dK's and dV's
    kernel beside dQ's (no result along its stream) still loops where its stream is short,
    as the forward does."""
    from napkin_ir.attention_diagrams import gradient_passes
    from napkin_ir.plan.recipes.attention import persistent_pays

    def grad(kind: str, d: int, n: int = 4096, part: str = "qkv"):
        return run_pipeline(_text(kind, 1 if n > 4096 else 4, 2, n, n, d), gradient_passes(kind, part))

    for kind in ("softmax", "causal", "spherical"):
        for d in (64, 128):
            for n in (512, 1024, 4096, 16384):
                assert not persistent_pays(grad(kind, d, n)), (kind, d, n)
    assert persistent_pays(grad("causal", 128, 1024, "kv")) and persistent_pays(grad("softmax", 64, 1024, "kv"))
    assert persistent_pays(run_pipeline(_text("causal", 4, 2, 4096, 4096, 128)))


def test_sm90_gradients_kernels_at_d256_launch_a_block_a_tile():
    """persistent_pays: at head dims over 128 the gradient's kernels (dQ's, dK's and dV's,
    a kernel each) launch a block a tile at every length, masked or not, where their streams
    would have them loop; at d=128 dK's and dV's kernel beside dQ's still loops at 512
    keys, and the forward at d=256 where its stream is short."""
    from napkin_ir.attention_diagrams import gradient_passes
    from napkin_ir.plan.recipes.attention import persistent_pays

    def grad(kind: str, d: int, n: int, part: str):
        return run_pipeline(_text(kind, 16384 // n, 2, n, n, d), gradient_passes(kind, part))

    for kind in ("softmax", "causal"):
        for n in (512, 1024, 2048, 4096):
            for part in ("q", "k", "v"):
                assert not persistent_pays(grad(kind, 256, n, part)), (kind, n, part)
    assert persistent_pays(grad("causal", 128, 512, "kv")) and persistent_pays(grad("softmax", 128, 512, "kv"))
    assert persistent_pays(run_pipeline(_text("causal", 4, 2, 4096, 4096, 256)))


def test_sm90_spherical_gradients_one_kernel_streams_64_queries_at_d64():
    """added_stream: the softmax's gradient (its probabilities recomputed by exp) streams
    128 queries a tile at d=64; spherical attention's (divided by the norm) 64, where 128
    spill. The spec names the stream."""
    from napkin_ir.attention_diagrams import gradient_passes
    from napkin_ir.plan.recipes.attention import added_stream, sm90_passes

    def grad(kind: str, d: int):
        return run_pipeline(_text(kind, 4, 2, 4096, 4096, d), gradient_passes(kind, "qkv"))

    assert added_stream(grad("softmax", 64), 64) == 128 and added_stream(grad("causal", 64), 64) == 128
    assert added_stream(grad("spherical", 64), 64) == 64 and added_stream(grad("spherical", 128), 128) == 64
    assert 'stream="i:64"' in spec(sm90_passes(grad("spherical", 64)))
    assert 'stream="i:128"' in spec(sm90_passes(grad("softmax", 64)))


def test_sm90_softmax_gradient_at_d128_streams_80_queries_where_its_last_tile_pads_little():
    """added_stream at d=128: 80 queries a tile without a mask where the last tile pads the
    queries by at most 1/ADDED_PAD of them (16384 = 204 x 80 + 64: 16 over; 4096: 64 over;
    12000 = 150 x 80), else 64 (1000 = 12 x 80 + 40: 40 over; a causal mask; spherical
    attention's gradient)."""
    from napkin_ir.attention_diagrams import gradient_passes
    from napkin_ir.plan.recipes.attention import added_stream, sm90_passes

    def grad(kind: str, n: int):
        return run_pipeline(_text(kind, 1, 2, n, n, 128), gradient_passes(kind, "qkv"))

    assert added_stream(grad("softmax", 16384), 128) == 80 and added_stream(grad("softmax", 12000), 128) == 80
    assert added_stream(grad("softmax", 4096), 128) == 80 and added_stream(grad("causal", 16384), 128) == 64
    assert added_stream(grad("softmax", 1000), 128) == 64
    assert added_stream(grad("spherical", 16384), 128) == 64
    assert 'stream="i:80"' in spec(sm90_passes(grad("softmax", 16384)))


def test_sm90_softmax_gradients_are_softmax_to_the_stream_rules():
    """The softmax's gradient (no SoftmaxOp: its probabilities recomputed by exp) is a
    softmax to the recipe, causal or not; spherical attention's (divided by the norm) is
    not, and takes the spherical rules (64 queries a tile, `added_stream`)."""
    from napkin_ir.attention_diagrams import gradient_passes
    from napkin_ir.plan.recipes.attention import _softmax, _spherical_narrow

    def grad(kind: str, d: int):
        return run_pipeline(_text(kind, 1, 2, 16384, 16384, d), gradient_passes(kind, "qkv"))

    assert _softmax(grad("softmax", 128)) and _softmax(grad("causal", 128))
    assert not _softmax(grad("spherical", 128)) and _spherical_narrow(grad("spherical", 128), 128)
    assert not _spherical_narrow(grad("softmax", 128), 128)


def test_sm90_three_warpgroup_blocks_stay_a_block_a_tile():
    """persistent_pays: the 192-row default at d=64 launches a block a tile, where 128-row
    blocks of the same stream would loop."""
    from napkin_ir.plan.recipes.attention import default_rows, persistent_pays

    module = run_pipeline(_text("softmax", 1, 2, 4096, 4096, 64))
    assert default_rows(module) == 192 and not persistent_pays(module)
    assert persistent_pays(module, 128)


def test_sm90_gradient_kernels_take_two_warpgroups_and_no_resident_fragments_under_four_products():
    """The gradient's kernels at d=64 take 128 rows where the forward takes 192 (three
    warpgroups' 160 registers spill the recomputed scores beside the accumulators), and
    the kernel of dK and dV together (four products a tile) keeps K and V in shared
    memory, where dK's alone (three) loads them into registers."""
    from napkin_ir.plan.recipes.attention import default_rows, products, q_registers_pay

    def grad(part, d):
        pick = f'results="{",".join(str("qkv".index(c)) for c in part)}" cut="delta"'
        return run_pipeline(_text("softmax", 1, 2, 4096, 4096, d),
                            f'ncd-grad{{residuals=true}},ncd-fold-casts,ncd-extract{{function="attention_grad" {pick}}}')

    assert default_rows(run_pipeline(_text("softmax", 1, 2, 4096, 4096, 64))) == 192
    for part in ("q", "k", "v", "kv"):
        assert default_rows(grad(part, 64)) == 128
    assert [products(grad(p, 128)) for p in ("q", "k", "v", "kv")] == [3, 3, 2, 4]
    assert q_registers_pay(grad("k", 128)) and not q_registers_pay(grad("kv", 128))


@pytest.mark.parametrize("kind,d,n,options,want", [
    ("softmax", 128, 4096, {"q_registers": False}, (128, 176, 2, "tma")),  # Q in shared memory: 176 keys unmasked; room for a panel stage beside them
    ("softmax", 128, 4096, {}, (128, 128, 2, "tma")),  # napkin-sm90's default holds Q in registers there: 128 keys
    ("softmax", 64, 1000, {}, (128, 128, 3, "tma")),  # d=64 in 128 rows holds Q in registers too: 128 keys
    ("softmax", 64, 1000, {"q_registers": False}, (128, 176, 3, "tma")),
    ("spherical", 128, 4096, {"blocks_per_sm": 1, "stages": 2}, (128, 128, 2, "tma")),  # spherical at d=128: 128 keys
    ("softmax", 128, 4096, {"store": "direct", "q_registers": False}, (128, 176, 2, "direct")),
    ("spherical", 64, 1000, {}, (128, 128, 3, "tma")),
    ("spherical", 64, 1000, {"q_registers": False}, (128, 176, 3, "tma")),  # Q in shared memory: 176 keys and the panels both fit
    ("spherical", 64, 4096, {}, (192, 128, 3, "tma")),  # d=64, a long stream: three consumer warpgroups, 128 keys
    ("causal", 64, 8192, {}, (192, 128, 3, "tma")),  # a long masked stream too
    ("causal", 64, 4096, {}, (128, 128, 3, "tma")),  # not long enough under the mask
    ("softmax", 64, 4096, {"block": 128, "q_registers": False}, (128, 176, 3, "tma")),  # rows given: the wide tile again
    ("softmax", 64, 4096, {"block": 128}, (128, 128, 3, "tma")),  # and with Q in registers, 128 keys
    ("softmax", 256, 8192, {}, (128, 80, 2, "direct")),  # d=256, a long stream: 80 keys, stored from registers
    ("causal", 256, 4096, {}, (128, 64, 2, "tma")),  # not long under the mask
    ("spherical", 256, 8192, {}, (128, 64, 2, "tma")),  # spherical attention keeps 64 keys
    ("softmax", 256, 8192, {"store": "tma"}, (128, 80, 2, "tma")),  # TMA stores asked for: 80 keys, the output through Q's room
    ("causal", 256, 4096, {"persistent": True}, (128, 80, 2, "tma")),  # a persistent block (the default there): the same
    ("softmax", 256, 8192, {"persistent": True}, (128, 80, 2, "tma")),
    ("causal", 256, 2048, {"persistent": True}, (128, 64, 2, "tma")),  # short under the mask: 64 keys, the panels beside them
    ("spherical", 256, 4096, {"persistent": True}, (128, 64, 2, "tma")),  # spherical attention keeps 64 keys
    ("causal", 128, 4096, {}, (128, 128, 2, "tma")),  # masked: 128 keys, the panels beside two stages
    ("causal", 128, 8192, {"q_registers": False}, (128, 176, 2, "tma")),  # a long masked stream: the diagonal a small share
    ("softmax", 256, 2048, {}, (128, 64, 2, "tma")),
    ("softmax", 128, 150, {}, (128, 64, 3, "tma")),  # fewer keys than 176
    ("softmax", 128, 8192, {"block": 192}, (192, 176, 2, "direct")),  # a softmax keeps the wide tile over the panels
    ("spherical", 128, 8192, {"block": 192}, (192, 128, 2, "tma")),  # spherical attention takes the panels
    ("softmax", 64, 100, {"stream": 176}, (64, 64, 3, "tma")),  # narrowed to the keys: the powers of two below 176
    ("softmax", 64, 150, {"stream": 176}, (128, 128, 3, "tma")),
    ("softmax", 128, 4096, {"q_registers": True}, (128, 128, 2, "tma")),  # Q in registers: 128 keys
    ("causal", 128, 8192, {"q_registers": True}, (128, 128, 2, "tma")),
])
def test_sm90_default_tiles(kind, d, n, options, want):
    from napkin_ir.plan.recipes.attention import sm90_tiles

    block, stream, stages, _, store = sm90_tiles(run_pipeline(_text(kind, 1, 2, n, n, d)), **options)
    assert (block, stream, stages, store) == want


def test_sm90_packed_query_heads_store_by_tma():
    """A block of grouped-query attention that packs several query heads stores its output
    tile (heads by positions by columns) by TMA too, one box a panel, where it fits."""
    from napkin_ir.attention_diagrams import gqa_attention_diagram
    from napkin_ir.plan.recipes.attention import sm90_tiles

    *_, store = sm90_tiles(run_pipeline(gqa_attention_diagram("causal", 1, 2, 4, 1000, 64, "bf16")))
    assert store == "tma"
    *_, store = sm90_tiles(run_pipeline(gqa_attention_diagram("causal", 1, 2, 4, 1000, 96, "bf16")))
    assert store == "direct"  # 96 columns are not whole 64-column panels


