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

