// napkin-model says when its DRAM estimate sits at the cache's edge: the estimate with an L2
// 5% smaller and 5% larger. 6144 x 6144 x 1536 in 128 x 256 blocks, one block an SM (4
// stages of 48 KiB), on the H200: B (18 MiB) is read again by each block row and sits near
// what a partition keeps, so the two differ by more than the 10% the estimate is judged by,
// and the note gives them. 4096 x 4096 x 4096 in the same blocks: everything read again is
// kept either way, and no note.
// RUN: napkin-opt %s -p 'ncd-relabel{grid="m:128,n:256" stream="k:64"},ncd-to-hbm,hbm-to-smem{stages=4 layout=pad8}' | napkin-model --hw h200 | filecheck %s
// RUN: napkin-opt %s -p 'ncd-relabel{grid="m:128,n:256" stream="k:64"},ncd-to-hbm,hbm-to-smem{stages=4 layout=pad8}' | napkin-model --hw h200 --json | filecheck %s --check-prefix=JSON

// CHECK: @at_edge: smem level, on the H200 SXM 141GB
// CHECK: total
// CHECK: note: with an L2 5% smaller or larger the DRAM estimate is {{[0-9]+}} or {{[0-9]+}} bytes: the kernel's reuse sits at the cache's edge, and the estimate is no surer than that
// CHECK-NOT: in step rather than staggered
// CHECK: occupancy: 1 block
// CHECK: @inside: smem level
// CHECK-NOT: note: with an L2
// CHECK: occupancy: 1 block

// JSON: "name": "at_edge"
// JSON: "dram_edge": {
// JSON-NEXT: "l2_change": 0.05,
// JSON-NEXT: "l2_smaller": {{[0-9.e+]+}},
// JSON-NEXT: "l2_larger": {{[0-9.e+]+}}

func.func @at_edge(%a: !ncd.tensor<m=6144, k=1536 : bf16>, %b: !ncd.tensor<k=1536, n=6144 : bf16>) -> !ncd.tensor<m=6144, n=6144 : bf16> {
  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=6144, k=1536 : bf16>, !ncd.tensor<k=1536, n=6144 : bf16> -> !ncd.tensor<m=6144, n=6144 : bf16>
  func.return %c : !ncd.tensor<m=6144, n=6144 : bf16>
}

func.func @inside(%a: !ncd.tensor<m=4096, k=4096 : bf16>, %b: !ncd.tensor<k=4096, n=4096 : bf16>) -> !ncd.tensor<m=4096, n=4096 : bf16> {
  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=4096, k=4096 : bf16>, !ncd.tensor<k=4096, n=4096 : bf16> -> !ncd.tensor<m=4096, n=4096 : bf16>
  func.return %c : !ncd.tensor<m=4096, n=4096 : bf16>
}
