// RUN: napkin-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=128>, num_outputs = 1 : i32, reg.warps = #hbm.labels<m=8>} {
^bb0(%g: !hbm.global<m=100, n=256 : bf16>, %m0: index):
  %a = smem.alloc : !smem.buffer<m=128, k=64 : bf16, stages=2, layout=swizzle>
  %b = smem.alloc : !smem.buffer<k=64, n=256 : bf16, stages=2, layout=swizzle>
  %c = reg.zeros : !reg.frag<c, m=32, n=256 : f32>
  %d = reg.wgmma %a[%m0], %b[%m0], %c {at = #hbm.labels<k=0>} : !smem.buffer<m=128, k=64 : bf16, stages=2, layout=swizzle>, !smem.buffer<k=64, n=256 : bf16, stages=2, layout=swizzle>, !reg.frag<c, m=32, n=256 : f32> -> !reg.frag<c, m=32, n=256 : f32>
  hbm.return
}
// CHECK: reg.wgmma: accumulates into one warp's 16 rows of a warpgroup tile (role c, 16 rows)

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=128>, num_outputs = 1 : i32, reg.warps = #hbm.labels<m=8>} {
^bb0(%g: !hbm.global<m=100, n=256 : bf16>, %m0: index):
  %a = smem.alloc : !smem.buffer<m=128, k=64 : bf16, stages=2, layout=swizzle>
  %b = smem.alloc : !smem.buffer<k=64, n=256 : bf16, stages=2, layout=swizzle>
  %c = reg.zeros : !reg.frag<c, m=16, n=128 : f32>
  %d = reg.wgmma %a[%m0], %b[%m0], %c {at = #hbm.labels<k=0>} : !smem.buffer<m=128, k=64 : bf16, stages=2, layout=swizzle>, !smem.buffer<k=64, n=256 : bf16, stages=2, layout=swizzle>, !reg.frag<c, m=16, n=128 : f32> -> !reg.frag<c, m=16, n=128 : f32>
  hbm.return
}
// CHECK: reg.wgmma: B's 256 columns differ from the accumulators' 128

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=128>, num_outputs = 1 : i32, reg.warps = #hbm.labels<m=8>} {
^bb0(%g: !hbm.global<m=100, n=256 : bf16>, %m0: index):
  %a = smem.alloc : !smem.buffer<m=128, k=64 : bf16, stages=2, layout=swizzle>
  %b = smem.alloc : !smem.buffer<k=64, n=256 : bf16, stages=2, layout=swizzle>
  %c = reg.zeros : !reg.frag<c, m=16, n=256 : f32>
  %d = reg.wgmma %a[%m0], %b[%m0], %c {at = #hbm.labels<k=56>} : !smem.buffer<m=128, k=64 : bf16, stages=2, layout=swizzle>, !smem.buffer<k=64, n=256 : bf16, stages=2, layout=swizzle>, !reg.frag<c, m=16, n=256 : f32> -> !reg.frag<c, m=16, n=256 : f32>
  hbm.return
}
// CHECK: reg.wgmma: a 16-wide slice at 56 along 'k' does not fit the tile's 64

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=128>, num_outputs = 1 : i32, reg.warps = #hbm.labels<m=8>} {
^bb0(%g: !hbm.global<m=100, n=256 : bf16>, %m0: index):
  %a = smem.alloc : !smem.buffer<m=128, k=64 : bf16, stages=2, layout=swizzle>
  %b = smem.alloc : !smem.buffer<k=64, n=256 : bf16, stages=2, layout=swizzle>
  %p = smem.alloc : !smem.buffer<m=128, k=64 : bf16, stages=2, layout=pad8>
  %c = reg.zeros : !reg.frag<c, m=16, n=256 : f32>
  %d = reg.wgmma %p[%m0], %b[%m0], %c {at = #hbm.labels<k=0>} : !smem.buffer<m=128, k=64 : bf16, stages=2, layout=pad8>, !smem.buffer<k=64, n=256 : bf16, stages=2, layout=swizzle>, !reg.frag<c, m=16, n=256 : f32> -> !reg.frag<c, m=16, n=256 : f32>
  hbm.return
}
// CHECK: reg.wgmma: A must be in a 128-byte swizzled buffer (layout=swizzle), got layout=pad8

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=128>, num_outputs = 1 : i32, reg.warps = #hbm.labels<m=8>} {
^bb0(%g: !hbm.global<m=100, n=256 : bf16>, %m0: index):
  %a = smem.alloc : !smem.buffer<m=128, k=64 : bf16, stages=2, layout=swizzle>
  %b = smem.alloc : !smem.buffer<k=64, n=256 : bf16, stages=2, layout=swizzle>
  reg.wgmma_wait {pending = 8 : i32}
  hbm.return
}
// CHECK: reg.wgmma_wait: pending must be in 0..7, got 8

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<i=128>, num_outputs = 1 : i32, reg.warps = #hbm.labels<i=8>} {
^bb0(%g: !hbm.global<i=100, d=128 : bf16>, %i0: index):
  %c0 = arith.constant 0 : index
  %v = smem.alloc : !smem.buffer<j=64, d=128 : bf16, stages=2, layout=swizzle>
  %p = reg.zeros : !reg.frag<c, i=16, j=16 : f32>
  %acc = reg.zeros : !reg.frag<c, i=16, d=128 : f32>
  %o = reg.wgmma_rs %p, %v[%c0], %acc {at = #hbm.labels<j=0>} : !reg.frag<c, i=16, j=16 : f32>, !smem.buffer<j=64, d=128 : bf16, stages=2, layout=swizzle>, !reg.frag<c, i=16, d=128 : f32> -> !reg.frag<c, i=16, d=128 : f32>
  hbm.return
}
// CHECK: reg.wgmma_rs: A and B are both bf16 or both f16, got f32 and bf16

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<i=128>, num_outputs = 1 : i32, reg.warps = #hbm.labels<i=8>} {
^bb0(%g: !hbm.global<i=100, d=128 : bf16>, %i0: index):
  %c0 = arith.constant 0 : index
  %v = smem.alloc : !smem.buffer<j=64, d=128 : bf16, stages=2, layout=swizzle>
  %s = reg.zeros : !reg.frag<c, i=32, j=16 : f32>
  %p = reg.to_a %s {at = #hbm.labels<j=0>} : !reg.frag<c, i=32, j=16 : f32> -> !reg.frag<a, i=32, j=16 : bf16>
  %acc = reg.zeros : !reg.frag<c, i=16, d=128 : f32>
  %o = reg.wgmma_rs %p, %v[%c0], %acc {at = #hbm.labels<j=0>} : !reg.frag<a, i=32, j=16 : bf16>, !smem.buffer<j=64, d=128 : bf16, stages=2, layout=swizzle>, !reg.frag<c, i=16, d=128 : f32> -> !reg.frag<c, i=16, d=128 : f32>
  hbm.return
}
// CHECK: reg.wgmma_rs: A is one warp's 16 x 16 `a` fragment <i, j>, got !reg.frag<a, i=32, j=16 : bf16>

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<i=128>, num_outputs = 1 : i32, reg.warps = #hbm.labels<i=8>} {
^bb0(%g: !hbm.global<i=100, d=128 : bf16>, %i0: index):
  %c0 = arith.constant 0 : index
  %v = smem.alloc : !smem.buffer<j=64, d=128 : bf16, stages=2, layout=swizzle>
  %s = reg.zeros : !reg.frag<c, i=16, j=64 : f32>
  %p = reg.to_a %s {at = #hbm.labels<j=0>} : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<a, i=16, j=16 : bf16>
  %acc = reg.zeros : !reg.frag<c, i=16, d=128 : f32>
  %o = reg.wgmma_rs %p, %v[%c0], %acc {at = #hbm.labels<j=64>} : !reg.frag<a, i=16, j=16 : bf16>, !smem.buffer<j=64, d=128 : bf16, stages=2, layout=swizzle>, !reg.frag<c, i=16, d=128 : f32> -> !reg.frag<c, i=16, d=128 : f32>
  hbm.return
}
// CHECK: reg.wgmma_rs: a 16-wide slice at 64 along 'j' does not fit the tile's 64

// -----
// A's rows folded from r and i, but the warps do not hold a place of r each
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<r=4, i=32>, num_outputs = 1 : i32, reg.warps = #hbm.labels<i=8>} {
^bb0(%g: !hbm.global<r=4, i=100, d=64 : bf16>, %r0: index, %i0: index):
  %a = smem.alloc : !smem.buffer<r=4, i=32, d=64 : bf16, stages=1, layout=swizzle>
  %b = smem.alloc : !smem.buffer<j=64, d=64 : bf16, stages=2, layout=swizzle>
  %c = reg.zeros : !reg.frag<c, i=16, j=64 : f32>
  %d = reg.wgmma %a[%i0], %b[%i0], %c {at = #hbm.labels<d=0>} : !smem.buffer<r=4, i=32, d=64 : bf16, stages=1, layout=swizzle>, !smem.buffer<j=64, d=64 : bf16, stages=2, layout=swizzle>, !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<c, i=16, j=64 : f32>
  hbm.return
}
// CHECK: reg.wgmma: expects A<i, d> for accumulators with rows 'i' (or A<..., i, d>, its rows folded from axes before 'i' whose every place has warps of its own), got A['r', 'i', 'd']
