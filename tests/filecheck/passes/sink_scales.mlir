// ncd-sink-scales moves a constant scale of a contraction's operand past the contractions
// that read it (through casts to 16 bits), where their f32 results hold no more elements
// than the scaled tensor: attention's dS, a queries x keys tile, read by dQ and dK.
// RUN: napkin-opt %s -p ncd-sink-scales | filecheck %s
// RUN: napkin-opt %s -p ncd-sink-scales,ncd-widen-results{result=0} | filecheck %s --check-prefix=WIDE

// CHECK-LABEL: func.func @ds
// CHECK-NOT: ncd.map scale %x
// CHECK: %x16 = ncd.map cast %x : !ncd.tensor<i=64, j=64 : f32> -> !ncd.tensor<i=64, j=64 : bf16>
// CHECK-NEXT: %dq_unscaled = ncd.contract %x16, %k over [j]
// CHECK-NEXT: %dq = ncd.map scale %dq_unscaled by 0.125 : !ncd.tensor<i=64, d=16 : f32> -> !ncd.tensor<i=64, d=16 : f32>
// CHECK-NEXT: %dk_unscaled = ncd.contract %x16, %q over [i]
// CHECK-NEXT: %dk = ncd.map scale %dk_unscaled by 0.125 : !ncd.tensor<j=64, d=16 : f32> -> !ncd.tensor<j=64, d=16 : f32>
// CHECK-NEXT: %dq16 = ncd.map cast %dq
// CHECK-NEXT: %dk16 = ncd.map cast %dk
// CHECK-NEXT: func.return %dq16, %dk16

// the sum blocks add into leaves the kernel unscaled; the caller multiplies it
// WIDE-LABEL: func.func @ds
// WIDE-SAME: -> (!ncd.tensor<i=64, d=16 : f32> {ncd.scale = 1.250000e-01 : f32}, !ncd.tensor<j=64, d=16 : bf16>)
// WIDE: %dq_unscaled = ncd.contract
// WIDE-NOT: ncd.map scale %dq_unscaled
// WIDE: %dk = ncd.map scale %dk_unscaled by 0.125
// WIDE: func.return %dq_unscaled, %dk16

func.func @ds(%x: !ncd.tensor<i=64, j=64 : f32>, %k: !ncd.tensor<j=64, d=16 : bf16>, %q: !ncd.tensor<i=64, d=16 : bf16>) -> (!ncd.tensor<i=64, d=16 : bf16>, !ncd.tensor<j=64, d=16 : bf16>) {
  %s = ncd.map scale %x by 0.125 : !ncd.tensor<i=64, j=64 : f32> -> !ncd.tensor<i=64, j=64 : f32>
  %x16 = ncd.map cast %s : !ncd.tensor<i=64, j=64 : f32> -> !ncd.tensor<i=64, j=64 : bf16>
  %dq = ncd.contract %x16, %k over [j] : !ncd.tensor<i=64, j=64 : bf16>, !ncd.tensor<j=64, d=16 : bf16> -> !ncd.tensor<i=64, d=16 : f32>
  %dk = ncd.contract %x16, %q over [i] : !ncd.tensor<i=64, j=64 : bf16>, !ncd.tensor<i=64, d=16 : bf16> -> !ncd.tensor<j=64, d=16 : f32>
  %dq16 = ncd.map cast %dq : !ncd.tensor<i=64, d=16 : f32> -> !ncd.tensor<i=64, d=16 : bf16>
  %dk16 = ncd.map cast %dk : !ncd.tensor<j=64, d=16 : f32> -> !ncd.tensor<j=64, d=16 : bf16>
  func.return %dq16, %dk16 : !ncd.tensor<i=64, d=16 : bf16>, !ncd.tensor<j=64, d=16 : bf16>
}

// read as it is (f32 operands), the scale still moves
// CHECK-LABEL: func.func @direct
// CHECK-NEXT: %c_unscaled = ncd.contract %x, %y over [j]
// CHECK-NEXT: %c = ncd.map scale %c_unscaled by 2.0
// CHECK-NEXT: func.return %c
func.func @direct(%x: !ncd.tensor<i=32, j=32 : f32>, %y: !ncd.tensor<j=32, d=8 : f32>) -> !ncd.tensor<i=32, d=8 : f32> {
  %s = ncd.map scale %x by 2.0 : !ncd.tensor<i=32, j=32 : f32> -> !ncd.tensor<i=32, j=32 : f32>
  %c = ncd.contract %s, %y over [j] : !ncd.tensor<i=32, j=32 : f32>, !ncd.tensor<j=32, d=8 : f32> -> !ncd.tensor<i=32, d=8 : f32>
  func.return %c : !ncd.tensor<i=32, d=8 : f32>
}

// a larger result than the scaled operand (a weight scaled, a long batch of rows): stays
// CHECK-LABEL: func.func @larger
// CHECK-NEXT: %s = ncd.map scale %w by 2.0
// CHECK-NEXT: %c = ncd.contract %x, %s
func.func @larger(%x: !ncd.tensor<m=256, k=16 : f32>, %w: !ncd.tensor<k=16, n=16 : f32>) -> !ncd.tensor<m=256, n=16 : f32> {
  %s = ncd.map scale %w by 2.0 : !ncd.tensor<k=16, n=16 : f32> -> !ncd.tensor<k=16, n=16 : f32>
  %c = ncd.contract %x, %s over [k] : !ncd.tensor<m=256, k=16 : f32>, !ncd.tensor<k=16, n=16 : f32> -> !ncd.tensor<m=256, n=16 : f32>
  func.return %c : !ncd.tensor<m=256, n=16 : f32>
}

// read by something other than a contraction (here the exp of the forward's scores): stays
// CHECK-LABEL: func.func @scores
// CHECK-NEXT: %s = ncd.map scale %x by 0.5
// CHECK-NEXT: %e = ncd.map exp %s
func.func @scores(%x: !ncd.tensor<i=32, j=32 : f32>, %y: !ncd.tensor<j=32, d=8 : f32>) -> (!ncd.tensor<i=32, j=32 : f32>, !ncd.tensor<i=32, d=8 : f32>) {
  %s = ncd.map scale %x by 0.5 : !ncd.tensor<i=32, j=32 : f32> -> !ncd.tensor<i=32, j=32 : f32>
  %e = ncd.map exp %s : !ncd.tensor<i=32, j=32 : f32> -> !ncd.tensor<i=32, j=32 : f32>
  %c = ncd.contract %s, %y over [j] : !ncd.tensor<i=32, j=32 : f32>, !ncd.tensor<j=32, d=8 : f32> -> !ncd.tensor<i=32, d=8 : f32>
  func.return %e, %c : !ncd.tensor<i=32, j=32 : f32>, !ncd.tensor<i=32, d=8 : f32>
}

// both operands of one contraction, and a value returned: stay
// CHECK-LABEL: func.func @square
// CHECK-NEXT: %s = ncd.map scale %x by 3.0
// CHECK-LABEL: func.func @returned
// CHECK-NEXT: %s = ncd.map scale %x by 3.0
func.func @square(%x: !ncd.tensor<i=32, j=32 : f32>) -> !ncd.tensor<i=32 : f32> {
  %s = ncd.map scale %x by 3.0 : !ncd.tensor<i=32, j=32 : f32> -> !ncd.tensor<i=32, j=32 : f32>
  %c = ncd.contract %s, %s over [j] : !ncd.tensor<i=32, j=32 : f32>, !ncd.tensor<i=32, j=32 : f32> -> !ncd.tensor<i=32 : f32>
  func.return %c : !ncd.tensor<i=32 : f32>
}
func.func @returned(%x: !ncd.tensor<i=32, j=32 : f32>, %y: !ncd.tensor<j=32, d=8 : f32>) -> (!ncd.tensor<i=32, j=32 : f32>, !ncd.tensor<i=32, d=8 : f32>) {
  %s = ncd.map scale %x by 3.0 : !ncd.tensor<i=32, j=32 : f32> -> !ncd.tensor<i=32, j=32 : f32>
  %c = ncd.contract %s, %y over [j] : !ncd.tensor<i=32, j=32 : f32>, !ncd.tensor<j=32, d=8 : f32> -> !ncd.tensor<i=32, d=8 : f32>
  func.return %s, %c : !ncd.tensor<i=32, j=32 : f32>, !ncd.tensor<i=32, d=8 : f32>
}

// a causal mask that fills with zeros commutes with the scale (causal attention's dS)...
// CHECK-LABEL: func.func @masked
// CHECK-NEXT: %m = ncd.mask causal %x keep i >= j fill 0.0
// CHECK-NEXT: %m16 = ncd.map cast %m
// CHECK-NEXT: %c_unscaled = ncd.contract %m16, %y over [j]
// CHECK-NEXT: %c = ncd.map scale %c_unscaled by 0.125
func.func @masked(%x: !ncd.tensor<i=32, j=32 : f32>, %y: !ncd.tensor<j=32, d=8 : bf16>) -> !ncd.tensor<i=32, d=8 : f32> {
  %s = ncd.map scale %x by 0.125 : !ncd.tensor<i=32, j=32 : f32> -> !ncd.tensor<i=32, j=32 : f32>
  %m = ncd.mask causal %s keep i >= j fill 0.0 : !ncd.tensor<i=32, j=32 : f32> -> !ncd.tensor<i=32, j=32 : f32>
  %m16 = ncd.map cast %m : !ncd.tensor<i=32, j=32 : f32> -> !ncd.tensor<i=32, j=32 : bf16>
  %c = ncd.contract %m16, %y over [j] : !ncd.tensor<i=32, j=32 : bf16>, !ncd.tensor<j=32, d=8 : bf16> -> !ncd.tensor<i=32, d=8 : f32>
  func.return %c : !ncd.tensor<i=32, d=8 : f32>
}

// ... one that fills with -inf does not
// CHECK-LABEL: func.func @filled
// CHECK-NEXT: %s = ncd.map scale %x by 0.125
func.func @filled(%x: !ncd.tensor<i=32, j=32 : f32>, %y: !ncd.tensor<j=32, d=8 : f32>) -> !ncd.tensor<i=32, d=8 : f32> {
  %s = ncd.map scale %x by 0.125 : !ncd.tensor<i=32, j=32 : f32> -> !ncd.tensor<i=32, j=32 : f32>
  %m = ncd.mask causal %s keep i >= j fill -inf : !ncd.tensor<i=32, j=32 : f32> -> !ncd.tensor<i=32, j=32 : f32>
  %c = ncd.contract %m, %y over [j] : !ncd.tensor<i=32, j=32 : f32>, !ncd.tensor<j=32, d=8 : f32> -> !ncd.tensor<i=32, d=8 : f32>
  func.return %c : !ncd.tensor<i=32, d=8 : f32>
}
