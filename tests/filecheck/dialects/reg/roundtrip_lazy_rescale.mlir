// RUN: napkin-opt %s | napkin-opt | filecheck %s
// RUN: napkin-opt %s --print-op-generic | napkin-opt | filecheck %s

// A running row max kept until a row of the warp outgrows it by the slack, and an
// accumulator's correction that skips its products where every factor of the warp is 1.

// CHECK:      %m = reg.lazy_max %old, %new slack 8.0 : !reg.frag<row, i=16 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<row, i=16 : f32>
// CHECK-NEXT: %d = reg.map sub %old, %m : !reg.frag<row, i=16 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<row, i=16 : f32>
// CHECK-NEXT: %c = reg.map exp2 %d : !reg.frag<row, i=16 : f32> -> !reg.frag<row, i=16 : f32>
// CHECK-NEXT: %o2 = reg.rescale %o, %c : !reg.frag<c, i=16, d=128 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<c, i=16, d=128 : f32>
func.func @f(%old: !reg.frag<row, i=16 : f32>, %new: !reg.frag<row, i=16 : f32>, %o: !reg.frag<c, i=16, d=128 : f32>) -> !reg.frag<c, i=16, d=128 : f32> {
  %m = reg.lazy_max %old, %new slack 8.0 : !reg.frag<row, i=16 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<row, i=16 : f32>
  %d = reg.map sub %old, %m : !reg.frag<row, i=16 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<row, i=16 : f32>
  %c = reg.map exp2 %d : !reg.frag<row, i=16 : f32> -> !reg.frag<row, i=16 : f32>
  %o2 = reg.rescale %o, %c : !reg.frag<c, i=16, d=128 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<c, i=16, d=128 : f32>
  func.return %o2 : !reg.frag<c, i=16, d=128 : f32>
}
