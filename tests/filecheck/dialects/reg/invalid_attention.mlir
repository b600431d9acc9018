// RUN: napkin-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

func.func @f(%x: !reg.frag<row, i=24 : f32>) {
  func.return
}
// CHECK: !reg.frag: a 'row' fragment has one axis, a multiple of 16 long, of f32 (one value per row of a 'c' fragment), got {'i': 24} : f32

// -----
func.func @f(%x: !reg.frag<c, i=16, j=64 : f32>, %m: !reg.frag<row, i=32 : f32>) {
  %y = reg.map sub %x, %m : !reg.frag<c, i=16, j=64 : f32>, !reg.frag<row, i=32 : f32> -> !reg.frag<c, i=16, j=64 : f32>
  func.return
}
// CHECK: reg.map: the operands' rows differ

// -----
func.func @f(%x: !reg.frag<c, i=16, j=64 : f32>) {
  %y = reg.map exp2 %x, %x : !reg.frag<c, i=16, j=64 : f32>, !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<c, i=16, j=64 : f32>
  func.return
}
// CHECK: reg.map: exp2 takes 1 operand(s), got 2

// -----
func.func @f(%x: !reg.frag<c, i=16, j=64 : f32>) {
  %y = reg.map scale %x : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<c, i=16, j=64 : f32>
  func.return
}
// CHECK: reg.map: 'by' is required for scale, and takes the place of the second operand of a binary function

// -----
func.func @f(%x: !reg.frag<c, i=16, j=64 : f32>, %m: !reg.frag<row, i=16 : f32>) {
  %y = reg.map sub %m, %x : !reg.frag<row, i=16 : f32>, !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<row, i=16 : f32>
  func.return
}
// CHECK: reg.map: the result should be !reg.frag<c, i=16, j=64 : f32>, got !reg.frag<row, i=16 : f32>

// -----
func.func @f(%x: !reg.frag<c, i=16, j=64 : f32>) {
  %y = reg.map log %x : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<c, i=16, j=64 : f32>
  func.return
}
// CHECK: unknown reg.map function 'log'

// -----
func.func @f(%x: !reg.frag<a, i=16, j=16 : bf16>) {
  %y = reg.map exp2 %x : !reg.frag<a, i=16, j=16 : bf16> -> !reg.frag<a, i=16, j=16 : bf16>
  func.return
}
// CHECK: reg.map: operand #0 must be a 'c', 'row', 'row_part', 'col', 'line' or 'line_col' fragment (f32), got !reg.frag<a, i=16, j=16 : bf16>

// -----
func.func @f(%x: !reg.frag<c, i=16, j=64 : f32>) {
  %y = reg.row_reduce max %x : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<row, i=32 : f32>
  func.return
}
// CHECK: reg.row_reduce: the result should be !reg.frag<row, i=16 : f32>, got !reg.frag<row, i=32 : f32>

// -----
func.func @f(%x: !reg.frag<row, i=16 : f32>) {
  %y = reg.row_reduce sum %x : !reg.frag<row, i=16 : f32> -> !reg.frag<row, i=16 : f32>
  func.return
}
// CHECK: reg.row_reduce: reduces the rows of a 'c' or two-axis 'line' fragment, got !reg.frag<row, i=16 : f32>

// -----
func.func @f(%x: !reg.frag<c, i=16, j=64 : f32>, %i0: index) {
  %y = reg.mask causal %x keep i >= i fill -inf at [%i0, %i0] : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<c, i=16, j=64 : f32>
  func.return
}
// CHECK: reg.mask: compares the fragment's rows and columns (i, j), got i >= i

// -----
func.func @f(%x: !reg.frag<c, i=16, j=64 : f32>, %i0: index) {
  %y = reg.mask causal %x keep i >= j fill -inf at [%i0] : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<c, i=16, j=64 : f32>
  func.return
}
// CHECK: reg.mask: takes 2 offset(s) (where the tile starts along i, j), got 1

// -----
func.func @f(%x: !reg.frag<c, i=16, j=64 : f32>, %j0: index) {
  %y = reg.mask_bound %x keep d < 60 fill -inf at [%j0] : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<c, i=16, j=64 : f32>
  func.return
}
// CHECK: reg.mask_bound: axis 'd' is not an axis of !reg.frag<c, i=16, j=64 : f32>

// -----
func.func @f(%x: !reg.frag<c, i=16, j=64 : f32>) {
  %y = reg.to_a %x {at = #hbm.labels<j=56>} : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<a, i=16, j=16 : bf16>
  func.return
}
// CHECK: reg.to_a: a 16-wide slice at 56 along 'j' does not fit !reg.frag<c, i=16, j=64 : f32>

// -----
func.func @f(%x: !reg.frag<c, i=16, j=64 : f32>) {
  %y = reg.to_a %x {at = #hbm.labels<j=16>} : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<a, i=32, j=16 : bf16>
  func.return
}
// CHECK: reg.to_a: keeps the rows and the axes of !reg.frag<c, i=16, j=64 : f32>, got !reg.frag<a, i=32, j=16 : bf16>

// -----
func.func @f() {
  %z = reg.fill {value = 1.0 : f32} : !reg.frag<a, i=16, j=16 : bf16>
  func.return
}
// CHECK: reg.fill: the result must be a 'c', 'row', 'row_part', 'col', 'line' or 'line_col' fragment (f32), got !reg.frag<a, i=16, j=16 : bf16>

// -----
func.func @f(%buf: !smem.buffer<b=2, j=64, d=32 : bf16, stages=2, layout=pad8>, %s: index) {
  %a = reg.ldmatrix %buf[%s] {at = #hbm.labels<d=0>} : !smem.buffer<b=2, j=64, d=32 : bf16, stages=2, layout=pad8> -> !reg.frag<b, d=16, j=64 : bf16>
  func.return
}
// CHECK: reg.ldmatrix: the fragment's axes ['d', 'j'] must be the buffer's ['b', 'j', 'd'] but for axes of size 1

// -----
// a fragment may lack an axis of the buffer only where the warps hold a place of it each
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<r=4, i=32>, num_outputs = 1 : i32, reg.warps = #hbm.labels<r=2, i=2>} {
^bb0(%g: !hbm.global<r=4, i=100, d=32 : bf16>, %r0: index, %i0: index):
  %buf = smem.alloc : !smem.buffer<r=4, i=32, d=32 : bf16, stages=1, layout=pad8>
  %a = reg.ldmatrix %buf[%i0] {at = #hbm.labels<d=0>} : !smem.buffer<r=4, i=32, d=32 : bf16, stages=1, layout=pad8> -> !reg.frag<a, i=16, d=16 : bf16>
  hbm.return
}
// CHECK: reg.ldmatrix: the fragment's axes ['i', 'd'] must be the buffer's ['r', 'i', 'd'] but for axes of size 1 or held a place a warp (reg.warps)
