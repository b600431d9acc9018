// napkin-model says where its DRAM estimate is least sure. A 2048 x 2048 x 256 GEMM in
// 64 x 64 blocks is 1024 blocks, more than the 132 SMs of an H100 hold one at a time: with
// three stages of 64 x 32 tiles (28.5 KiB a block, 29.5 with what the runtime keeps) 7
// blocks share an SM (228 KiB), and the replay's schedule does not follow how they drift
// apart. 512 x 384 x 256 in 128 x 128 blocks is 12 blocks: one an SM, whatever the
// occupancy allows, and no note. The A100's partitions are not measured.
// RUN: napkin-opt %s -p 'ncd-relabel{grid="m:64,n:64" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8}' | napkin-model | filecheck %s --check-prefix=MANY
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8}' | napkin-model | filecheck %s --check-prefix=FEW
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8}' | napkin-model --hw a100 | filecheck %s --check-prefix=A100
// RUN: napkin-opt %s -p 'ncd-relabel{grid="m:64,n:64" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8}' | napkin-model --json | filecheck %s --check-prefix=JSON

// MANY: grid m:64, n:64: 32 x 32 = 1024 blocks
// MANY: total
// MANY-NEXT: still dirty in the L2
// MANY-NEXT: note: 7 blocks an SM drift apart in ways the replay's schedule does not follow: the DRAM estimate is least certain for such kernels (docs/model.md)
// MANY-NEXT: work

// FEW: 12 blocks
// FEW-NOT: note:
// FEW: occupancy: 4 blocks

// A100: on the A100 SXM4 80GB
// A100: note: which L2 partition each SM of the A100 SXM4 80GB reads through is not measured: the DRAM estimate deals the SMs to them at random
// A100-NOT: blocks an SM drift

// JSON: "dram_caveats": [
// JSON-NEXT: "{{[0-9]+}} blocks an SM drift apart

func.func @matmul(%a: !ncd.tensor<m=2048, k=256 : bf16>, %b: !ncd.tensor<k=256, n=2048 : bf16>) -> !ncd.tensor<m=2048, n=2048 : bf16> {
  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=2048, k=256 : bf16>, !ncd.tensor<k=256, n=2048 : bf16> -> !ncd.tensor<m=2048, n=2048 : bf16>
  func.return %c : !ncd.tensor<m=2048, n=2048 : bf16>
}
