// ncd-grad refuses what it cannot differentiate with one line naming the function, the op
// and the reason; napkin-opt then exits non-zero without a traceback.
// RUN: napkin-opt %s --split-input-file --verify-diagnostics -p ncd-grad | filecheck %s
// RUN: not napkin-opt %s -p ncd-grad 2>&1 | filecheck %s --check-prefix=EXIT

// EXIT: napkin-opt: error: ncd-grad: @twice: the module already has @twice_grad
// EXIT-NOT: Traceback

// A module that has been through the pass already.
func.func @twice(%x: !ncd.tensor<i=4 : f32>) -> !ncd.tensor<i=4 : f32> {
  func.return %x : !ncd.tensor<i=4 : f32>
}
func.func @twice_grad(%x: !ncd.tensor<i=4 : f32>, %d_x: !ncd.tensor<i=4 : f32>) -> !ncd.tensor<i=4 : f32> {
  func.return %d_x : !ncd.tensor<i=4 : f32>
}
// CHECK: ncd-grad: @twice: the module already has @twice_grad; ncd-grad names the gradient of @f @f_grad (run it once, on the forward functions)

// -----
func.func @index_argument(%x: !ncd.tensor<i=4 : f32>, %n: index) -> !ncd.tensor<i=4 : f32> {
  func.return %x : !ncd.tensor<i=4 : f32>
}
// CHECK: ncd-grad: @index_argument: argument #1 has type index; ncd-grad differentiates functions of !ncd.tensor values

// -----
func.func @not_ncd(%x: !ncd.tensor<i=4 : f32>) -> !ncd.tensor<i=4 : f32> {
  %c = arith.constant 1 : index
  func.return %x : !ncd.tensor<i=4 : f32>
}
// CHECK: ncd-grad: @not_ncd: arith.constant is not an ncd op; ncd-grad differentiates diagrams (run it before ncd-to-hbm)

// -----
// A mask on a tile (at [...]) belongs to the hbm level and below.
func.func @tile_mask(%x: !ncd.tensor<i=4, j=4 : f32>) -> !ncd.tensor<i=4, j=4 : f32> {
  %i0 = arith.constant 0 : index
  %m = ncd.mask causal %x keep i >= j fill -inf at [%i0, %i0] : !ncd.tensor<i=4, j=4 : f32> -> !ncd.tensor<i=4, j=4 : f32>
  func.return %m : !ncd.tensor<i=4, j=4 : f32>
}
// CHECK: ncd-grad: @tile_mask: ncd.mask causal (%m) masks a tile (at [...]); ncd-grad differentiates whole tensors, before ncd-to-hbm

// -----
func.func @tile_mask_bound(%x: !ncd.tensor<i=4, j=4 : f32>, %j0: index) -> !ncd.tensor<i=4, j=4 : f32> {
  %m = ncd.mask_bound %x keep j < 3 fill 0.0 at [%j0] : !ncd.tensor<i=4, j=4 : f32> -> !ncd.tensor<i=4, j=4 : f32>
  func.return %m : !ncd.tensor<i=4, j=4 : f32>
}
// CHECK: ncd-grad: @tile_mask_bound: ncd.mask_bound (%m) masks a tile (at [...])

// -----
func.func private @declared(!ncd.tensor<i=4 : f32>) -> !ncd.tensor<i=4 : f32>
// CHECK: ncd-grad: the module has no function to differentiate
