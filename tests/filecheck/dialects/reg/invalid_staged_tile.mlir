// RUN: napkin-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

func.func @f(%d: !smem.buffer<m=64, n=128 : bf16, stages=3, layout=pad8>, %s: index) {
  %x = reg.read %d[%s] : !smem.buffer<m=64, n=128 : bf16, stages=3, layout=pad8> -> !reg.frag<c, m=32, k=64 : f32>
  func.return
}
// CHECK: reg.read: the buffer's axes of more than one place must be the fragment's ['m', 'k'] (in either order), got !smem.buffer<m=64, n=128 : bf16, stages=3, layout=pad8>

// -----
func.func @f(%d: !smem.buffer<m=64, n=128 : bf16, stages=3, layout=pad8>, %s: index) {
  %x = reg.read %d[%s] : !smem.buffer<m=64, n=128 : bf16, stages=3, layout=pad8> -> !reg.frag<c, m=48, n=64 : f32>
  func.return
}
// CHECK: reg.read: the buffer's 64 along 'm' are not whole warps' 48

// -----
func.func @f(%y: !reg.frag<c, n=16, m=64 : f32>) {
  %b = reg.to_b %y {at = #hbm.labels<m=56>} : !reg.frag<c, n=16, m=64 : f32> -> !reg.frag<b, m=16, n=16 : bf16>
  func.return
}
// CHECK: reg.to_b: a 16-wide slice at 56 along 'm' does not fit !reg.frag<c, n=16, m=64 : f32>

// -----
func.func @f(%y: !reg.frag<c, n=16, m=64 : f32>) {
  %b = reg.to_b %y {at = #hbm.labels<m=16>} : !reg.frag<c, n=16, m=64 : f32> -> !reg.frag<b, n=16, m=16 : bf16>
  func.return
}
// CHECK: reg.to_b: gives the transpose of 16 columns of !reg.frag<c, n=16, m=64 : f32>: a 'b' fragment <m=16, n=16>, got !reg.frag<b, n=16, m=16 : bf16>
