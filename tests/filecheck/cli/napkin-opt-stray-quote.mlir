// A stray `"` in a type opens a string literal that the line never closes. napkin-opt
// reports it at once (issue 22: these three inputs ran for minutes in xDSL's lexer).
// RUN: sed 's/over \[j\] \(.*\) -> !ncd/over [j] \1 -> !nc"/' %examples/attention.mlir | not napkin-opt - 2>&1 | filecheck %s --check-prefix=ATTN
// RUN: sed 's/^func\.func @matmul/fun".func @matmul/' %examples/matmul.mlir | not napkin-opt - 2>&1 | filecheck %s --check-prefix=MATMUL
// RUN: sed '/ncd\.mask/s/: !ncd\.tensor</: !ncd.tensor<"/' %examples/causal_attention.mlir | not napkin-opt - 2>&1 | filecheck %s --check-prefix=CAUSAL

// ATTN: napkin-opt: error: cannot parse the input:
// ATTN-NEXT: -:8:133
// ATTN-NEXT: %o = ncd.contract {{.*}} -> !nc".tensor<b=2, h=4, i=256, d=64 : bf16>
// ATTN-NEXT: {{^ +}}^
// ATTN-NEXT: closing string literal
// ATTN-NOT: error
// ATTN-NOT: Traceback

// MATMUL: napkin-opt: error: cannot parse the input:
// MATMUL-NEXT: -:2:4
// MATMUL-NEXT: fun".func @matmul(
// MATMUL-NEXT: {{^   }}^
// MATMUL-NEXT: closing string literal
// MATMUL-NOT: error
// MATMUL-NOT: Traceback

// CAUSAL: napkin-opt: error: cannot parse the input:
// CAUSAL-NEXT: -:5:63
// CAUSAL-NEXT: %m = ncd.mask causal %s keep i >= j fill -inf : !ncd.tensor<"b=2, h=4, i=256, j=256 : f32> -> !ncd.tensor<b=2, h=4, i=256, j=256 : f32>
// CAUSAL-NEXT: {{^ +}}^
// CAUSAL-NEXT: closing string literal
// CAUSAL-NOT: error
// CAUSAL-NOT: Traceback
