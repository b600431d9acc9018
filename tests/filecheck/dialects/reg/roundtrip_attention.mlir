// RUN: napkin-opt %s | napkin-opt | filecheck %s
// RUN: napkin-opt %s --print-op-generic | napkin-opt | filecheck %s

// The fragment math of attention: scores in a `c` fragment, per-row state in `row`
// fragments, the masks, and the scores reused as the `a` operand of the second product.

// CHECK: reg.warps = #hbm.labels<i=4>
// CHECK: %m0 = reg.fill {value = 0xff800000 : f32} : !reg.frag<row, i=16 : f32>
// CHECK-NEXT: %qa = reg.ldmatrix %bq[%c0] {at = #hbm.labels<d=16>} : !smem.buffer<b=1, i=64, d=32 : bf16, stages=1, layout=pad8> -> !reg.frag<a, i=16, d=16 : bf16>
// CHECK-NEXT: %kb = reg.ldmatrix %bk[%c0] {at = #hbm.labels<d=16>} : !smem.buffer<b=1, j=64, d=32 : bf16, stages=2, layout=pad8> -> !reg.frag<b, d=16, j=64 : bf16>
// CHECK-NEXT: %z = reg.zeros : !reg.frag<c, i=16, j=64 : f32>
// CHECK-NEXT: %s = reg.mma %qa, %kb, %z : !reg.frag<a, i=16, d=16 : bf16>, !reg.frag<b, d=16, j=64 : bf16>, !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<c, i=16, j=64 : f32>
// CHECK-NEXT: %sm = reg.mask causal %s keep i >= j fill -inf at [%i0, %c0] : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<c, i=16, j=64 : f32>
// CHECK-NEXT: %sb = reg.mask_bound %sm keep j < 60 fill -inf at [%c0] : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<c, i=16, j=64 : f32>
// CHECK-NEXT: %t = reg.map scale %sb by 0.125 : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<c, i=16, j=64 : f32>
// CHECK-NEXT: %tm = reg.row_reduce max %t : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<row, i=16 : f32>
// CHECK-NEXT: %m1 = reg.map max %m0, %tm : !reg.frag<row, i=16 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<row, i=16 : f32>
// CHECK-NEXT: %d = reg.map sub %t, %m1 : !reg.frag<c, i=16, j=64 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<c, i=16, j=64 : f32>
// CHECK-NEXT: %p = reg.map exp2 %d : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<c, i=16, j=64 : f32>
// CHECK-NEXT: %l = reg.row_reduce sum %p : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<row, i=16 : f32>
// CHECK-NEXT: %n = reg.map sqrt %l : !reg.frag<row, i=16 : f32> -> !reg.frag<row, i=16 : f32>
// CHECK-NEXT: %pa = reg.to_a %p {at = #hbm.labels<j=48>} : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<a, i=16, j=16 : bf16>
// CHECK-NEXT: %r = reg.map max %p by 0.0 : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<c, i=16, j=64 : f32>
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<b=1, i=64>, num_outputs = 1 : i32, reg.warps = #hbm.labels<i=4>} {
^bb0(%q: !hbm.global<b=2, i=100, d=32 : bf16>, %k: !hbm.global<b=2, j=60, d=32 : bf16>, %out: !hbm.global<b=2, i=100, d=32 : bf16>, %b0: index, %i0: index):
  %c0 = arith.constant 0 : index
  %bq = smem.alloc : !smem.buffer<b=1, i=64, d=32 : bf16, stages=1, layout=pad8>
  %bk = smem.alloc : !smem.buffer<b=1, j=64, d=32 : bf16, stages=2, layout=pad8>
  %m0 = reg.fill {value = 0xFF800000 : f32} : !reg.frag<row, i=16 : f32>
  %qa = reg.ldmatrix %bq[%c0] {at = #hbm.labels<d=16>} : !smem.buffer<b=1, i=64, d=32 : bf16, stages=1, layout=pad8> -> !reg.frag<a, i=16, d=16 : bf16>
  %kb = reg.ldmatrix %bk[%c0] {at = #hbm.labels<d=16>} : !smem.buffer<b=1, j=64, d=32 : bf16, stages=2, layout=pad8> -> !reg.frag<b, d=16, j=64 : bf16>
  %z = reg.zeros : !reg.frag<c, i=16, j=64 : f32>
  %s = reg.mma %qa, %kb, %z : !reg.frag<a, i=16, d=16 : bf16>, !reg.frag<b, d=16, j=64 : bf16>, !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<c, i=16, j=64 : f32>
  %sm = reg.mask causal %s keep i >= j fill -inf at [%i0, %c0] : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<c, i=16, j=64 : f32>
  %sb = reg.mask_bound %sm keep j < 60 fill -inf at [%c0] : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<c, i=16, j=64 : f32>
  %t = reg.map scale %sb by 0.125 : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<c, i=16, j=64 : f32>
  %tm = reg.row_reduce max %t : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<row, i=16 : f32>
  %m1 = reg.map max %m0, %tm : !reg.frag<row, i=16 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<row, i=16 : f32>
  %d = reg.map sub %t, %m1 : !reg.frag<c, i=16, j=64 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<c, i=16, j=64 : f32>
  %p = reg.map exp2 %d : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<c, i=16, j=64 : f32>
  %l = reg.row_reduce sum %p : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<row, i=16 : f32>
  %n = reg.map sqrt %l : !reg.frag<row, i=16 : f32> -> !reg.frag<row, i=16 : f32>
  %pa = reg.to_a %p {at = #hbm.labels<j=48>} : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<a, i=16, j=16 : bf16>
  %r = reg.map max %p by 0.0 : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<c, i=16, j=64 : f32>
  hbm.return
}
