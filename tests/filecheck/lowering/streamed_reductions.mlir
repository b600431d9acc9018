// streamed_reductions: each reduction along the streamed axis has its carried state, its
// per-tile combination, its rescale of earlier partial sums and its finish. Sum: one
// accumulator, added to; max: -inf, maxed; softmax: running max and sum, earlier sums of
// values linear in it rescaled by exp2(old max - new max), divided by the sum at the end;
// L2 norm: a running sum of squares, no rescale, divided by its square root at the end.
// RUN: napkin-opt %s --split-input-file -p 'ncd-relabel{grid="i:64" stream="j:64"},ncd-to-hbm' | filecheck %s

func.func @row_sum(%x: !ncd.tensor<i=128, j=256 : f32>) -> !ncd.tensor<i=128 : f32> {
  %s = ncd.reduce sum %x along [j] : !ncd.tensor<i=128, j=256 : f32> -> !ncd.tensor<i=128 : f32>
  func.return %s : !ncd.tensor<i=128 : f32>
}
// CHECK-LABEL: sym_name = "row_sum"
// CHECK:       [[Z:%.+]] = hbm.fill {value = 0.000000e+00 : f32}
// CHECK:       [[R:%.+]] = scf.for %j0 = %c0 to {{.*}} iter_args(%acc = [[Z]])
// CHECK:         [[T:%.+]] = ncd.reduce sum %x_tile along [j]
// CHECK-NEXT:    %acc_new = ncd.map add %acc, [[T]]
// CHECK-NEXT:    scf.yield %acc_new
// CHECK:       hbm.store [[R]], %out[%i0]

// -----
func.func @row_max(%x: !ncd.tensor<i=128, j=256 : f32>) -> !ncd.tensor<i=128 : f32> {
  %m = ncd.reduce max %x along [j] : !ncd.tensor<i=128, j=256 : f32> -> !ncd.tensor<i=128 : f32>
  func.return %m : !ncd.tensor<i=128 : f32>
}
// CHECK-LABEL: sym_name = "row_max"
// CHECK:       [[NINF:%.+]] = hbm.fill {value = 0xff800000 : f32}
// CHECK:       [[R:%.+]] = scf.for %j0 = %c0 to {{.*}} iter_args(%acc = [[NINF]])
// CHECK:         [[T:%.+]] = ncd.reduce max %x_tile along [j]
// CHECK-NEXT:    %acc_new = ncd.map max %acc, [[T]]
// CHECK:       hbm.store [[R]], %out[%i0]

// -----
func.func @softmax_row_sum(%x: !ncd.tensor<i=128, j=256 : f32>, %w: !ncd.tensor<j=256 : f32>) -> !ncd.tensor<i=128 : f32> {
  %p = ncd.softmax %x along j scale 0.5 : !ncd.tensor<i=128, j=256 : f32> -> !ncd.tensor<i=128, j=256 : f32>
  %pw = ncd.map mul %p, %w : !ncd.tensor<i=128, j=256 : f32>, !ncd.tensor<j=256 : f32> -> !ncd.tensor<i=128, j=256 : f32>
  %s = ncd.reduce sum %pw along [j] : !ncd.tensor<i=128, j=256 : f32> -> !ncd.tensor<i=128 : f32>
  func.return %s : !ncd.tensor<i=128 : f32>
}
// CHECK-LABEL: sym_name = "softmax_row_sum"
// CHECK:       {{.*}}, [[SUM:%.+]], [[ACC:%.+]] = scf.for %j0 = %c0 to {{.*}} iter_args(%row_max = {{.*}}, %row_sum = {{.*}}, %acc = {{.*}})
// the scale 0.5 times log2(e), so that exp2 serves
// CHECK:         %scaled = ncd.map scale %x_tile by 0.72134751081466
// CHECK-NEXT:    %tile_max = ncd.reduce max %scaled along [j]
// CHECK-NEXT:    %row_max_new = ncd.map max %row_max, %tile_max
// CHECK-NEXT:    [[D:%.+]] = ncd.map sub %row_max, %row_max_new
// CHECK-NEXT:    %rescale = ncd.map exp2 [[D]]
// CHECK:         %p_unnorm = ncd.map exp2
// CHECK-NEXT:    %row_sum_scaled = ncd.map mul %row_sum, %rescale
// CHECK:         %row_sum_new = ncd.map add %row_sum_scaled, %tile_sum
// the weighted sum is linear in the softmax: computed on the unnormalised values, rescaled
// CHECK:         %pw = ncd.map mul %p_unnorm, %w_tile
// CHECK-NEXT:    [[PART:%.+]] = ncd.reduce sum %pw along [j]
// CHECK-NEXT:    %acc_scaled = ncd.map mul %acc, %rescale
// CHECK-NEXT:    %acc_new = ncd.map add %acc_scaled, [[PART]]
// CHECK:       %normalised = ncd.map div [[ACC]], [[SUM]]
// CHECK-NEXT:  hbm.store %normalised

// -----
func.func @l2_row_sum(%x: !ncd.tensor<i=128, j=256 : f32>, %w: !ncd.tensor<j=256 : f32>) -> !ncd.tensor<i=128 : f32> {
  %n = ncd.l2norm %x along j : !ncd.tensor<i=128, j=256 : f32> -> !ncd.tensor<i=128, j=256 : f32>
  %nw = ncd.map mul %n, %w : !ncd.tensor<i=128, j=256 : f32>, !ncd.tensor<j=256 : f32> -> !ncd.tensor<i=128, j=256 : f32>
  %s = ncd.reduce sum %nw along [j] : !ncd.tensor<i=128, j=256 : f32> -> !ncd.tensor<i=128 : f32>
  func.return %s : !ncd.tensor<i=128 : f32>
}
// CHECK-LABEL: sym_name = "l2_row_sum"
// CHECK:       [[SQ:%.+]], [[ACC:%.+]] = scf.for %j0 = %c0 to {{.*}} iter_args(%sum_sq = {{.*}}, %acc = {{.*}})
// CHECK-NOT:     exp2
// CHECK:         [[X2:%.+]] = ncd.map mul %x_tile, %x_tile
// CHECK-NEXT:    %tile_sum_sq = ncd.reduce sum [[X2]] along [j]
// CHECK-NEXT:    %sum_sq_new = ncd.map add %sum_sq, %tile_sum_sq
// no rescale: the norm only divides at the end
// CHECK:         %nw = ncd.map mul %x_tile, %w_tile
// CHECK-NEXT:    [[PART:%.+]] = ncd.reduce sum %nw along [j]
// CHECK-NEXT:    %acc_new = ncd.map add %acc, [[PART]]
// CHECK:       %norm = ncd.map sqrt [[SQ]]
// CHECK-NEXT:  %normalised = ncd.map div [[ACC]], %norm
