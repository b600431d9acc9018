// RUN: napkin-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s
// Sizes are 64-bit, and a scale is a finite number (issue 37: both were accepted).

func.func @f(%x: !ncd.tensor<i=9223372036854775808 : f32>) {
  func.return
}
// CHECK: !ncd.tensor: axis 'i' has size 9223372036854775808, above int64's largest (9223372036854775807); sizes are 64-bit

// -----
func.func @f(%x: !ncd.tensor<i=4294967296, j=4294967296 : f32>) {
  func.return
}
// CHECK: the tensor has 18446744073709551616 elements, above int64's largest

// -----
func.func @f(%x: !ncd.tensor<i=4, j=4 : f32>) -> !ncd.tensor<i=4, j=4 : f32> {
  %p = ncd.softmax %x along j scale inf : !ncd.tensor<i=4, j=4 : f32> -> !ncd.tensor<i=4, j=4 : f32>
  func.return %p : !ncd.tensor<i=4, j=4 : f32>
}
// CHECK: ncd.softmax: the scale must be a finite number, got inf

// -----
func.func @f(%x: !ncd.tensor<i=4, j=4 : f32>) -> !ncd.tensor<i=4 : f32> {
  %l = ncd.logsumexp %x along j scale -inf : !ncd.tensor<i=4, j=4 : f32> -> !ncd.tensor<i=4 : f32>
  func.return %l : !ncd.tensor<i=4 : f32>
}
// CHECK: ncd.logsumexp: the scale must be a finite number, got -inf
