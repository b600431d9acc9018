// ncd-reassociate: spherical attention without a mask as products of the head dim alone:
// A = K^T V, G = K^T K, W = Q G, n = sqrt(rowsum(W * Q)), O = (Q / n) A.
// RUN: napkin-opt %s --split-input-file -p ncd-reassociate | filecheck %s

// CHECK-LABEL: func.func @spherical
// CHECK-NEXT:  %[[V:.*]] = ncd.rename %v [d -> d1] : !ncd.tensor<h=2, j=48, d=16 : bf16> -> !ncd.tensor<h=2, j=48, d1=16 : bf16>
// CHECK-NEXT:  %[[K:.*]] = ncd.rename %k [d -> d2] : !ncd.tensor<h=2, j=48, d=16 : bf16> -> !ncd.tensor<h=2, j=48, d2=16 : bf16>
// CHECK-NEXT:  %a = ncd.contract %k, %[[V]] over [j] : {{.*}} -> !ncd.tensor<h=2, d=16, d1=16 : bf16>
// CHECK-NEXT:  %g = ncd.contract %k, %[[K]] over [j] : {{.*}} -> !ncd.tensor<h=2, d=16, d2=16 : bf16>
// CHECK-NEXT:  %w = ncd.contract %q, %g over [d] : {{.*}} -> !ncd.tensor<h=2, i=32, d2=16 : bf16>
// CHECK-NEXT:  %[[W:.*]] = ncd.rename %w [d2 -> d]
// CHECK:       %sq = ncd.reduce sum %{{.*}} along [d] : !ncd.tensor<h=2, i=32, d=16 : f32> -> !ncd.tensor<h=2, i=32 : f32>
// CHECK-NEXT:  %n = ncd.map sqrt %sq
// CHECK-NEXT:  %[[QN:.*]] = ncd.map div %{{.*}}, %n
// CHECK-NEXT:  %qn = ncd.map cast %[[QN]] : !ncd.tensor<h=2, i=32, d=16 : f32> -> !ncd.tensor<h=2, i=32, d=16 : bf16>
// CHECK-NEXT:  %u = ncd.contract %qn, %a over [d] : {{.*}} -> !ncd.tensor<h=2, i=32, d1=16 : bf16>
// CHECK-NEXT:  %[[O:.*]] = ncd.rename %u [d1 -> d]
// CHECK-NEXT:  func.return %[[O]] : !ncd.tensor<h=2, i=32, d=16 : bf16>
// CHECK-NOT:   ncd.l2norm
func.func @spherical(%q: !ncd.tensor<h=2, i=32, d=16 : bf16>, %k: !ncd.tensor<h=2, j=48, d=16 : bf16>, %v: !ncd.tensor<h=2, j=48, d=16 : bf16>) -> !ncd.tensor<h=2, i=32, d=16 : bf16> {
  %s = ncd.contract %q, %k over [d] : !ncd.tensor<h=2, i=32, d=16 : bf16>, !ncd.tensor<h=2, j=48, d=16 : bf16> -> !ncd.tensor<h=2, i=32, j=48 : f32>
  %p = ncd.l2norm %s along j : !ncd.tensor<h=2, i=32, j=48 : f32> -> !ncd.tensor<h=2, i=32, j=48 : f32>
  %p16 = ncd.map cast %p : !ncd.tensor<h=2, i=32, j=48 : f32> -> !ncd.tensor<h=2, i=32, j=48 : bf16>
  %o = ncd.contract %p16, %v over [j] : !ncd.tensor<h=2, i=32, j=48 : bf16>, !ncd.tensor<h=2, j=48, d=16 : bf16> -> !ncd.tensor<h=2, i=32, d=16 : bf16>
  func.return %o : !ncd.tensor<h=2, i=32, d=16 : bf16>
}

// -----
// Grouped heads (K and V lack r) and the row norm as the diagram's statistic: the norm is
// the same quadratic form's, and A and G are made once a key/value head.
// CHECK-LABEL: func.func @grouped_with_norm
// CHECK:       %a = ncd.contract %k, %{{.*}} over [j] : {{.*}} -> !ncd.tensor<g=2, d=16, d1=16 : bf16>
// CHECK:       %w = ncd.contract %q, %g over [d] : {{.*}} -> !ncd.tensor<g=2, r=3, i=8, d2=16 : bf16>
// CHECK:       %sq = ncd.reduce sum
// CHECK-NEXT:  %n = ncd.map sqrt %sq
// CHECK:       %norm = ncd.map sqrt %sq : !ncd.tensor<g=2, r=3, i=8 : f32> -> !ncd.tensor<g=2, r=3, i=8 : f32>
// CHECK-NEXT:  func.return %{{.*}}, %norm
// CHECK-NOT:   ncd.l2norm
func.func @grouped_with_norm(%q: !ncd.tensor<g=2, r=3, i=8, d=16 : bf16>, %k: !ncd.tensor<g=2, j=24, d=16 : bf16>, %v: !ncd.tensor<g=2, j=24, d=16 : bf16>) -> (!ncd.tensor<g=2, r=3, i=8, d=16 : bf16>, !ncd.tensor<g=2, r=3, i=8 : f32>) {
  %s = ncd.contract %q, %k over [d] : !ncd.tensor<g=2, r=3, i=8, d=16 : bf16>, !ncd.tensor<g=2, j=24, d=16 : bf16> -> !ncd.tensor<g=2, r=3, i=8, j=24 : f32>
  %p = ncd.l2norm %s along j : !ncd.tensor<g=2, r=3, i=8, j=24 : f32> -> !ncd.tensor<g=2, r=3, i=8, j=24 : f32>
  %sq2 = ncd.map mul %s, %s : !ncd.tensor<g=2, r=3, i=8, j=24 : f32>, !ncd.tensor<g=2, r=3, i=8, j=24 : f32> -> !ncd.tensor<g=2, r=3, i=8, j=24 : f32>
  %ss = ncd.reduce sum %sq2 along [j] : !ncd.tensor<g=2, r=3, i=8, j=24 : f32> -> !ncd.tensor<g=2, r=3, i=8 : f32>
  %norm = ncd.map sqrt %ss : !ncd.tensor<g=2, r=3, i=8 : f32> -> !ncd.tensor<g=2, r=3, i=8 : f32>
  %p16 = ncd.map cast %p : !ncd.tensor<g=2, r=3, i=8, j=24 : f32> -> !ncd.tensor<g=2, r=3, i=8, j=24 : bf16>
  %o = ncd.contract %p16, %v over [j] : !ncd.tensor<g=2, r=3, i=8, j=24 : bf16>, !ncd.tensor<g=2, j=24, d=16 : bf16> -> !ncd.tensor<g=2, r=3, i=8, d=16 : bf16>
  func.return %o, %norm : !ncd.tensor<g=2, r=3, i=8, d=16 : bf16>, !ncd.tensor<g=2, r=3, i=8 : f32>
}

// -----
// A causal mask between the scores and the norm: left as it is.
// CHECK-LABEL: func.func @causal
// CHECK:       ncd.mask causal
// CHECK-NEXT:  ncd.l2norm
// CHECK-NOT:   ncd.rename
func.func @causal(%q: !ncd.tensor<i=16, d=16 : bf16>, %k: !ncd.tensor<j=16, d=16 : bf16>, %v: !ncd.tensor<j=16, d=16 : bf16>) -> !ncd.tensor<i=16, d=16 : bf16> {
  %s = ncd.contract %q, %k over [d] : !ncd.tensor<i=16, d=16 : bf16>, !ncd.tensor<j=16, d=16 : bf16> -> !ncd.tensor<i=16, j=16 : f32>
  %m = ncd.mask causal %s keep i >= j fill -inf : !ncd.tensor<i=16, j=16 : f32> -> !ncd.tensor<i=16, j=16 : f32>
  %p = ncd.l2norm %m along j : !ncd.tensor<i=16, j=16 : f32> -> !ncd.tensor<i=16, j=16 : f32>
  %p16 = ncd.map cast %p : !ncd.tensor<i=16, j=16 : f32> -> !ncd.tensor<i=16, j=16 : bf16>
  %o = ncd.contract %p16, %v over [j] : !ncd.tensor<i=16, j=16 : bf16>, !ncd.tensor<j=16, d=16 : bf16> -> !ncd.tensor<i=16, d=16 : bf16>
  func.return %o : !ncd.tensor<i=16, d=16 : bf16>
}

// -----
// The scores read by something else too (here returned): left as they are.
// CHECK-LABEL: func.func @scores_kept
// CHECK:       ncd.l2norm
// CHECK-NOT:   ncd.rename
func.func @scores_kept(%q: !ncd.tensor<i=16, d=16 : bf16>, %k: !ncd.tensor<j=16, d=16 : bf16>, %v: !ncd.tensor<j=16, d=16 : bf16>) -> (!ncd.tensor<i=16, d=16 : bf16>, !ncd.tensor<i=16, j=16 : f32>) {
  %s = ncd.contract %q, %k over [d] : !ncd.tensor<i=16, d=16 : bf16>, !ncd.tensor<j=16, d=16 : bf16> -> !ncd.tensor<i=16, j=16 : f32>
  %p = ncd.l2norm %s along j : !ncd.tensor<i=16, j=16 : f32> -> !ncd.tensor<i=16, j=16 : f32>
  %p16 = ncd.map cast %p : !ncd.tensor<i=16, j=16 : f32> -> !ncd.tensor<i=16, j=16 : bf16>
  %o = ncd.contract %p16, %v over [j] : !ncd.tensor<i=16, j=16 : bf16>, !ncd.tensor<j=16, d=16 : bf16> -> !ncd.tensor<i=16, d=16 : bf16>
  func.return %o, %s : !ncd.tensor<i=16, d=16 : bf16>, !ncd.tensor<i=16, j=16 : f32>
}

// -----
// f16: K^T K and K^T V, sums over the keys, would pass f16's largest value: left as it is.
// CHECK-LABEL: func.func @half
// CHECK:       ncd.l2norm
// CHECK-NOT:   ncd.rename
func.func @half(%q: !ncd.tensor<i=16, d=16 : f16>, %k: !ncd.tensor<j=64, d=16 : f16>, %v: !ncd.tensor<j=64, d=16 : f16>) -> !ncd.tensor<i=16, d=16 : f16> {
  %s = ncd.contract %q, %k over [d] : !ncd.tensor<i=16, d=16 : f16>, !ncd.tensor<j=64, d=16 : f16> -> !ncd.tensor<i=16, j=64 : f32>
  %p = ncd.l2norm %s along j : !ncd.tensor<i=16, j=64 : f32> -> !ncd.tensor<i=16, j=64 : f32>
  %p16 = ncd.map cast %p : !ncd.tensor<i=16, j=64 : f32> -> !ncd.tensor<i=16, j=64 : f16>
  %o = ncd.contract %p16, %v over [j] : !ncd.tensor<i=16, j=64 : f16>, !ncd.tensor<j=64, d=16 : f16> -> !ncd.tensor<i=16, d=16 : f16>
  func.return %o : !ncd.tensor<i=16, d=16 : f16>
}
