// RUN: napkin-opt %s | napkin-opt | filecheck %s
// RUN: napkin-opt %s --print-op-generic | napkin-opt | filecheck %s

// A kernel with no product: a row softmax on `line` fragments (whole rows a warp, 8 columns
// of every 256 a lane), read from the staged tile, reduced along the rows, stored; and a
// row sum stored as a vector.

// CHECK: reg.warps = #hbm.labels<i=4>
// CHECK: %x = reg.read %buf[%s] : !smem.buffer<i=8, j=512 : bf16, stages=1, layout=row> -> !reg.frag<line, i=2, j=512 : f32>
// CHECK-NEXT: %y = reg.map scale %x by 1.4426950216293335 : !reg.frag<line, i=2, j=512 : f32> -> !reg.frag<line, i=2, j=512 : f32>
// CHECK-NEXT: %m = reg.row_reduce max %y : !reg.frag<line, i=2, j=512 : f32> -> !reg.frag<line, i=2 : f32>
// CHECK-NEXT: %d = reg.map sub %y, %m : !reg.frag<line, i=2, j=512 : f32>, !reg.frag<line, i=2 : f32> -> !reg.frag<line, i=2, j=512 : f32>
// CHECK-NEXT: %e = reg.map exp2 %d : !reg.frag<line, i=2, j=512 : f32> -> !reg.frag<line, i=2, j=512 : f32>
// CHECK-NEXT: %l = reg.row_reduce sum %e : !reg.frag<line, i=2, j=512 : f32> -> !reg.frag<line, i=2 : f32>
// CHECK-NEXT: %p = reg.map div %e, %l : !reg.frag<line, i=2, j=512 : f32>, !reg.frag<line, i=2 : f32> -> !reg.frag<line, i=2, j=512 : f32>
// CHECK-NEXT: reg.store %p, %out[%i0, %c0] : !reg.frag<line, i=2, j=512 : f32>, !hbm.global<i=40, j=512 : bf16>
// CHECK-NEXT: reg.store %l, %sums[%i0] : !reg.frag<line, i=2 : f32>, !hbm.global<i=40 : f32>

// Rows of 64 columns (the attention backward's D = rowsum(dO * O)): span 64, a row across 8
// lanes, 4 rows a warp at a time; the row sums keep the span.

// CHECK: reg.warps = #hbm.labels<i=4>
// CHECK: %x = reg.read %o_s[%s] : !smem.buffer<i=16, d=64 : bf16, stages=1, layout=row> -> !reg.frag<line, i=4, d=64 : f32, span=64>
// CHECK-NEXT: %y = reg.read %do_s[%s] : !smem.buffer<i=16, d=64 : bf16, stages=1, layout=row> -> !reg.frag<line, i=4, d=64 : f32, span=64>
// CHECK-NEXT: %p = reg.map mul %y, %x : !reg.frag<line, i=4, d=64 : f32, span=64>, !reg.frag<line, i=4, d=64 : f32, span=64> -> !reg.frag<line, i=4, d=64 : f32, span=64>
// CHECK-NEXT: %delta = reg.row_reduce sum %p : !reg.frag<line, i=4, d=64 : f32, span=64> -> !reg.frag<line, i=4 : f32, span=64>
// CHECK-NEXT: reg.store %delta, %out[%i0] : !reg.frag<line, i=4 : f32, span=64>, !hbm.global<i=200 : f32>
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<i=8>, num_outputs = 2 : i32, reg.warps = #hbm.labels<i=4>} {
^bb0(%in: !hbm.global<i=40, j=512 : bf16>, %out: !hbm.global<i=40, j=512 : bf16>, %sums: !hbm.global<i=40 : f32>, %i0: index):
  %c0 = arith.constant 0 : index
  %buf = smem.alloc : !smem.buffer<i=8, j=512 : bf16, stages=1, layout=row>
  %s = arith.constant 0 : index
  %x = reg.read %buf[%s] : !smem.buffer<i=8, j=512 : bf16, stages=1, layout=row> -> !reg.frag<line, i=2, j=512 : f32>
  %y = reg.map scale %x by 1.4426950216293335 : !reg.frag<line, i=2, j=512 : f32> -> !reg.frag<line, i=2, j=512 : f32>
  %m = reg.row_reduce max %y : !reg.frag<line, i=2, j=512 : f32> -> !reg.frag<line, i=2 : f32>
  %d = reg.map sub %y, %m : !reg.frag<line, i=2, j=512 : f32>, !reg.frag<line, i=2 : f32> -> !reg.frag<line, i=2, j=512 : f32>
  %e = reg.map exp2 %d : !reg.frag<line, i=2, j=512 : f32> -> !reg.frag<line, i=2, j=512 : f32>
  %l = reg.row_reduce sum %e : !reg.frag<line, i=2, j=512 : f32> -> !reg.frag<line, i=2 : f32>
  %p = reg.map div %e, %l : !reg.frag<line, i=2, j=512 : f32>, !reg.frag<line, i=2 : f32> -> !reg.frag<line, i=2, j=512 : f32>
  reg.store %p, %out[%i0, %c0] : !reg.frag<line, i=2, j=512 : f32>, !hbm.global<i=40, j=512 : bf16>
  reg.store %l, %sums[%i0] : !reg.frag<line, i=2 : f32>, !hbm.global<i=40 : f32>
  hbm.return
}
hbm.kernel attributes {sym_name = "delta", grid = #hbm.labels<i=16>, num_outputs = 1 : i32, reg.warps = #hbm.labels<i=4>} {
^bb0(%o: !hbm.global<i=200, d=64 : bf16>, %do: !hbm.global<i=200, d=64 : bf16>, %out: !hbm.global<i=200 : f32>, %i0: index):
  %o_s = smem.alloc : !smem.buffer<i=16, d=64 : bf16, stages=1, layout=row>
  %do_s = smem.alloc : !smem.buffer<i=16, d=64 : bf16, stages=1, layout=row>
  %s = arith.constant 0 : index
  %x = reg.read %o_s[%s] : !smem.buffer<i=16, d=64 : bf16, stages=1, layout=row> -> !reg.frag<line, i=4, d=64 : f32, span=64>
  %y = reg.read %do_s[%s] : !smem.buffer<i=16, d=64 : bf16, stages=1, layout=row> -> !reg.frag<line, i=4, d=64 : f32, span=64>
  %p = reg.map mul %y, %x : !reg.frag<line, i=4, d=64 : f32, span=64>, !reg.frag<line, i=4, d=64 : f32, span=64> -> !reg.frag<line, i=4, d=64 : f32, span=64>
  %delta = reg.row_reduce sum %p : !reg.frag<line, i=4, d=64 : f32, span=64> -> !reg.frag<line, i=4 : f32, span=64>
  reg.store %delta, %out[%i0] : !reg.frag<line, i=4 : f32, span=64>, !hbm.global<i=200 : f32>
  hbm.return
}
