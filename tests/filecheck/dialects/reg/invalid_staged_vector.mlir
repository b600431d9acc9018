// RUN: napkin-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

func.func @f(%v: !smem.buffer<b=1, i=64 : bf16, stages=3, layout=row>, %s: index) {
  %x = reg.read %v[%s] : !smem.buffer<b=1, i=64 : bf16, stages=3, layout=row> -> !reg.frag<col, i=64 : f32>
  func.return
}
// CHECK: reg.read: reads a 'col' fragment from a plain f32 vector along 'i' (layout=row), got !smem.buffer<b=1, i=64 : bf16, stages=3, layout=row>

// -----
func.func @f(%v: !smem.buffer<j=8, i=64 : f32, stages=3, layout=row>, %s: index) {
  %x = reg.read %v[%s] : !smem.buffer<j=8, i=64 : f32, stages=3, layout=row> -> !reg.frag<col, i=64 : f32>
  func.return
}
// CHECK: reg.read: reads a 'col' fragment from a plain f32 vector along 'i' (layout=row), got !smem.buffer<j=8, i=64 : f32, stages=3, layout=row>

// -----
func.func @f(%v: !smem.buffer<b=1, i=64 : f32, stages=3, layout=row>, %s: index) {
  %x = reg.read %v[%s] : !smem.buffer<b=1, i=64 : f32, stages=3, layout=row> -> !reg.frag<row, i=48 : f32>
  func.return
}
// CHECK: reg.read: the buffer's 64 along 'i' are not whole warps' 48
