// ncd-widen-results returns each result's f32 sum instead of its rounding: a contraction
// into bf16 gets an f32 result, a cast of an f32 value at the end is dropped; `result=N`
// widens one result; what is not a rounding stays.
// RUN: napkin-opt %s -p ncd-widen-results | filecheck %s
// RUN: napkin-opt %s -p 'ncd-widen-results{result=1}' | filecheck %s --check-prefix=ONE
// RUN: not napkin-opt %s -p 'ncd-widen-results{result=2}' 2>&1 | filecheck %s --check-prefix=RANGE

// CHECK: func.func @two(%a: !ncd.tensor<m=8, k=16 : bf16>, %b: !ncd.tensor<k=16, n=4 : bf16>) -> (!ncd.tensor<m=8, n=4 : f32>, !ncd.tensor<m=8 : f32>)
// CHECK-NEXT: %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=8, k=16 : bf16>, !ncd.tensor<k=16, n=4 : bf16> -> !ncd.tensor<m=8, n=4 : f32>
// CHECK-NEXT: %s = ncd.reduce sum %c along [n]
// CHECK-NOT: ncd.map cast
// CHECK: func.return %c, %s : !ncd.tensor<m=8, n=4 : f32>, !ncd.tensor<m=8 : f32>
// ONE: -> (!ncd.tensor<m=8, n=4 : bf16>, !ncd.tensor<m=8 : f32>)
// RANGE: napkin-opt: error: ncd-widen-results: @two has 2 results; result=2 names none

func.func @two(%a: !ncd.tensor<m=8, k=16 : bf16>, %b: !ncd.tensor<k=16, n=4 : bf16>) -> (!ncd.tensor<m=8, n=4 : bf16>, !ncd.tensor<m=8 : bf16>) {
  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=8, k=16 : bf16>, !ncd.tensor<k=16, n=4 : bf16> -> !ncd.tensor<m=8, n=4 : f32>
  %s = ncd.reduce sum %c along [n] : !ncd.tensor<m=8, n=4 : f32> -> !ncd.tensor<m=8 : f32>
  %cr = ncd.map cast %c : !ncd.tensor<m=8, n=4 : f32> -> !ncd.tensor<m=8, n=4 : bf16>
  %sr = ncd.map cast %s : !ncd.tensor<m=8 : f32> -> !ncd.tensor<m=8 : bf16>
  func.return %cr, %sr : !ncd.tensor<m=8, n=4 : bf16>, !ncd.tensor<m=8 : bf16>
}
