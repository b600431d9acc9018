// RUN: napkin-opt %s | napkin-opt | filecheck %s
// RUN: napkin-opt %s --print-op-generic | napkin-opt | filecheck %s

// A running row sum kept as each lane's part: a `row_part` fragment filled with 0, scaled
// by a `row` fragment (the trip's correction), the lane's values of a `c` fragment added
// on in one chain, and the quad's parts added into a `row` fragment where it is read.

// CHECK: %l0 = reg.fill {value = 0.000000e+00 : f32} : !reg.frag<row_part, i=16 : f32>
// CHECK-NEXT: %lc = reg.map mul %l0, %c : !reg.frag<row_part, i=16 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<row_part, i=16 : f32>
// CHECK-NEXT: %l1 = reg.row_accumulate %lc, %p : !reg.frag<row_part, i=16 : f32>, !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<row_part, i=16 : f32>
// CHECK-NEXT: %l2 = reg.map add %l1, %l1 : !reg.frag<row_part, i=16 : f32>, !reg.frag<row_part, i=16 : f32> -> !reg.frag<row_part, i=16 : f32>
// CHECK-NEXT: %l3 = reg.map scale %l2 by 0.5 : !reg.frag<row_part, i=16 : f32> -> !reg.frag<row_part, i=16 : f32>
// CHECK-NEXT: %l = reg.row_combine %l3 : !reg.frag<row_part, i=16 : f32> -> !reg.frag<row, i=16 : f32>
func.func @f(%p: !reg.frag<c, i=16, j=64 : f32>, %c: !reg.frag<row, i=16 : f32>) -> !reg.frag<row, i=16 : f32> {
  %l0 = reg.fill {value = 0.0 : f32} : !reg.frag<row_part, i=16 : f32>
  %lc = reg.map mul %l0, %c : !reg.frag<row_part, i=16 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<row_part, i=16 : f32>
  %l1 = reg.row_accumulate %lc, %p : !reg.frag<row_part, i=16 : f32>, !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<row_part, i=16 : f32>
  %l2 = reg.map add %l1, %l1 : !reg.frag<row_part, i=16 : f32>, !reg.frag<row_part, i=16 : f32> -> !reg.frag<row_part, i=16 : f32>
  %l3 = reg.map scale %l2 by 0.5 : !reg.frag<row_part, i=16 : f32> -> !reg.frag<row_part, i=16 : f32>
  %l = reg.row_combine %l3 : !reg.frag<row_part, i=16 : f32> -> !reg.frag<row, i=16 : f32>
  func.return %l : !reg.frag<row, i=16 : f32>
}
