// RUN: napkin-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

func.func @contract_size_mismatch(%a: !ncd.tensor<m=4, k=8 : bf16>, %b: !ncd.tensor<k=6, n=3 : bf16>) {
  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=4, k=8 : bf16>, !ncd.tensor<k=6, n=3 : bf16> -> !ncd.tensor<m=4, n=3 : bf16>
  func.return
}
// CHECK: ncd.contract: axis 'k' has size 8 in the lhs but 6 in the rhs

// -----
func.func @contract_missing_axis(%a: !ncd.tensor<m=4, k=8 : bf16>, %b: !ncd.tensor<n=3 : bf16>) {
  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=4, k=8 : bf16>, !ncd.tensor<n=3 : bf16> -> !ncd.tensor<m=4, n=3 : bf16>
  func.return
}
// CHECK: ncd.contract: cannot contract over axis 'k': the rhs <n=3> has no such axis

// -----
func.func @contract_twice(%a: !ncd.tensor<m=4, k=8 : bf16>) {
  %c = ncd.contract %a, %a over [k, k] : !ncd.tensor<m=4, k=8 : bf16>, !ncd.tensor<m=4, k=8 : bf16> -> !ncd.tensor<m=4 : bf16>
  func.return
}
// CHECK: ncd.contract: axis 'k' is listed twice in 'over'

// -----
func.func @contract_result_missing_axis(%a: !ncd.tensor<m=4, k=8 : bf16>, %b: !ncd.tensor<k=8, n=3 : bf16>) {
  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=4, k=8 : bf16>, !ncd.tensor<k=8, n=3 : bf16> -> !ncd.tensor<m=4 : bf16>
  func.return
}
// CHECK: ncd.contract: result is missing axis 'n' (size 3); expected axes <m=4, n=3>, result has <m=4>

// -----
func.func @contract_result_keeps_contracted(%a: !ncd.tensor<m=4, k=8 : bf16>, %b: !ncd.tensor<k=8, n=3 : bf16>) {
  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=4, k=8 : bf16>, !ncd.tensor<k=8, n=3 : bf16> -> !ncd.tensor<m=4, k=8, n=3 : bf16>
  func.return
}
// CHECK: ncd.contract: result has axis 'k' that the op does not produce; expected axes <m=4, n=3>, result has <m=4, k=8, n=3>

// -----
func.func @contract_result_size(%a: !ncd.tensor<m=4, k=8 : bf16>, %b: !ncd.tensor<k=8, n=3 : bf16>) {
  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=4, k=8 : bf16>, !ncd.tensor<k=8, n=3 : bf16> -> !ncd.tensor<m=5, n=3 : bf16>
  func.return
}
// CHECK: ncd.contract: axis 'm' has size 5 in the result but 4 in the operands

// -----
func.func @contract_result_type(%a: !ncd.tensor<m=4, k=8 : bf16>, %b: !ncd.tensor<k=8, n=3 : bf16>) {
  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=4, k=8 : bf16>, !ncd.tensor<k=8, n=3 : bf16> -> !ncd.tensor<m=4, n=3 : f16>
  func.return
}
// CHECK: ncd.contract: result element type f16 should be bf16 or f32, as the operands

// -----
func.func @contract_mixed(%a: !ncd.tensor<m=4, k=8 : bf16>, %b: !ncd.tensor<k=8, n=3 : f16>) {
  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=4, k=8 : bf16>, !ncd.tensor<k=8, n=3 : f16> -> !ncd.tensor<m=4, n=3 : f32>
  func.return
}
// CHECK: ncd.contract: operand element types differ (bf16 and f16); cast one first

// -----
func.func @map_broadcast_mismatch(%x: !ncd.tensor<i=8, j=16 : f32>, %m: !ncd.tensor<i=4 : f32>) {
  %0 = ncd.map sub %x, %m : !ncd.tensor<i=8, j=16 : f32>, !ncd.tensor<i=4 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  func.return
}
// CHECK: ncd.map sub: axis 'i' has size 8 in operand #0 but 4 in operand #1

// -----
func.func @map_arity(%x: !ncd.tensor<i=8 : f32>) {
  %0 = ncd.map exp %x, %x : !ncd.tensor<i=8 : f32>, !ncd.tensor<i=8 : f32> -> !ncd.tensor<i=8 : f32>
  func.return
}
// CHECK: ncd.map exp takes 1 operand(s), got 2

// -----
func.func @map_scale_without_by(%x: !ncd.tensor<i=8 : f32>) {
  %0 = ncd.map scale %x : !ncd.tensor<i=8 : f32> -> !ncd.tensor<i=8 : f32>
  func.return
}
// CHECK: ncd.map: 'by' is required for scale

// -----
func.func @map_by_on_exp(%x: !ncd.tensor<i=8 : f32>) {
  %0 = ncd.map exp %x by 2.0 : !ncd.tensor<i=8 : f32> -> !ncd.tensor<i=8 : f32>
  func.return
}
// CHECK: ncd.map exp: 'by' is for scale and, in place of a second operand, for add, sub, mul, div, max

// -----
func.func @map_result_type(%x: !ncd.tensor<i=8 : f32>) {
  %0 = ncd.map exp %x : !ncd.tensor<i=8 : f32> -> !ncd.tensor<i=8 : bf16>
  func.return
}
// CHECK: ncd.map exp: result element type bf16 should be f32, as the operands

// -----
func.func @map_binary_types(%x: !ncd.tensor<i=8 : f32>, %y: !ncd.tensor<i=8 : bf16>) {
  %0 = ncd.map add %x, %y : !ncd.tensor<i=8 : f32>, !ncd.tensor<i=8 : bf16> -> !ncd.tensor<i=8 : f32>
  func.return
}
// CHECK: ncd.map add: operand element types differ (f32 and bf16); cast one first

// -----
func.func @map_unknown(%x: !ncd.tensor<i=8 : f32>) {
  %0 = ncd.map tanh %x : !ncd.tensor<i=8 : f32> -> !ncd.tensor<i=8 : f32>
  func.return
}
// CHECK: unknown ncd.map function 'tanh'; expected one of exp, exp2, log2, neg, sqrt, scale, cast, add, sub, mul, div, max

// -----
func.func @reduce_missing_axis(%x: !ncd.tensor<i=8, j=16 : f32>) {
  %0 = ncd.reduce sum %x along [k] : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  func.return
}
// CHECK: ncd.reduce: cannot reduce along axis 'k': the input <i=8, j=16> has no such axis

// -----
func.func @reduce_keeps_axis(%x: !ncd.tensor<i=8, j=16 : f32>) {
  %0 = ncd.reduce max %x along [j] : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  func.return
}
// CHECK: ncd.reduce max: result has axis 'j' that the op does not produce; expected axes <i=8>, result has <i=8, j=16>

// -----
func.func @reduce_unknown(%x: !ncd.tensor<i=8, j=16 : f32>) {
  %0 = ncd.reduce mean %x along [j] : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8 : f32>
  func.return
}
// CHECK: unknown ncd.reduce kind 'mean'; expected one of sum, max

// -----
func.func @softmax_missing_axis(%x: !ncd.tensor<i=8, j=16 : f32>) {
  %0 = ncd.softmax %x along k : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  func.return
}
// CHECK: ncd.softmax: cannot normalise along axis 'k': the input <i=8, j=16> has no such axis

// -----
func.func @l2norm_result(%x: !ncd.tensor<i=8, j=16 : f32>) {
  %0 = ncd.l2norm %x along j : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=32 : f32>
  func.return
}
// CHECK: ncd.l2norm: axis 'j' has size 32 in the result but 16 in the operands

// -----
func.func @mask_missing_axis(%x: !ncd.tensor<i=8, j=16 : f32>) {
  %0 = ncd.mask causal %x keep i >= k fill -inf : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  func.return
}
// CHECK: ncd.mask: the column axis 'k' is not an axis of the input <i=8, j=16>

// -----
func.func @mask_same_axis(%x: !ncd.tensor<i=8, j=16 : f32>) {
  %0 = ncd.mask causal %x keep i >= i fill -inf : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  func.return
}
// CHECK: ncd.mask: the row and column axes must differ, both are 'i'

// -----
func.func @mask_offsets(%x: !ncd.tensor<i=8, j=16 : f32>, %i0: index) {
  %0 = ncd.mask causal %x keep i >= j fill -inf at [%i0] : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  func.return
}
// CHECK: ncd.mask: takes no offsets or 2 (where the tile's rows and columns start), got 1

// -----
func.func @mask_bound_missing_axis(%x: !ncd.tensor<i=8, j=16 : f32>) {
  %0 = ncd.mask_bound %x keep k < 4 fill 0.0 : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  func.return
}
// CHECK: ncd.mask_bound: the bounded axis 'k' is not an axis of the input <i=8, j=16>

// -----
func.func @mask_bound_negative(%x: !ncd.tensor<i=8, j=16 : f32>) {
  %0 = ncd.mask_bound %x keep j < -1 fill 0.0 : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  func.return
}
// CHECK: ncd.mask_bound: the bound must not be negative, got -1

// -----
func.func @mask_bound_offsets(%x: !ncd.tensor<i=8, j=16 : f32>, %i0: index) {
  %0 = ncd.mask_bound %x keep j < 4 fill 0.0 at [%i0, %i0] : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  func.return
}
// CHECK: ncd.mask_bound: takes no offsets or 1 (where the tile starts), got 2

// -----
func.func @mask_bound_result(%x: !ncd.tensor<i=8, j=16 : f32>) {
  %0 = ncd.mask_bound %x keep j < 4 fill 0.0 : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : bf16>
  func.return
}
// CHECK: ncd.mask_bound: result element type bf16 should be f32, as the operands

// -----
func.func @mask_bound_syntax(%x: !ncd.tensor<i=8, j=16 : f32>) {
  %0 = ncd.mask_bound %x keep j <= 4 fill 0.0 : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  func.return
}
// CHECK: Expected integer literal (the bound)

// -----
func.func @mask_bound_nan(%x: !ncd.tensor<i=8, j=16 : f32>) {
  %0 = "ncd.mask_bound"(%x) <{axis = "j", bound = #builtin.int<4>, fill = 0x7FC00000 : f32}> : (!ncd.tensor<i=8, j=16 : f32>) -> !ncd.tensor<i=8, j=16 : f32>
  func.return
}
// CHECK: ncd.mask_bound: the fill value must be a number, got NaN

// -----
func.func @duplicate_axis(%a: !ncd.tensor<m=4, m=8 : bf16>) {
  func.return
}
// CHECK: !ncd.tensor: duplicate axis name 'm'

// -----
func.func @zero_size(%a: !ncd.tensor<m=0 : bf16>) {
  func.return
}
// CHECK: !ncd.tensor: axis 'm' has size 0; sizes must be positive

// -----
func.func @bad_element(%a: !ncd.tensor<m=4 : i32>) {
  func.return
}
// CHECK: !ncd.tensor element type must be bf16, f16 or f32, got i32

// -----
func.func @types_count(%x: !ncd.tensor<i=8 : f32>) {
  %0 = ncd.map add %x, %x : !ncd.tensor<i=8 : f32> -> !ncd.tensor<i=8 : f32>
  func.return
}
// CHECK: expected 2 operand type(s), got 1

// -----
func.func @map_max_by_and_two_operands(%x: !ncd.tensor<i=8 : f32>, %y: !ncd.tensor<i=8 : f32>) {
  %0 = ncd.map max %x, %y by 0.0 : !ncd.tensor<i=8 : f32>, !ncd.tensor<i=8 : f32> -> !ncd.tensor<i=8 : f32>
  func.return
}
// CHECK: ncd.map max takes 1 operand(s) and 'by', got 2

// -----
func.func @ge_element_types(%x: !ncd.tensor<i=8 : f32>, %y: !ncd.tensor<i=8 : bf16>) {
  %0 = ncd.map ge %x, %y : !ncd.tensor<i=8 : f32>, !ncd.tensor<i=8 : bf16> -> !ncd.tensor<i=8 : f32>
  func.return
}
// CHECK: ncd.map ge: operand element types differ (f32 and bf16); cast one first

// -----
func.func @logsumexp_no_axis(%x: !ncd.tensor<i=8, j=16 : f32>) {
  %0 = ncd.logsumexp %x along k : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8 : f32>
  func.return
}
// CHECK: ncd.logsumexp: cannot reduce along axis 'k': the input <i=8, j=16> has no such axis

// -----
func.func @logsumexp_keeps_axis(%x: !ncd.tensor<i=8, j=16 : f32>) {
  %0 = ncd.logsumexp %x along j : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  func.return
}
// CHECK: ncd.logsumexp: result has axis 'j' that the op does not produce; expected axes <i=8>, result has <i=8, j=16>

// -----
func.func @logsumexp_not_f32(%x: !ncd.tensor<i=8, j=16 : bf16>) {
  %0 = ncd.logsumexp %x along j : !ncd.tensor<i=8, j=16 : bf16> -> !ncd.tensor<i=8 : bf16>
  func.return
}
// CHECK: ncd.logsumexp: the result is a row statistic in f32, got element type bf16

// -----
func.func @logsumexp_scale_nan(%x: !ncd.tensor<i=8, j=16 : f32>) {
  %0 = "ncd.logsumexp"(%x) <{axis = "j", scale = 0x7FC00000 : f32}> : (!ncd.tensor<i=8, j=16 : f32>) -> !ncd.tensor<i=8 : f32>
  func.return
}
// CHECK: ncd.logsumexp: the scale must be a number, got NaN

// -----
func.func @constant_nan() {
  %0 = "ncd.constant"() <{value = 0x7FC00000 : f32}> : () -> !ncd.tensor<i=8 : f32>
  func.return
}
// CHECK: ncd.constant: the value must be a number, got NaN

// -----
func.func @constant_not_tensor() {
  %0 = ncd.constant 1.0 : f32
  func.return
}
// CHECK: f32 should be of base attribute ncd.tensor

// -----
func.func @rename_missing_axis(%v: !ncd.tensor<j=4, d=8 : bf16>) {
  %r = ncd.rename %v [e -> f] : !ncd.tensor<j=4, d=8 : bf16> -> !ncd.tensor<j=4, d=8 : bf16>
  func.return
}
// CHECK: ncd.rename: cannot rename axis 'e': the input <j=4, d=8> has no such axis

// -----
func.func @rename_clash(%v: !ncd.tensor<j=4, d=8 : bf16>) {
  %r = ncd.rename %v [d -> j] : !ncd.tensor<j=4, d=8 : bf16> -> !ncd.tensor<j=4, j=8 : bf16>
  func.return
}
// CHECK: duplicate axis name 'j'

// -----
func.func @rename_onto_another(%v: !ncd.tensor<j=4, d=8 : bf16>) {
  %r = ncd.rename %v [d -> j] : !ncd.tensor<j=4, d=8 : bf16> -> !ncd.tensor<e=4, j=8 : bf16>
  func.return
}
// CHECK: ncd.rename: axis 'j' would name two axes of <j=4, d=8>

// -----
func.func @rename_reorders(%v: !ncd.tensor<j=4, d=8 : bf16>) {
  %r = ncd.rename %v [d -> e] : !ncd.tensor<j=4, d=8 : bf16> -> !ncd.tensor<e=8, j=4 : bf16>
  func.return
}
// CHECK: ncd.rename: the result must be <j=4, e=8> : bf16, the input's axes renamed in their order; got <e=8, j=4> : bf16

// -----
func.func @rename_casts(%v: !ncd.tensor<j=4, d=8 : bf16>) {
  %r = ncd.rename %v [d -> e] : !ncd.tensor<j=4, d=8 : bf16> -> !ncd.tensor<j=4, e=8 : f32>
  func.return
}
// CHECK: ncd.rename: the result must be <j=4, e=8> : bf16, the input's axes renamed in their order; got <j=4, e=8> : f32
