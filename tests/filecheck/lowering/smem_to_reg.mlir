// smem-to-reg: per 16-wide slice of the stream tile, each warp loads its A and B
// fragments and accumulates with mma.sync-shaped steps; cast + store become reg.store.
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3},smem-to-reg{warps="m:2,n:2"}' | filecheck %s
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:24"},ncd-to-hbm,hbm-to-smem,smem-to-reg' 2>&1 | filecheck %s --check-prefix=K16
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:96,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem,smem-to-reg{warps="m:4,n:1"}' 2>&1 | filecheck %s --check-prefix=WARPS
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,smem-to-reg' 2>&1 | filecheck %s --check-prefix=NOPIPE
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem,smem-to-reg{warps="k:2"}' 2>&1 | filecheck %s --check-prefix=AXIS

// CHECK: hbm.kernel attributes {sym_name = "matmul", grid = #hbm.labels<m=128, n=128>, num_outputs = 1 : i32, reg.warps = #hbm.labels<m=2, n=2>}
// CHECK: [[Z:%.+]] = reg.zeros : !reg.frag<c, m=64, n=64 : f32>
// CHECK: scf.for {{.*}} iter_args(%acc = [[Z]]) -> (!reg.frag<c, m=64, n=64 : f32>)
// CHECK: [[A0:%.+]] = reg.ldmatrix %{{.+}}[[[S:%.+]]] {at = #hbm.labels<k=0>} : {{.*}} -> !reg.frag<a, m=64, k=16 : bf16>
// CHECK-NEXT: [[B0:%.+]] = reg.ldmatrix %{{.+}}[[[S]]] {at = #hbm.labels<k=0>} : {{.*}} -> !reg.frag<b, k=16, n=64 : bf16>
// CHECK-NEXT: [[C1:%.+]] = reg.mma [[A0]], [[B0]], %acc
// CHECK-NEXT: [[A1:%.+]] = reg.ldmatrix {{.*}} {at = #hbm.labels<k=16>}
// CHECK-NEXT: [[B1:%.+]] = reg.ldmatrix {{.*}} {at = #hbm.labels<k=16>}
// CHECK-NEXT: [[C2:%.+]] = reg.mma [[A1]], [[B1]], [[C1]]
// CHECK-NEXT: scf.yield [[C2]]
// CHECK: reg.store %{{.+}}, %out[%m0, %n0] : !reg.frag<c, m=64, n=64 : f32>, !hbm.global<m=512, n=384 : bf16>
// CHECK-NOT: ncd.
// CHECK-NOT: smem.read

// K16: napkin-opt: error: smem-to-reg: @matmul: the contracted tile along 'k' is 24; mma.sync m16n8k16 needs a multiple of 16
// WARPS: napkin-opt: error: smem-to-reg: @matmul: a 96 x 128 tile over 4 x 1 warps leaves each warp 24 x 128; each warp's part must be a multiple of 16 x 8 (mma.sync m16n8k16)
// NOPIPE: napkin-opt: error: smem-to-reg: @matmul: expects a pipelined stream loop (from hbm-to-smem), found none
// AXIS: napkin-opt: error: smem-to-reg: @matmul: warps can share only the axes of the tiles computed in registers (m, n), not 'k'
