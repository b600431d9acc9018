"""The GEMM diagram through napkin-sm90 (TMA, mbarriers, warp-specialised wgmma) on the GPU.

Fresh random inputs, a NaN-poisoned output, a float64 reference; square, rectangular and
ragged shapes (M and N not multiples of the block tile, K not a multiple of the stream
tile), bf16 and f16, several tile configurations.
"""

import pytest
from checks import expect_close

from napkin_ir import reference
from napkin_ir.diagrams import gemm
from napkin_ir.pipelines import sm90_gemm_pipeline
from napkin_ir.plan.recipes.product_targets import SM90_TILES

pytestmark = pytest.mark.gpu

SHAPES = [(128, 256, 64), (512, 384, 256), (1000, 744, 520), (300, 264, 120), (2048, 1024, 1024), (4096, 4096, 4096), (8192, 8192, 2048)]
CONFIGS = [((128, 256, 64), 4), ((128, 128, 64), 5), ((64, 256, 64), 4), ((256, 128, 64), 4)]
LAUNCHES = [((128, 256, 64), 4, 8, 1), ((128, 256, 64), 3, 5, 1), ((64, 128, 64), 4, 0, 2), ((64, 128, 64), 4, 4, 2)]


def _need_sm90():
    from napkin_ir.runtime import get_context

    if get_context().compute_capability() < (9, 0):
        pytest.skip("needs an sm_90 GPU")


def run_sm90(torch, m, n, k, t, block=(128, 256, 64), stages=4, **launch):
    from napkin_ir.build import compile_kernel

    dt = torch.bfloat16 if t == "bf16" else torch.float16
    a = torch.randn(m, k, device="cuda").to(dt)
    b = torch.randn(k, n, device="cuda").to(dt)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=dt)
    compile_kernel(gemm(m, n, k, t), sm90_gemm_pipeline(block, stages, **launch))(a=a, b=b, out=c)
    torch.cuda.synchronize()
    out = c.float().cpu().numpy()
    ref = reference.matmul(a.float().cpu().numpy(), b.float().cpu().numpy())
    return out, ref


def run_compiled(torch, m, n, k, **options):
    """A bf16 GEMM compiled as napkin_ir.compile (and the torch op) compiles it: the recipe's
    defaults for whatever `options` leave out."""
    import napkin_ir

    a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    b = torch.randn(k, n, device="cuda").to(torch.bfloat16)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    napkin_ir.compile(gemm(m, n, k), "sm90", **options)(a=a, b=b, out=c)
    torch.cuda.synchronize()
    return c.float().cpu().numpy(), reference.matmul(a.float().cpu().numpy(), b.float().cpu().numpy())


@pytest.mark.parametrize("t", ["bf16", "f16"])
@pytest.mark.parametrize("shape", SHAPES)
def test_gemm_sm90_matches_float64(shape, t):
    torch = pytest.importorskip("torch")
    _need_sm90()
    expect_close(*run_sm90(torch, *shape, t), t)


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c[0][0]}x{c[0][1]}x{c[0][2]}s{c[1]}" if isinstance(c, tuple) else str(c))
@pytest.mark.parametrize("shape", [(1000, 744, 520), (2048, 2048, 1024)])
def test_gemm_sm90_configs(shape, config):
    torch = pytest.importorskip("torch")
    _need_sm90()
    expect_close(*run_sm90(torch, *shape, "bf16", *config), "bf16")


@pytest.mark.parametrize("tile", list(SM90_TILES), ids=lambda t: f"{t[0]}x{t[1]}")
@pytest.mark.parametrize("shape", [(1000, 1000, 1000), (200, 4104, 776)])
def test_gemm_sm90_every_tile_the_model_picks_from(shape, tile):
    """Each tile of product_targets.SM90_TILES (the model's choices), its blocks partial at
    the edges of ragged axes, through the default pipeline as the op compiles it."""
    torch = pytest.importorskip("torch")
    _need_sm90()
    if tile[0] > shape[0]:
        pytest.skip(f"a tile of {tile[0]} rows does not fit {shape[0]}")
    expect_close(*run_compiled(torch, *shape, block=(*tile, 64)), "bf16")


@pytest.mark.parametrize("shape", [(8192, 8192, 1024), (256, 4096, 4096), (100, 4096, 1000), (5000, 3000, 2056)])
def test_gemm_sm90_default_tiles(shape):
    """The model's own pick (no block given) at shapes where it is not 128 x 256."""
    torch = pytest.importorskip("torch")
    _need_sm90()
    expect_close(*run_compiled(torch, *shape), "bf16")


@pytest.mark.sanitize
@pytest.mark.parametrize("shape", [(300, 264, 120), (256, 512, 192)])
def test_gemm_sm90_small(shape):
    """Small enough for compute-sanitizer's memcheck, racecheck and synccheck."""
    torch = pytest.importorskip("torch")
    _need_sm90()
    expect_close(*run_sm90(torch, *shape, "bf16"), "bf16")


@pytest.mark.sanitize
@pytest.mark.parametrize("launch", [{}, {"store": "tma"}, {"group": 4, "persistent": True}], ids=["direct", "tma_store", "persistent"])
@pytest.mark.parametrize("m", [1, 3, 13, 60])
def test_gemm_sm90_decode_rows_short_box(m, launch):
    """A of fewer rows than the 64-row tile: its TMA copies bring m rounded up to 8 rows; the
    stage's rows past them hold whatever they held (stale, or never written on the first
    tile) and reach only output rows that are not stored."""
    torch = pytest.importorskip("torch")
    _need_sm90()
    expect_close(*run_sm90(torch, m, 392, 200, "bf16", (64, 128, 64), 3, **launch), "bf16")


@pytest.mark.parametrize("config", LAUNCHES, ids=lambda c: f"{c[0][0]}x{c[0][1]}x{c[0][2]}s{c[1]}g{c[2]}b{c[3]}")
@pytest.mark.parametrize("shape", [(1000, 744, 520), (2048, 1536, 512)])
def test_gemm_sm90_launch_orders(shape, config):
    """Grouped block order (ragged bands included) and two blocks per multiprocessor."""
    torch = pytest.importorskip("torch")
    _need_sm90()
    block, stages, group, per_sm = config
    expect_close(*run_sm90(torch, *shape, "bf16", block, stages, group=group, blocks_per_sm=per_sm), "bf16")


@pytest.mark.parametrize("stages", [3, 4])
@pytest.mark.parametrize("group", [0, 8])
@pytest.mark.parametrize("shape", [(1000, 744, 512), (2048, 1536, 1000), (4096, 4096, 4096), (3000, 2000, 520)])
def test_gemm_sm90_persistent(shape, group, stages):
    """Fewer blocks than tiles, each looping over tiles through the same mbarrier rings; the
    rings' steps count on across tiles whatever the stream's length (9 or 16 steps a tile
    against 3 or 4 stages)."""
    torch = pytest.importorskip("torch")
    _need_sm90()
    expect_close(*run_sm90(torch, *shape, "bf16", (128, 256, 64), stages, group=group, persistent=True), "bf16")


@pytest.mark.parametrize("block", [(128, 64, 64), (128, 192, 64)], ids=["one_panel", "three_panels"])
@pytest.mark.parametrize("shape", [(1000, 744, 520), (2048, 1536, 512)])
def test_gemm_sm90_persistent_odd_output_panels(shape, block):
    """TMA stores of 1 or 3 panels a tile: the first panel's stage is the one the last
    tile's last panel is stored from, so its write waits for every store."""
    torch = pytest.importorskip("torch")
    _need_sm90()
    expect_close(*run_sm90(torch, *shape, "bf16", block, 4, group=8, persistent=True, store="tma"), "bf16")


@pytest.mark.parametrize("config", [((128, 256, 64), 4), ((128, 128, 64), 5)], ids=["128x256", "128x128"])
@pytest.mark.parametrize("shape", [(1024, 744, 520), (512, 384, 256), (4096, 4096, 4096)])
def test_gemm_sm90_cluster_multicast(shape, config):
    """Pairs of blocks sharing B's tiles: each loads half the panels, multicast to both."""
    torch = pytest.importorskip("torch")
    _need_sm90()
    expect_close(*run_sm90(torch, *shape, "bf16", *config, group=0, cluster=2), "bf16")


@pytest.mark.parametrize("group", [0, 8])
@pytest.mark.parametrize("block", [(128, 256, 64), (128, 192, 64)], ids=["two_panels_each", "three_panels"])
@pytest.mark.parametrize("shape", [(1024, 744, 520), (3000, 7000, 1000), (2304, 1536, 512)])
def test_gemm_sm90_persistent_cluster(shape, block, group):
    """Persistent pairs of blocks: each cluster takes a pair of neighbouring tiles along the
    rows a turn (in bands of `group` block rows), both blocks the same turns, B's panels
    multicast (three panels: the first block loads two); more tiles than blocks at the
    larger shapes, so the rings run on across turns."""
    torch = pytest.importorskip("torch")
    _need_sm90()
    expect_close(*run_sm90(torch, *shape, "bf16", block, 4, group=group, cluster=2, persistent=True), "bf16")


def test_gemm_sm90_cluster_through_the_recipe():
    """napkin-sm90{cluster=2 persistent=true} runs its clusters persistent, in the recipe's
    group order."""
    torch = pytest.importorskip("torch")
    _need_sm90()
    expect_close(*run_compiled(torch, 3000, 7000, 1000, block=(128, 192, 64), cluster=2, persistent=True), "bf16")


@pytest.mark.sanitize
def test_gemm_sm90_persistent_cluster_small():
    torch = pytest.importorskip("torch")
    _need_sm90()
    expect_close(*run_sm90(torch, 512, 264, 120, "bf16", (128, 192, 64), 2, group=8, cluster=2, persistent=True), "bf16")


@pytest.mark.sanitize
def test_gemm_sm90_cluster_small():
    torch = pytest.importorskip("torch")
    _need_sm90()
    expect_close(*run_sm90(torch, 256, 264, 120, "bf16", (128, 256, 64), 2, group=0, cluster=2), "bf16")


EPILOGUES = [  # block, stages, launch options: the output through shared memory and TMA stores
    ((128, 256, 64), 4, {}), ((128, 256, 64), 4, {"group": 8, "persistent": True}), ((128, 128, 64), 5, {}),
    ((64, 256, 64), 4, {}), ((256, 128, 64), 3, {}), ((64, 128, 64), 4, {"group": 4, "blocks_per_sm": 2}),
    ((128, 256, 64), 4, {"group": 0, "cluster": 2}),
]


def _epilogue_cases():
    for shape in [(1024, 744, 520), (4096, 4096, 4096), (8192, 8192, 2048), (520, 264, 64)]:
        for block, stages, launch in EPILOGUES:
            if launch.get("cluster") and (-(-shape[0] // block[0])) % 2:
                continue  # a cluster of 2 needs an even number of row blocks
            name = f"{shape[0]}x{shape[1]}x{shape[2]}-{block[0]}x{block[1]}s{stages}" + "".join(f"-{k}{v}" for k, v in launch.items())
            yield pytest.param(shape, (block, stages, launch), id=name)


@pytest.mark.parametrize("shape, config", list(_epilogue_cases()))
def test_gemm_sm90_tma_store(shape, config):
    """stmatrix into a swizzled two-stage panel, TMA stores out (clipped at ragged edges)."""
    torch = pytest.importorskip("torch")
    _need_sm90()
    block, stages, launch = config
    for t in ("bf16", "f16"):
        expect_close(*run_sm90(torch, *shape, t, block, stages, store="tma", **launch), t)


@pytest.mark.sanitize
def test_gemm_sm90_tma_store_small():
    torch = pytest.importorskip("torch")
    _need_sm90()
    expect_close(*run_sm90(torch, 300, 264, 200, "bf16", (128, 256, 64), 3, group=2, persistent=True, store="tma"), "bf16")


@pytest.mark.sanitize
@pytest.mark.parametrize("shape", [(200, 136, 104), (8, 256, 128), (1000, 744, 520)])
def test_gemm_sm90_residual_small(shape):
    """A B + r (`gemm(residual=True)`), r a tile copied once beside the stream and read past
    it: ragged, few-row (swapped) and multi-tile persistent shapes; small enough for
    compute-sanitizer."""
    torch = pytest.importorskip("torch")
    _need_sm90()
    expect_close(*_run_residual(torch, *shape), "bf16")


@pytest.mark.parametrize("shape", [(4096, 4096, 4096), (2048, 3000, 1024)])
def test_gemm_sm90_residual(shape):
    """At the large tiles the residual's 64 KB takes a stage's room (`resident_elements`)."""
    torch = pytest.importorskip("torch")
    _need_sm90()
    expect_close(*_run_residual(torch, *shape), "bf16")


def _run_residual(torch, m, n, k):
    import napkin_ir

    a = torch.randn(m, k, device="cuda").to(torch.bfloat16)  # fresh: no seed
    b = torch.randn(k, n, device="cuda").to(torch.bfloat16)
    r = (torch.randn(m, n, device="cuda") * 8).to(torch.bfloat16)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    napkin_ir.compile(gemm(m, n, k, residual=True), "sm90", cache=False)(a=a, b=b, res=r, out=c)
    torch.cuda.synchronize()
    ref = reference.matmul(a.float().cpu().numpy(), b.float().cpu().numpy()) + r.double().cpu().numpy()
    return c.float().cpu().numpy(), ref
