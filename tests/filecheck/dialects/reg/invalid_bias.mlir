// RUN: napkin-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

func.func @f(%x: !reg.frag<col, n=12 : f32>) {
  func.return
}
// CHECK: !reg.frag: a 'col' fragment has one axis, a multiple of 8 long, of f32 (one value per column of a 'c' fragment), got {'n': 12} : f32

// -----
func.func @f(%x: !reg.frag<col, n=16 : bf16>) {
  func.return
}
// CHECK: !reg.frag: a 'col' fragment has one axis, a multiple of 8 long, of f32 (one value per column of a 'c' fragment), got {'n': 16} : bf16

// -----
func.func @f(%x: !reg.frag<c, m=16, n=64 : f32>, %b: !reg.frag<col, n=32 : f32>) {
  %y = reg.map add %x, %b : !reg.frag<c, m=16, n=64 : f32>, !reg.frag<col, n=32 : f32> -> !reg.frag<c, m=16, n=64 : f32>
  func.return
}
// CHECK: reg.map: the operands' columns differ: !reg.frag<c, m=16, n=64 : f32>, !reg.frag<col, n=32 : f32>

// -----
func.func @f(%x: !reg.frag<c, m=16, n=64 : f32>, %b: !reg.frag<col, m=16 : f32>) {
  %y = reg.map add %x, %b : !reg.frag<c, m=16, n=64 : f32>, !reg.frag<col, m=16 : f32> -> !reg.frag<c, m=16, n=64 : f32>
  func.return
}
// CHECK: reg.map: the operands' columns differ: !reg.frag<c, m=16, n=64 : f32>, !reg.frag<col, m=16 : f32>

// -----
func.func @f(%r: !reg.frag<row, m=16 : f32>, %b: !reg.frag<col, n=16 : f32>) {
  %y = reg.map add %r, %b : !reg.frag<row, m=16 : f32>, !reg.frag<col, n=16 : f32> -> !reg.frag<row, m=16 : f32>
  func.return
}
// CHECK: reg.map: a 'row' and a 'col' fragment broadcast only along a 'c' one, got !reg.frag<row, m=16 : f32>, !reg.frag<col, n=16 : f32>

// -----
func.func @f(%g: !hbm.global<m=64, n=64 : f32>, %o: index) {
  %b = reg.load %g[%o, %o] : !hbm.global<m=64, n=64 : f32> -> !reg.frag<c, m=16, n=64 : f32>
  func.return
}
// CHECK: reg.load: loads a 'row' or 'col' fragment, or a 'line' fragment of one axis (one value per row or column), got !reg.frag<c, m=16, n=64 : f32>

// -----
func.func @f(%g: !hbm.global<n=64 : f32>, %o: index) {
  %b = reg.load %g[%o] : !hbm.global<n=64 : f32> -> !reg.frag<col, k=64 : f32>
  func.return
}
// CHECK: reg.load: the fragment's axis 'k' is not an axis of !hbm.global<n=64 : f32>

// -----
func.func @f(%g: !hbm.global<b=2, n=64 : f32>, %o: index) {
  %b = reg.load %g[%o] : !hbm.global<b=2, n=64 : f32> -> !reg.frag<col, n=64 : f32>
  func.return
}
// CHECK: reg.load: takes one offset per axis of the global (2), got 1
