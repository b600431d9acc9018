"""Grouped-query attention keeps its numbers at every level on the CPU: the diagram (K and V
broadcast over the query heads of their group by name) against napkin_ir/reference.py,
and the hbm and smem levels with a block tile of a whole group of query heads by a tile
of query positions (the rows of one block: r x i), on sequence lengths the tiles do not
divide, against the diagram's interpreter and the reference."""

from __future__ import annotations

import numpy as np
import pytest

from napkin_ir import reference
from napkin_ir.attention_diagrams import GQA_NAMES, gqa_attention_diagram
from napkin_ir.interpreters.run import find_entry
from napkin_ir.passmanager import run_pipeline

KINDS = ["softmax", "causal", "spherical"]


def _labels(r_tile: int, i_tile: int, stream: int) -> str:
    return f'ncd-relabel{{grid="b,g,r:{r_tile},i:{i_tile}" stream="j:{stream}"}},ncd-to-hbm'


def _check(kind: str, got: np.ndarray, inputs, dtype: str = "bf16") -> None:
    assert not np.isnan(got).any()
    assert reference.relative_error(got, reference.REFERENCES[GQA_NAMES[kind]](*inputs)) <= reference.TOLERANCE[dtype]


@pytest.mark.parametrize("kind", KINDS)
def test_the_diagram_matches_the_reference(kind):
    text = gqa_attention_diagram(kind, 2, 2, 3, 20, 16, n_keys=20 if kind == "causal" else 33)
    diagram = find_entry(run_pipeline(text))
    inputs = diagram.random_inputs(1)
    _check(kind, diagram.run(inputs)[0], inputs)


def test_the_reference_is_attention_with_k_and_v_repeated_over_the_group():
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((1, 2, 4, 9, 8)), rng.standard_normal((1, 2, 11, 8)), rng.standard_normal((1, 2, 11, 8))
    want = reference.attention(q.reshape(1, 8, 9, 8), np.repeat(k, 4, axis=1), np.repeat(v, 4, axis=1)).reshape(q.shape)
    np.testing.assert_allclose(reference.gqa_attention(q, k, v), want, rtol=1e-12)


# (kind, query heads a group, n queries, n keys, r tile, i tile, stream tile, stages): the
# group whole in a block (r x i rows), ragged queries and keys, one head a block, a causal
# block whose rows end inside a stream tile
CASES = [
    ("softmax", 4, 77, 50, 4, 16, 32, 2),
    ("causal", 4, 77, 77, 4, 16, 32, 3),
    ("causal", 2, 40, 40, 2, 32, 16, 3),
    ("causal", 4, 50, 50, 1, 32, 32, 2),
    ("spherical", 8, 33, 70, 8, 16, 32, 2),
]


@pytest.mark.parametrize("kind,r,n,nj,rt,it,tj,stages", CASES)
def test_hbm_and_smem_levels_equal_the_diagram(kind, r, n, nj, rt, it, tj, stages):
    text = gqa_attention_diagram(kind, 1, 2, r, n, 32, n_keys=nj)
    diagram = find_entry(run_pipeline(text))
    hbm_level = find_entry(run_pipeline(text, _labels(rt, it, tj)))
    smem_level = find_entry(run_pipeline(text, f"{_labels(rt, it, tj)},hbm-to-smem{{stages={stages} layout=pad8}}"))
    inputs = diagram.random_inputs(n + nj)
    got = smem_level.run(inputs)[0]
    np.testing.assert_array_equal(got, hbm_level.run(inputs)[0])
    assert reference.relative_error(got, diagram.run(inputs)[0]) <= reference.TOLERANCE["bf16"]
    _check(kind, got, inputs)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("store", ["direct", "tma"])
def test_tma_smem_level_with_the_group_in_one_block(kind, store):
    # Q's tile is the group's 4 heads by 32 positions: one TMA box of r x i x d; so is each
    # panel of the output with store=tma (the last block's positions past 77 clipped)
    text = gqa_attention_diagram(kind, 1, 2, 4, 77, 128)
    module = run_pipeline(text, f"{_labels(4, 32, 64)},hbm-to-smem{{stages=2 copy=tma store={store}}}")
    assert ("smem.tma_store" in str(module)) == (store == "tma")
    smem_level = find_entry(module)
    inputs = smem_level.random_inputs(5)
    _check(kind, smem_level.run(inputs)[0], inputs)


@pytest.mark.parametrize("kind", KINDS)
def test_sm90_stores_a_group_by_tma(kind):
    # the output's panels are the block's 4 heads by 32 positions by 64 columns, each warp
    # writing the rows of its head (stmatrix), then one 5-D TMA box a panel
    from napkin_ir.plan.recipes.attention import sm90_passes
    from napkin_ir.passmanager import spec

    text = gqa_attention_diagram(kind, 1, 2, 4, 77, 128)
    passes = sm90_passes(run_pipeline(text), store="tma")[:-1]
    module = run_pipeline(text, spec(passes))
    assert "!smem.buffer<b=1, g=1, r=4, i=32, d=64 : bf16, stages=2, layout=swizzle>" in str(module)
    assert str(module).count("reg.stmatrix") == 2
    reg_level = find_entry(module)
    inputs = reg_level.random_inputs(7)
    _check(kind, reg_level.run(inputs)[0], inputs)


# (kind, query heads a group, n queries, n keys, r tile, i tile, stream tile, warps): warps
# that hold a query head each (the fragments lack r), two warps a head, one head a block
REG_CASES = [
    ("softmax", 4, 77, 50, 4, 16, 32, "r:4,i:1"),
    ("causal", 4, 77, 77, 4, 32, 32, "r:4,i:2"),
    ("causal", 8, 40, 40, 8, 16, 16, "r:8,i:1"),
    ("spherical", 2, 33, 70, 2, 32, 32, "r:2,i:1"),
    ("causal", 4, 50, 50, 1, 32, 32, "i:2"),
]


@pytest.mark.parametrize("kind,r,n,nj,rt,it,tj,warps", REG_CASES)
def test_reg_level_equals_smem_level(kind, r, n, nj, rt, it, tj, warps):
    text = gqa_attention_diagram(kind, 1, 2, r, n, 32, n_keys=nj)
    smem_pipeline = f"{_labels(rt, it, tj)},hbm-to-smem{{stages=2 layout=pad8}}"
    smem_level = find_entry(run_pipeline(text, smem_pipeline))
    reg_level = find_entry(run_pipeline(text, f'{smem_pipeline},smem-to-reg{{warps="{warps}"}}'))
    inputs = smem_level.random_inputs(n * nj)
    got, want = reg_level.run(inputs)[0], smem_level.run(inputs)[0]
    np.testing.assert_allclose(got, want, rtol=2**-7, atol=2**-7 * np.abs(want).max())
    _check(kind, got, inputs)


@pytest.mark.parametrize("kind,r,n,nj,d,q_registers", [("softmax", 4, 77, 130, 64, False), ("causal", 4, 77, 77, 64, False),
                                                       ("causal", 8, 45, 45, 128, False), ("spherical", 8, 20, 33, 64, False),
                                                       ("softmax", 4, 77, 130, 128, True), ("causal", 8, 45, 45, 128, True),
                                                       ("causal", 4, 77, 77, 64, True), ("spherical", 8, 20, 33, 64, True)])
def test_wgmma_reg_level_with_overlap_and_pingpong(kind, r, n, nj, d, q_registers):
    # 128 rows a block: r heads by 128 / r positions, two consumer warpgroups taking turns,
    # each tile's P V under the next tile's scores; with Q in registers, each warp's 16 rows
    # of one head loaded from the packed tile
    text = gqa_attention_diagram(kind, 1, 2, r, n, d, n_keys=nj)
    pipeline = (f"{_labels(r, 128 // r, 64)},hbm-launch{{order=last}},hbm-to-smem{{stages=3 copy=tma}},"
                f"smem-to-reg{{mma=wgmma a_registers={str(q_registers).lower()}}},reg-wgmma-overlap,reg-pingpong")
    module = run_pipeline(text, pipeline)
    assert f"reg.warps = #hbm.labels<r={r}, i={128 // r // 16}>" in str(module)
    assert ("reg.ldmatrix" in str(module)) == q_registers
    reg_level = find_entry(module)
    inputs = reg_level.random_inputs(n + d)
    _check(kind, reg_level.run(inputs)[0], inputs)


def test_attention_axes_of_grouped_query_attention():
    from napkin_ir.attention_diagrams import attention_diagram
    from napkin_ir.plan.diagram import AttentionAxes, attention_axes

    for kind in KINDS:
        axes = attention_axes(run_pipeline(gqa_attention_diagram(kind, 1, 2, 4, 64, 64)))
        assert axes == AttentionAxes(("b", "g"), "i", "j", ("r",), masked=kind == "causal")
    assert attention_axes(run_pipeline(attention_diagram("causal", 1, 2, 64, 64))) == AttentionAxes(("b", "h"), "i", "j", (), masked=True)


def test_group_tiles_pack_whole_warps_of_one_head():
    from napkin_ir.plan.recipes.attention import group_tiles

    assert group_tiles(4, 128) == (4, 32)
    assert group_tiles(8, 128) == (8, 16)
    assert group_tiles(16, 128) == (8, 16)  # half the group a block: 16 positions of 8 heads
    assert group_tiles(8, 64) == (4, 16)
    assert group_tiles(3, 128) == (1, 128)  # 3 heads do not divide the rows: one head a block
    assert group_tiles(6, 128) == (2, 64)
    assert group_tiles(1, 128) == (1, 128)
    assert group_tiles(4, 128, warps=4) == (4, 32)  # a warp a head
    assert group_tiles(4, 128, warps=2) == (2, 64)


# (kind, query heads a group, n queries, n keys, d): 4 and 8 heads a block, ragged queries
# and keys, fewer queries than a block's positions (down to one), a group split over blocks
SM90_CASES = [("causal", 4, 77, 77, 64), ("softmax", 8, 45, 130, 128), ("spherical", 4, 20, 33, 64), ("causal", 8, 1, 1, 64),
              ("causal", 16, 40, 40, 64), ("softmax", 3, 50, 50, 64)]


@pytest.mark.parametrize("kind,r,n,nj,d", SM90_CASES)
def test_sm90_pass_list_keeps_the_numbers(kind, r, n, nj, d):
    """napkin-sm90's passes for grouped-query attention, all but reg-to-ptx, on the CPU:
    the group's heads packed into a block, overlap and ping-pong where they run."""
    from napkin_ir.plan.recipes.attention import group_tiles, sm90_passes
    from napkin_ir.passmanager import spec

    text = gqa_attention_diagram(kind, 1, 2, r, n, d, n_keys=nj)
    passes = sm90_passes(run_pipeline(text))[:-1]
    block = 128 if group_tiles(r, 128)[1] <= n else 64
    heads, rows = group_tiles(r, block)
    assert f'grid="b,g,r:{heads},i:{rows}"' in spec(passes)
    reg_level = find_entry(run_pipeline(text, spec(passes)))
    inputs = reg_level.random_inputs(n + nj + d)
    _check(kind, reg_level.run(inputs)[0], inputs)


@pytest.mark.parametrize("kind,r,n,nj", [("softmax", 4, 100, 130), ("causal", 8, 100, 100), ("spherical", 4, 60, 90)])
def test_three_warpgroup_blocks_of_packed_heads_keep_the_numbers(kind, r, n, nj):
    # napkin-sm90's tile at d=64 on a long stream, here on a short ragged one: 192 rows, four
    # heads of the group by 48 positions (eight do not leave whole warps' rows), three
    # consumer warpgroups taking turns; the register level run on the CPU against float64
    from napkin_ir.plan.recipes.attention import sm90_passes
    from napkin_ir.passmanager import spec

    text = gqa_attention_diagram(kind, 1, 2, r, n, 64, n_keys=nj)
    passes = sm90_passes(run_pipeline(text), block=192, stream=64, stages=2, store="direct")[:-1]
    module = run_pipeline(text, spec(passes))
    assert "reg.warps = #hbm.labels<r=4, i=3>" in str(module) and "reg.ldmatrix" not in str(module)
    reg_level = find_entry(module)
    inputs = reg_level.random_inputs(n + nj)
    _check(kind, reg_level.run(inputs)[0], inputs)


@pytest.mark.parametrize("kind,n,rows", [("softmax", 4096, 192), ("causal", 8192, 192), ("causal", 4096, 128),
                                         ("softmax", 1024, 128)])
def test_packed_heads_take_three_warpgroups_on_a_long_stream(kind, n, rows):
    from napkin_ir.plan.recipes.attention import default_rows, persistent_pays, q_registers_pay

    module = run_pipeline(gqa_attention_diagram(kind, 1, 2, 4, n, 64))
    assert default_rows(module) == rows
    # three warpgroups launch a block a tile and keep Q in shared memory; two hold it in registers
    assert q_registers_pay(module) == (rows == 128)
    if rows == 192:
        assert not persistent_pays(module)
