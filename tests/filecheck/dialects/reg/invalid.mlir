// RUN: napkin-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

func.func @f(%x: !reg.frag<a, m=24, k=16 : bf16>) {
  func.return
}
// CHECK: !reg.frag: an 'a' fragment is rows a multiple of 16 by 16 (mma.sync m16n8k16), got 24 x 16

// -----
func.func @f(%x: !reg.frag<c, m=16, n=8 : bf16>) {
  func.return
}
// CHECK: !reg.frag: 'c' fragments hold f32, got bf16

// -----
func.func @f(%x: !reg.frag<d, m=16, n=8 : f32>) {
  func.return
}
// CHECK: a fragment's role is a, b, c, row, row_part, col, line or line_col, got 'd'

// -----
func.func @f(%a: !reg.frag<a, m=16, k=16 : bf16>, %b: !reg.frag<b, j=16, n=8 : bf16>, %c: !reg.frag<c, m=16, n=8 : f32>) {
  %d = reg.mma %a, %b, %c : !reg.frag<a, m=16, k=16 : bf16>, !reg.frag<b, j=16, n=8 : bf16>, !reg.frag<c, m=16, n=8 : f32> -> !reg.frag<c, m=16, n=8 : f32>
  func.return
}
// CHECK: reg.mma: expects a<m, k> . b<k, n> + c<m, n>, got a['m', 'k'] b['j', 'n'] c['m', 'n']

// -----
func.func @f(%buf: !smem.buffer<m=32, k=32 : bf16, stages=2, layout=row>, %s: index) {
  %a = reg.ldmatrix %buf[%s] {at = #hbm.labels<k=24>} : !smem.buffer<m=32, k=32 : bf16, stages=2, layout=row> -> !reg.frag<a, m=16, k=16 : bf16>
  func.return
}
// CHECK: reg.ldmatrix: a slice of 16 at 24 along 'k' does not fit the buffer's 32

// -----
func.func @f() {
  %z = reg.zeros : !reg.frag<a, m=16, k=16 : bf16>
  func.return
}
// CHECK: reg.zeros: makes accumulators (role c)

// -----
func.func @f(%p: !reg.frag<line, i=2, j=1024 : f32>, %out: !hbm.global<i=16, j=1024 : f32>, %m0: index) {
  reg.store %p, %out[%m0, %m0] {accumulate} : !reg.frag<line, i=2, j=1024 : f32>, !hbm.global<i=16, j=1024 : f32>
  func.return
}
// CHECK: reg.store: accumulate adds accumulators (role c), a block's part of a split sum, got !reg.frag<line, i=2, j=1024 : f32>
