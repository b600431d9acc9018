// RUN: napkin-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

func.func @f(%x: !reg.frag<line, i=2, j=200 : f32>) {
  func.return
}
// CHECK: !reg.frag: a 'line' fragment is rows by columns, a multiple of its span 256 (8 a lane), or rows alone (one value per row), of f32; got {'i': 2, 'j': 200} : f32

// -----
func.func @f(%x: !reg.frag<line, i=2, j=256 : bf16>) {
  func.return
}
// CHECK: !reg.frag: a 'line' fragment is rows by columns, a multiple of its span 256 (8 a lane), or rows alone (one value per row), of f32; got {'i': 2, 'j': 256} : bf16

// -----
func.func @f(%x: !reg.frag<line, i=2, j=256 : f32>, %r: !reg.frag<row, i=16 : f32>) {
  %y = reg.map sub %x, %r : !reg.frag<line, i=2, j=256 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<line, i=2, j=256 : f32>
  func.return
}
// CHECK: reg.map: a 'line' fragment meets only 'line' fragments of its rows and span, got !reg.frag<line, i=2, j=256 : f32>, !reg.frag<row, i=16 : f32>

// -----
func.func @f(%x: !reg.frag<line, i=2, j=256 : f32>, %r: !reg.frag<line, i=1 : f32>) {
  %y = reg.map sub %x, %r : !reg.frag<line, i=2, j=256 : f32>, !reg.frag<line, i=1 : f32> -> !reg.frag<line, i=2, j=256 : f32>
  func.return
}
// CHECK: reg.map: a 'line' fragment meets only 'line' fragments of its rows and span, got !reg.frag<line, i=2, j=256 : f32>, !reg.frag<line, i=1 : f32>

// -----
func.func @f(%x: !reg.frag<line, i=2 : f32>) {
  %m = reg.row_reduce max %x : !reg.frag<line, i=2 : f32> -> !reg.frag<line, i=2 : f32>
  func.return
}
// CHECK: reg.row_reduce: reduces the rows of a 'c' or two-axis 'line' fragment, got !reg.frag<line, i=2 : f32>

// -----
func.func @f(%b: !smem.buffer<i=8, j=512 : bf16, stages=1, layout=row>, %s: index) {
  %x = reg.read %b[%s] : !smem.buffer<i=8, j=512 : bf16, stages=1, layout=row> -> !reg.frag<line, i=2, j=256 : f32>
  func.return
}
// CHECK: reg.read: the buffer's rows and whole columns must be the fragment's <i, j> (axes of one place aside), got !smem.buffer<i=8, j=512 : bf16, stages=1, layout=row>

// -----
func.func @f(%b: !smem.buffer<i=8, j=512 : bf16, stages=1, layout=row>, %s: index) {
  %x = reg.read %b[%s] : !smem.buffer<i=8, j=512 : bf16, stages=1, layout=row> -> !reg.frag<line, i=3, j=512 : f32>
  func.return
}
// CHECK: reg.read: the buffer's 8 rows are not whole warps' 3

// -----
func.func @f(%b: !smem.buffer<i=8, j=512 : bf16, stages=1, layout=swizzle>, %s: index) {
  %x = reg.read %b[%s] : !smem.buffer<i=8, j=512 : bf16, stages=1, layout=swizzle> -> !reg.frag<line, i=2, j=512 : f32>
  func.return
}
// CHECK: reg.read: reads rows as they lie (layout=row or pad8), got layout=swizzle

// -----
// A row shorter than 256 columns lies across span / 8 lanes; the span is one of 8, 16, ... 256.
func.func @f(%x: !reg.frag<line, i=4, d=72 : f32, span=72>) {
  func.return
}
// CHECK: !reg.frag: a 'line' fragment's span is the columns one row's lanes cover, 8 a lane, over 1, 2, 4, 8, 16 or 32 lanes: one of 8, 16, 32, 64, 128, 256; got 72

// -----
func.func @f(%x: !reg.frag<line, i=4, d=96 : f32, span=64>) {
  func.return
}
// CHECK: !reg.frag: a 'line' fragment is rows by columns, a multiple of its span 64 (8 a lane), or rows alone (one value per row), of f32; got {'i': 4, 'd': 96} : f32

// -----
// Rows of span 64 come 4 at a time (8 lanes a row): a warp's rows are a multiple of 4.
func.func @f(%x: !reg.frag<line, i=2, d=64 : f32, span=64>) {
  func.return
}
// CHECK: !reg.frag: a 'line' fragment of span 64 holds i's rows 4 at a time (8 lanes a row); its 2 rows must be a multiple of 4

// -----
func.func @f(%x: !reg.frag<line, i=3 : f32, span=128>) {
  func.return
}
// CHECK: !reg.frag: a 'line' fragment of span 128 holds i's rows 2 at a time (16 lanes a row); its 3 rows must be a multiple of 2

// -----
func.func @f(%x: !reg.frag<c, i=16, j=64 : f32, span=64>) {
  func.return
}
// CHECK: only a 'line' fragment has a span, got a 'c' fragment

// -----
func.func @f(%x: !reg.frag<line, i=4, d=64 : f32, span=64>, %r: !reg.frag<line, i=4 : f32>) {
  %y = reg.map sub %x, %r : !reg.frag<line, i=4, d=64 : f32, span=64>, !reg.frag<line, i=4 : f32> -> !reg.frag<line, i=4, d=64 : f32, span=64>
  func.return
}
// CHECK: reg.map: a 'line' fragment meets only 'line' fragments of its rows and span, got !reg.frag<line, i=4, d=64 : f32, span=64>, !reg.frag<line, i=4 : f32>

// -----
func.func @f(%x: !reg.frag<line, i=4, d=64 : f32, span=64>) {
  %m = reg.row_reduce max %x : !reg.frag<line, i=4, d=64 : f32, span=64> -> !reg.frag<line, i=4 : f32>
  func.return
}
// CHECK: reg.row_reduce: the result should be !reg.frag<line, i=4 : f32, span=64>, got !reg.frag<line, i=4 : f32>

// -----
func.func @f(%b: !smem.buffer<i=16, d=64 : bf16, stages=1, layout=row>, %s: index) {
  %x = reg.read %b[%s] : !smem.buffer<i=16, d=64 : bf16, stages=1, layout=row> -> !reg.frag<line, i=4, d=64 : f32>
  func.return
}
// CHECK: !reg.frag: a 'line' fragment is rows by columns, a multiple of its span 256 (8 a lane), or rows alone (one value per row), of f32; got {'i': 4, 'd': 64} : f32 (rows of 64 columns take span=64)

// -----
func.func @f(%x: !reg.frag<line_col, n=96 : f32, span=64>) {
  func.return
}
// CHECK: !reg.frag: a 'line_col' fragment is one value per column of a 'line' fragment: one axis, a multiple of its span (one of 8, 16, 32, 64, 128, 256), of f32; got {'n': 96} : f32, span=64

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<i=8>, num_outputs = 1 : i32, reg.warps = #hbm.labels<i=4>} {
^bb0(%out: !hbm.global<i=40 : f32>, %i0: index):
  %x = reg.fill {value = 0.000000e+00 : f32} : !reg.frag<line, i=2 : f32>
  // expected-error @+1 {{reg.col_reduce: reduces the columns of a two-axis 'line' fragment, got !reg.frag<line, i=2 : f32>}}
  %c = "reg.col_reduce"(%x) <{kind = "sum"}> : (!reg.frag<line, i=2 : f32>) -> !reg.frag<line_col, i=2 : f32>
  hbm.return
}
