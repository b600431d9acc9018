// hbm-to-smem{copy=tma}: a sum of products whose shared operand (K) is first read by the
// first product and last by the third, with V dA between: K's group and dG^T's are
// released at the same point, on one empty ring, and V's on another. The producer waits on
// the first ring again before dG^T's copy, after V's wait: the buffers a wait frees are
// those copied after it up to the next wait (`smem.filled_after`), as the interpreters
// read it, where dG^T's copy had followed V's wait alone.
// RUN: napkin-opt %s -p 'ncd-relabel{grid="j:128,x:128" stream="c:64"},ncd-to-hbm,hbm-launch,hbm-to-smem{stages=2 copy=tma}' | filecheck %s

func.func @dk(%k: !ncd.tensor<j=256, c=128 : bf16>, %dg: !ncd.tensor<x=128, c=128 : bf16>, %dgt: !ncd.tensor<c=128, x=128 : bf16>, %v: !ncd.tensor<j=256, c=128 : bf16>, %da: !ncd.tensor<x=128, c=128 : bf16>) -> !ncd.tensor<j=256, x=128 : bf16> {
  %p1 = ncd.contract %k, %dg over [c] : !ncd.tensor<j=256, c=128 : bf16>, !ncd.tensor<x=128, c=128 : bf16> -> !ncd.tensor<j=256, x=128 : f32>
  %p3 = ncd.contract %v, %da over [c] : !ncd.tensor<j=256, c=128 : bf16>, !ncd.tensor<x=128, c=128 : bf16> -> !ncd.tensor<j=256, x=128 : f32>
  %p2 = ncd.contract %k, %dgt over [c] : !ncd.tensor<j=256, c=128 : bf16>, !ncd.tensor<c=128, x=128 : bf16> -> !ncd.tensor<j=256, x=128 : f32>
  %s1 = ncd.map add %p1, %p2 : !ncd.tensor<j=256, x=128 : f32>, !ncd.tensor<j=256, x=128 : f32> -> !ncd.tensor<j=256, x=128 : f32>
  %s2 = ncd.map add %s1, %p3 : !ncd.tensor<j=256, x=128 : f32>, !ncd.tensor<j=256, x=128 : f32> -> !ncd.tensor<j=256, x=128 : f32>
  %o = ncd.map cast %s2 : !ncd.tensor<j=256, x=128 : f32> -> !ncd.tensor<j=256, x=128 : bf16>
  func.return %o : !ncd.tensor<j=256, x=128 : bf16>
}

// CHECK:      smem.producer
// CHECK:      smem.mbarrier_wait %[[EK:[0-9]+]][
// CHECK-NEXT: smem.arrive_expect
// CHECK-NEXT: smem.tma_copy %k
// CHECK-NEXT: smem.tma_copy %dg[
// CHECK-NEXT: smem.mbarrier_wait %[[EV:[0-9]+]][
// CHECK-NEXT: smem.arrive_expect
// CHECK-NEXT: smem.tma_copy %v
// CHECK-NEXT: smem.tma_copy %da
// CHECK-NEXT: smem.mbarrier_wait %[[EK]][
// CHECK-NEXT: smem.arrive_expect
// CHECK-NEXT: smem.tma_copy %dgt
