// ncd-grad{residuals=true}: the forward also returns each softmax's log-sum-exp and each
// L2 norm's norm (f32, one value a row, after its results, in op order); @f_grad takes them
// after the cotangents and recomputes P = exp(scale * S - lse), Y = X / norm from them;
// then @f's results, from which D = rowsum(dO * O) replaces the row sum of dP * P where P
// only feeds the output (%delta: no reduction along the keys is left).
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-grad{residuals=true}' | filecheck %s --check-prefix=CAUSAL
// RUN: napkin-opt %examples/spherical_attention.mlir -p 'ncd-grad{residuals=true}' | filecheck %s --check-prefix=SPHERE
// RUN: napkin-opt %examples/gqa_attention.mlir -p 'ncd-grad{residuals=true}' | filecheck %s --check-prefix=GQA
// RUN: napkin-opt %s -p 'ncd-grad{residuals=true}' | filecheck %s
// Without the option, nothing is saved and the gradient reduces again.
// RUN: napkin-opt %examples/attention.mlir -p ncd-grad | filecheck %s --check-prefix=PLAIN

// CAUSAL-LABEL: func.func @causal_attention(
// CAUSAL-SAME:    -> (!ncd.tensor<b=2, h=4, i=256, d=64 : bf16>, !ncd.tensor<b=2, h=4, i=256 : f32>)
// CAUSAL:         %p = ncd.softmax %m along j scale 0.125
// CAUSAL-NEXT:    %lse = ncd.logsumexp %m along j scale 0.125 : !ncd.tensor<b=2, h=4, i=256, j=256 : f32> -> !ncd.tensor<b=2, h=4, i=256 : f32>
// CAUSAL:         func.return %o, %lse
// CAUSAL-LABEL: func.func @causal_attention_grad(%q: {{.*}}, %k: {{.*}}, %v: {{.*}}, %d_o: !ncd.tensor<b=2, h=4, i=256, d=64 : bf16>, %lse: !ncd.tensor<b=2, h=4, i=256 : f32>, %o: !ncd.tensor<b=2, h=4, i=256, d=64 : bf16>)
// CAUSAL-NOT:     ncd.reduce sum {{.*}} along [j]
// CAUSAL-NOT:     ncd.softmax
// CAUSAL:         %m = ncd.mask causal %s keep i >= j fill -inf
// CAUSAL-NEXT:    [[S:%.+]] = ncd.map scale %m by 0.125
// CAUSAL-NEXT:    [[D:%.+]] = ncd.map sub [[S]], %lse
// CAUSAL-NEXT:    %p = ncd.map exp [[D]]
// CAUSAL:         [[DO:%.+]] = ncd.map cast %d_o
// CAUSAL:         [[O:%.+]] = ncd.map cast %o
// CAUSAL-NEXT:    [[DOO:%.+]] = ncd.map mul [[DO]], [[O]]
// CAUSAL-NEXT:    %delta = ncd.reduce sum [[DOO]] along [d] : !ncd.tensor<b=2, h=4, i=256, d=64 : f32> -> !ncd.tensor<b=2, h=4, i=256 : f32>
// CAUSAL-NEXT:    ncd.map sub %d_p16, %delta
// CAUSAL:         %d_m = ncd.map scale {{%.+}} by 0.125
// CAUSAL-NEXT:    %d_s = ncd.mask causal %d_m keep i >= j fill 0.0
// CAUSAL-NOT:     ncd.logsumexp
// CAUSAL:         func.return

// SPHERE-LABEL: func.func @spherical_attention(
// SPHERE:         %p = ncd.l2norm %s along j
// SPHERE-NEXT:    [[SQ:%.+]] = ncd.map mul %s, %s
// SPHERE-NEXT:    [[SS:%.+]] = ncd.reduce sum [[SQ]] along [j]
// SPHERE-NEXT:    %norm = ncd.map sqrt [[SS]] : !ncd.tensor<b=2, h=4, i=256 : f32> -> !ncd.tensor<b=2, h=4, i=256 : f32>
// SPHERE:         func.return %o, %norm
// SPHERE-LABEL: func.func @spherical_attention_grad({{.*}}, %d_o: {{.*}}, %norm: !ncd.tensor<b=2, h=4, i=256 : f32>, %o: {{.*}})
// SPHERE-NOT:     ncd.l2norm
// SPHERE-NOT:     ncd.reduce sum {{.*}} along [j] {{.*}} -> !ncd.tensor<b=2, h=4, i=256 : f32>
// SPHERE:         %p = ncd.map div %s, %norm
// SPHERE:         %d_s = ncd.map div {{%.+}}, %norm

// Grouped-query attention: dK and dV sum over the group's query heads r (and the rows i).
// GQA-LABEL: func.func @gqa_attention_grad(
// GQA-SAME:      %lse: !ncd.tensor<b=1, g=2, r=4, i=256 : f32>, %o: !ncd.tensor<b=1, g=2, r=4, i=256, d=64 : bf16>) -> (!ncd.tensor<b=1, g=2, r=4, i=256, d=64 : bf16>, !ncd.tensor<b=1, g=2, j=256, d=64 : bf16>, !ncd.tensor<b=1, g=2, j=256, d=64 : bf16>)
// GQA:           %d_v = ncd.contract %d_o{{.*}} over [r, i] : {{.*}} -> !ncd.tensor<b=1, g=2, j=256, d=64 : f32>
// GQA:           %d_q = ncd.contract %d_s, {{%.+}} over [j] : {{.*}} -> !ncd.tensor<b=1, g=2, r=4, i=256, d=64 : f32>
// GQA:           %d_k = ncd.contract %d_s, {{%.+}} over [r, i] : {{.*}} -> !ncd.tensor<b=1, g=2, j=256, d=64 : f32>

// PLAIN-LABEL: func.func @attention(
// PLAIN-SAME:    -> !ncd.tensor<b=2, h=4, i=256, d=64 : bf16> {
// PLAIN-NOT:     ncd.logsumexp
// PLAIN-LABEL: func.func @attention_grad(%q: {{.*}}, %k: {{.*}}, %v: {{.*}}, %d_o: !ncd.tensor<b=2, h=4, i=256, d=64 : bf16>) ->
// PLAIN:         %p = ncd.softmax %s along j scale 0.125

// Two normalisations: their statistics follow the results in op order; the softmax of a
// bf16 input is recomputed in f32 and rounded as the forward rounded it.
// CHECK-LABEL: func.func @two(
// CHECK-SAME:    -> (!ncd.tensor<i=4, j=8 : f32>, !ncd.tensor<j=8 : f32>, !ncd.tensor<i=4 : f32>)
// CHECK:         %lse = ncd.logsumexp %x along i : !ncd.tensor<i=4, j=8 : bf16> -> !ncd.tensor<j=8 : f32>
// CHECK:         %norm = ncd.map sqrt
// CHECK:         func.return %z, %lse, %norm
// CHECK-LABEL: func.func @two_grad(%x: !ncd.tensor<i=4, j=8 : bf16>, %d_z: !ncd.tensor<i=4, j=8 : f32>, %lse: !ncd.tensor<j=8 : f32>, %norm: !ncd.tensor<i=4 : f32>, %z: !ncd.tensor<i=4, j=8 : f32>) -> !ncd.tensor<i=4, j=8 : bf16>
// CHECK-NEXT:    [[X:%.+]] = ncd.map cast %x : !ncd.tensor<i=4, j=8 : bf16> -> !ncd.tensor<i=4, j=8 : f32>
// CHECK-NEXT:    [[D:%.+]] = ncd.map sub [[X]], %lse
// CHECK-NEXT:    [[E:%.+]] = ncd.map exp [[D]]
// CHECK-NEXT:    %p = ncd.map cast [[E]] : !ncd.tensor<i=4, j=8 : f32> -> !ncd.tensor<i=4, j=8 : bf16>
// CHECK-NEXT:    %p32 = ncd.map cast %p
// CHECK-NEXT:    [[Y:%.+]] = ncd.map div %p32, %norm
func.func @two(%x: !ncd.tensor<i=4, j=8 : bf16>) -> !ncd.tensor<i=4, j=8 : f32> {
  %p = ncd.softmax %x along i : !ncd.tensor<i=4, j=8 : bf16> -> !ncd.tensor<i=4, j=8 : bf16>
  %p32 = ncd.map cast %p : !ncd.tensor<i=4, j=8 : bf16> -> !ncd.tensor<i=4, j=8 : f32>
  %z = ncd.l2norm %p32 along j : !ncd.tensor<i=4, j=8 : f32> -> !ncd.tensor<i=4, j=8 : f32>
  func.return %z : !ncd.tensor<i=4, j=8 : f32>
}
