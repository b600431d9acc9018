"""The machines the napkin model predicts for: one record of datasheet figures per GPU.

Every figure carries its source. Rates are whole-GPU peaks at the clock the datasheet
uses for them; the model's own assumptions (sustained fractions, latencies) live in
`napkin_ir.model.timing`, not here. Sources, cited by the short names used below:

- [A100-WP]  NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020), tables 1-3.
- [A100-DS]  NVIDIA A100 80GB datasheet (2021): SXM4, HBM2e 2,039 GB/s.
- [H100-WP]  NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022), tables 2-3.
- [H100-DS]  NVIDIA H100 datasheet (2023), the SXM column.
- [H200-DS]  NVIDIA H200 datasheet (2024), the SXM column (GH100, as the H100 SXM,
             with 141 GB of HBM3e at 4.8 TB/s).
- [CUDA-PG]  CUDA C++ Programming Guide, "Technical Specifications per Compute
             Capability" (8.0 and 9.0) and "Arithmetic Instructions" (throughputs).
- [FA3]      Shah et al., FlashAttention-3 (arXiv 2407.08608), section 3: an H100 SXM5
             has 989 TFLOP/s of dense FP16/BF16 matmul but 3.9 TFLOP/s of special functions.
"""

from __future__ import annotations

from napkin_ir.errors import UserError

from dataclasses import dataclass, replace

KB = 1024


@dataclass(frozen=True)
class Hardware:
    key: str
    name: str
    sms: int
    clock_hz: float  # the clock the tensor-core rate is quoted at (rate / (SMs x per-SM rate))
    smem_per_sm: int  # bytes of shared memory an SM can give to blocks
    smem_per_block: int  # the most one block may opt in to
    smem_reserved_per_block: int  # what the runtime keeps per resident block
    regs_per_sm: int  # 32-bit registers
    regs_per_thread: int  # the most one thread may use
    reg_alloc_unit: int  # registers are handed to a warp in units of this many
    max_warps_per_sm: int
    max_blocks_per_sm: int
    hbm_bytes_per_s: float
    l2_bytes: int
    l2_bytes_per_s: float
    mma_sync_flops: float  # dense bf16/f16 with f32 accumulation through mma.sync
    wgmma_flops: float | None  # the same through wgmma (Hopper only)
    fp32_flops: float  # non-tensor f32, an FMA counted as two
    sfu_ops_per_s: float  # MUFU: ex2, rcp, rsqrt, sqrt, lg2 (one result each)
    smem_bytes_per_clock_per_sm: int
    # The L2 partition (0 or 1) each SM reads through, by its number (%smid), and the SMs in
    # the order a launch hands them its first blocks: measured where given (see H200), and
    # napkin_ir.model.l2 deals the SMs at random where not.
    l2_partition: tuple[int, ...] | None = None
    dispatch_order: tuple[int, ...] | None = None
    dram_bytes: int = 0  # the device memory a kernel's tensors must fit in (0: not known)

    @property
    def best_mma(self) -> str:
        return "wgmma" if self.wgmma_flops else "mma.sync"

    def tensor_flops(self, instruction: str) -> float:
        if instruction == "wgmma":
            if not self.wgmma_flops:
                raise ValueError(f"the {self.name} has no wgmma (sm_90a only)")
            return self.wgmma_flops
        return self.mma_sync_flops

    @property
    def fp32_ops_per_s(self) -> float:
        """Non-tensor f32 instructions per second (an add, a max or an FMA each count one)."""
        return self.fp32_flops / 2

    @property
    def smem_bytes_per_s(self) -> float:
        return self.sms * self.smem_bytes_per_clock_per_sm * self.clock_hz


# 32 banks of 4 bytes serve one request per clock on every architecture since Maxwell [CUDA-PG,
# "Shared Memory" of compute capabilities 5.x-9.0]: 128 bytes per clock per SM.
_SMEM_BYTES_PER_CLOCK = 128
# 16 special-function results per clock per SM on 8.0 and 9.0 [CUDA-PG, arithmetic
# instruction throughputs: "32-bit floating-point reciprocal, reciprocal square root,
# base-2 logarithm, base 2 exponential, sine, cosine": 16]. 132 x 16 x 1.83 GHz = 3.9 T [FA3].
_SFU_PER_CLOCK_PER_SM = 16
# The A100 whitepaper gives the L2 read bandwidth as 5120 bytes per clock [A100-WP, table 2];
# NVIDIA publishes none for Hopper, so the model assumes the same bytes per clock there
# (microbenchmarks put an H100's L2 somewhat above it: the figure is conservative).
_L2_BYTES_PER_CLOCK = 5120

A100_CLOCK = 1.41e9  # boost clock [A100-WP table 1]; 108 x 4 TC x 512 FLOP/clk x 1.41 GHz = 312 T
H100_CLOCK = 1.83e9  # 132 x 4 TC x 1024 FLOP/clk x 1.83 GHz = 989.4 T, the datasheet's dense rate

A100 = Hardware(
    key="a100",
    name="A100 SXM4 80GB",
    dram_bytes=80 * 10**9,  # [A100-DS]: 80 GB HBM2e
    sms=108,  # [A100-WP table 1]
    clock_hz=A100_CLOCK,
    smem_per_sm=164 * KB,  # [CUDA-PG 8.0]: 164 KB per SM
    smem_per_block=163 * KB,  # [CUDA-PG 8.0]: 163 KB per block (opt-in)
    smem_reserved_per_block=1 * KB,  # [CUDA-PG]: 1 KB reserved per block since 8.0
    regs_per_sm=64 * KB,  # [CUDA-PG 8.0]: 64K 32-bit registers
    regs_per_thread=255,  # [CUDA-PG]
    reg_alloc_unit=256,  # [CUDA occupancy calculator]: per-warp allocation granularity
    max_warps_per_sm=64,  # [CUDA-PG 8.0]: 2048 threads
    max_blocks_per_sm=32,  # [CUDA-PG 8.0]
    hbm_bytes_per_s=2.039e12,  # [A100-DS]: HBM2e 2,039 GB/s
    l2_bytes=40 * KB * KB,  # [A100-WP]: 40 MB
    l2_bytes_per_s=_L2_BYTES_PER_CLOCK * A100_CLOCK,
    mma_sync_flops=312e12,  # [A100-DS]: BF16/FP16 tensor 312 TFLOPS dense
    wgmma_flops=None,
    fp32_flops=19.5e12,  # [A100-DS]: FP32 19.5 TFLOPS
    sfu_ops_per_s=108 * _SFU_PER_CLOCK_PER_SM * A100_CLOCK,
    smem_bytes_per_clock_per_sm=_SMEM_BYTES_PER_CLOCK,
)

# Which SMs of a GH100 with 132 SMs read through which of its two L2 partitions, measured
# on a lent H200 and a lent H100 on 2026-11-23 by research/l2_latency.cu (the same table on
# both): a line another SM read is in a partition's copy or only in its far home, and a read
# from the far one takes about 470 cycles against 270. Read by SM i, SM 0's lines are all
# near for 66 SMs and half far for the other 66 (agreement of the near sets with SM 0's:
# 0.85-1.0 against 0.10-0.18, nothing between); the split follows pairs of SMs (a TPC each).
_GH100_PARTITION = tuple(int(c) for c in (
    "001111110000001100111111000000110011111100000011001111110000001111"
    "111100000011111111000000111111110000001111111100000011001100000000"))
# The order a launch hands blocks to SMs, from %smid of each block of the first wave of
# one-block-an-SM kernels (research/block_trace.py, 2026-11-23: 49 on the H200, 12 on the
# H100, the same order on both): SMs 124-131 first, then eight rows of SM pairs
# (0,1,16,17,32,33,48,49; 2,3,18,19,...; of 8 to 18 SMs) in this order, from a row that
# moves from launch to launch (here the first). Each row lies on one partition, so
# consecutive blocks share one in runs of 8 to 50.
_GH100_DISPATCH = (
    124, 125, 126, 127, 128, 129, 130, 131, 0, 1, 16, 17, 32, 33, 48, 49, 2, 3, 18, 19, 34, 35, 50, 51,
    64, 65, 78, 79, 92, 93, 106, 107, 4, 5, 20, 21, 36, 37, 52, 53, 66, 67, 80, 81, 94, 95, 108, 109,
    6, 7, 22, 23, 38, 39, 54, 55, 68, 69, 82, 83, 96, 97, 110, 111, 8, 9, 24, 25, 40, 41, 56, 57,
    70, 71, 84, 85, 98, 99, 112, 113, 10, 11, 26, 27, 42, 43, 58, 59, 72, 73, 86, 87, 100, 101, 114, 115,
    12, 13, 28, 29, 44, 45, 60, 61, 74, 75, 88, 89, 102, 103, 116, 117, 120, 121, 14, 15, 30, 31, 46, 47,
    62, 63, 76, 77, 90, 91, 104, 105, 118, 119, 122, 123,
)

H100 = Hardware(
    key="h100",
    name="H100 SXM5 80GB",
    dram_bytes=80 * 10**9,  # [H100-DS]: 80 GB HBM3
    sms=132,  # [H100-WP table 2]: H100 SXM5 has 132 SMs
    clock_hz=H100_CLOCK,
    smem_per_sm=228 * KB,  # [CUDA-PG 9.0]: 228 KB per SM
    smem_per_block=227 * KB,  # [CUDA-PG 9.0]: 227 KB per block (opt-in)
    smem_reserved_per_block=1 * KB,
    regs_per_sm=64 * KB,  # [CUDA-PG 9.0]
    regs_per_thread=255,
    reg_alloc_unit=256,
    max_warps_per_sm=64,  # [CUDA-PG 9.0]: 2048 threads
    max_blocks_per_sm=32,  # [CUDA-PG 9.0]
    hbm_bytes_per_s=3.35e12,  # [H100-DS]: HBM3 3.35 TB/s
    l2_bytes=50 * KB * KB,  # [H100-WP]: 50 MB (the lent H100 reports 50 MiB, 2026-11-23)
    l2_bytes_per_s=_L2_BYTES_PER_CLOCK * H100_CLOCK,
    # mma.sync on Hopper reaches about two thirds of the tensor cores' peak, which only the
    # asynchronous wgmma attains ([FA3] section 2.2).
    mma_sync_flops=989.4e12 * 2 / 3,
    wgmma_flops=989.4e12,  # [H100-DS], [FA3]: BF16/FP16 tensor 989 TFLOPS dense
    fp32_flops=66.9e12,  # [H100-DS]: FP32 67 TFLOPS
    sfu_ops_per_s=132 * _SFU_PER_CLOCK_PER_SM * H100_CLOCK,  # 3.9 T [FA3]
    smem_bytes_per_clock_per_sm=_SMEM_BYTES_PER_CLOCK,
    l2_partition=_GH100_PARTITION,
    dispatch_order=_GH100_DISPATCH,
)

# [H200-DS]: the same GH100 with the H100 SXM's SMs, clocks and rates; HBM3e at 4.8 TB/s.
# Its L2 is larger: the CUDA driver reports 60 MiB (cudaDevAttrL2CacheSize, read on a lent
# H200 on 2026-11-23 by research/l2_probe.cu, which also finds data every SM reads kept up to
# 28 MiB and lost from 32 MiB on: what one of its two partitions holds, as
# napkin_ir.model.l2 replays them).
H200 = replace(H100, key="h200", name="H200 SXM 141GB", dram_bytes=141 * 10**9, hbm_bytes_per_s=4.8e12, l2_bytes=60 * KB * KB)

HARDWARE: dict[str, Hardware] = {hw.key: hw for hw in (A100, H100, H200)}


class UnknownHardware(UserError, ValueError):
    """A hardware name the table does not hold (the user's error)."""


def hardware(key: str) -> Hardware:
    try:
        return HARDWARE[key.lower()]
    except KeyError:
        raise UnknownHardware(f"unknown hardware '{key}'; expected one of {', '.join(HARDWARE)}") from None


def check_fits(kernel: str, tensors: dict[str, int], hw: Hardware | None = None) -> None:
    """Refuse a kernel whose tensors (name -> bytes) do not fit in `hw`'s memory (or, with
    no `hw`, in that of the largest GPU in `HARDWARE`), naming the sizes: no tiling makes it
    run, and modelling its blocks would take more memory than the host has."""
    from napkin_ir.errors import SizeError, format_bytes

    gpus = [hw] if hw is not None else list(HARDWARE.values())
    room = max(h.dram_bytes for h in gpus)
    need = sum(tensors.values())
    if room and need > room:
        largest = max(gpus, key=lambda h: h.dram_bytes)
        biggest = ", ".join(f"{name} {format_bytes(n)}" for name, n in sorted(tensors.items(), key=lambda kv: -kv[1])[:4])
        where = f"the {largest.name} has" if hw is not None else f"the largest GPU napkin-ir knows, the {largest.name}, has"
        raise SizeError(f"@{kernel}'s tensors need {format_bytes(need)} ({biggest}); {where} {format_bytes(room)} of memory")
