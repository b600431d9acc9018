// A `split` fragment: the warps hold 16 rows each of a tile whose rows (the head dim d)
// lie along no reg.warps axis (dQ^T = K^T dS^T where the warps split the keys j); its
// product reads A M-major ([j, d]) and B N-major ([j, i]) from shared memory, and its
// accumulators are added into an f32 global that holds them transposed.
// RUN: napkin-opt %s | napkin-opt | filecheck %s
// RUN: napkin-opt %s --print-op-generic | napkin-opt | filecheck %s

// CHECK: %z = reg.zeros : !reg.frag<c, d=16, i=64 : f32, split=8>
// CHECK-NEXT: %q = reg.wgmma %k[%c0], %s[%c0], %z {at = #hbm.labels<j=112>} : !smem.buffer<j=128, d=128 : bf16, stages=1, layout=swizzle>, !smem.buffer<j=128, i=64 : bf16, stages=1, layout=swizzle>, !reg.frag<c, d=16, i=64 : f32, split=8> -> !reg.frag<c, d=16, i=64 : f32, split=8>
// CHECK-NEXT: reg.store %q, %dq[%i0, %c0] {accumulate} : !reg.frag<c, d=16, i=64 : f32, split=8>, !hbm.global<i=1000, d=128 : f32>
// CHECK-NEXT: reg.write %q -> %p[%c0] {at = #hbm.labels<>} : !reg.frag<c, d=16, i=64 : f32, split=8>, !smem.buffer<i=64, d=128 : f32, stages=2, layout=swizzle>
// CHECK-NEXT: %w = reg.zeros : !reg.frag<c, j=16, i=64 : f32>
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<j=128>, num_outputs = 1 : i32, reg.warps = #hbm.labels<j=8>} {
^bb0(%kg: !hbm.global<j=1000, d=128 : bf16>, %dq: !hbm.global<i=1000, d=128 : f32>, %j0: index):
  %c0 = arith.constant 0 : index
  %i0 = arith.constant 64 : index
  %k = smem.alloc : !smem.buffer<j=128, d=128 : bf16, stages=1, layout=swizzle>
  %s = smem.alloc : !smem.buffer<j=128, i=64 : bf16, stages=1, layout=swizzle>
  %p = smem.alloc : !smem.buffer<i=64, d=128 : f32, stages=2, layout=swizzle>
  %z = reg.zeros : !reg.frag<c, d=16, i=64 : f32, split=8>
  %q = reg.wgmma %k[%c0], %s[%c0], %z {at = #hbm.labels<j=112>} : !smem.buffer<j=128, d=128 : bf16, stages=1, layout=swizzle>, !smem.buffer<j=128, i=64 : bf16, stages=1, layout=swizzle>, !reg.frag<c, d=16, i=64 : f32, split=8> -> !reg.frag<c, d=16, i=64 : f32, split=8>
  reg.store %q, %dq[%i0, %c0] {accumulate} : !reg.frag<c, d=16, i=64 : f32, split=8>, !hbm.global<i=1000, d=128 : f32>
  reg.write %q -> %p[%c0] {at = #hbm.labels<>} : !reg.frag<c, d=16, i=64 : f32, split=8>, !smem.buffer<i=64, d=128 : f32, stages=2, layout=swizzle>
  %w = reg.zeros : !reg.frag<c, j=16, i=64 : f32>
  hbm.return
}

// Accumulators that are a block's part of a sum rounded into a bf16 global once the parts are summed.
// CHECK: reg.store %c, %out[%m0, %c0] {accumulate} : !reg.frag<c, m=64, n=32 : f32>, !hbm.global<m=128, n=32 : bf16>
hbm.kernel attributes {sym_name = "rounded", grid = #hbm.labels<m=64, k=64>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=128, k=256 : bf16>, %out: !hbm.global<m=128, n=32 : bf16>, %m0: index, %k0: index):
  %c0 = arith.constant 0 : index
  %c = reg.zeros : !reg.frag<c, m=64, n=32 : f32>
  reg.store %c, %out[%m0, %c0] {accumulate} : !reg.frag<c, m=64, n=32 : f32>, !hbm.global<m=128, n=32 : bf16>
  hbm.return
}

// Fewer rows than the warps' 16 each (64 of d for 8 warps): `split=4`, each warpgroup the
// same rows of its own 32 of B's 64 columns.
// CHECK: %z4 = reg.zeros : !reg.frag<c, d=16, i=32 : f32, split=4>
// CHECK-NEXT: %q4 = reg.wgmma %k[%c0], %s[%c0], %z4 {at = #hbm.labels<j=16>} : !smem.buffer<j=128, d=64 : bf16, stages=1, layout=swizzle>, !smem.buffer<j=128, i=64 : bf16, stages=1, layout=swizzle>, !reg.frag<c, d=16, i=32 : f32, split=4> -> !reg.frag<c, d=16, i=32 : f32, split=4>
// CHECK-NEXT: reg.write %q4 -> %p[%c0] {at = #hbm.labels<>} : !reg.frag<c, d=16, i=32 : f32, split=4>, !smem.buffer<i=64, d=64 : f32, stages=2, layout=swizzle>
hbm.kernel attributes {sym_name = "columns", grid = #hbm.labels<j=128>, num_outputs = 1 : i32, reg.warps = #hbm.labels<j=8>} {
^bb0(%kg: !hbm.global<j=1000, d=64 : bf16>, %dq: !hbm.global<i=1000, d=64 : f32>, %j0: index):
  %c0 = arith.constant 0 : index
  %k = smem.alloc : !smem.buffer<j=128, d=64 : bf16, stages=1, layout=swizzle>
  %s = smem.alloc : !smem.buffer<j=128, i=64 : bf16, stages=1, layout=swizzle>
  %p = smem.alloc : !smem.buffer<i=64, d=64 : f32, stages=2, layout=swizzle>
  %z4 = reg.zeros : !reg.frag<c, d=16, i=32 : f32, split=4>
  %q4 = reg.wgmma %k[%c0], %s[%c0], %z4 {at = #hbm.labels<j=16>} : !smem.buffer<j=128, d=64 : bf16, stages=1, layout=swizzle>, !smem.buffer<j=128, i=64 : bf16, stages=1, layout=swizzle>, !reg.frag<c, d=16, i=32 : f32, split=4> -> !reg.frag<c, d=16, i=32 : f32, split=4>
  reg.write %q4 -> %p[%c0] {at = #hbm.labels<>} : !reg.frag<c, d=16, i=32 : f32, split=4>, !smem.buffer<i=64, d=64 : f32, stages=2, layout=swizzle>
  hbm.return
}
