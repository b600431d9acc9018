// RUN: napkin-opt %s | napkin-opt | filecheck %s
// RUN: napkin-opt %s --print-op-generic | napkin-opt | filecheck %s

// Grouped-query attention's block rows are a group's query heads by query positions: the
// warps hold a head each (`reg.warps = <r=4, i=2>`: every place of r has warps of its
// own), so fragments lack r. ldmatrix reads a warp's rows of its head's place; wgmma's A
// folds its rows from r and i (4 x 32 = 128, head by head); stmatrix writes a warp's rows
// into its head's place of the output's panel.

// CHECK: reg.warps = #hbm.labels<r=4, i=2>
// CHECK: %qa = reg.ldmatrix %bq[%c0] {at = #hbm.labels<d=16>} : !smem.buffer<r=4, i=32, d=64 : bf16, stages=1, layout=pad8> -> !reg.frag<a, i=16, d=16 : bf16>
// CHECK: %s = reg.wgmma %aq[%c0], %bk[%c0], %z {at = #hbm.labels<d=0>} : !smem.buffer<r=4, i=32, d=64 : bf16, stages=1, layout=swizzle>, !smem.buffer<j=64, d=64 : bf16, stages=2, layout=swizzle>, !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<c, i=16, j=64 : f32>
// CHECK: reg.stmatrix %zo -> %po[%c0] {at = #hbm.labels<d=0>} : !reg.frag<c, i=16, d=64 : f32>, !smem.buffer<r=4, i=32, d=64 : bf16, stages=2, layout=swizzle>
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<r=4, i=32>, num_outputs = 1 : i32, reg.warps = #hbm.labels<r=4, i=2>} {
^bb0(%q: !hbm.global<r=4, i=100, d=64 : bf16>, %k: !hbm.global<j=60, d=64 : bf16>, %out: !hbm.global<r=4, i=100, d=64 : bf16>, %r0: index, %i0: index):
  %c0 = arith.constant 0 : index
  %bq = smem.alloc : !smem.buffer<r=4, i=32, d=64 : bf16, stages=1, layout=pad8>
  %aq = smem.alloc : !smem.buffer<r=4, i=32, d=64 : bf16, stages=1, layout=swizzle>
  %bk = smem.alloc : !smem.buffer<j=64, d=64 : bf16, stages=2, layout=swizzle>
  %qa = reg.ldmatrix %bq[%c0] {at = #hbm.labels<d=16>} : !smem.buffer<r=4, i=32, d=64 : bf16, stages=1, layout=pad8> -> !reg.frag<a, i=16, d=16 : bf16>
  %z = reg.zeros : !reg.frag<c, i=16, j=64 : f32>
  %s = reg.wgmma %aq[%c0], %bk[%c0], %z {at = #hbm.labels<d=0>} : !smem.buffer<r=4, i=32, d=64 : bf16, stages=1, layout=swizzle>, !smem.buffer<j=64, d=64 : bf16, stages=2, layout=swizzle>, !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<c, i=16, j=64 : f32>
  %po = smem.alloc : !smem.buffer<r=4, i=32, d=64 : bf16, stages=2, layout=swizzle>
  %zo = reg.zeros : !reg.frag<c, i=16, d=64 : f32>
  reg.stmatrix %zo -> %po[%c0] {at = #hbm.labels<d=0>} : !reg.frag<c, i=16, d=64 : f32>, !smem.buffer<r=4, i=32, d=64 : bf16, stages=2, layout=swizzle>
  hbm.return
}
