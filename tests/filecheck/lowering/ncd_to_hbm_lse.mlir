// The log-sum-exp a forward saves for its gradient (`ncd-grad{residuals=true}`), streamed:
// beside a softmax of the same scores and scale it carries nothing of its own and is
// finished after the stream from the softmax's running max and sum, lse = (m + log2 l) ln 2
// (no second max or exp over the tile); with another scale, or alone, it carries the
// softmax's state of its own. Causal attention over a ragged sequence (200 = 128 + 72).
// RUN: napkin-opt %s --split-input-file -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm' | filecheck %s
// (tests/unit/lowering/test_attention_lse.py runs these levels against float64.)

// CHECK-LABEL: sym_name = "causal_attention"
// CHECK-SAME:  num_outputs = 2
// CHECK:       %out0: !hbm.global<b=2, h=4, i=200, d=64 : bf16>, %out1: !hbm.global<b=2, h=4, i=200 : f32>
// one state, the softmax's, through both loops (unmasked tiles, then the diagonal and ragged ones)
// CHECK:       scf.for %j0 = {{.*}} iter_args(%row_max = {{%.+}}, %row_sum = {{%.+}}, %acc = {{%.+}}) -> (!ncd.tensor<b=1, h=1, i=128 : f32>, !ncd.tensor<b=1, h=1, i=128 : f32>, !ncd.tensor<b=1, h=1, i=128, d=64 : f32>) {
// CHECK-NOT:   ncd.logsumexp
// CHECK:       [[MAX:%.+]], [[SUM:%.+]], [[ACC:%.+]] = scf.for %j0_1 = {{.*}} iter_args(%row_max_1 = {{%.+}}, %row_sum_1 = {{%.+}}, %acc_1 = {{%.+}}) -> (!ncd.tensor<b=1, h=1, i=128 : f32>, !ncd.tensor<b=1, h=1, i=128 : f32>, !ncd.tensor<b=1, h=1, i=128, d=64 : f32>) {
// CHECK-COUNT-1: ncd.reduce max
// CHECK-NOT:   ncd.reduce max
// CHECK:       } {hbm.stream = #hbm.stream<j>}
// CHECK:       %normalised = ncd.map div [[ACC]], [[SUM]]
// CHECK:       [[LOG:%.+]] = ncd.map log2 [[SUM]] : !ncd.tensor<b=1, h=1, i=128 : f32> -> !ncd.tensor<b=1, h=1, i=128 : f32>
// CHECK-NEXT:  [[T:%.+]] = ncd.map add [[MAX]], [[LOG]]
// CHECK-NEXT:  %lse = ncd.map scale [[T]] by 0.6931471824645996
// CHECK:       hbm.store {{%.+}}, %out0[%b0, %h0, %i0, %c0]
// CHECK-NEXT:  hbm.store %lse, %out1[%b0, %h0, %i0] : !ncd.tensor<b=1, h=1, i=128 : f32>, !hbm.global<b=2, h=4, i=200 : f32>
func.func @causal_attention(%q: !ncd.tensor<b=2, h=4, i=200, d=64 : bf16>, %k: !ncd.tensor<b=2, h=4, j=200, d=64 : bf16>, %v: !ncd.tensor<b=2, h=4, j=200, d=64 : bf16>) -> (!ncd.tensor<b=2, h=4, i=200, d=64 : bf16>, !ncd.tensor<b=2, h=4, i=200 : f32>) {
  %s = ncd.contract %q, %k over [d] : !ncd.tensor<b=2, h=4, i=200, d=64 : bf16>, !ncd.tensor<b=2, h=4, j=200, d=64 : bf16> -> !ncd.tensor<b=2, h=4, i=200, j=200 : f32>
  %m = ncd.mask causal %s keep i >= j fill -inf : !ncd.tensor<b=2, h=4, i=200, j=200 : f32> -> !ncd.tensor<b=2, h=4, i=200, j=200 : f32>
  %p = ncd.softmax %m along j scale 0.125 : !ncd.tensor<b=2, h=4, i=200, j=200 : f32> -> !ncd.tensor<b=2, h=4, i=200, j=200 : f32>
  %lse = ncd.logsumexp %m along j scale 0.125 : !ncd.tensor<b=2, h=4, i=200, j=200 : f32> -> !ncd.tensor<b=2, h=4, i=200 : f32>
  %p16 = ncd.map cast %p : !ncd.tensor<b=2, h=4, i=200, j=200 : f32> -> !ncd.tensor<b=2, h=4, i=200, j=200 : bf16>
  %o = ncd.contract %p16, %v over [j] : !ncd.tensor<b=2, h=4, i=200, j=200 : bf16>, !ncd.tensor<b=2, h=4, j=200, d=64 : bf16> -> !ncd.tensor<b=2, h=4, i=200, d=64 : bf16>
  func.return %o, %lse : !ncd.tensor<b=2, h=4, i=200, d=64 : bf16>, !ncd.tensor<b=2, h=4, i=200 : f32>
}

// -----

// Another scale: the log-sum-exp carries a running max and sum of its own, stepped as the
// softmax's, and finished from them.
// CHECK-LABEL: sym_name = "other_scale"
// CHECK:       scf.for %j0 = {{.*}} iter_args(%row_max = {{%.+}}, %row_sum = {{%.+}}, %lse_max = {{%.+}}, %lse_sum = {{%.+}}, %acc = {{%.+}})
// CHECK:         ncd.map scale %s by 0.1803368777036667
// CHECK:         ncd.map scale %s by 0.3606737554073334
// CHECK:         scf.yield %row_max_new, %row_sum_new, %row_max_new_1, %row_sum_new_1, %acc_new
// CHECK:       } {hbm.stream = #hbm.stream<j>}
// CHECK:       [[LOG:%.+]] = ncd.map log2 %{{[0-9]+}}
// CHECK:       %lse = ncd.map scale {{%.+}} by 0.6931471824645996
func.func @other_scale(%q: !ncd.tensor<b=1, h=1, i=128, d=64 : bf16>, %k: !ncd.tensor<b=1, h=1, j=256, d=64 : bf16>, %v: !ncd.tensor<b=1, h=1, j=256, d=64 : bf16>) -> (!ncd.tensor<b=1, h=1, i=128, d=64 : bf16>, !ncd.tensor<b=1, h=1, i=128 : f32>) {
  %s = ncd.contract %q, %k over [d] : !ncd.tensor<b=1, h=1, i=128, d=64 : bf16>, !ncd.tensor<b=1, h=1, j=256, d=64 : bf16> -> !ncd.tensor<b=1, h=1, i=128, j=256 : f32>
  %p = ncd.softmax %s along j scale 0.125 : !ncd.tensor<b=1, h=1, i=128, j=256 : f32> -> !ncd.tensor<b=1, h=1, i=128, j=256 : f32>
  %lse = ncd.logsumexp %s along j scale 0.25 : !ncd.tensor<b=1, h=1, i=128, j=256 : f32> -> !ncd.tensor<b=1, h=1, i=128 : f32>
  %p16 = ncd.map cast %p : !ncd.tensor<b=1, h=1, i=128, j=256 : f32> -> !ncd.tensor<b=1, h=1, i=128, j=256 : bf16>
  %o = ncd.contract %p16, %v over [j] : !ncd.tensor<b=1, h=1, i=128, j=256 : bf16>, !ncd.tensor<b=1, h=1, j=256, d=64 : bf16> -> !ncd.tensor<b=1, h=1, i=128, d=64 : bf16>
  func.return %o, %lse : !ncd.tensor<b=1, h=1, i=128, d=64 : bf16>, !ncd.tensor<b=1, h=1, i=128 : f32>
}

// -----

// A log-sum-exp alone: the row statistic of the scores, streamed in one pass.
// CHECK-LABEL: sym_name = "scores_lse"
// CHECK:       scf.for %j0 = {{.*}} iter_args(%lse_max = {{%.+}}, %lse_sum = {{%.+}})
// CHECK:       %lse = ncd.map scale {{%.+}} by 0.6931471824645996
// CHECK:       hbm.store %lse, %out[%b0, %h0, %i0]
func.func @scores_lse(%q: !ncd.tensor<b=1, h=1, i=128, d=64 : bf16>, %k: !ncd.tensor<b=1, h=1, j=256, d=64 : bf16>) -> !ncd.tensor<b=1, h=1, i=128 : f32> {
  %s = ncd.contract %q, %k over [d] : !ncd.tensor<b=1, h=1, i=128, d=64 : bf16>, !ncd.tensor<b=1, h=1, j=256, d=64 : bf16> -> !ncd.tensor<b=1, h=1, i=128, j=256 : f32>
  %lse = ncd.logsumexp %s along j scale 0.125 : !ncd.tensor<b=1, h=1, i=128, j=256 : f32> -> !ncd.tensor<b=1, h=1, i=128 : f32>
  func.return %lse : !ncd.tensor<b=1, h=1, i=128 : f32>
}
