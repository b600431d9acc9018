// napkin-model says where its DRAM estimate is least sure. A 4096^3 GEMM in 64 x 64 blocks
// is 4096 blocks: with three stages of 64 x 32 tiles (28.5 KiB a block, 29.5 with what the
// runtime keeps) 7 share an SM of an H100 (228 KiB). Staggered, as the replay schedules them,
// a wave's blocks reach far along B and the estimate sits at the cache's edge; in step they
// read B's tiles together and far less reaches DRAM: the GPU may do either, and the note
// gives both. At 2048 x 2048 x 256 the tensors fit in the L2 (1 MiB each): 7 blocks an SM
// again, but in step or not the estimate is the same, and no note. 512 x 384 x 256 in
// 128 x 128 blocks is 12 blocks: one an SM, whatever the occupancy allows, and no note. The
// A100's partitions are not measured.
// RUN: sed -e 's/m=2048, k=256/m=4096, k=4096/g; s/k=256, n=2048/k=4096, n=4096/g; s/m=2048, n=2048/m=4096, n=4096/g' %s | napkin-opt -p 'ncd-relabel{grid="m:64,n:64" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8}' | napkin-model | filecheck %s --check-prefix=MANY
// RUN: napkin-opt %s -p 'ncd-relabel{grid="m:64,n:64" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8}' | napkin-model | filecheck %s --check-prefix=FITS
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8}' | napkin-model | filecheck %s --check-prefix=FEW
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8}' | napkin-model --hw a100 | filecheck %s --check-prefix=A100
// RUN: sed -e 's/m=2048, k=256/m=4096, k=4096/g; s/k=256, n=2048/k=4096, n=4096/g; s/m=2048, n=2048/m=4096, n=4096/g' %s | napkin-opt -p 'ncd-relabel{grid="m:64,n:64" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8}' | napkin-model --json | filecheck %s --check-prefix=JSON

// MANY: grid m:64, n:64: 64 x 64 = 4096 blocks
// MANY: total
// MANY-NEXT: still dirty in the L2
// MANY-NEXT: note: with an L2 5% smaller or larger the DRAM estimate is {{[0-9]+}} or {{[0-9]+}} bytes
// MANY-NEXT: note: with the 7 blocks of an SM in step rather than staggered the DRAM estimate is {{[0-9]+}} bytes: which the GPU settles into is not read off the kernel, and the estimate is no surer than that (docs/model.md)
// MANY-NEXT: work
// MANY: occupancy: 7 blocks

// FITS: grid m:64, n:64: 32 x 32 = 1024 blocks
// FITS-NOT: note:
// FITS: occupancy: 7 blocks

// FEW: 12 blocks
// FEW-NOT: note:
// FEW: occupancy: 4 blocks

// A100: on the A100 SXM4 80GB
// A100: note: which L2 partition each SM of the A100 SXM4 80GB reads through is not measured: the DRAM estimate deals the SMs to them at random
// A100-NOT: in step

// JSON: "dram_in_step": {{[0-9.]+}},
// JSON-NEXT: "dram_caveats": [
// JSON-NEXT: "with an L2 5% smaller or larger
// JSON-NEXT: "with the 7 blocks of an SM in step rather than staggered

func.func @matmul(%a: !ncd.tensor<m=2048, k=256 : bf16>, %b: !ncd.tensor<k=256, n=2048 : bf16>) -> !ncd.tensor<m=2048, n=2048 : bf16> {
  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=2048, k=256 : bf16>, !ncd.tensor<k=256, n=2048 : bf16> -> !ncd.tensor<m=2048, n=2048 : bf16>
  func.return %c : !ncd.tensor<m=2048, n=2048 : bf16>
}
