// Every example parses, verifies, and prints back to text that parses to the same print.
// RUN: napkin-opt %examples/matmul.mlir | napkin-opt | filecheck %s --check-prefix=MATMUL
// RUN: napkin-opt %examples/attention.mlir | napkin-opt | filecheck %s --check-prefix=ATTN
// RUN: napkin-opt %examples/causal_attention.mlir | napkin-opt | filecheck %s --check-prefix=CAUSAL
// RUN: napkin-opt %examples/spherical_attention.mlir | napkin-opt | filecheck %s --check-prefix=SPHERE
// RUN: napkin-opt %examples/attention.mlir --print-op-generic | napkin-opt - | filecheck %s --check-prefix=ATTN
// RUN: napkin-opt %examples/gemm_bias.mlir | napkin-opt | filecheck %s --check-prefix=BIAS
// RUN: napkin-opt %examples/gqa_attention.mlir | napkin-opt | filecheck %s --check-prefix=GQA
// RUN: napkin-opt %examples/gqa_causal_attention.mlir | napkin-opt | filecheck %s --check-prefix=GQA-CAUSAL

// MATMUL: func.func @matmul(%a: !ncd.tensor<m=512, k=256 : bf16>, %b: !ncd.tensor<k=256, n=384 : bf16>) -> !ncd.tensor<m=512, n=384 : bf16>
// MATMUL-NEXT: %c = ncd.contract %a, %b over [k] : {{.*}} -> !ncd.tensor<m=512, n=384 : bf16>
// MATMUL-NEXT: func.return %c

// ATTN: func.func @attention
// ATTN-NEXT: %s = ncd.contract %q, %k over [d] : {{.*}} -> !ncd.tensor<b=2, h=4, i=256, j=256 : f32>
// ATTN-NEXT: %p = ncd.softmax %s along j scale 0.125
// ATTN-NEXT: %p16 = ncd.map cast %p
// ATTN-NEXT: %o = ncd.contract %p16, %v over [j] : {{.*}} -> !ncd.tensor<b=2, h=4, i=256, d=64 : bf16>
// ATTN-NEXT: func.return %o

// CAUSAL: func.func @causal_attention
// CAUSAL: %m = ncd.mask causal %s keep i >= j fill -inf
// CAUSAL-NEXT: %p = ncd.softmax %m along j scale 0.125

// BIAS: func.func @gemm_bias(%a: !ncd.tensor<m=256, k=128 : bf16>, %b: !ncd.tensor<k=128, n=192 : bf16>, %bias: !ncd.tensor<n=192 : f32>) -> !ncd.tensor<m=256, n=192 : bf16>
// BIAS-NEXT: %c = ncd.contract %a, %b over [k] : {{.*}} -> !ncd.tensor<m=256, n=192 : f32>
// BIAS-NEXT: %y = ncd.map add %c, %bias : !ncd.tensor<m=256, n=192 : f32>, !ncd.tensor<n=192 : f32> -> !ncd.tensor<m=256, n=192 : f32>
// BIAS-NEXT: %o = ncd.map cast %y
// BIAS-NEXT: func.return %o

// SPHERE: func.func @spherical_attention
// SPHERE: %p = ncd.l2norm %s along j
// SPHERE-NOT: softmax

// K and V lack the query heads' axis r: the scores broadcast them over it by name
// GQA: func.func @gqa_attention(%q: !ncd.tensor<b=1, g=2, r=4, i=256, d=64 : bf16>, %k: !ncd.tensor<b=1, g=2, j=256, d=64 : bf16>, %v: !ncd.tensor<b=1, g=2, j=256, d=64 : bf16>)
// GQA-NEXT: %s = ncd.contract %q, %k over [d] : {{.*}} -> !ncd.tensor<b=1, g=2, r=4, i=256, j=256 : f32>
// GQA-NEXT: %p = ncd.softmax %s along j scale 0.125
// GQA-NEXT: %p16 = ncd.map cast %p
// GQA-NEXT: %o = ncd.contract %p16, %v over [j] : {{.*}}, !ncd.tensor<b=1, g=2, j=256, d=64 : bf16> -> !ncd.tensor<b=1, g=2, r=4, i=256, d=64 : bf16>

// GQA-CAUSAL: func.func @gqa_causal_attention
// GQA-CAUSAL: %m = ncd.mask causal %s keep i >= j fill -inf : !ncd.tensor<b=1, g=2, r=4, i=256, j=256 : f32>
