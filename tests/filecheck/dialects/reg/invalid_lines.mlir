// RUN: napkin-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

func.func @f(%x: !reg.frag<line, i=2, j=200 : f32>) {
  func.return
}
// CHECK: !reg.frag: a 'line' fragment is rows by columns, a multiple of 256 (8 a lane), or rows alone (one value per row), of f32; got {'i': 2, 'j': 200} : f32

// -----
func.func @f(%x: !reg.frag<line, i=2, j=256 : bf16>) {
  func.return
}
// CHECK: !reg.frag: a 'line' fragment is rows by columns, a multiple of 256 (8 a lane), or rows alone (one value per row), of f32; got {'i': 2, 'j': 256} : bf16

// -----
func.func @f(%x: !reg.frag<line, i=2, j=256 : f32>, %r: !reg.frag<row, i=16 : f32>) {
  %y = reg.map sub %x, %r : !reg.frag<line, i=2, j=256 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<line, i=2, j=256 : f32>
  func.return
}
// CHECK: reg.map: a 'line' fragment meets only 'line' fragments of its rows, got !reg.frag<line, i=2, j=256 : f32>, !reg.frag<row, i=16 : f32>

// -----
func.func @f(%x: !reg.frag<line, i=2, j=256 : f32>, %r: !reg.frag<line, i=1 : f32>) {
  %y = reg.map sub %x, %r : !reg.frag<line, i=2, j=256 : f32>, !reg.frag<line, i=1 : f32> -> !reg.frag<line, i=2, j=256 : f32>
  func.return
}
// CHECK: reg.map: a 'line' fragment meets only 'line' fragments of its rows, got !reg.frag<line, i=2, j=256 : f32>, !reg.frag<line, i=1 : f32>

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
