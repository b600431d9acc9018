// RUN: napkin-opt %s | napkin-opt | filecheck %s
// RUN: napkin-opt %s --print-op-generic | napkin-opt | filecheck %s

// The sm_90a epilogue: a panel of the tile into a stage, a TMA store of the stage, a wait.
// CHECK: %c = smem.alloc : !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>
// CHECK-NEXT: smem.tma_store_wait {pending = 1 : i32}
// CHECK-NEXT: smem.write %t -> %c[%s] {at = #hbm.labels<n=64>} : !ncd.tensor<m=128, n=256 : bf16>, !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>
// CHECK-NEXT: smem.tma_store %c[%s] -> %out[%m0, %n0] : !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>, !hbm.global<m=512, n=384 : bf16>
// CHECK-NEXT: smem.tma_store_wait {pending = 0 : i32}
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=128, n=256>, num_outputs = 1 : i32} {
^bb0(%out: !hbm.global<m=512, n=384 : bf16>, %m0: index, %n0: index):
  %s = arith.constant 1 : index
  %t = hbm.fill {value = 1.000000e+00 : f32} : !ncd.tensor<m=128, n=256 : bf16>
  %c = smem.alloc : !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>
  smem.tma_store_wait {pending = 1 : i32}
  smem.write %t -> %c[%s] {at = #hbm.labels<n=64>} : !ncd.tensor<m=128, n=256 : bf16>, !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>
  smem.tma_store %c[%s] -> %out[%m0, %n0] : !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>, !hbm.global<m=512, n=384 : bf16>
  smem.tma_store_wait {pending = 0 : i32}
  hbm.return
}

// A tile computed transposed, written by its axes' names into f32 panels, then added into
// the f32 global by the TMA (a reduce-add: a block's part of a sum split over the grid).
// CHECK: smem.write %q -> %p[%s] {at = #hbm.labels<>} : !ncd.tensor<d=128, i=64 : f32>, !smem.buffer<i=64, d=128 : f32, stages=2, layout=swizzle>
// CHECK-NEXT: smem.tma_store %p[%s] -> %dq[%i0, %c0] {accumulate} : !smem.buffer<i=64, d=128 : f32, stages=2, layout=swizzle>, !hbm.global<i=1000, d=128 : f32>
hbm.kernel attributes {sym_name = "add", grid = #hbm.labels<i=64>, num_outputs = 1 : i32} {
^bb0(%dq: !hbm.global<i=1000, d=128 : f32>, %i0: index):
  %s = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %q = hbm.fill {value = 1.000000e+00 : f32} : !ncd.tensor<d=128, i=64 : f32>
  %p = smem.alloc : !smem.buffer<i=64, d=128 : f32, stages=2, layout=swizzle>
  smem.write %q -> %p[%s] {at = #hbm.labels<>} : !ncd.tensor<d=128, i=64 : f32>, !smem.buffer<i=64, d=128 : f32, stages=2, layout=swizzle>
  smem.tma_store %p[%s] -> %dq[%i0, %c0] {accumulate} : !smem.buffer<i=64, d=128 : f32, stages=2, layout=swizzle>, !hbm.global<i=1000, d=128 : f32>
  hbm.return
}

// A store role beside the producer: it takes each stage on the full ring the consumers
// arrive on (their writes fenced: async_proxy), adds it, waits until the add has read it
// and gives it back on the empty ring.
// CHECK: smem.producer attributes {warps = 4 : i32} {
// CHECK: smem.storer {
// CHECK-NEXT: smem.mbarrier_wait %full[%s] parity %s : !smem.mbarrier<stages=2, arrivals=1>
// CHECK-NEXT: smem.tma_store %p[%s] -> %dq[%i0, %c0] {accumulate} : !smem.buffer<i=64, d=128 : f32, stages=2, layout=swizzle>, !hbm.global<i=1000, d=128 : f32>
// CHECK-NEXT: smem.tma_store_wait {pending = 0 : i32}
// CHECK-NEXT: smem.arrive %empty[%s] : !smem.mbarrier<stages=2, arrivals=1>
// CHECK-NEXT: }
// CHECK: smem.mbarrier_wait %empty[%s] parity %s : !smem.mbarrier<stages=2, arrivals=1>
// CHECK-NEXT: smem.write %q -> %p[%s]
// CHECK-NEXT: smem.arrive %full[%s] {async_proxy} : !smem.mbarrier<stages=2, arrivals=1>
hbm.kernel attributes {sym_name = "role", grid = #hbm.labels<i=64>, num_outputs = 1 : i32} {
^bb0(%dq: !hbm.global<i=1000, d=128 : f32>, %i0: index):
  %s = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %q = hbm.fill {value = 1.000000e+00 : f32} : !ncd.tensor<d=128, i=64 : f32>
  %p = smem.alloc : !smem.buffer<i=64, d=128 : f32, stages=2, layout=swizzle>
  %full = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
  %empty = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
  smem.producer attributes {warps = 4 : i32} {
    %z = arith.constant 0 : index
  }
  smem.storer {
    smem.mbarrier_wait %full[%s] parity %s : !smem.mbarrier<stages=2, arrivals=1>
    smem.tma_store %p[%s] -> %dq[%i0, %c0] {accumulate} : !smem.buffer<i=64, d=128 : f32, stages=2, layout=swizzle>, !hbm.global<i=1000, d=128 : f32>
    smem.tma_store_wait {pending = 0 : i32}
    smem.arrive %empty[%s] : !smem.mbarrier<stages=2, arrivals=1>
  }
  smem.mbarrier_wait %empty[%s] parity %s : !smem.mbarrier<stages=2, arrivals=1>
  smem.write %q -> %p[%s] {at = #hbm.labels<>} : !ncd.tensor<d=128, i=64 : f32>, !smem.buffer<i=64, d=128 : f32, stages=2, layout=swizzle>
  smem.arrive %full[%s] {async_proxy} : !smem.mbarrier<stages=2, arrivals=1>
  hbm.return
}
