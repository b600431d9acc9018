// napkin-model follows the GEMM down the levels. 512 x 384 x 256 in 128 x 128 blocks: A is
// read once per block column (3 x 2 x 512 x 256 bytes), B once per block row (4 x 2 x 256 x 384).
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm' | napkin-model - | filecheck %s --check-prefix=HBM
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8}' | napkin-model | filecheck %s --check-prefix=SMEM
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8},smem-to-reg{warps="m:2,n:2"}' | napkin-model - --hw h200 | filecheck %s --check-prefix=REG
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8},smem-to-reg{warps="m:2,n:2"}' | napkin-model - --json | filecheck %s --check-prefix=JSON
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8},smem-to-reg{warps="m:2,n:2"}' | napkin-model - --ptxas | filecheck %s --check-prefix=PTXAS

// HBM: @matmul: hbm level, on the H100 SXM5 80GB (132 SMs)
// HBM-NEXT: grid m:128, n:128: 4 x 3 = 12 blocks of 4 warps (assumed: decided at the reg level)
// HBM-NEXT: HBM traffic (bytes) {{ +}}napkin{{ +}}DRAM est.
// HBM-NEXT: a read {{ +}}786432{{ +}}262144
// HBM-NEXT: b read {{ +}}786432{{ +}}196608
// HBM-NEXT: out written {{ +}}393216{{ +}}0
// HBM-NEXT: total {{ +}}1966080{{ +}}458752
// The whole 384 KiB output fits in the L2: still dirty there when the kernel ends.
// HBM-NEXT: still dirty in the L2 when the kernel ends (bytes; written back after it, not in the estimate): out 393216
// HBM: tensor-core FLOPs (wgmma, assumed) {{ +}}100663296
// HBM: shared memory: 16384 bytes per block (assumed: each loaded tile staged once)
// HBM: registers: not known above the reg level
// HBM: predicted: {{[0-9.]+}} us, bound by

// Three stages of A (128 rows of 32 + 8 padding) and B (32 rows of 128 + 8), bf16.
// SMEM: @matmul: smem level
// SMEM: total {{ +}}1966080
// SMEM: shared memory: 56832 bytes per block; 1572864 bytes written, 1572864 read
// SMEM: occupancy: 4 blocks (16 warps) per SM, limited by smem (smem 4, registers 32, warps 16, blocks 32)
// SMEM: intensity (FLOP/byte): HBM 52.1, DRAM 223.3, smem 32.6

// REG: @matmul: reg level, on the H200 SXM 141GB (132 SMs)
// REG-NEXT: grid m:128, n:128: 4 x 3 = 12 blocks of 4 warps
// REG: total {{ +}}1966080
// REG: tensor-core FLOPs (mma.sync) {{ +}}100663296
// REG: shared memory: 56832 bytes per block; 1572864 bytes written, 3145728 read
// REG-NEXT: registers: 212 per thread estimated (fragments 192 + overhead 20)
// REG-NEXT: occupancy: 2 blocks (8 warps) per SM, limited by registers (smem 4, registers 2, warps 16, blocks 32)
// REG: time (us) {{ +}}tensor{{ +}}alu{{ +}}sfu{{ +}}smem{{ +}}l2{{ +}}hbm
// REG: waves: 1 (12 blocks on 132 SMs x 2); tail factor 11.00
// REG-NEXT: predicted: {{[0-9.]+}} us, bound by {{tensor cores|shared memory|L2|HBM}}

// JSON: "level": "reg",
// JSON: "read": {
// JSON-NEXT: "a": 786432.0,
// JSON-NEXT: "b": 786432.0
// The output tile is written in the kernel's last steps: all of it still dirty in the L2.
// JSON: "dram_estimate": {
// JSON: "out": 0.0
// JSON: "dirty_at_end": {
// JSON: "out": 393216.0
// JSON: "registers": {
// JSON-NEXT: "estimate": 212,
// JSON: "limiter": "registers"

// PTXAS: registers: 212 per thread estimated (fragments 192 + overhead 20); ptxas: {{[0-9]+}} (used)
