// RUN: napkin-opt %s -p ncd-fold-casts --split-input-file | filecheck %s

// A contraction of two f32 casts of bf16 tensors reads the bf16 tensors; the casts go.
// CHECK-LABEL: func.func @widened
// CHECK-NEXT:    %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=64, k=32 : bf16>, !ncd.tensor<k=32, n=16 : bf16> -> !ncd.tensor<m=64, n=16 : f32>
// CHECK-NEXT:    func.return %c
func.func @widened(%a: !ncd.tensor<m=64, k=32 : bf16>, %b: !ncd.tensor<k=32, n=16 : bf16>) -> !ncd.tensor<m=64, n=16 : f32> {
  %a32 = ncd.map cast %a : !ncd.tensor<m=64, k=32 : bf16> -> !ncd.tensor<m=64, k=32 : f32>
  %b32 = ncd.map cast %b : !ncd.tensor<k=32, n=16 : bf16> -> !ncd.tensor<k=32, n=16 : f32>
  %c = ncd.contract %a32, %b32 over [k] : !ncd.tensor<m=64, k=32 : f32>, !ncd.tensor<k=32, n=16 : f32> -> !ncd.tensor<m=64, n=16 : f32>
  func.return %c : !ncd.tensor<m=64, n=16 : f32>
}

// -----

// A cast with another user stays for it.
// CHECK-LABEL: func.func @shared_cast
// CHECK:         %a32 = ncd.map cast %a
// CHECK:         %c = ncd.contract %a, %b over [k]
// CHECK:         ncd.map exp %a32
func.func @shared_cast(%a: !ncd.tensor<m=64, k=32 : f16>, %b: !ncd.tensor<k=32, n=16 : f16>) -> (!ncd.tensor<m=64, n=16 : f32>, !ncd.tensor<m=64, k=32 : f32>) {
  %a32 = ncd.map cast %a : !ncd.tensor<m=64, k=32 : f16> -> !ncd.tensor<m=64, k=32 : f32>
  %b32 = ncd.map cast %b : !ncd.tensor<k=32, n=16 : f16> -> !ncd.tensor<k=32, n=16 : f32>
  %c = ncd.contract %a32, %b32 over [k] : !ncd.tensor<m=64, k=32 : f32>, !ncd.tensor<k=32, n=16 : f32> -> !ncd.tensor<m=64, n=16 : f32>
  %e = ncd.map exp %a32 : !ncd.tensor<m=64, k=32 : f32> -> !ncd.tensor<m=64, k=32 : f32>
  func.return %c, %e : !ncd.tensor<m=64, n=16 : f32>, !ncd.tensor<m=64, k=32 : f32>
}

// -----

// Operands of two widths, or one computed in f32, are left as they are.
// CHECK-LABEL: func.func @mixed
// CHECK:         ncd.contract %a32, %b32
func.func @mixed(%a: !ncd.tensor<m=64, k=32 : bf16>, %b: !ncd.tensor<k=32, n=16 : f16>) -> !ncd.tensor<m=64, n=16 : f32> {
  %a32 = ncd.map cast %a : !ncd.tensor<m=64, k=32 : bf16> -> !ncd.tensor<m=64, k=32 : f32>
  %b32 = ncd.map cast %b : !ncd.tensor<k=32, n=16 : f16> -> !ncd.tensor<k=32, n=16 : f32>
  %c = ncd.contract %a32, %b32 over [k] : !ncd.tensor<m=64, k=32 : f32>, !ncd.tensor<k=32, n=16 : f32> -> !ncd.tensor<m=64, n=16 : f32>
  func.return %c : !ncd.tensor<m=64, n=16 : f32>
}

// -----

// An f32 tile contracted with a widened bf16 tensor is rounded to bf16 for the product (the
// attention gradient's dS, as FlashAttention rounds it); the sum stays f32.
// CHECK-LABEL: func.func @rounded
// CHECK-NEXT:    %d_s16 = ncd.map cast %d_s : !ncd.tensor<i=64, j=32 : f32> -> !ncd.tensor<i=64, j=32 : bf16>
// CHECK-NEXT:    %d_q = ncd.contract %d_s16, %k over [j] : !ncd.tensor<i=64, j=32 : bf16>, !ncd.tensor<j=32, d=16 : bf16> -> !ncd.tensor<i=64, d=16 : f32>
// CHECK-NEXT:    func.return %d_q
func.func @rounded(%d_s: !ncd.tensor<i=64, j=32 : f32>, %k: !ncd.tensor<j=32, d=16 : bf16>) -> !ncd.tensor<i=64, d=16 : f32> {
  %k32 = ncd.map cast %k : !ncd.tensor<j=32, d=16 : bf16> -> !ncd.tensor<j=32, d=16 : f32>
  %d_q = ncd.contract %d_s, %k32 over [j] : !ncd.tensor<i=64, j=32 : f32>, !ncd.tensor<j=32, d=16 : f32> -> !ncd.tensor<i=64, d=16 : f32>
  func.return %d_q : !ncd.tensor<i=64, d=16 : f32>
}
