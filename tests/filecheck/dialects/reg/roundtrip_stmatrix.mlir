// RUN: napkin-opt %s | napkin-opt | filecheck %s
// RUN: napkin-opt %s --print-op-generic | napkin-opt | filecheck %s

// CHECK: %f = reg.zeros : !reg.frag<c, m=16, n=256 : f32>
// CHECK-NEXT: reg.stmatrix %f -> %c[%s] {at = #hbm.labels<n=192>} : !reg.frag<c, m=16, n=256 : f32>, !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>
// CHECK-NEXT: reg.stmatrix %f -> %d[%s] {at = #hbm.labels<>} : !reg.frag<c, m=16, n=256 : f32>, !smem.buffer<m=128, n=256 : f16, stages=1, layout=swizzle>
// CHECK: %t = reg.zeros : !reg.frag<c, n=16, m=152 : f32>
// CHECK-NEXT: reg.stmatrix %t -> %e[%s] {at = #hbm.labels<n=64>} : !reg.frag<c, n=16, m=152 : f32>, !smem.buffer<m=152, n=64 : bf16, stages=2, layout=swizzle>
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=128, n=256>, num_outputs = 1 : i32, reg.warps = #hbm.labels<m=8>} {
^bb0(%out: !hbm.global<m=512, n=384 : bf16>, %m0: index, %n0: index):
  %s = arith.constant 0 : index
  %c = smem.alloc : !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>
  %d = smem.alloc : !smem.buffer<m=128, n=256 : f16, stages=1, layout=swizzle>
  %f = reg.zeros : !reg.frag<c, m=16, n=256 : f32>
  reg.stmatrix %f -> %c[%s] {at = #hbm.labels<n=192>} : !reg.frag<c, m=16, n=256 : f32>, !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>
  reg.stmatrix %f -> %d[%s] {at = #hbm.labels<>} : !reg.frag<c, m=16, n=256 : f32>, !smem.buffer<m=128, n=256 : f16, stages=1, layout=swizzle>
  hbm.return
}

// a product computed transposed (wgmma's rows over n): stmatrix.trans writes the fragment's
// columns m as the buffer's rows and its rows n into the window of the buffer's columns
hbm.kernel attributes {sym_name = "t", grid = #hbm.labels<m=152, n=128>, num_outputs = 1 : i32, reg.warps = #hbm.labels<n=8>} {
^bb0(%out: !hbm.global<m=512, n=384 : bf16>, %m0: index, %n0: index):
  %s = arith.constant 0 : index
  %e = smem.alloc : !smem.buffer<m=152, n=64 : bf16, stages=2, layout=swizzle>
  %t = reg.zeros : !reg.frag<c, n=16, m=152 : f32>
  reg.stmatrix %t -> %e[%s] {at = #hbm.labels<n=64>} : !reg.frag<c, n=16, m=152 : f32>, !smem.buffer<m=152, n=64 : bf16, stages=2, layout=swizzle>
  hbm.return
}
