// ncd-to-hbm of a result along the streamed axis: %t sums over j, which the grid splits,
// and holds i, which the block streams (the attention gradient's dQ, in blocks that hold
// keys and stream queries). Each block adds its part tile by tile inside the stream
// (hbm.store {accumulate} at the stream's origin), the product computed with the
// streamed axis last; %r, reduced along i, is stored once after the loop.
// RUN: napkin-opt %s -p 'ncd-relabel{grid="j:64" stream="i:32"},ncd-to-hbm' | filecheck %s
// RUN: not napkin-opt %s -p 'ncd-relabel{grid="d:32" stream="i:32"}' 2>&1 | filecheck %s --check-prefix=NOTSUMMED

// CHECK: scf.for %[[I:.*]] = %c0 to %{{.*}} step %{{.*}} iter_args
// CHECK: %[[T:.*]] = ncd.contract %{{.*}}, %{{.*}} over [j] : !ncd.tensor<i=32, j=64 : bf16>, !ncd.tensor<j=64, d=64 : bf16> -> !ncd.tensor<d=64, i=32 : f32>
// CHECK: hbm.store %[[T]], %out0[%[[I]], %c0] {accumulate} : !ncd.tensor<d=64, i=32 : f32>, !hbm.global<i=200, d=64 : f32>
// CHECK: } {hbm.stream = #hbm.stream<i>}
// CHECK: hbm.store %{{.*}}, %out1[%j0, %c0] : !ncd.tensor<j=64, d=64 : f32>, !hbm.global<j=128, d=64 : f32>
// CHECK-NOT: hbm.store
// NOTSUMMED: axis 'i' is an axis of @f's output; stream only axes that are reduced (or that of a sum over an axis spread over the grid, added tile by tile)

func.func @f(%a: !ncd.tensor<i=200, j=128 : bf16>, %k: !ncd.tensor<j=128, d=64 : bf16>, %b: !ncd.tensor<i=200, d=64 : bf16>) -> (!ncd.tensor<i=200, d=64 : f32>, !ncd.tensor<j=128, d=64 : f32>) {
  %t = ncd.contract %a, %k over [j] : !ncd.tensor<i=200, j=128 : bf16>, !ncd.tensor<j=128, d=64 : bf16> -> !ncd.tensor<i=200, d=64 : f32>
  %r = ncd.contract %a, %b over [i] : !ncd.tensor<i=200, j=128 : bf16>, !ncd.tensor<i=200, d=64 : bf16> -> !ncd.tensor<j=128, d=64 : f32>
  func.return %t, %r : !ncd.tensor<i=200, d=64 : f32>, !ncd.tensor<j=128, d=64 : f32>
}
