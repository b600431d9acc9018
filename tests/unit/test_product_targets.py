"""The napkin model's count of napkin-sm90's GEMM plans (product_targets.sm90_time, sm90_plans):
whole waves, padding past the edges, the tile's rate and loads, and what a split costs."""

from napkin_ir.plan.recipes.product_targets import (MULTIPROCESSORS, SM90_TILES, cluster_for, l2_bytes, sm90_block, sm90_plans, sm90_swaps,
                                                    sm90_time, swapped_tiles)


def test_a_partial_last_wave_costs_a_whole_one():
    one = sm90_time(128 * MULTIPROCESSORS, 256, 8192, (128, 256))
    assert sm90_time(128 * (MULTIPROCESSORS + 1), 256, 8192, (128, 256)) > 1.9 * one  # one tile more: a second wave
    assert sm90_time(128 * MULTIPROCESSORS - 5, 256, 8192, (128, 256)) == one  # the last tile padded: no less


def test_more_waves_of_a_smaller_tile_can_win():
    # 1000 x 14336: 448 tiles of 128 x 256 are 3.4 waves, rounded up to 4; 896 of 128 x 128 are
    # 6.8 waves, rounded up to 7, each half as long
    assert sm90_time(1000, 14336, 4096, (128, 128)) < sm90_time(1000, 14336, 4096, (128, 256))
    assert sm90_block(1000, 14336, 4096, swapped=False) == (128, 128, 64)
    assert sm90_block(4096, 4096, 4096) == (128, 256, 64)  # 512 tiles: 3.9 waves


def test_swapped_tiles_make_whole_waves_of_a_ragged_m():
    # 5000 x 4096: 640 tiles of 128 x 256 are 4.85 waves; 33 x 32 = 1056 swapped tiles of 152 x 128 are 8.0
    assert sm90_block(5000, 4096, 14336) == (152, 128, 64) and sm90_swaps((152, 128))
    assert sm90_time(5000, 4096, 14336, (152, 128)) < sm90_time(5000, 4096, 14336, (128, 256))
    assert not sm90_swaps((128, 256)) and not sm90_swaps((128, 128)) and sm90_swaps((256, 128)) and sm90_swaps((100, 64))
    assert all(t[0] % 8 == 0 and t[0] <= 1000 and t[1] == 128 for t in swapped_tiles(1000, 4096))
    assert swapped_tiles(1000, 64) == [] and swapped_tiles(128, 4096) == []  # no swapped tile past N, nor at 128 rows
    assert swapped_tiles(256, 8192) == [(256, 128)]  # 136 to 248 rows take two row tiles, as 128 do: padding alone
    assert sm90_block(256, 8192, 8192) == (128, 128, 64)
    assert all(t in SM90_TILES for _, t, _ in sm90_plans(5000, 4096, 14336, swapped=False))


def test_clusters_take_the_tile_of_whole_waves_with_pairs_of_row_tiles():
    # 3000 x 7000 x 1000: 12 x 55 = 660 swapped tiles of 256 x 128, 5.0 waves; 128 x 256 make 5.09
    assert cluster_for(3000, 7000, 1000) == {"block": (256, 128, 64), "cluster": 2, "swap": True}
    assert cluster_for(5000, 3000, 2056) == {"block": (232, 128, 64), "cluster": 2, "swap": True}  # 22 x 24: 4.0 waves
    for shape in ((2100, 7000, 1000), (3000, 7000, 2000), (4096, 4096, 2048)):
        c = cluster_for(*shape)
        assert c is not None and -(-shape[0] // c["block"][0]) % 2 == 0  # pairs of neighbouring row tiles
    assert cluster_for(3000, 7000, 4096) is None and cluster_for(1000, 7000, 1000) is None


def test_loads_bound_small_outputs_to_small_tiles():
    # 256 x 4096: 64 tiles of 128 x 128 leave half the SMs idle while each loads its operands
    assert sm90_block(256, 4096, 4096) == (64, 128, 64)


def test_plans_fit_their_axes_and_come_fastest_first():
    plans = sm90_plans(100, 4096, 14336, split=True)
    assert all(tile[0] <= 104 and tile[1] <= 4096 and (tile in SM90_TILES or sm90_swaps(tile)) for _, tile, _ in plans)
    assert all(tile[0] <= 100 for _, tile, _ in plans if not sm90_swaps(tile))  # a swapped tile's rows: M rounded up to 8
    assert [t for t, _, _ in plans] == sorted(t for t, _, _ in plans)
    assert any(parts > 1 for _, _, parts in plans)
    assert all(parts == 1 for _, _, parts in sm90_plans(100, 4096, 14336))  # no split unless asked


def test_a_split_pays_only_where_blocks_are_idle():
    long = sm90_plans(128, 4096, 28672, split=True)[0]
    assert long[2] > 1  # 64 tiles of 64 x 128 over 132 SMs, a long contraction
    assert all(p == 1 for _, _, p in sm90_plans(4096, 4096, 4096, split=True))  # 512 tiles: no split tried
    assert sm90_plans(128, 4096, 4096, split=True)[0][2] == 1  # 128 tiles of 64 x 64 already fill the SMs


def test_under_128_rows_one_swapped_tile_of_m_rounded_to_8():
    # 72 rows: one swapped tile of 72 (by 64 or 128 columns) where 64-row tiles take two, the
    # second mostly padding (72x4096x4096: 10.7 us against 19.3 in 64 x 64, H200, 2026-11-29)
    assert swapped_tiles(100, 4096) == [(104, 64), (104, 128)] and swapped_tiles(100, 64) == [(104, 64)]
    assert swapped_tiles(64, 4096) == [] and swapped_tiles(60, 4096) == []  # one 64-row tile already
    assert sm90_block(72, 4096, 4096) == (72, 64, 64) and sm90_swaps((72, 64))


def test_of_plans_timed_alike_the_one_loading_fewer_l2_bytes_comes_first():
    # 72x14336x4096 is bound by DRAM in 64 x 256, 72 x 64 and 72 x 128 swapped alike; 72 x 128
    # loads the fewest bytes from the L2 (B once, A's 72 rows a block)
    times = {tile: sm90_time(72, 14336, 4096, tile) for tile in ((64, 256), (72, 64), (72, 128))}
    assert max(times.values()) == min(times.values())
    assert l2_bytes(72, 14336, 4096, (72, 128)) < min(l2_bytes(72, 14336, 4096, t) for t in ((64, 256), (72, 64)))
    assert sm90_block(72, 14336, 4096) == (72, 128, 64)


def test_a_split_in_two_runs_as_a_cluster_where_it_was_measured_faster():
    """Two parts form a cluster (their sums added in shared memory) where the tile takes M in
    one row tile or has 128 rows or more; 64-row tiles over several row tiles, and more
    parts, keep the global scratch. The op tries the cluster first, then the same split
    through the scratch, then the tile unsplit."""
    from napkin_ir.plan.recipes.product_targets import gemm_candidates, split_cluster

    assert split_cluster(64, (64, 64, 64), 2) and split_cluster(1, (64, 128, 64), 2) and split_cluster(256, (128, 128, 64), 2)
    assert not split_cluster(128, (64, 128, 64), 2) and not split_cluster(64, (64, 64, 64), 4)
    first, second, third = gemm_candidates(64, 4096, 4096, (9, 0), split=True)[:3]
    assert first == ("sm90", {"block": second[1]["block"], "split": 2, "cluster": 2})
    assert second == ("sm90", {"block": first[1]["block"], "split": 2}) and "split" not in third[1]
    assert all("cluster" not in o for _, o in gemm_candidates(128, 4096, 14336, (9, 0), split=True) if o.get("split"))
    assert all("cluster" not in o for _, o in gemm_candidates(64, 4096, 4096, (9, 0)))  # no split asked: none
