// ncd-fold-log2e writes e to a scaled tensor less a row statistic as 2 to the power, log2 e
// folded into the scale and into the statistic (one multiply a row, not one an element):
// attention's gradient recomputing P = e^(c S - L) from the forward's log-sum-exp.
// RUN: napkin-opt %s -p ncd-fold-log2e | filecheck %s
// The row kernel writes the statistic in base 2 beside D; the others read it (ncd-extract).
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-fold-log2e,ncd-extract{function="attention_grad" value="delta,lse_log2"}' | filecheck %s --check-prefix=ROWS
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-fold-log2e,ncd-extract{function="attention_grad" results="1,2" cut="delta,lse_log2"}' | filecheck %s --check-prefix=KV
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-fold-log2e,ncd-extract{function="attention_grad" value="delta,lse_log2"},napkin-sm90' -t ptx -o %t.rows90.ptx
// RUN: %ptxas -arch=sm_90a %t.rows90.ptx -o %t.rows90.cubin
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-fold-log2e,ncd-extract{function="attention_grad" value="delta,lse_log2"},napkin-sm80' -t ptx -o %t.rows80.ptx
// RUN: %ptxas -arch=sm_80 %t.rows80.ptx -o %t.rows80.cubin

// CHECK-LABEL: func.func @probabilities
// CHECK-NEXT: %lse_log2 = ncd.map scale %lse by 1.44269
// CHECK-NEXT: %0 = ncd.map scale %s by 0.18033
// CHECK-NEXT: %1 = ncd.map sub %0, %lse_log2
// CHECK-NEXT: %p = ncd.map exp2 %1
// a second exp of the same statistic reads the one already scaled
// CHECK-NEXT: %2 = ncd.map scale %t by 2.88539
// CHECK-NEXT: %3 = ncd.map sub %2, %lse_log2
// CHECK-NEXT: %p2 = ncd.map exp2 %3
// CHECK-NEXT: func.return %p, %p2
func.func @probabilities(%s: !ncd.tensor<i=64, j=64 : f32>, %t: !ncd.tensor<i=64, j=64 : f32>, %lse: !ncd.tensor<i=64 : f32>) -> (!ncd.tensor<i=64, j=64 : f32>, !ncd.tensor<i=64, j=64 : f32>) {
  %0 = ncd.map scale %s by 0.125 : !ncd.tensor<i=64, j=64 : f32> -> !ncd.tensor<i=64, j=64 : f32>
  %1 = ncd.map sub %0, %lse : !ncd.tensor<i=64, j=64 : f32>, !ncd.tensor<i=64 : f32> -> !ncd.tensor<i=64, j=64 : f32>
  %p = ncd.map exp %1 : !ncd.tensor<i=64, j=64 : f32> -> !ncd.tensor<i=64, j=64 : f32>
  %2 = ncd.map scale %t by 2.0 : !ncd.tensor<i=64, j=64 : f32> -> !ncd.tensor<i=64, j=64 : f32>
  %3 = ncd.map sub %2, %lse : !ncd.tensor<i=64, j=64 : f32>, !ncd.tensor<i=64 : f32> -> !ncd.tensor<i=64, j=64 : f32>
  %p2 = ncd.map exp %3 : !ncd.tensor<i=64, j=64 : f32> -> !ncd.tensor<i=64, j=64 : f32>
  func.return %p, %p2 : !ncd.tensor<i=64, j=64 : f32>, !ncd.tensor<i=64, j=64 : f32>
}

// left as they are: a scaled tensor something else reads, a difference something else
// reads, no scale, and a subtrahend as large as the difference
// CHECK-LABEL: func.func @kept
// CHECK-NOT: exp2
// CHECK-NOT: by 1.44269
// CHECK: func.return
func.func @kept(%s: !ncd.tensor<i=64, j=64 : f32>, %u: !ncd.tensor<i=64, j=64 : f32>, %lse: !ncd.tensor<i=64 : f32>) -> (!ncd.tensor<i=64, j=64 : f32>, !ncd.tensor<i=64, j=64 : f32>, !ncd.tensor<i=64, j=64 : f32>, !ncd.tensor<i=64, j=64 : f32>, !ncd.tensor<i=64, j=64 : f32>, !ncd.tensor<i=64, j=64 : f32>) {
  %0 = ncd.map scale %s by 0.125 : !ncd.tensor<i=64, j=64 : f32> -> !ncd.tensor<i=64, j=64 : f32>
  %1 = ncd.map sub %0, %lse : !ncd.tensor<i=64, j=64 : f32>, !ncd.tensor<i=64 : f32> -> !ncd.tensor<i=64, j=64 : f32>
  %e0 = ncd.map exp %1 : !ncd.tensor<i=64, j=64 : f32> -> !ncd.tensor<i=64, j=64 : f32>
  %2 = ncd.map scale %s by 0.5 : !ncd.tensor<i=64, j=64 : f32> -> !ncd.tensor<i=64, j=64 : f32>
  %3 = ncd.map sub %2, %lse : !ncd.tensor<i=64, j=64 : f32>, !ncd.tensor<i=64 : f32> -> !ncd.tensor<i=64, j=64 : f32>
  %e1 = ncd.map exp %3 : !ncd.tensor<i=64, j=64 : f32> -> !ncd.tensor<i=64, j=64 : f32>
  %4 = ncd.map sub %s, %lse : !ncd.tensor<i=64, j=64 : f32>, !ncd.tensor<i=64 : f32> -> !ncd.tensor<i=64, j=64 : f32>
  %e2 = ncd.map exp %4 : !ncd.tensor<i=64, j=64 : f32> -> !ncd.tensor<i=64, j=64 : f32>
  %5 = ncd.map scale %s by 0.25 : !ncd.tensor<i=64, j=64 : f32> -> !ncd.tensor<i=64, j=64 : f32>
  %6 = ncd.map sub %5, %u : !ncd.tensor<i=64, j=64 : f32>, !ncd.tensor<i=64, j=64 : f32> -> !ncd.tensor<i=64, j=64 : f32>
  %e3 = ncd.map exp %6 : !ncd.tensor<i=64, j=64 : f32> -> !ncd.tensor<i=64, j=64 : f32>
  func.return %e0, %0, %e1, %3, %e2, %e3 : !ncd.tensor<i=64, j=64 : f32>, !ncd.tensor<i=64, j=64 : f32>, !ncd.tensor<i=64, j=64 : f32>, !ncd.tensor<i=64, j=64 : f32>, !ncd.tensor<i=64, j=64 : f32>, !ncd.tensor<i=64, j=64 : f32>
}

// ROWS-LABEL: func.func @attention_grad_delta_lse_log2
// ROWS-SAME: -> (!ncd.tensor<b=2, h=4, i=256 : f32>, !ncd.tensor<b=2, h=4, i=256 : f32>)
// ROWS: %lse_log2 = ncd.map scale %lse by 1.44269
// ROWS: %delta = ncd.reduce sum
// ROWS: func.return %delta, %lse_log2

// KV-LABEL: func.func @attention_grad_k_v
// KV-SAME: %delta: !ncd.tensor<b=2, h=4, i=256 : f32>, %lse_log2: !ncd.tensor<b=2, h=4, i=256 : f32>
// KV-NOT: %lse:
// KV-NOT: ncd.map exp {{%}}
// KV: ncd.map sub {{%.+}}, %lse_log2
// KV-NEXT: %p = ncd.map exp2
