// RUN: napkin-opt %s | napkin-opt | filecheck %s
// RUN: napkin-opt %s --print-op-generic | napkin-opt | filecheck %s

// CHECK-LABEL: func.func @types
// CHECK-SAME: %a: !ncd.tensor<b=4, h=16, i=4096, d=128 : bf16>
// CHECK-SAME: %b: !ncd.tensor<x=3 : f16>
// CHECK-SAME: %c: !ncd.tensor<: f32>
func.func @types(%a: !ncd.tensor<b=4, h=16, i=4096, d=128 : bf16>, %b: !ncd.tensor<x=3 : f16>, %c: !ncd.tensor<: f32>) {
  func.return
}

// CHECK-LABEL: func.func @contract
func.func @contract(%q: !ncd.tensor<h=2, i=64, d=32 : bf16>, %k: !ncd.tensor<h=2, j=48, d=32 : bf16>) -> !ncd.tensor<h=2, j=48, i=64 : f32> {
  // CHECK: %s = ncd.contract %q, %k over [d] : !ncd.tensor<h=2, i=64, d=32 : bf16>, !ncd.tensor<h=2, j=48, d=32 : bf16> -> !ncd.tensor<h=2, i=64, j=48 : bf16>
  %s = ncd.contract %q, %k over [d] : !ncd.tensor<h=2, i=64, d=32 : bf16>, !ncd.tensor<h=2, j=48, d=32 : bf16> -> !ncd.tensor<h=2, i=64, j=48 : bf16>
  // CHECK: %t = ncd.contract %q, %k over [d] : {{.*}} -> !ncd.tensor<h=2, j=48, i=64 : f32>
  %t = ncd.contract %q, %k over [d] : !ncd.tensor<h=2, i=64, d=32 : bf16>, !ncd.tensor<h=2, j=48, d=32 : bf16> -> !ncd.tensor<h=2, j=48, i=64 : f32>
  // CHECK: %n = ncd.contract %q, %k over [h, d] : {{.*}} -> !ncd.tensor<i=64, j=48 : bf16>
  %n = ncd.contract %q, %k over [h, d] : !ncd.tensor<h=2, i=64, d=32 : bf16>, !ncd.tensor<h=2, j=48, d=32 : bf16> -> !ncd.tensor<i=64, j=48 : bf16>
  func.return %t : !ncd.tensor<h=2, j=48, i=64 : f32>
}

// CHECK-LABEL: func.func @maps
func.func @maps(%x: !ncd.tensor<i=8, j=16 : f32>, %m: !ncd.tensor<i=8 : f32>, %y: !ncd.tensor<i=8, j=16 : bf16>) {
  // CHECK-NEXT: %0 = ncd.map exp %x : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  // CHECK-NEXT: %1 = ncd.map exp2 %x
  // CHECK-NEXT: %2 = ncd.map neg %x
  // CHECK-NEXT: %3 = ncd.map scale %x by 0.125 : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  // CHECK-NEXT: %4 = ncd.map cast %x : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : bf16>
  // CHECK-NEXT: %5 = ncd.map add %x, %m : !ncd.tensor<i=8, j=16 : f32>, !ncd.tensor<i=8 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  // CHECK-NEXT: %6 = ncd.map sub %m, %x
  // CHECK-NEXT: %7 = ncd.map mul %x, %x
  // CHECK-NEXT: %8 = ncd.map div %x, %m
  // CHECK-NEXT: %9 = ncd.map max %x, %m
  // CHECK-NEXT: %10 = ncd.map scale %y by -2.5 {note = "kept"}
  // CHECK-NEXT: %11 = ncd.map sqrt %x : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  // CHECK-NEXT: %12 = ncd.map max %x by 0.0 : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %0 = ncd.map exp %x : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %1 = ncd.map exp2 %x : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %2 = ncd.map neg %x : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %3 = ncd.map scale %x by 0.125 : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %4 = ncd.map cast %x : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : bf16>
  %5 = ncd.map add %x, %m : !ncd.tensor<i=8, j=16 : f32>, !ncd.tensor<i=8 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %6 = ncd.map sub %m, %x : !ncd.tensor<i=8 : f32>, !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<j=16, i=8 : f32>
  %7 = ncd.map mul %x, %x : !ncd.tensor<i=8, j=16 : f32>, !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %8 = ncd.map div %x, %m : !ncd.tensor<i=8, j=16 : f32>, !ncd.tensor<i=8 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %9 = ncd.map max %x, %m : !ncd.tensor<i=8, j=16 : f32>, !ncd.tensor<i=8 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %10 = ncd.map scale %y by -2.5 {note = "kept"} : !ncd.tensor<i=8, j=16 : bf16> -> !ncd.tensor<i=8, j=16 : bf16>
  %11 = ncd.map sqrt %x : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %12 = ncd.map max %x by 0.0 : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  func.return
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: !ncd.tensor<i=8, j=16 : f32>) {
  // CHECK-NEXT: ncd.reduce sum %x along [j] : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8 : f32>
  // CHECK-NEXT: ncd.reduce max %x along [i, j] : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<: f32>
  // CHECK-NEXT: ncd.softmax %x along j : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  // CHECK-NEXT: ncd.softmax %x along i scale 0.0883883461356163 : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  // CHECK-NEXT: ncd.l2norm %x along j : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  // CHECK-NEXT: ncd.mask causal %x keep i >= j fill -inf : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  // CHECK-NEXT: ncd.mask causal %x keep j >= i fill 0.0 : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %0 = ncd.reduce sum %x along [j] : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8 : f32>
  %1 = ncd.reduce max %x along [i, j] : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<: f32>
  %2 = ncd.softmax %x along j : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %3 = ncd.softmax %x along i scale 0.0883883461356163 : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %4 = ncd.l2norm %x along j : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %5 = ncd.mask causal %x keep i >= j fill -inf : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %6 = ncd.mask causal %x keep j >= i fill 0.0 : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  func.return
}

// Masks on tiles say where the tile starts; a bound mask keeps the positions below a bound.
// CHECK-LABEL: func.func @masks
func.func @masks(%x: !ncd.tensor<i=8, j=16 : f32>, %y: !ncd.tensor<i=8, j=16 : bf16>, %i0: index, %j0: index) {
  // CHECK-NEXT: ncd.mask causal %x keep i >= j fill -inf at [%i0, %j0] : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  // CHECK-NEXT: ncd.mask_bound %x keep j < 100 fill -inf at [%j0] : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  // CHECK-NEXT: ncd.mask_bound %y keep i < 5 fill 0.0 : !ncd.tensor<i=8, j=16 : bf16> -> !ncd.tensor<i=8, j=16 : bf16>
  // CHECK-NEXT: ncd.mask_bound %x keep j < 0 fill 2.5 {note = "kept"} : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %0 = ncd.mask causal %x keep i >= j fill -inf at [%i0, %j0] : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %1 = ncd.mask_bound %x keep j < 100 fill -inf at [%j0] : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %2 = ncd.mask_bound %y keep i < 5 fill 0.0 : !ncd.tensor<i=8, j=16 : bf16> -> !ncd.tensor<i=8, j=16 : bf16>
  %3 = ncd.mask_bound %x keep j < 0 fill 2.5 {note = "kept"} : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  func.return
}

// The ops the gradients use: ge (max's masks), a row's log-sum-exp, a constant tensor.
// CHECK-LABEL: func.func @gradient_ops
func.func @gradient_ops(%x: !ncd.tensor<i=8, j=16 : f32>, %m: !ncd.tensor<i=8 : f32>, %y: !ncd.tensor<i=8, j=16 : bf16>) {
  // CHECK-NEXT: ncd.map ge %x, %m : !ncd.tensor<i=8, j=16 : f32>, !ncd.tensor<i=8 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  // CHECK-NEXT: ncd.map ge %y by 0.0 : !ncd.tensor<i=8, j=16 : bf16> -> !ncd.tensor<j=16, i=8 : bf16>
  // CHECK-NEXT: ncd.logsumexp %x along j : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8 : f32>
  // CHECK-NEXT: ncd.logsumexp %y along i scale 0.125 {note = "kept"} : !ncd.tensor<i=8, j=16 : bf16> -> !ncd.tensor<j=16 : f32>
  // CHECK-NEXT: ncd.constant 0.0 : !ncd.tensor<i=8, j=16 : f32>
  // CHECK-NEXT: ncd.constant -inf {note = "kept"} : !ncd.tensor<: bf16>
  %0 = ncd.map ge %x, %m : !ncd.tensor<i=8, j=16 : f32>, !ncd.tensor<i=8 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %1 = ncd.map ge %y by 0.0 : !ncd.tensor<i=8, j=16 : bf16> -> !ncd.tensor<j=16, i=8 : bf16>
  %2 = ncd.logsumexp %x along j : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8 : f32>
  %3 = ncd.logsumexp %y along i scale 0.125 {note = "kept"} : !ncd.tensor<i=8, j=16 : bf16> -> !ncd.tensor<j=16 : f32>
  %4 = ncd.constant 0.0 : !ncd.tensor<i=8, j=16 : f32>
  %5 = ncd.constant -inf {note = "kept"} : !ncd.tensor<: bf16>
  func.return
}

// A rename: the same tensor, an axis named anew (K^T V keeps V's head dim apart from K's).
// CHECK-LABEL: func.func @rename
func.func @rename(%v: !ncd.tensor<j=16, d=8 : bf16>) -> !ncd.tensor<j=16, e=8 : bf16> {
  // CHECK-NEXT: %r = ncd.rename %v [d -> e] : !ncd.tensor<j=16, d=8 : bf16> -> !ncd.tensor<j=16, e=8 : bf16>
  // CHECK-NEXT: ncd.rename %r [j -> k, e -> d] {note = "kept"} : !ncd.tensor<j=16, e=8 : bf16> -> !ncd.tensor<k=16, d=8 : bf16>
  %r = ncd.rename %v [d -> e] : !ncd.tensor<j=16, d=8 : bf16> -> !ncd.tensor<j=16, e=8 : bf16>
  %s = ncd.rename %r [j -> k, e -> d] {note = "kept"} : !ncd.tensor<j=16, e=8 : bf16> -> !ncd.tensor<k=16, d=8 : bf16>
  func.return %r : !ncd.tensor<j=16, e=8 : bf16>
}
