// ncd-to-hbm of a split: k spread over the grid (parts of 256) and streamed (32 at a
// time). Each block streams from its origin to the end of its part (the axis's end for
// the last), a loop that is never empty (hbm.nonempty), and adds its sum into the f32
// output (hbm.store {accumulate}). A bf16 result (ROUNDED): each block's part of the f32
// sum is stored into the bf16 output with {accumulate} (the whole sum rounded once), and the
// split may be launched first (KFIRST), as no part waits for another.
// RUN: napkin-opt %s -p 'ncd-relabel{grid="m:128,n:128,k:256" stream="k:32"},ncd-to-hbm' | filecheck %s
// RUN: napkin-opt %s -p 'ncd-relabel{grid="m:128,n:128,k:256" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3},smem-to-reg' | filecheck %s --check-prefix=REG
// RUN: sed 's/n=128 : f32>/n=128 : bf16>/g' %s | napkin-opt -p 'ncd-relabel{grid="m:128,n:128,k:256" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3},smem-to-reg' | filecheck %s --check-prefix=ROUNDED
// RUN: sed 's/n=128 : f32>/n=128 : bf16>/g' %s | napkin-opt -p 'ncd-relabel{grid="k:256,m:128,n:128" stream="k:32"},ncd-to-hbm' | filecheck %s --check-prefix=KFIRST

// CHECK: hbm.kernel attributes {sym_name = "mm", grid = #hbm.labels<m=128, n=128, k=256>, num_outputs = 1 : i32} {
// CHECK: ^bb0(%a: !hbm.global<m=256, k=1000 : bf16>, %b: !hbm.global<k=1000, n=128 : bf16>, %out: !hbm.global<m=256, n=128 : f32>, %m0: index, %n0: index, %k0: index):
// CHECK: %[[PART:.*]] = arith.addi %k0, %{{.*}} : index
// CHECK: %[[END:.*]] = arith.minui %[[PART]], %{{.*}} : index
// CHECK: scf.for %[[K:.*]] = %k0 to %[[END]] step %{{.*}} iter_args
// CHECK: hbm.load %a[%m0, %[[K]]] : !hbm.global<m=256, k=1000 : bf16> -> !ncd.tensor<m=128, k=32 : bf16>
// CHECK: } {hbm.stream = #hbm.stream<k>, hbm.nonempty}
// CHECK: hbm.store %{{.*}}, %out[%m0, %n0] {accumulate} : !ncd.tensor<m=128, n=128 : f32>, !hbm.global<m=256, n=128 : f32>
// REG: reg.store %{{.*}}, %out[%m0, %n0] {accumulate} : !reg.frag<c, m=64, n=64 : f32>, !hbm.global<m=256, n=128 : f32>
// ROUNDED: hbm.kernel attributes {sym_name = "mm", grid = #hbm.labels<m=128, n=128, k=256>, num_outputs = 1 : i32, reg.warps = #hbm.labels<m=2, n=2>} {
// ROUNDED-NOT: ncd.map cast
// ROUNDED: reg.store %{{.*}}, %out[%m0, %n0] {accumulate} : !reg.frag<c, m=64, n=64 : f32>, !hbm.global<m=256, n=128 : bf16>
// KFIRST: hbm.kernel attributes {sym_name = "mm", grid = #hbm.labels<k=256, m=128, n=128>, num_outputs = 1 : i32} {
// KFIRST: hbm.store %{{.*}}, %out[%m0, %n0] {accumulate} : !ncd.tensor<m=128, n=128 : f32>, !hbm.global<m=256, n=128 : bf16>

func.func @mm(%a: !ncd.tensor<m=256, k=1000 : bf16>, %b: !ncd.tensor<k=1000, n=128 : bf16>) -> !ncd.tensor<m=256, n=128 : f32> {
  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=256, k=1000 : bf16>, !ncd.tensor<k=1000, n=128 : bf16> -> !ncd.tensor<m=256, n=128 : f32>
  func.return %c : !ncd.tensor<m=256, n=128 : f32>
}
