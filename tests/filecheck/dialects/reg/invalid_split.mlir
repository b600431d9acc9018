// RUN: napkin-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<j=128>, num_outputs = 0 : i32, reg.warps = #hbm.labels<j=8>} {
^bb0(%j0: index):
  %z = reg.zeros : !reg.frag<c, d=32, i=64 : f32, split=8>
  hbm.return
}
// CHECK: !reg.frag: split=8 belongs to a 'c' fragment of one warp's 16 rows, got a 'c' fragment of {'d': 32, 'i': 64}

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<j=128>, num_outputs = 0 : i32, reg.warps = #hbm.labels<j=8>} {
^bb0(%j0: index):
  %z = reg.zeros : !reg.frag<row, d=16 : f32, split=8>
  hbm.return
}
// CHECK: !reg.frag: split=8 belongs to a 'c' fragment of one warp's 16 rows, got a 'row' fragment of {'d': 16}

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<j=128>, num_outputs = 0 : i32, reg.warps = #hbm.labels<j=8>} {
^bb0(%j0: index):
  %z = reg.zeros : !reg.frag<c, d=16, i=64 : f32, spread=8>
  hbm.return
}
// CHECK: span

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<j=128>, num_outputs = 0 : i32, reg.warps = #hbm.labels<j=8>} {
^bb0(%j0: index):
  %c0 = arith.constant 0 : index
  %p = smem.alloc : !smem.buffer<i=64, d=128 : f32, stages=1, layout=row>
  %z = reg.zeros : !reg.frag<c, d=16, i=64 : f32, split=8>
  reg.write %z -> %p[%c0] {at = #hbm.labels<>} : !reg.frag<c, d=16, i=64 : f32, split=8>, !smem.buffer<i=64, d=128 : f32, stages=1, layout=row>
  hbm.return
}
// CHECK: reg.write: writes into an f32 buffer of swizzled panels (layout=swizzle)

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<j=128>, num_outputs = 0 : i32, reg.warps = #hbm.labels<j=8>} {
^bb0(%j0: index):
  %c0 = arith.constant 0 : index
  %p = smem.alloc : !smem.buffer<i=64, e=128 : f32, stages=1, layout=swizzle>
  %z = reg.zeros : !reg.frag<c, d=16, i=64 : f32, split=8>
  reg.write %z -> %p[%c0] {at = #hbm.labels<>} : !reg.frag<c, d=16, i=64 : f32, split=8>, !smem.buffer<i=64, e=128 : f32, stages=1, layout=swizzle>
  hbm.return
}
// CHECK: reg.write: the buffer's axes of more than one place must be the fragment's ['d', 'i']

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<j=128>, num_outputs = 0 : i32, reg.warps = #hbm.labels<j=8>} {
^bb0(%j0: index):
  %c0 = arith.constant 0 : index
  %k = smem.alloc : !smem.buffer<j=128, d=64 : bf16, stages=1, layout=swizzle>
  %s = smem.alloc : !smem.buffer<j=128, i=48 : bf16, stages=1, layout=swizzle>
  %z = reg.zeros : !reg.frag<c, d=16, i=32 : f32, split=4>
  %q = reg.wgmma %k[%c0], %s[%c0], %z {at = #hbm.labels<j=0>} : !smem.buffer<j=128, d=64 : bf16, stages=1, layout=swizzle>, !smem.buffer<j=128, i=48 : bf16, stages=1, layout=swizzle>, !reg.frag<c, d=16, i=32 : f32, split=4> -> !reg.frag<c, d=16, i=32 : f32, split=4>
  hbm.return
}
// CHECK: reg.wgmma: B's 48 columns are not whole multiples of a warpgroup's 32 columns of the split accumulators
