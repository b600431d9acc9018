// RUN: napkin-opt %s | napkin-opt | filecheck %s
// RUN: napkin-opt %s --print-op-generic | napkin-opt | filecheck %s

// A staged tile read into the accumulators' lanes (as it lies, and transposed), and a
// product in registers as the second operand of the next (its rows that product's columns).

// CHECK: %x = reg.read %d[%s] : !smem.buffer<m=64, n=128 : bf16, stages=3, layout=pad8> -> !reg.frag<c, m=32, n=64 : f32>
// CHECK-NEXT: %y = reg.read %d[%s] : !smem.buffer<m=64, n=128 : bf16, stages=3, layout=pad8> -> !reg.frag<c, n=16, m=64 : f32>
// CHECK-NEXT: %b = reg.to_b %y {at = #hbm.labels<m=16>} : !reg.frag<c, n=16, m=64 : f32> -> !reg.frag<b, m=16, n=16 : bf16>
func.func @f(%d: !smem.buffer<m=64, n=128 : bf16, stages=3, layout=pad8>, %s: index) {
  %x = reg.read %d[%s] : !smem.buffer<m=64, n=128 : bf16, stages=3, layout=pad8> -> !reg.frag<c, m=32, n=64 : f32>
  %y = reg.read %d[%s] : !smem.buffer<m=64, n=128 : bf16, stages=3, layout=pad8> -> !reg.frag<c, n=16, m=64 : f32>
  %b = reg.to_b %y {at = #hbm.labels<m=16>} : !reg.frag<c, n=16, m=64 : f32> -> !reg.frag<b, m=16, n=16 : bf16>
  func.return
}
