// RUN: napkin-opt %s | napkin-opt | filecheck %s
// RUN: napkin-opt %s --print-op-generic | napkin-opt | filecheck %s

// CHECK: reg.warps = #hbm.labels<m=2, n=1>
// CHECK: %z = reg.zeros : !reg.frag<c, m=16, n=8 : f32>
// CHECK-NEXT: %fa = reg.ldmatrix %ba[%c0] {at = #hbm.labels<k=16>} : !smem.buffer<m=32, k=32 : f16, stages=2, layout=swizzle> -> !reg.frag<a, m=16, k=16 : f16>
// CHECK-NEXT: %fb = reg.ldmatrix %bb[%c0] {at = #hbm.labels<k=16>} : !smem.buffer<k=32, n=8 : f16, stages=2, layout=row> -> !reg.frag<b, k=16, n=8 : f16>
// CHECK-NEXT: %c = reg.mma %fa, %fb, %z : !reg.frag<a, m=16, k=16 : f16>, !reg.frag<b, k=16, n=8 : f16>, !reg.frag<c, m=16, n=8 : f32> -> !reg.frag<c, m=16, n=8 : f32>
// CHECK-NEXT: reg.store %c, %out[%m0, %c0] : !reg.frag<c, m=16, n=8 : f32>, !hbm.global<m=40, n=8 : f16>
// CHECK-NEXT: reg.store %c, %sums[%m0, %c0] {accumulate} : !reg.frag<c, m=16, n=8 : f32>, !hbm.global<m=40, n=8 : f32>
// accumulators stored transposed: their rows the output's last axis
// CHECK-NEXT: reg.store %c, %out_t[%c0, %m0] : !reg.frag<c, m=16, n=8 : f32>, !hbm.global<n=8, m=40 : f16>
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=32>, num_outputs = 3 : i32, reg.warps = #hbm.labels<m=2, n=1>} {
^bb0(%a: !hbm.global<m=40, k=32 : f16>, %b: !hbm.global<k=32, n=8 : f16>, %out: !hbm.global<m=40, n=8 : f16>, %sums: !hbm.global<m=40, n=8 : f32>, %out_t: !hbm.global<n=8, m=40 : f16>, %m0: index):
  %c0 = arith.constant 0 : index
  %ba = smem.alloc : !smem.buffer<m=32, k=32 : f16, stages=2, layout=swizzle>
  %bb = smem.alloc : !smem.buffer<k=32, n=8 : f16, stages=2, layout=row>
  %z = reg.zeros : !reg.frag<c, m=16, n=8 : f32>
  %fa = reg.ldmatrix %ba[%c0] {at = #hbm.labels<k=16>} : !smem.buffer<m=32, k=32 : f16, stages=2, layout=swizzle> -> !reg.frag<a, m=16, k=16 : f16>
  %fb = reg.ldmatrix %bb[%c0] {at = #hbm.labels<k=16>} : !smem.buffer<k=32, n=8 : f16, stages=2, layout=row> -> !reg.frag<b, k=16, n=8 : f16>
  %c = reg.mma %fa, %fb, %z : !reg.frag<a, m=16, k=16 : f16>, !reg.frag<b, k=16, n=8 : f16>, !reg.frag<c, m=16, n=8 : f32> -> !reg.frag<c, m=16, n=8 : f32>
  reg.store %c, %out[%m0, %c0] : !reg.frag<c, m=16, n=8 : f32>, !hbm.global<m=40, n=8 : f16>
  reg.store %c, %sums[%m0, %c0] {accumulate} : !reg.frag<c, m=16, n=8 : f32>, !hbm.global<m=40, n=8 : f32>
  reg.store %c, %out_t[%c0, %m0] : !reg.frag<c, m=16, n=8 : f32>, !hbm.global<n=8, m=40 : f16>
  hbm.return
}
