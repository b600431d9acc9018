// RUN: napkin-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

func.func @f(%x: !reg.frag<row_part, i=16, j=8 : f32>) {
  func.return
}
// CHECK: !reg.frag: a 'row_part' fragment has one axis, a multiple of 16 long, of f32 (one value per row of a 'c' fragment), got {'i': 16, 'j': 8} : f32

// -----
func.func @f(%l: !reg.frag<row_part, i=16 : f32>, %m: !reg.frag<row, i=16 : f32>) {
  %y = reg.map add %l, %m : !reg.frag<row_part, i=16 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<row_part, i=16 : f32>
  func.return
}
// CHECK: reg.map: a 'row_part' fragment is multiplied by a 'row' one, scaled, or added to or subtracted from another 'row_part' (each lane's part of a row's sum), got add of !reg.frag<row_part, i=16 : f32>, !reg.frag<row, i=16 : f32>

// -----
func.func @f(%l: !reg.frag<row_part, i=16 : f32>) {
  %y = reg.map exp2 %l : !reg.frag<row_part, i=16 : f32> -> !reg.frag<row_part, i=16 : f32>
  func.return
}
// CHECK: reg.map: a 'row_part' fragment is multiplied by a 'row' one, scaled, or added to or subtracted from another 'row_part' (each lane's part of a row's sum), got exp2 of !reg.frag<row_part, i=16 : f32>

// -----
func.func @f(%l: !reg.frag<row_part, i=16 : f32>, %l2: !reg.frag<row_part, i=16 : f32>) {
  %y = reg.map mul %l, %l2 : !reg.frag<row_part, i=16 : f32>, !reg.frag<row_part, i=16 : f32> -> !reg.frag<row_part, i=16 : f32>
  func.return
}
// CHECK: reg.map: a 'row_part' fragment is multiplied by a 'row' one, scaled, or added to or subtracted from another 'row_part' (each lane's part of a row's sum), got mul of

// -----
func.func @f(%l: !reg.frag<row_part, i=16 : f32>, %m: !reg.frag<row, i=32 : f32>) {
  %y = reg.map mul %l, %m : !reg.frag<row_part, i=16 : f32>, !reg.frag<row, i=32 : f32> -> !reg.frag<row_part, i=16 : f32>
  func.return
}
// CHECK: reg.map: the operands' rows differ: !reg.frag<row_part, i=16 : f32>, !reg.frag<row, i=32 : f32>

// -----
func.func @f(%l: !reg.frag<row_part, i=16 : f32>, %m: !reg.frag<row, i=16 : f32>) {
  %y = reg.map mul %l, %m : !reg.frag<row_part, i=16 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<row, i=16 : f32>
  func.return
}
// CHECK: reg.map: the result should be !reg.frag<row_part, i=16 : f32>, got !reg.frag<row, i=16 : f32>

// -----
func.func @f(%l: !reg.frag<row, i=16 : f32>, %p: !reg.frag<c, i=16, j=64 : f32>) {
  %y = reg.row_accumulate %l, %p : !reg.frag<row, i=16 : f32>, !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<row, i=16 : f32>
  func.return
}
// CHECK: reg.row_accumulate: the parts must be a 'row_part' fragment of i=16, got !reg.frag<row, i=16 : f32>

// -----
func.func @f(%l: !reg.frag<row_part, i=32 : f32>, %p: !reg.frag<c, i=16, j=64 : f32>) {
  %y = reg.row_accumulate %l, %p : !reg.frag<row_part, i=32 : f32>, !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<row_part, i=32 : f32>
  func.return
}
// CHECK: reg.row_accumulate: the parts must be a 'row_part' fragment of i=16, got !reg.frag<row_part, i=32 : f32>

// -----
func.func @f(%l: !reg.frag<row_part, i=16 : f32>, %p: !reg.frag<line, i=16, j=256 : f32>) {
  %y = reg.row_accumulate %l, %p : !reg.frag<row_part, i=16 : f32>, !reg.frag<line, i=16, j=256 : f32> -> !reg.frag<row_part, i=16 : f32>
  func.return
}
// CHECK: reg.row_accumulate: accumulates the rows of a 'c' fragment, got !reg.frag<line, i=16, j=256 : f32>

// -----
func.func @f(%l: !reg.frag<row_part, i=16 : f32>, %p: !reg.frag<c, i=16, j=64 : f32>) {
  %y = reg.row_accumulate %l, %p : !reg.frag<row_part, i=16 : f32>, !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<row, i=16 : f32>
  func.return
}
// CHECK: reg.row_accumulate: the result should be !reg.frag<row_part, i=16 : f32>, got !reg.frag<row, i=16 : f32>

// -----
func.func @f(%l: !reg.frag<row, i=16 : f32>) {
  %y = reg.row_combine %l : !reg.frag<row, i=16 : f32> -> !reg.frag<row, i=16 : f32>
  func.return
}
// CHECK: reg.row_combine: combines a 'row_part' fragment, got !reg.frag<row, i=16 : f32>

// -----
func.func @f(%l: !reg.frag<row_part, i=16 : f32>) {
  %y = reg.row_combine %l : !reg.frag<row_part, i=16 : f32> -> !reg.frag<row_part, i=16 : f32>
  func.return
}
// CHECK: reg.row_combine: the result should be !reg.frag<row, i=16 : f32>, got !reg.frag<row_part, i=16 : f32>

// -----
func.func @f(%l: !reg.frag<row_part, i=16 : f32>) {
  %y = reg.row_combine %l, %l : !reg.frag<row_part, i=16 : f32> -> !reg.frag<row, i=16 : f32>
  func.return
}
// CHECK: Expected ':' before the operand types
