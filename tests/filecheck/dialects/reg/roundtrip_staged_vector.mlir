// RUN: napkin-opt %s | napkin-opt | filecheck %s
// RUN: napkin-opt %s --print-op-generic | napkin-opt | filecheck %s

// A statistic of the streamed rows staged by the TMA (a plain f32 vector), read as the
// `col` and `row` fragments reg.load reads from global memory.

// CHECK: %x = reg.read %v[%s] : !smem.buffer<b=1, i=64 : f32, stages=3, layout=row> -> !reg.frag<col, i=64 : f32>
// CHECK-NEXT: %y = reg.read %v[%s] : !smem.buffer<b=1, i=64 : f32, stages=3, layout=row> -> !reg.frag<row, i=16 : f32>
func.func @f(%v: !smem.buffer<b=1, i=64 : f32, stages=3, layout=row>, %s: index) {
  %x = reg.read %v[%s] : !smem.buffer<b=1, i=64 : f32, stages=3, layout=row> -> !reg.frag<col, i=64 : f32>
  %y = reg.read %v[%s] : !smem.buffer<b=1, i=64 : f32, stages=3, layout=row> -> !reg.frag<row, i=16 : f32>
  func.return
}
