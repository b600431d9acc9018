// ncd-grad: the rules of the reductions, normalisations and masks.
// RUN: napkin-opt %s --split-input-file -p ncd-grad | filecheck %s

// reduce sum: the cotangent broadcast back over the reduced axes, by adding a zero that has them.
// CHECK-LABEL: func.func @reduce_sum_grad(
// CHECK-NEXT:    [[Z:%.+]] = ncd.constant 0.0 : !ncd.tensor<i=4, k=2 : f32>
// CHECK-NEXT:    %d_x = ncd.map add %d_y, [[Z]] : !ncd.tensor<j=8 : f32>, !ncd.tensor<i=4, k=2 : f32> -> !ncd.tensor<i=4, j=8, k=2 : f32>
// CHECK-NEXT:    func.return %d_x
func.func @reduce_sum(%x: !ncd.tensor<i=4, j=8, k=2 : f32>) -> !ncd.tensor<j=8 : f32> {
  %y = ncd.reduce sum %x along [i, k] : !ncd.tensor<i=4, j=8, k=2 : f32> -> !ncd.tensor<j=8 : f32>
  func.return %y : !ncd.tensor<j=8 : f32>
}

// -----
// reduce max: the cotangent shared equally among the elements equal to the maximum (as torch.amax).
// CHECK-LABEL: func.func @reduce_max_grad(
// CHECK-NEXT:    %y = ncd.reduce max %x along [j]
// CHECK-NEXT:    [[DY:%.+]] = ncd.map cast %d_y : !ncd.tensor<i=4 : bf16> -> !ncd.tensor<i=4 : f32>
// CHECK-NEXT:    [[X:%.+]] = ncd.map cast %x
// CHECK-NEXT:    [[Y:%.+]] = ncd.map cast %y
// CHECK-NEXT:    [[M:%.+]] = ncd.map ge [[X]], [[Y]] : !ncd.tensor<i=4, j=8 : f32>, !ncd.tensor<i=4 : f32> -> !ncd.tensor<i=4, j=8 : f32>
// CHECK-NEXT:    [[C:%.+]] = ncd.reduce sum [[M]] along [j]
// CHECK-NEXT:    [[W:%.+]] = ncd.map div [[M]], [[C]]
// CHECK-NEXT:    %d_x = ncd.map mul [[W]], [[DY]]
// CHECK-NEXT:    [[R:%.+]] = ncd.map cast %d_x : !ncd.tensor<i=4, j=8 : f32> -> !ncd.tensor<i=4, j=8 : bf16>
// CHECK-NEXT:    func.return [[R]]
func.func @reduce_max(%x: !ncd.tensor<i=4, j=8 : bf16>) -> !ncd.tensor<i=4 : bf16> {
  %y = ncd.reduce max %x along [j] : !ncd.tensor<i=4, j=8 : bf16> -> !ncd.tensor<i=4 : bf16>
  func.return %y : !ncd.tensor<i=4 : bf16>
}

// -----
// softmax: dS = scale * P * (dP - rowsum(dP * P)).
// CHECK-LABEL: func.func @softmax_grad(
// CHECK-NEXT:    %p = ncd.softmax %s along j scale 0.125
// CHECK-NEXT:    [[T:%.+]] = ncd.map mul %d_p, %p
// CHECK-NEXT:    [[R:%.+]] = ncd.reduce sum [[T]] along [j] : !ncd.tensor<i=4, j=8 : f32> -> !ncd.tensor<i=4 : f32>
// CHECK-NEXT:    [[U:%.+]] = ncd.map sub %d_p, [[R]]
// CHECK-NEXT:    [[V:%.+]] = ncd.map mul %p, [[U]]
// CHECK-NEXT:    %d_s = ncd.map scale [[V]] by 0.125
// CHECK-NEXT:    func.return %d_s
func.func @softmax(%s: !ncd.tensor<i=4, j=8 : f32>) -> !ncd.tensor<i=4, j=8 : f32> {
  %p = ncd.softmax %s along j scale 0.125 : !ncd.tensor<i=4, j=8 : f32> -> !ncd.tensor<i=4, j=8 : f32>
  func.return %p : !ncd.tensor<i=4, j=8 : f32>
}

// -----
// l2norm: dX = (dY - Y * rowsum(dY * Y)) / norm, the norm recomputed.
// CHECK-LABEL: func.func @l2norm_grad(
// CHECK-NEXT:    %y = ncd.l2norm %s along j
// CHECK-NEXT:    [[SQ:%.+]] = ncd.map mul %s, %s
// CHECK-NEXT:    [[SS:%.+]] = ncd.reduce sum [[SQ]] along [j]
// CHECK-NEXT:    %norm = ncd.map sqrt [[SS]] : !ncd.tensor<i=4 : f32> -> !ncd.tensor<i=4 : f32>
// CHECK-NEXT:    [[T:%.+]] = ncd.map mul %d_y, %y
// CHECK-NEXT:    [[R:%.+]] = ncd.reduce sum [[T]] along [j]
// CHECK-NEXT:    [[YR:%.+]] = ncd.map mul %y, [[R]]
// CHECK-NEXT:    [[U:%.+]] = ncd.map sub %d_y, [[YR]]
// CHECK-NEXT:    %d_s = ncd.map div [[U]], %norm
// CHECK-NEXT:    func.return %d_s
func.func @l2norm(%s: !ncd.tensor<i=4, j=8 : f32>) -> !ncd.tensor<i=4, j=8 : f32> {
  %y = ncd.l2norm %s along j : !ncd.tensor<i=4, j=8 : f32> -> !ncd.tensor<i=4, j=8 : f32>
  func.return %y : !ncd.tensor<i=4, j=8 : f32>
}

// -----
// logsumexp: dX = scale * exp(scale * X - lse) * dlse.
// CHECK-LABEL: func.func @logsumexp_grad(
// CHECK-NEXT:    %l = ncd.logsumexp %s along j scale 0.5
// CHECK-NEXT:    [[S:%.+]] = ncd.map scale %s by 0.5
// CHECK-NEXT:    [[D:%.+]] = ncd.map sub [[S]], %l
// CHECK-NEXT:    [[P:%.+]] = ncd.map exp [[D]]
// CHECK-NEXT:    [[T:%.+]] = ncd.map mul [[P]], %d_l
// CHECK-NEXT:    %d_s = ncd.map scale [[T]] by 0.5
// CHECK-NEXT:    func.return %d_s
func.func @logsumexp(%s: !ncd.tensor<i=4, j=8 : f32>) -> !ncd.tensor<i=4 : f32> {
  %l = ncd.logsumexp %s along j scale 0.5 : !ncd.tensor<i=4, j=8 : f32> -> !ncd.tensor<i=4 : f32>
  func.return %l : !ncd.tensor<i=4 : f32>
}

// -----
// A mask zeroes the cotangent where it filled its input.
// CHECK-LABEL: func.func @mask_causal_grad(
// CHECK-NEXT:    %d_s = ncd.mask causal %d_m keep i >= j fill 0.0 : !ncd.tensor<i=4, j=4 : f32> -> !ncd.tensor<i=4, j=4 : f32>
// CHECK-NEXT:    func.return %d_s
func.func @mask_causal(%s: !ncd.tensor<i=4, j=4 : f32>) -> !ncd.tensor<i=4, j=4 : f32> {
  %m = ncd.mask causal %s keep i >= j fill -inf : !ncd.tensor<i=4, j=4 : f32> -> !ncd.tensor<i=4, j=4 : f32>
  func.return %m : !ncd.tensor<i=4, j=4 : f32>
}

// -----
// CHECK-LABEL: func.func @mask_bound_grad(
// CHECK-NEXT:    %d_s = ncd.mask_bound %d_m keep j < 5 fill 0.0 : !ncd.tensor<i=4, j=8 : f32> -> !ncd.tensor<i=4, j=8 : f32>
// CHECK-NEXT:    func.return %d_s
func.func @mask_bound(%s: !ncd.tensor<i=4, j=8 : f32>) -> !ncd.tensor<i=4, j=8 : f32> {
  %m = ncd.mask_bound %s keep j < 5 fill 0.0 : !ncd.tensor<i=4, j=8 : f32> -> !ncd.tensor<i=4, j=8 : f32>
  func.return %m : !ncd.tensor<i=4, j=8 : f32>
}

// -----
// A rename's cotangent is named back.
// CHECK-LABEL: func.func @renamed_grad
// CHECK:       %[[R:.*]] = ncd.rename %{{.*}} [e -> d] : !ncd.tensor<j=4, e=8 : f32> -> !ncd.tensor<j=4, d=8 : f32>
// CHECK:       ncd.map cast %[[R]] : !ncd.tensor<j=4, d=8 : f32> -> !ncd.tensor<j=4, d=8 : bf16>
func.func @renamed(%v: !ncd.tensor<j=4, d=8 : bf16>) -> !ncd.tensor<j=4, e=8 : bf16> {
  %r = ncd.rename %v [d -> e] : !ncd.tensor<j=4, d=8 : bf16> -> !ncd.tensor<j=4, e=8 : bf16>
  func.return %r : !ncd.tensor<j=4, e=8 : bf16>
}
