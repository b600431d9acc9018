// RUN: napkin-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=128, n=256>, num_outputs = 1 : i32, reg.warps = #hbm.labels<m=8>} {
^bb0(%out: !hbm.global<m=512, n=384 : bf16>, %m0: index, %n0: index):
  %c = smem.alloc : !smem.buffer<m=128, n=64 : f32, stages=2, layout=swizzle>
  %f = reg.zeros : !reg.frag<c, m=16, n=256 : f32>
  reg.stmatrix %f -> %c[%m0] {at = #hbm.labels<n=0>} : !reg.frag<c, m=16, n=256 : f32>, !smem.buffer<m=128, n=64 : f32, stages=2, layout=swizzle>
  hbm.return
}
// CHECK: reg.stmatrix: stmatrix writes 16-bit elements; the buffer holds f32

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=128, n=256>, num_outputs = 1 : i32, reg.warps = #hbm.labels<m=8>} {
^bb0(%out: !hbm.global<m=512, n=384 : bf16>, %m0: index, %n0: index):
  %c = smem.alloc : !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>
  %f = reg.zeros : !reg.frag<c, m=16, n=256 : f32>
  reg.stmatrix %f -> %c[%m0] {at = #hbm.labels<n=200>} : !reg.frag<c, m=16, n=256 : f32>, !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>
  hbm.return
}
// CHECK: reg.stmatrix: a window of 64 columns (a multiple of 16) at 200 (a multiple of 8) must fit the fragment's 256

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=128, n=256>, num_outputs = 1 : i32, reg.warps = #hbm.labels<m=8>} {
^bb0(%out: !hbm.global<m=512, n=384 : bf16>, %m0: index, %n0: index):
  %c = smem.alloc : !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>
  %f = reg.zeros : !reg.frag<c, m=16, n=256 : f32>
  reg.stmatrix %f -> %c[%m0] {at = #hbm.labels<m=16>} : !reg.frag<c, m=16, n=256 : f32>, !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>
  hbm.return
}
// CHECK: reg.stmatrix: each warp writes its own rows; `at` may name only the columns 'n'

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=128, n=256>, num_outputs = 1 : i32, reg.warps = #hbm.labels<m=8>} {
^bb0(%out: !hbm.global<m=512, n=384 : bf16>, %m0: index, %n0: index):
  %c = smem.alloc : !smem.buffer<n=64, m=128 : bf16, stages=2, layout=swizzle>
  %f = reg.zeros : !reg.frag<c, m=16, n=256 : f32>
  reg.stmatrix %f -> %c[%m0] {at = #hbm.labels<n=0>} : !reg.frag<c, m=16, n=256 : f32>, !smem.buffer<n=64, m=128 : bf16, stages=2, layout=swizzle>
  hbm.return
}
// CHECK: reg.stmatrix: written transposed, the fragment's columns 'n' are the buffer's rows, whole (a multiple of 8): got 256 into 64

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=128, n=256>, num_outputs = 1 : i32, reg.warps = #hbm.labels<m=8>} {
^bb0(%out: !hbm.global<m=512, n=384 : bf16>, %m0: index, %n0: index):
  %c = smem.alloc : !smem.buffer<m=120, n=64 : bf16, stages=2, layout=swizzle>
  %f = reg.zeros : !reg.frag<c, m=16, n=256 : f32>
  reg.stmatrix %f -> %c[%m0] {at = #hbm.labels<n=0>} : !reg.frag<c, m=16, n=256 : f32>, !smem.buffer<m=120, n=64 : bf16, stages=2, layout=swizzle>
  hbm.return
}
// CHECK: reg.stmatrix: the buffer's 120 rows are not whole warps' 16

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=152, n=128>, num_outputs = 1 : i32, reg.warps = #hbm.labels<n=8>} {
^bb0(%out: !hbm.global<m=512, n=384 : bf16>, %m0: index, %n0: index):
  %c = smem.alloc : !smem.buffer<m=152, n=64 : bf16, stages=2, layout=swizzle>
  %f = reg.zeros : !reg.frag<c, n=16, m=152 : f32>
  reg.stmatrix %f -> %c[%m0] {at = #hbm.labels<n=32>} : !reg.frag<c, n=16, m=152 : f32>, !smem.buffer<m=152, n=64 : bf16, stages=2, layout=swizzle>
  hbm.return
}
// CHECK: reg.stmatrix: written transposed, the window of the buffer's 64 columns 'n' holds whole warps' rows

// -----
// a group's heads whose places the warps do not hold (reg.warps lacks r)
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<r=4, i=32>, num_outputs = 1 : i32, reg.warps = #hbm.labels<i=2>} {
^bb0(%out: !hbm.global<r=4, i=100, d=64 : bf16>, %r0: index, %i0: index):
  %c0 = arith.constant 0 : index
  %o = smem.alloc : !smem.buffer<r=4, i=32, d=64 : bf16, stages=2, layout=swizzle>
  %f = reg.zeros : !reg.frag<c, i=16, d=64 : f32>
  reg.stmatrix %f -> %o[%c0] {at = #hbm.labels<d=0>} : !reg.frag<c, i=16, d=64 : f32>, !smem.buffer<r=4, i=32, d=64 : bf16, stages=2, layout=swizzle>
  hbm.return
}
// CHECK: reg.stmatrix: the fragment's axes ['i', 'd'] must be the buffer's ['r', 'i', 'd'], in order, but for axes of one place, or held a place a warp (reg.warps), before them
