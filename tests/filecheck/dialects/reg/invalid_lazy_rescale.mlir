// RUN: napkin-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

func.func @f(%old: !reg.frag<c, i=16, j=64 : f32>, %new: !reg.frag<c, i=16, j=64 : f32>) {
  %m = reg.lazy_max %old, %new slack 8.0 : !reg.frag<c, i=16, j=64 : f32>, !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<c, i=16, j=64 : f32>
  func.return
}
// CHECK: reg.lazy_max: keeps a running max of a 'row' fragment, got !reg.frag<c, i=16, j=64 : f32>

// -----
func.func @f(%old: !reg.frag<row, i=16 : f32>, %new: !reg.frag<row, i=32 : f32>) {
  %m = reg.lazy_max %old, %new slack 8.0 : !reg.frag<row, i=16 : f32>, !reg.frag<row, i=32 : f32> -> !reg.frag<row, i=16 : f32>
  func.return
}
// CHECK: reg.lazy_max: the new values and the result are of the running max's type !reg.frag<row, i=16 : f32>, got !reg.frag<row, i=32 : f32> and !reg.frag<row, i=16 : f32>

// -----
func.func @f(%old: !reg.frag<row, i=16 : f32>, %new: !reg.frag<row, i=16 : f32>) {
  %m = reg.lazy_max %old, %new slack -1.0 : !reg.frag<row, i=16 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<row, i=16 : f32>
  func.return
}
// CHECK: reg.lazy_max: the slack is the log2 units a max may stay below the values (0 to 64), got -1.0

// -----
func.func @f(%old: !reg.frag<row, i=16 : f32>, %new: !reg.frag<row, i=16 : f32>) {
  %m = reg.lazy_max %old, %new : !reg.frag<row, i=16 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<row, i=16 : f32>
  func.return
}
// CHECK: Expected 'slack' (the log2 units the max may stay below the values)

// -----
func.func @f(%o: !reg.frag<c, i=16, d=64 : f32>, %c: !reg.frag<row, i=32 : f32>) {
  %y = reg.rescale %o, %c : !reg.frag<c, i=16, d=64 : f32>, !reg.frag<row, i=32 : f32> -> !reg.frag<c, i=16, d=64 : f32>
  func.return
}
// CHECK: reg.rescale: the factors are one a row: !reg.frag<row, i=16 : f32>, got !reg.frag<row, i=32 : f32>

// -----
func.func @f(%o: !reg.frag<row, i=16 : f32>, %c: !reg.frag<row, i=16 : f32>) {
  %y = reg.rescale %o, %c : !reg.frag<row, i=16 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<row, i=16 : f32>
  func.return
}
// CHECK: reg.rescale: rescales a 'c' fragment of f32, got !reg.frag<row, i=16 : f32>

// -----
func.func @f(%o: !reg.frag<c, i=16, d=64 : f32>, %c: !reg.frag<row, i=16 : f32>) {
  %y = reg.rescale %o, %c : !reg.frag<c, i=16, d=64 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<c, i=16, d=128 : f32>
  func.return
}
// CHECK: reg.rescale: the result should be !reg.frag<c, i=16, d=64 : f32>, got !reg.frag<c, i=16, d=128 : f32>
