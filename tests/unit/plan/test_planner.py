"""The planner and its recipes: which family recognises a diagram, the typed plan each
gives on each target, and the target and dtype facts the plans are built from."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.utils.exceptions import PassFailedException

import napkin_ir
from napkin_ir.attention_diagrams import attention_diagram, gqa_attention_diagram
from napkin_ir.diagrams import gemm
from napkin_ir.passmanager import run_pipeline, spec
from napkin_ir.plan.kernel_plan import CopyEngine, KernelPlan, LaunchOrder, ProductEngine, SmemLayout, StorePath
from napkin_ir.plan.planner import plan_kernel, recipe_for
from napkin_ir.plan.request import request
from napkin_ir.target import BF16, F16, F32, SM80, SM90, Engine, dtype, target

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _req(pipeline: str = "napkin-sm90", **options):
    return request(pipeline, options, {k: None for k in options})


@pytest.mark.parametrize("text,family", [
    (gemm(512, 256, 128), "products"),
    (gemm(512, 256, 128, batch=2, b_nk=True), "products"),
    (gemm(512, 256, 128, bias="n", relu=True), "products"),
    (attention_diagram("causal", 1, 2, 256, 64), "attention"),
    (gqa_attention_diagram("spherical", 1, 2, 4, 256, 64), "attention"),
    ((EXAMPLES / "row_softmax.mlir").read_text(), "rows"),
])
def test_each_family_recognises_its_diagrams(text, family):
    recipe, _ = recipe_for(run_pipeline(text))
    assert recipe.name == family


def test_a_diagram_of_no_family_is_refused_naming_what_compiles():
    two_axes = """func.func @f(%x: !ncd.tensor<i=64, j=256 : f32>) -> !ncd.tensor<j=256 : f32> {
  %s = ncd.softmax %x along j scale 1.0 : !ncd.tensor<i=64, j=256 : f32> -> !ncd.tensor<i=64, j=256 : f32>
  %r = ncd.reduce sum %s along [i] : !ncd.tensor<i=64, j=256 : f32> -> !ncd.tensor<j=256 : f32>
  func.return %r : !ncd.tensor<j=256 : f32>
}"""
    module = run_pipeline(two_axes)
    assert recipe_for(module) is None
    with pytest.raises(PassFailedException, match="napkin-sm90: compiles one function of attention .* row reductions"):
        plan_kernel(module, SM90, _req())


@pytest.mark.parametrize("n,block,what", [(1024, "128,72", "got 72$"), (1024, "128,272", "got 272$"),
                                           (600, "128,1024", r"got 1024 \(512 for 600 keys\)$")])
def test_sm90_attention_refuses_a_keys_tile_wgmma_cannot_take(n, block, what):
    """Keys a tile in steps of 16 up to 256, as the stream takes them; the plan names the
    reason, the tile asked and the one fitting it to the keys made."""
    module = run_pipeline(attention_diagram("softmax", 1, 2, n, 64))
    with pytest.raises(PassFailedException, match="napkin-sm90: attention streams keys in steps of 16 .* " + what):
        plan_kernel(module, SM90, _req(block=block))


def test_sm90_attention_fits_a_keys_tile_longer_than_the_keys_before_judging_it():
    # 128 asked of 100 keys takes 64 (the power of two below), 512 of 288 keys 256: both taken
    for n, block, keys in ((100, "128,128", 64), (288, "128,512", 256)):
        assert plan_kernel(run_pipeline(attention_diagram("softmax", 1, 2, n, 64)), SM90, _req(block=block)).stream[1] == keys


def test_the_gemm_plans_are_typed_on_each_target():
    module = run_pipeline(gemm(4096, 4096, 4096))
    sm80 = plan_kernel(module, SM80, _req("napkin-sm80"))
    assert (sm80.copy, sm80.product, sm80.layout, sm80.grid, sm80.stream) == (
        CopyEngine.CP_ASYNC, ProductEngine.MMA_SYNC, SmemLayout.SWIZZLE, (("m", 128), ("n", 128)), ("k", 32))
    assert sm80.warps == (("m", 2), ("n", 2)) and sm80.unroll == 2
    sm90 = plan_kernel(module, SM90, _req())
    assert (sm90.copy, sm90.product, sm90.store, sm90.stages) == (CopyEngine.TMA, ProductEngine.WGMMA, StorePath.TMA, 4)
    assert sm90.launch.persistent and sm90.launch.group == 8
    # the pass list is the plan's, options typed: the spec names them
    assert spec(sm90.passes("smem")).endswith('hbm-to-smem{stages=4 smem_bytes=231360 copy="tma" store="tma"}')


def test_a_persistent_d256_forward_stores_its_output_from_qs_room():
    """Causal attention at d=256 over 4k keys runs persistent blocks of 80 keys a tile, its
    output by TMA from Q's room (no panel stage fits beside Q and two stages of 80 keys):
    614 against 607 TFLOP/s for 64 keys with their panels (H200, 2026-12-01, session 74).
    The smem level takes no buffer for the output, and releases Q only after its store."""
    module = run_pipeline(attention_diagram("causal", 1, 2, 4096, 256))
    plan = plan_kernel(module, SM90, _req())
    assert (plan.launch.persistent, plan.stream, plan.store) == (True, ("j", 80), StorePath.TMA)
    smem = str(run_pipeline(attention_diagram("causal", 1, 2, 4096, 256), spec(plan.passes("smem"))))
    assert smem.count("smem.alloc") == 3  # Q, K's and V's stages
    lines = [line.strip() for line in smem.splitlines()]
    end = lines.index("hbm.return")
    assert [line.split(" ")[0] for line in lines[end - 5:end]] == [
        "smem.tma_store_wait", "smem.write", "smem.tma_store", "smem.tma_store_wait", "smem.arrive"]


def test_a_batched_product_stores_its_tiles_by_tma():
    """A batched GEMM's output tiles leave through shared memory by TMA stores, the batch
    axes a box of one: at 131072 x 128 x 128 in two batches (spherical attention's W = Q G)
    1.8x the direct stores' speed (H200, 2026-11-29, research/benchmarks.md session 59)."""
    module = run_pipeline(gemm(2048, 128, 128, batch=4))
    assert plan_kernel(module, SM90, _req()).store is StorePath.TMA
    ptx = napkin_ir.compile(gemm(2048, 128, 128, batch=4), "sm90", cache=False).ptx
    assert "cp.async.bulk.tensor.3d.global.shared::cta" in ptx and "st.global" not in ptx


def test_the_attention_plan_holds_its_schedule():
    module = run_pipeline(attention_diagram("softmax", 1, 2, 4096, 128))
    plan = plan_kernel(module, SM90, _req())
    assert plan.family == "attention" and plan.launch.order is LaunchOrder.LAST
    assert plan.overlap and plan.pingpong and plan.a_registers and plan.early_waits and plan.partial_sums
    assert [type(p).__name__ for p in plan.passes()][-6:] == ["RegWgmmaOverlapPass", "RegPingpongPass", "RegReloadLoadsPass",
                                                              "RegEarlyWaitsPass", "RegPartialRowSumsPass", "RegToPtxPass"]


def test_the_rows_plan_is_the_same_on_both_targets_but_for_the_arch():
    module = run_pipeline((EXAMPLES / "row_softmax.mlir").read_text())
    sm80, sm90 = (plan_kernel(module, t, _req()) for t in (SM80, SM90))
    assert sm80.product is None and sm80.copy is CopyEngine.CP_ASYNC and sm80.grid == (("i", 4),)
    assert spec(sm80.passes("reg")) == spec(sm90.passes("reg"))
    assert spec(sm80.passes()).endswith('reg-to-ptx{arch="sm_80"}') and spec(sm90.passes()).endswith('reg-to-ptx{arch="sm_90a"}')


def test_short_rows_take_several_a_warp():
    text = (EXAMPLES / "row_softmax.mlir").read_text().replace("j=1024", "j=256")
    assert plan_kernel(run_pipeline(text), SM90, _req()).grid == (("i", 16),)


def test_rows_shorter_than_256_give_each_warp_whole_steps_of_rows():
    """A row of 64 columns lies across 8 lanes, a warp holding 4 at a time: a block of 16
    rows over 4 warps (of 32 columns, 8 at a time: 32 rows); a short axis keeps a step a warp."""
    delta = (EXAMPLES / "attention_delta.mlir").read_text()
    for d, rows in ((64, 16), (128, 16), (256, 16), (32, 32), (8, 128)):
        plan = plan_kernel(run_pipeline(delta.replace("d=64", f"d={d}")), SM90, _req())
        assert plan.family == "rows" and plan.grid == (("b", None), ("h", None), ("i", rows)) and plan.warps == (("i", 4),), d
    plan = plan_kernel(run_pipeline(delta.replace("i=256", "i=3")), SM80, _req("napkin-sm80"))
    assert plan.grid[-1] == ("i", 16) and plan.warps == (("i", 4),)
    plan = plan_kernel(run_pipeline(delta), SM80, _req("napkin-sm80", block="8"))
    assert plan.grid[-1] == ("i", 8) and plan.warps == (("i", 2),)


def test_a_sum_down_the_columns_tiles_the_columns_and_streams_the_rows():
    """d bias of a GEMM: the columns (innermost) over the grid and the warps, the rows streamed."""
    text = (EXAMPLES / "gemm_bias.mlir").read_text()
    module = run_pipeline(text, 'ncd-grad,ncd-fold-casts,ncd-extract{function="gemm_bias_grad" result=2}')
    recipe, shape = recipe_for(module)
    assert (recipe.name, shape.rows, shape.along, shape.down) == ("rows", "n", "m", True)
    for t in (SM80, SM90):
        p = plan_kernel(module, t, _req())
        assert (p.grid, p.stream, p.warps, p.copy, p.product) == ((("n", 256),), ("m", 64), (("n", 4),), CopyEngine.CP_ASYNC, None)


def test_a_plan_names_engines_its_target_lacks():
    with pytest.raises(ValueError, match="tma does not exist on sm_80"):
        KernelPlan("products", SM80, grid=(("m", 128),), stream=None, stages=2, copy=CopyEngine.TMA, product=ProductEngine.MMA_SYNC)
    # a name becomes its enumeration, or fails
    plan = KernelPlan("products", SM90, grid=(("m", 128),), stream=None, stages=2, copy="tma", product="wgmma", store="direct")  # type: ignore[arg-type]
    assert plan.copy is CopyEngine.TMA and plan.store is StorePath.DIRECT
    with pytest.raises(ValueError):
        KernelPlan("products", SM90, grid=(), stream=None, stages=2, copy="bulk", product="wgmma")  # type: ignore[arg-type]


def test_targets_and_dtypes_hold_the_facts_the_plans_use():
    assert target("sm90") is SM90 and target("sm_80") is SM80
    assert SM90.has(Engine.WGMMA) and SM90.has(Engine.CP_ASYNC) and not SM80.has(Engine.TMA)
    assert SM90.smem_per_block() == 227 * 1024 and SM90.smem_per_block(2) == 113 * 1024
    assert SM90.consumer_registers(384) == 240 and SM90.consumer_registers(256) == 256 and SM90.registers_at_entry(384) == 168
    assert (BF16.bytes, BF16.elements(16), BF16.tma_code, BF16.mma_k, BF16.is_half) == (2, 8, 9, 16, True)
    assert (F16.tma_code, F32.bytes, F32.is_half, dtype("f32").elements(128)) == (6, 4, False, 32)
    with pytest.raises(Exception, match="unknown element type 'f64'"):
        dtype("f64")


def _sum_of_products(n: int) -> str:
    """dA of `n` products of A with their own B's: n products of their own operands, summed."""
    a, b, c = "!ncd.tensor<m=256, n=192 : bf16>", "!ncd.tensor<k=256, n=192 : bf16>", "!ncd.tensor<m=256, k=256 : f32>"
    args = ", ".join(f"%a{i}: {a}, %b{i}: {b}" for i in range(n))
    body = [f"  %c{i} = ncd.contract %a{i}, %b{i} over [n] : {a}, {b} -> {c}" for i in range(n)]
    body += [f"  %s{i} = ncd.map add {'%c0' if i == 1 else f'%s{i - 1}'}, %c{i} : {c}, {c} -> {c}" for i in range(1, n)]
    body.append(f"  %r = ncd.map cast %s{n - 1} : {c} -> !ncd.tensor<m=256, k=256 : bf16>")
    return f"func.func @sum({args}) -> !ncd.tensor<m=256, k=256 : bf16> {{\n" + "\n".join(body) + \
        "\n  func.return %r : !ncd.tensor<m=256, k=256 : bf16>\n}\n"


@pytest.mark.parametrize("text,options,block,stages", [
    (_sum_of_products(2), {}, (128, 256, 64), 2),  # four operands' tiles a stage: 96 KiB
    (_sum_of_products(3), {}, (128, 128, 64), 2),  # six: two stages of the default tiles do not fit, narrower ones do
    (gemm(4096, 4096, 4096), {"blocks_per_sm": 2}, (128, 256, 64), 2),  # two blocks share a multiprocessor's memory
    (gemm(4096, 4096, 4096), {}, (128, 256, 64), 4),
])
def test_sm90_products_take_the_stages_and_tiles_their_operands_fit(text, options, block, stages):
    """napkin-sm90 counts a stage's tiles from the operands the products read (one of
    each: a shared A once) and the shared memory a block may take beside its barriers:
    fewer stages, then narrower tiles, until they fit; hbm-to-smem accepts the plan."""
    module = run_pipeline(text)
    plan = plan_kernel(module, SM90, _req(**options))
    (_, bm), (_, bn) = plan.grid
    assert ((bm, bn, plan.stream[1]), plan.stages) == (block, stages)
    run_pipeline(text, spec(plan.passes("smem")))


def _three_products(d: int) -> str:
    """Spherical attention's dK at head dim `d`: K dG^T + K dG + V dA^T over 1024 keys,
    one tile of the output a sum of three products over the head dim."""
    from napkin_ir.plan.program import reassociated_program

    program = reassociated_program(attention_diagram("spherical", b=1, h=2, n=1024, d=d), gradient=True, always=True)
    assert program is not None
    part = next(p for p in program.parts if p.output == program.memory(program.results[1]))  # dK
    assert part.products == 3
    return part.text


@pytest.mark.parametrize("d,stages,direct", [(64, 3, 4), (128, 2, 2)])
def test_a_short_contraction_keeps_its_outputs_tma_stores_before_more_stages(d, stages, direct):
    """Where a block streams its whole contraction in the stages either way (three
    products over a head dim of 64: one stream tile), the output's two TMA panel stages
    take the place of a fourth stage: 66.7 us against 91.1 us storing from registers
    (H200, 2026-12-01). At d=128 two stages and the panels fit as they were. Asked to
    store directly, a plan keeps every stage; a long contraction keeps its stages (the
    GEMMs above)."""
    text = _three_products(d)
    plan = plan_kernel(run_pipeline(text), SM90, _req())
    assert (plan.store, plan.stages) == (StorePath.TMA, stages)
    assert plan_kernel(run_pipeline(text), SM90, _req(store="direct")).stages == direct  # asked to store directly: no panels
    kernel = napkin_ir.compile(text, "sm90", cache=False)
    assert [p.kind for p in kernel.contract.params if p.role == "out"] == ["tensormap"]
