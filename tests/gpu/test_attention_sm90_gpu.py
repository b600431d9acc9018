"""Attention on the GPU through every level on the sm_90a path (`napkin-sm90`: TMA stages
filled by a producer warpgroup, wgmma for Q K^T with Q from shared memory or from
registers, and from registers for P V): softmax, causal and spherical attention, head
dims 64, 128 and 256, bf16 and f16, sequence lengths the tiles divide and ragged ones,
fewer queries than a warpgroup's 64 rows (down to one), more keys than queries,
persistent grids (the default for short streams) and plain ones; and grouped-query
attention (4 and 8 query heads a group packed into a block: each K and V tile loaded once
for the group), against a float64 reference on fresh random inputs with a NaN-poisoned
output.

    python3 -m pytest -q tests/gpu/test_attention_sm90_gpu.py
"""

from __future__ import annotations

import pytest
from checks import expect_close

from napkin_ir import reference
from napkin_ir.attention_diagrams import GQA_NAMES, NAMES, attention_diagram, gqa_attention_diagram

pytestmark = pytest.mark.gpu

SHAPES = [  # b, h, n queries, n keys
    (2, 3, 1, 1),
    (2, 4, 256, 256),
    (1, 3, 1000, 1000),
    (2, 2, 77, 77),
    (1, 2, 4096, 4096),
]


def run_attention(torch, kind, b, h, n, nj, d, t, seed=0, late=1.0, **options):
    """The kernel's output and the float64 reference on random inputs, the last 100 keys
    scaled by `late` (scores that outgrow the rows' running max late in the stream)."""
    import napkin_ir

    dt = torch.bfloat16 if t == "bf16" else torch.float16
    kernel = napkin_ir.compile(attention_diagram(kind, b, h, n, d, t, n_keys=nj), target="sm90", cache=False, **options)
    g = torch.Generator(device="cuda").manual_seed(seed)
    q = torch.randn(b, h, n, d, device="cuda", generator=g).to(dt)
    k = torch.randn(b, h, nj, d, device="cuda", generator=g).to(dt)
    k[:, :, -100:] *= late
    v = torch.randn(b, h, nj, d, device="cuda", generator=g).to(dt)
    o = torch.full((b, h, n, d), float("nan"), device="cuda", dtype=dt)
    kernel(q=q, k=k, v=v, out=o, sync=True)
    out = o.float().cpu().numpy()
    ref = reference.REFERENCES[NAMES[kind]](*(x.double().cpu().numpy() for x in (q, k, v)))
    return out, ref


def check_attention(torch, kind, b, h, n, nj, d, t, **options) -> None:
    expect_close(*run_attention(torch, kind, b, h, n, nj, d, t, **options), t)


@pytest.mark.parametrize("t", ["bf16", "f16"])
@pytest.mark.parametrize("d", [64, 128, 256])
@pytest.mark.parametrize("kind", ["softmax", "causal", "spherical"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_attention_sm90_matches_float64(shape, kind, d, t):
    torch = pytest.importorskip("torch")
    check_attention(torch, kind, *shape, d, t)


@pytest.mark.parametrize("kind", ["softmax", "spherical"])
@pytest.mark.parametrize("d", [64, 128])
def test_attention_sm90_more_keys_than_queries(kind, d):
    torch = pytest.importorskip("torch")
    check_attention(torch, kind, 1, 2, 200, 333, d, "bf16")


@pytest.mark.parametrize("block", ["64,64", "64,128", "128,64", "128,128"])
@pytest.mark.parametrize("kind", ["softmax", "causal"])
def test_attention_sm90_blocks(kind, block):
    torch = pytest.importorskip("torch")
    check_attention(torch, kind, 1, 4, 1000, 1000, 128, "bf16", block=block)


@pytest.mark.parametrize("d,block", [(64, "64,128"), (128, "64,64")])
@pytest.mark.parametrize("kind", ["softmax", "causal", "spherical"])
def test_attention_sm90_two_blocks_a_multiprocessor(kind, d, block):
    torch = pytest.importorskip("torch")
    check_attention(torch, kind, 2, 3, 1000, 1000, d, "bf16", block=block, blocks_per_sm=2)


@pytest.mark.parametrize("kind,d", [("softmax", 64), ("causal", 64), ("spherical", 64), ("softmax", 256), ("causal", 256)])
def test_attention_sm90_long_stream_defaults(kind, d):
    """The default tiles of a long stream: three consumer warpgroups (192 query rows, 128
    keys a tile) at d=64, 80 keys a tile at d=256 (stored from registers); causal at 8192
    tokens, the others at 4096 and, with the tiles given, on a ragged 1000."""
    torch = pytest.importorskip("torch")
    n = 8192 if kind == "causal" else 4096
    check_attention(torch, kind, 1, 2, n, n, d, "bf16")
    check_attention(torch, kind, 2, 3, 1000, 1000, d, "bf16", block="192,128" if d == 64 else "128,80", stages=2)


@pytest.mark.parametrize("kind,n", [("softmax", 8192), ("causal", 16384)])
def test_attention_sm90_long_stream_d128(kind, n):
    """d=128 on a plain grid (8k keys, 16k under a mask): the trip waits for V after its row
    max (`reg-early-waits{at="max"}`; under the mask in the next trip, before the products
    that read it), the shorter streams' persistent blocks right after the scores' wait;
    against float64."""
    torch = pytest.importorskip("torch")
    check_attention(torch, kind, 1, 1, n, n, 128, "bf16")


@pytest.mark.sanitize
@pytest.mark.parametrize("kind,persistent", [("softmax", False), ("causal", False), ("causal", True)])
def test_attention_sm90_wait_before_the_products_small(kind, persistent):
    """V awaited in the next trip, just before the products that read it (FA4's order, the
    default under a causal mask at d=128 on a plain grid), over a ragged 700 tokens, on a
    plain grid and in persistent blocks (their phases run on from tile to tile)."""
    torch = pytest.importorskip("torch")
    check_attention(torch, kind, 1, 2, 700, 700, 128, "bf16", persistent=persistent, early_waits="products")


@pytest.mark.sanitize
@pytest.mark.parametrize("kind,d,persistent", [("softmax", 128, False), ("causal", 128, False), ("softmax", 64, False),
                                               ("causal", 64, True), ("spherical", 128, False)])
def test_attention_sm90_partial_sums_small(kind, d, persistent):
    """The running row sums kept as each lane's part, the quad's parts added once after the
    loops (`reg-partial-row-sums`; the default in a softmax forward up to d=128, asked for
    here so that spherical attention's runs it too), over a ragged 700 tokens, on a plain
    grid and in persistent blocks, small enough for the sanitizers."""
    torch = pytest.importorskip("torch")
    check_attention(torch, kind, 1, 2, 700, 700, d, "bf16", persistent=persistent, partial_sums=True)


@pytest.mark.sanitize
@pytest.mark.parametrize("kind,d,persistent,late", [("softmax", 128, False, 1.0), ("softmax", 128, False, 6.0), ("causal", 64, False, 1.0),
                                                    ("causal", 64, False, 6.0), ("causal", 128, True, 6.0), ("softmax", 64, True, 1.0)])
def test_attention_sm90_lazy_rescale_small(kind, d, persistent, late):
    """The running max kept until a row of a warp outgrows it by 2^8, the output's unit
    corrections skipped (`reg-lazy-rescale`; the default on long plain grids at d=128
    without a mask and d=64 under one, asked for here) over a ragged 700 tokens, on a plain
    grid and in persistent blocks; with the last 100 keys scaled by 6 the max moves late in
    the stream (by 8-40 log2 units), else it mostly stays. Small enough for the sanitizers."""
    torch = pytest.importorskip("torch")
    check_attention(torch, kind, 1, 2, 700, 700, d, "bf16", persistent=persistent, lazy_rescale=True, late=late)


@pytest.mark.sanitize
@pytest.mark.parametrize("kind", ["softmax", "causal"])
@pytest.mark.parametrize("d", [128, 256])
def test_attention_sm90_wait_after_the_max_small(kind, d):
    """The wait after the row max on a plain grid over a ragged 700 tokens (five tiles of 128
    keys and a part at d=128, ten of 64 and a part at d=256; asked for, since under a mask at
    d=128 the default waits before the products), small enough for the sanitizers."""
    torch = pytest.importorskip("torch")
    check_attention(torch, kind, 1, 2, 700, 700, d, "bf16", persistent=False, early_waits="max")


@pytest.mark.sanitize
@pytest.mark.parametrize("kind,d,block", [("softmax", 64, "192,128"), ("causal", 64, "192,128"), ("causal", 256, "128,80")])
def test_attention_sm90_long_stream_tiles_small(kind, d, block):
    """compute-sanitizer on the long-stream tiles over a short ragged stream: three
    consumer warpgroups (192 rows), and 80 keys a tile."""
    torch = pytest.importorskip("torch")
    check_attention(torch, kind, 1, 1, 300, 300, d, "bf16", block=block, stages=2)


@pytest.mark.sanitize
@pytest.mark.parametrize("kind,d,block", [("softmax", 256, "128,80"), ("causal", 256, "128,80"), ("softmax", 128, "128,128")])
def test_attention_sm90_out_through_shared_small(kind, d, block):
    """compute-sanitizer on a block of one tile storing its output from registers
    (store=direct): it leaves through the consumers' shared memory once they are past their
    reads of the stages, a warp's rows each, in whole lines; a ragged 300 rows."""
    torch = pytest.importorskip("torch")
    check_attention(torch, kind, 1, 2, 300, 300, d, "bf16", block=block, stages=2, persistent=False, store="direct")


@pytest.mark.parametrize("kind,persistent", [("softmax", True), ("causal", True), ("causal", False)])
def test_attention_sm90_out_from_q_room(kind, persistent):
    """The output by TMA from Q's room (80 keys a tile at d=256 leave no room for a panel
    stage): persistent blocks of several tiles each (Q refilled only once the output's
    store has read its room), and a plain grid; over a ragged 1000 tokens. Then the
    default at 4k under a mask (persistent, the same path)."""
    torch = pytest.importorskip("torch")
    check_attention(torch, kind, 2, 16, 1000, 1000, 256, "bf16", block="128,80", store="tma", persistent=persistent)
    if kind == "causal" and persistent:
        check_attention(torch, kind, 1, 2, 4096, 4096, 256, "bf16")


@pytest.mark.sanitize
@pytest.mark.parametrize("kind,persistent", [("softmax", True), ("causal", True), ("causal", False)])
def test_attention_sm90_out_from_q_room_small(kind, persistent):
    """compute-sanitizer on the output stored from Q's room, a ragged 300 rows."""
    torch = pytest.importorskip("torch")
    check_attention(torch, kind, 1, 2, 300, 300, 256, "bf16", block="128,80", store="tma", persistent=persistent)


@pytest.mark.parametrize("d,block", [(64, "64,128"), (128, "128,128"), (128, "64,64"), (256, "128,64")])
@pytest.mark.parametrize("kind", ["softmax", "causal", "spherical"])
def test_attention_sm90_persistent(kind, d, block):
    """A persistent grid: each block loops over query tiles (2 to 4 a block here, more
    tiles than the device holds blocks), refilling Q once the consumers release it; the
    rings run on across tiles whose key streams differ in length (causal, ragged)."""
    torch = pytest.importorskip("torch")
    check_attention(torch, kind, 2, 16, 1000, 1000, d, "bf16", block=block, persistent=True)


@pytest.mark.parametrize("persistent", [True, False])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("kind", ["softmax", "causal", "spherical"])
def test_attention_sm90_q_registers(kind, d, persistent):
    """Q in registers (`q_registers=true`, the default of a softmax at d=128): each warp's
    16 rows loaded from Q's swizzled panels by ldmatrix once a tile, S = Q K^T by wgmma
    with A from them; a persistent block loads them again for each of its query tiles.
    Ragged, and the old route at d=128 (Q in shared memory, 176 keys) beside it."""
    torch = pytest.importorskip("torch")
    check_attention(torch, kind, 2, 16, 1000, 1000, d, "bf16", q_registers=True, persistent=persistent)
    if d == 128 and kind != "spherical":
        check_attention(torch, kind, 2, 3, 1000, 1000, d, "f16", q_registers=False, persistent=persistent)


@pytest.mark.sanitize
@pytest.mark.parametrize("kind", ["softmax", "causal"])
def test_attention_sm90_q_registers_small(kind):
    """compute-sanitizer on Q in registers: d=128, a persistent grid over a ragged 300."""
    torch = pytest.importorskip("torch")
    check_attention(torch, kind, 1, 4, 300, 300, 128, "bf16", q_registers=True, persistent=True)


@pytest.mark.parametrize("d", [64, 128, 256])
@pytest.mark.parametrize("kind", ["softmax", "causal", "spherical"])
def test_attention_sm90_plain_grid(kind, d):
    """A block a query tile (`persistent=false`), where the default would loop: ragged."""
    torch = pytest.importorskip("torch")
    check_attention(torch, kind, 2, 3, 1000, 1000, d, "bf16", persistent=False)


@pytest.mark.parametrize("persistent", [True, False])
@pytest.mark.parametrize("d", [64, 128, 256])
@pytest.mark.parametrize("kind", ["softmax", "causal", "spherical"])
def test_attention_sm90_tma_store(kind, d, persistent):
    """The output by stmatrix and TMA stores (`store=tma`): rows past a ragged sequence's
    end clipped by the TMA; a persistent block's stores run on under its next tile."""
    torch = pytest.importorskip("torch")
    check_attention(torch, kind, 2, 16, 1000, 1000, d, "bf16", store="tma", persistent=persistent)


@pytest.mark.sanitize
@pytest.mark.parametrize("kind", ["softmax", "causal"])
def test_attention_sm90_tma_store_small(kind):
    torch = pytest.importorskip("torch")
    check_attention(torch, kind, 1, 4, 300, 300, 64, "bf16", block="64,64", store="tma")


@pytest.mark.parametrize("store", ["direct", "tma"])
@pytest.mark.parametrize("block", ["128,128", "128,176", "128,48"])
@pytest.mark.parametrize("kind", ["softmax", "causal", "spherical"])
def test_attention_sm90_two_stages_overlapped(kind, block, store):
    """Two stages with overlap and ping-pong: K and V released on rings of their own, the
    producer refills K's part of a stage while P V still reads the V beside it; key tiles
    of 128, 176 and 48 (not powers of two: the last tile partial), either store."""
    torch = pytest.importorskip("torch")
    check_attention(torch, kind, 2, 8, 1000, 1000, 64, "bf16", block=block, stages=2, store=store)


@pytest.mark.parametrize("kind", ["softmax", "causal", "spherical"])
def test_attention_sm90_wide_tiles_one_panel_stage(kind):
    """176 keys a tile at d=128 with TMA stores through one panel stage (two do not fit
    beside them): each panel waits for the store before it; a persistent block's too."""
    torch = pytest.importorskip("torch")
    for persistent in (False, True):
        check_attention(torch, kind, 2, 8, 1000, 1000, 128, "bf16", block="128,176", store="tma", persistent=persistent)


@pytest.mark.sanitize
@pytest.mark.parametrize("kind", ["softmax", "causal"])
def test_attention_sm90_two_stages_small(kind):
    """compute-sanitizer on two overlapped stages of 176 keys, a ragged last tile."""
    torch = pytest.importorskip("torch")
    check_attention(torch, kind, 1, 2, 300, 300, 64, "bf16", block="128,176", stages=2)


@pytest.mark.parametrize("kind", ["softmax", "causal"])
def test_attention_sm90_persistent_two_blocks_a_multiprocessor(kind):
    torch = pytest.importorskip("torch")
    check_attention(torch, kind, 2, 16, 1000, 1000, 128, "f16", block="64,64", blocks_per_sm=2, persistent=True)


@pytest.mark.sanitize
@pytest.mark.parametrize("kind", ["causal", "spherical"])
def test_attention_sm90_persistent_small(kind):
    """compute-sanitizer on a persistent grid (a few tiles a block on a ragged sequence)."""
    torch = pytest.importorskip("torch")
    check_attention(torch, kind, 1, 4, 300, 300, 64, "bf16", block="64,64", persistent=True)


@pytest.mark.sanitize
@pytest.mark.parametrize("kind", ["softmax", "causal", "spherical"])
def test_attention_sm90_small(kind):
    """Small enough for compute-sanitizer: ragged queries and keys (zero-filled TMA rows,
    skipped and masked tiles)."""
    torch = pytest.importorskip("torch")
    check_attention(torch, kind, 1, 1, 200, 200, 64, "bf16", block="128,64")


@pytest.mark.parametrize("kind,n,nj", [("softmax", 10, 10), ("causal", 10, 10), ("spherical", 33, 300), ("softmax", 1, 500),
                                       ("causal", 63, 63)])
@pytest.mark.parametrize("d", [64, 128, 256])
def test_attention_sm90_fewer_queries_than_a_warpgroup(kind, n, nj, d):
    """One partial tile of 64 query rows: Q's rows past the sequence arrive as zeros from
    the TMA and are not stored; keys fewer than a tile are masked."""
    torch = pytest.importorskip("torch")
    check_attention(torch, kind, 2, 3, n, nj, d, "bf16")


@pytest.mark.sanitize
@pytest.mark.parametrize("kind", ["softmax", "causal"])
def test_attention_sm90_one_query_small(kind):
    """compute-sanitizer on one query and one key: a tile of 64 rows over a sequence of 1."""
    torch = pytest.importorskip("torch")
    check_attention(torch, kind, 1, 1, 1, 1, 64, "bf16")


def run_gqa(torch, kind, b, g, r, n, d, t, seed=0, **options):
    """Grouped-query attention: Q [b, g, r, n, d] (r query heads a group), K and V
    [b, g, n, d] shared by the group's heads."""
    import napkin_ir

    dt = torch.bfloat16 if t == "bf16" else torch.float16
    kernel = napkin_ir.compile(gqa_attention_diagram(kind, b, g, r, n, d, t), target="sm90", cache=False, **options)
    gen = torch.Generator(device="cuda").manual_seed(seed)
    q = torch.randn(b, g, r, n, d, device="cuda", generator=gen).to(dt)
    k = torch.randn(b, g, n, d, device="cuda", generator=gen).to(dt)
    v = torch.randn(b, g, n, d, device="cuda", generator=gen).to(dt)
    o = torch.full((b, g, r, n, d), float("nan"), device="cuda", dtype=dt)
    kernel(q=q, k=k, v=v, out=o, sync=True)
    out = o.float().cpu().numpy()
    ref = reference.REFERENCES[GQA_NAMES[kind]](*(x.double().cpu().numpy() for x in (q, k, v)))
    return out, ref


def check_gqa(torch, kind, b, g, r, n, d, t, **options) -> None:
    expect_close(*run_gqa(torch, kind, b, g, r, n, d, t, **options), t)


@pytest.mark.parametrize("t", ["bf16", "f16"])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("r", [4, 8])
@pytest.mark.parametrize("n", [77, 1000, 4096])
@pytest.mark.parametrize("kind", ["softmax", "causal", "spherical"])
def test_gqa_attention_sm90_matches_float64(kind, n, r, d, t):
    """A group's query heads packed into a block (4 heads by 32 positions, 8 by 16): the 5-D
    TMA box of Q, the causal mask and the ragged rows by each row's own position, the
    stores at each warp's head."""
    torch = pytest.importorskip("torch")
    check_gqa(torch, kind, 2, 2, r, n, d, t)


@pytest.mark.parametrize("kind,r,n", [("causal", 8, 1), ("softmax", 4, 10), ("causal", 16, 300), ("causal", 3, 200),
                                      ("spherical", 6, 129)])
def test_gqa_attention_sm90_short_and_odd_groups(kind, r, n):
    """Fewer queries than a block's positions (64 rows: 4 heads of 8 a block, the group over
    two blocks), a group larger than a block holds, and groups that do not divide a
    block's rows into whole warps (one head a block, or two)."""
    torch = pytest.importorskip("torch")
    check_gqa(torch, kind, 1, 3, r, n, 64, "bf16")


@pytest.mark.parametrize("kind", ["softmax", "causal"])
def test_gqa_attention_sm90_persistent(kind):
    torch = pytest.importorskip("torch")
    check_gqa(torch, kind, 2, 8, 4, 1000, 128, "bf16", persistent=True)


@pytest.mark.sanitize
@pytest.mark.parametrize("kind", ["softmax", "causal", "spherical"])
def test_gqa_attention_sm90_small(kind):
    """Small enough for compute-sanitizer: 4 heads a block over a ragged sequence."""
    torch = pytest.importorskip("torch")
    check_gqa(torch, kind, 1, 2, 4, 77, 64, "bf16")
