// RUN: napkin-opt %s | napkin-opt | filecheck %s
// RUN: napkin-opt %s --print-op-generic | napkin-opt | filecheck %s

// A staged tile read into the accumulators' lanes (as it lies, and transposed).

// CHECK: %x = reg.read %d[%s] : !smem.buffer<m=64, n=128 : bf16, stages=3, layout=pad8> -> !reg.frag<c, m=32, n=64 : f32>
// CHECK-NEXT: %y = reg.read %d[%s] : !smem.buffer<m=64, n=128 : bf16, stages=3, layout=pad8> -> !reg.frag<c, n=16, m=64 : f32>
func.func @f(%d: !smem.buffer<m=64, n=128 : bf16, stages=3, layout=pad8>, %s: index) {
  %x = reg.read %d[%s] : !smem.buffer<m=64, n=128 : bf16, stages=3, layout=pad8> -> !reg.frag<c, m=32, n=64 : f32>
  %y = reg.read %d[%s] : !smem.buffer<m=64, n=128 : bf16, stages=3, layout=pad8> -> !reg.frag<c, n=16, m=64 : f32>
  func.return
}
