// RUN: napkin-opt %s | napkin-opt | filecheck %s
// RUN: napkin-opt %s --print-op-generic | napkin-opt | filecheck %s

// A GEMM's epilogue of broadcast vectors: a bias per column and one per row read straight
// from global memory into `col` and `row` fragments (a bf16 one widened to f32), added to
// the accumulators, then relu.

// CHECK: reg.warps = #hbm.labels<m=2, n=2>
// CHECK: %cb = reg.load %bn[%n0] : !hbm.global<n=136 : f32> -> !reg.frag<col, n=32 : f32>
// CHECK-NEXT: %rb = reg.load %bm[%m0] : !hbm.global<m=200 : bf16> -> !reg.frag<row, m=32 : f32>
// CHECK-NEXT: %y = reg.map add %acc, %cb : !reg.frag<c, m=32, n=32 : f32>, !reg.frag<col, n=32 : f32> -> !reg.frag<c, m=32, n=32 : f32>
// CHECK-NEXT: %x = reg.map add %rb, %y : !reg.frag<row, m=32 : f32>, !reg.frag<c, m=32, n=32 : f32> -> !reg.frag<c, m=32, n=32 : f32>
// CHECK-NEXT: %cc = reg.map mul %cb, %cb : !reg.frag<col, n=32 : f32>, !reg.frag<col, n=32 : f32> -> !reg.frag<col, n=32 : f32>
// CHECK-NEXT: %r = reg.map max %x by 0.0 : !reg.frag<c, m=32, n=32 : f32> -> !reg.frag<c, m=32, n=32 : f32>
// CHECK-NEXT: reg.store %r, %out[%m0, %n0] : !reg.frag<c, m=32, n=32 : f32>, !hbm.global<m=200, n=136 : bf16>
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=64, n=64>, num_outputs = 1 : i32, reg.warps = #hbm.labels<m=2, n=2>} {
^bb0(%bn: !hbm.global<n=136 : f32>, %bm: !hbm.global<m=200 : bf16>, %out: !hbm.global<m=200, n=136 : bf16>, %m0: index, %n0: index):
  %acc = reg.zeros : !reg.frag<c, m=32, n=32 : f32>
  %cb = reg.load %bn[%n0] : !hbm.global<n=136 : f32> -> !reg.frag<col, n=32 : f32>
  %rb = reg.load %bm[%m0] : !hbm.global<m=200 : bf16> -> !reg.frag<row, m=32 : f32>
  %y = reg.map add %acc, %cb : !reg.frag<c, m=32, n=32 : f32>, !reg.frag<col, n=32 : f32> -> !reg.frag<c, m=32, n=32 : f32>
  %x = reg.map add %rb, %y : !reg.frag<row, m=32 : f32>, !reg.frag<c, m=32, n=32 : f32> -> !reg.frag<c, m=32, n=32 : f32>
  %cc = reg.map mul %cb, %cb : !reg.frag<col, n=32 : f32>, !reg.frag<col, n=32 : f32> -> !reg.frag<col, n=32 : f32>
  %r = reg.map max %x by 0.0 : !reg.frag<c, m=32, n=32 : f32> -> !reg.frag<c, m=32, n=32 : f32>
  reg.store %r, %out[%m0, %n0] : !reg.frag<c, m=32, n=32 : f32>, !hbm.global<m=200, n=136 : bf16>
  hbm.return
}
