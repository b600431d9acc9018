// RUN: napkin-opt %s | napkin-opt | filecheck %s
// RUN: napkin-opt %s --print-op-generic | napkin-opt | filecheck %s

// A kernel that sums down its columns (a bias's gradient): two warps split the block's 128
// columns, each reads a stage's rows as a `line` fragment of its 64 columns, reduces them down
// the columns into a `line_col` fragment (one value per column), adds a running sum and stores.

// CHECK: reg.warps = #hbm.labels<n=2>
// CHECK: %z = reg.fill {value = 0.000000e+00 : f32} : !reg.frag<line_col, n=64 : f32, span=64>
// CHECK-NEXT: %x = reg.read %buf[%s] : !smem.buffer<m=32, n=128 : bf16, stages=1, layout=row> -> !reg.frag<line, m=32, n=64 : f32, span=64>
// CHECK-NEXT: %c = reg.col_reduce sum %x : !reg.frag<line, m=32, n=64 : f32, span=64> -> !reg.frag<line_col, n=64 : f32, span=64>
// CHECK-NEXT: %a = reg.map add %z, %c : !reg.frag<line_col, n=64 : f32, span=64>, !reg.frag<line_col, n=64 : f32, span=64> -> !reg.frag<line_col, n=64 : f32, span=64>
// CHECK-NEXT: %y = reg.map sub %x, %a : !reg.frag<line, m=32, n=64 : f32, span=64>, !reg.frag<line_col, n=64 : f32, span=64> -> !reg.frag<line, m=32, n=64 : f32, span=64>
// CHECK-NEXT: reg.store %a, %out[%n0] : !reg.frag<line_col, n=64 : f32, span=64>, !hbm.global<n=200 : f32>
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<n=128>, num_outputs = 1 : i32, reg.warps = #hbm.labels<n=2>} {
^bb0(%in: !hbm.global<m=100, n=200 : bf16>, %out: !hbm.global<n=200 : f32>, %n0: index):
  %s = arith.constant 0 : index
  %buf = smem.alloc : !smem.buffer<m=32, n=128 : bf16, stages=1, layout=row>
  %z = reg.fill {value = 0.000000e+00 : f32} : !reg.frag<line_col, n=64 : f32, span=64>
  %x = reg.read %buf[%s] : !smem.buffer<m=32, n=128 : bf16, stages=1, layout=row> -> !reg.frag<line, m=32, n=64 : f32, span=64>
  %c = reg.col_reduce sum %x : !reg.frag<line, m=32, n=64 : f32, span=64> -> !reg.frag<line_col, n=64 : f32, span=64>
  %a = reg.map add %z, %c : !reg.frag<line_col, n=64 : f32, span=64>, !reg.frag<line_col, n=64 : f32, span=64> -> !reg.frag<line_col, n=64 : f32, span=64>
  %y = reg.map sub %x, %a : !reg.frag<line, m=32, n=64 : f32, span=64>, !reg.frag<line_col, n=64 : f32, span=64> -> !reg.frag<line, m=32, n=64 : f32, span=64>
  reg.store %a, %out[%n0] : !reg.frag<line_col, n=64 : f32, span=64>, !hbm.global<n=200 : f32>
  hbm.return
}
