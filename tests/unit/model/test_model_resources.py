"""Shared memory, registers and occupancy of given configurations, the hardware table's
headline figures, the fusion saving at the ncd level and the ptxas -v parser; each
expected number is worked out by hand here."""

from pathlib import Path

import pytest

from napkin_ir.diagrams import gemm
from napkin_ir.errors import UserError
from napkin_ir.model.analysis import analyse_module
from napkin_ir.model.hardware import A100, H100, H200, hardware
from napkin_ir.model.ptxas import find_ptxas, parse_ptxas_verbose, ptxas_resources
from napkin_ir.model.timing import occupancy, predict
from napkin_ir.passmanager import compile_to_ptx, run_pipeline
from napkin_ir.pipelines import sm80_gemm_pipeline

EXAMPLES = Path(__file__).parents[3] / "examples"


def _reg_level(block=(128, 128, 32), warps=(2, 2), stages=3, shape=(512, 384, 256), layout="auto"):
    """The kernel as smem-to-reg leaves it (its stream loop not unrolled: the figures below
    count one tile's steps)."""
    spec = sm80_gemm_pipeline(block, warps, stages, layout=layout, unroll=0, to="reg")
    (kernel,) = analyse_module(run_pipeline(gemm(*shape), spec)).kernels
    return kernel


def test_shared_memory_of_a_swizzled_three_stage_pipeline():
    kernel = _reg_level(layout="swizzle")
    assert kernel.smem_per_block == 3 * (128 * 32 * 2 + 32 * 128 * 2)  # no padding: rows of 64 and 256 bytes


def test_hardware_headline_figures():
    assert H100.wgmma_flops == pytest.approx(989e12, rel=1e-3)  # FA3: 989 TFLOP/s dense bf16
    assert H100.sfu_ops_per_s == pytest.approx(3.9e12, rel=0.01)  # FA3: 3.9 TFLOP/s special functions
    assert H100.mma_sync_flops == pytest.approx(H100.wgmma_flops * 2 / 3)
    assert A100.wgmma_flops is None and A100.tensor_flops("mma.sync") == 312e12
    assert H200.hbm_bytes_per_s == 4.8e12 and H200.sms == H100.sms == 132
    assert hardware("H200") is H200
    with pytest.raises(ValueError, match="unknown hardware 'b200'"):
        hardware("b200")


def test_shared_memory_of_a_padded_three_stage_pipeline():
    kernel = _reg_level(layout="pad8")
    a_stage = 128 * (32 + 8) * 2  # m=128 rows of k=32, padded by 8 elements, bf16
    b_stage = 32 * (128 + 8) * 2
    assert kernel.smem_per_block == 3 * (a_stage + b_stage)


def test_swizzled_buffers_need_an_ldmatrix_base_per_column_in_a_line():
    # 128x128x32 on 2x2 warps: A's 64-byte rows are read from 2 column places (k 0 and 16: 0
    # and 32 bytes), B's 256-byte rows from 4 (the warp's 64 columns, 16 at a time: 0, 32,
    # 64, 96 bytes into a line): 1 + 3 registers more than padded buffers need
    swizzled, padded = _reg_level(layout="swizzle"), _reg_level(layout="pad8")
    assert swizzled.registers.overhead - padded.registers.overhead == 1 + 3


def test_register_estimate_of_a_64x64_warp_tile():
    kernel = _reg_level()
    accumulators = 64 * 64 // 32  # f32 per lane
    a_frag = 64 * 16 // 32 // 2  # bf16, two per register
    b_frag = 16 * 64 // 32 // 2
    assert kernel.registers is not None
    assert kernel.registers.fragments == accumulators + 2 * (a_frag + b_frag)  # two 16-deep steps in flight
    assert kernel.registers.total == kernel.registers.fragments + kernel.registers.overhead


def test_occupancy_of_the_default_gemm_on_h100():
    kernel = _reg_level()
    assert kernel.registers is not None
    regs = kernel.registers.total  # 212
    per_warp = -(-regs * 32 // 256) * 256  # allocated in units of 256 registers: 216 x 32
    by_regs = (65536 // per_warp) // 4  # 9 warps fit, so 2 blocks of 4
    by_smem = (228 * 1024) // (kernel.smem_per_block + 1024)  # 4
    occ = occupancy(H100, kernel.smem_per_block, 4, regs)
    assert (by_regs, by_smem) == (2, 4)
    assert occ.limits == {"smem": by_smem, "registers": by_regs, "warps": 64 // 4, "blocks": 32}
    assert occ.blocks_per_sm == 2 and occ.warps_per_sm == 8 and occ.limiter == "registers"


def test_occupancy_limited_by_shared_memory_on_a100():
    occ = occupancy(A100, 100 * 1024, 8, 128)
    # smem: 164 KB / (100 KB + 1 KB) = 1; registers: 65536 / (128 x 32) = 16 warps = 2 blocks
    assert occ.limits["smem"] == 1 and occ.limits["registers"] == 2 and occ.limits["warps"] == 8
    assert occ.blocks_per_sm == 1 and occ.limiter == "smem"


def test_a_block_over_the_shared_memory_budget_is_refused():
    kernel = _reg_level()
    kernel.smem_per_block = 200 * 1024
    predict(kernel, H100)  # 200 KB fits an H100 block
    with pytest.raises(UserError, match="a block needs 204800 bytes of shared memory; the A100 SXM4 80GB gives one block at most 166912"):
        predict(kernel, A100)


def test_fusion_saving_of_attention_at_the_ncd_level(parse):
    (f,) = analyse_module(parse((EXAMPLES / "attention.mlir").read_text())).functions
    b, h, n, d = 2, 4, 256, 64
    qkvo = 2 * b * h * n * d  # bf16
    scores32, scores16 = 4 * b * h * n * n, 2 * b * h * n * n
    unfused = (2 * qkvo + scores32  # S = Q K^T: read Q, K; write S
               + scores32 + scores32  # P = softmax(S)
               + scores32 + scores16  # cast P to bf16
               + scores16 + qkvo + qkvo)  # O = P V
    assert f.unfused_bytes == unfused
    assert f.fused_bytes == 4 * qkvo
    assert f.unfused_bytes - f.fused_bytes == 4 * scores32 + 2 * scores16
    assert f.work.tensor_flops == 4 * b * h * n * n * d


def test_spherical_attention_reassociated_at_the_ncd_level(parse):
    """`ncd-reassociate`'s products of the head dim: 4 b h n d^2 tensor FLOPs (A, G, W, O)
    where the diagram's are 4 b h n^2 d; its renames move nothing and cost nothing."""
    from napkin_ir.passmanager import run_pipeline

    text = (EXAMPLES / "spherical_attention.mlir").read_text()
    (before,) = analyse_module(parse(text)).functions
    (after,) = analyse_module(run_pipeline(text, "ncd-reassociate")).functions
    b, h, n, d = 2, 4, 256, 64
    assert before.work.tensor_flops == 4 * b * h * n * n * d
    assert after.work.tensor_flops == 4 * 2 * b * h * n * d * d
    assert "ncd.rename" not in [o.name for o in after.ops]
    assert after.fused_bytes == before.fused_bytes


def test_a_gemm_saves_nothing_by_fusion(parse):
    (f,) = analyse_module(parse((EXAMPLES / "matmul.mlir").read_text())).functions
    assert f.unfused_bytes == f.fused_bytes == 2 * (512 * 256 + 256 * 384 + 512 * 384)


PTXAS_REPORT = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'matmul' for 'sm_80'
ptxas info    : Function properties for matmul
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 220 registers, used 1 barriers, 376 bytes cmem[0]
ptxas info    : Compiling entry function 'other' for 'sm_80'
ptxas info    : Function properties for other
    16 bytes stack frame, 24 bytes spill stores, 24 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 4096 bytes smem, 376 bytes cmem[0]
"""


def test_parse_ptxas_verbose():
    found = parse_ptxas_verbose(PTXAS_REPORT)
    assert found["matmul"].registers == 220 and not found["matmul"].spills and found["matmul"].arch == "sm_80"
    other = found["other"]
    assert (other.registers, other.spill_stores, other.spill_loads, other.stack_bytes, other.static_smem) == (255, 24, 24, 16, 4096)
    assert other.spills
    assert not found["matmul"].serialized_wgmma and not other.serialized_wgmma


def test_parse_ptxas_verbose_names_serialized_wgmma():
    """ptxas' C7512 (wgmma waited for one by one, for want of registers) is read per kernel."""
    report = ("ptxas info    : (C7512) Potential Performance Loss: wgmma.mma_async instructions are serialized due to "
              "insufficient register resources for the function 'grad'\n" + PTXAS_REPORT.replace("'other'", "'grad'")
              .replace("for other", "for grad"))
    found = parse_ptxas_verbose(report)
    assert found["grad"].serialized_wgmma and not found["matmul"].serialized_wgmma


@pytest.mark.skipif(find_ptxas() is None, reason="ptxas not installed")
def test_ptxas_resources_of_a_compiled_gemm():
    # the cross-check itself: ptxas' report read back from real PTX
    ptx = compile_to_ptx(gemm(512, 384, 256), sm80_gemm_pipeline())
    (found,) = ptxas_resources(ptx).values()
    assert found.kernel == "matmul" and found.arch == "sm_80" and 0 < found.registers <= 255
    with pytest.raises(UserError, match="ptxas refused the PTX for sm_80"):
        ptxas_resources(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() { bogus; }\n")


@pytest.mark.skipif(find_ptxas() is None, reason="ptxas not installed")
@pytest.mark.parametrize("block,warps,stages,within", [((128, 128, 32), (2, 2), 3, 0.1), ((256, 128, 64), (4, 2), 3, 0.1),
                                                       ((128, 128, 32), (2, 4), 3, 0.1), ((64, 64, 32), (2, 2), 2, 0.2)])
def test_register_estimate_is_near_ptxas(block, warps, stages, within):
    # a large GEMM: with few stream tiles ptxas keeps fewer registers live (168 for 64x64
    # warp tiles at K = 256). The estimate reads the loop before smem-unroll-stages; unrolled,
    # ptxas needs fewer registers for addresses than OVERHEAD holds (72 against 86 for
    # 32x32 warp tiles; 234 against 216 for 64x64, ptxas 13.0)
    ptx = compile_to_ptx(gemm(2048, 2048, 2048), sm80_gemm_pipeline(block, warps, stages))
    (measured,) = ptxas_resources(ptx).values()
    estimate = _reg_level(block, warps, stages, (2048, 2048, 2048))
    assert estimate.registers is not None and not measured.spills
    assert abs(estimate.registers.total - measured.registers) <= within * measured.registers

