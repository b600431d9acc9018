// napkin-run interprets each example on the CPU and checks it against float64 numpy.
// RUN: napkin-run %examples/matmul.mlir --random-inputs --seed 3 --check | filecheck %s --check-prefix=MATMUL
// RUN: napkin-run %examples/attention.mlir --random-inputs --seed 3 --check | filecheck %s --check-prefix=ATTN
// RUN: napkin-run %examples/causal_attention.mlir --random-inputs --seed 3 --check | filecheck %s --check-prefix=CAUSAL
// RUN: napkin-run %examples/spherical_attention.mlir --random-inputs --seed 3 --check | filecheck %s --check-prefix=SPHERE
// RUN: napkin-run %examples/gemm_bias.mlir --random-inputs --seed 3 --check | filecheck %s --check-prefix=BIAS
// Without inputs it says so and fails; any diagram, whatever its name, is checked against
// its own float64 evaluation (attention renamed @matmul is not checked as a GEMM).
// RUN: not napkin-run %examples/matmul.mlir 2>&1 | filecheck %s --check-prefix=NOINPUT
// RUN: napkin-run %s --random-inputs --check 2>&1 | filecheck %s --check-prefix=ANYNAME
// RUN: sed 's/@attention/@matmul/' %examples/attention.mlir | napkin-run --random-inputs --check 2>&1 | filecheck %s --check-prefix=RENAMED
// RUN: not napkin-run %examples/matmul.mlir --random-inputs --seed -1 2>&1 | filecheck %s --check-prefix=SEED
// The same seed gives the same checksum; another seed another one (last: lit's
// built-in diff leaves PYTHONPATH set to lit's own directory for the lines after it).
// RUN: napkin-run %examples/matmul.mlir --random-inputs --seed 3 > %t.a
// RUN: napkin-run %examples/matmul.mlir --random-inputs --seed 3 > %t.b
// RUN: napkin-run %examples/matmul.mlir --random-inputs --seed 4 > %t.c
// RUN: diff %t.a %t.b
// RUN: not diff %t.a %t.c

// MATMUL: @matmul output #0: <m=512, n=384> bf16 sum={{.*}} abs_sum={{.*}}
// MATMUL-NEXT: checking the diagram's interpretation on the CPU against the diagram evaluated in float64
// MATMUL-NEXT: check against float64 reference: relative error {{.*}} (bound 2e-02 for bf16): ok
// ATTN: @attention output #0: <b=2, h=4, i=256, d=64> bf16
// ATTN-NEXT: checking the diagram's interpretation on the CPU against the diagram evaluated in float64
// ATTN-NEXT: {{.*}}: ok
// CAUSAL: @causal_attention output #0: <b=2, h=4, i=256, d=64> bf16
// CAUSAL-NEXT: checking the diagram's interpretation on the CPU against the diagram evaluated in float64
// CAUSAL-NEXT: {{.*}}: ok
// SPHERE: @spherical_attention output #0: <b=2, h=4, i=256, d=64> bf16
// SPHERE-NEXT: checking the diagram's interpretation on the CPU against the diagram evaluated in float64
// SPHERE-NEXT: {{.*}}: ok
// BIAS: @gemm_bias output #0: <m=256, n=192> bf16 sum={{.*}} abs_sum={{.*}}
// BIAS-NEXT: checking the diagram's interpretation on the CPU against the diagram evaluated in float64
// BIAS-NEXT: check against float64 reference: relative error {{.*}} (bound 2e-02 for bf16): ok
// NOINPUT: napkin-run: error: no inputs: pass --random-inputs
// ANYNAME: checking the diagram's interpretation on the CPU against the diagram evaluated in float64
// ANYNAME-NEXT: check against float64 reference: relative error 0.000e+00 {{.*}}: ok
// RENAMED: @matmul output #0: <b=2, h=4, i=256, d=64> bf16
// RENAMED-NEXT: checking the diagram's interpretation on the CPU against the diagram evaluated in float64
// RENAMED-NEXT: check against float64 reference: {{.*}}: ok
// SEED: napkin-run: error: argument --seed: a seed is a non-negative integer, got -1
// SEED-NOT: internal error

func.func @double(%x: !ncd.tensor<i=4 : f32>) -> !ncd.tensor<i=4 : f32> {
  %y = ncd.map scale %x by 2.0 : !ncd.tensor<i=4 : f32> -> !ncd.tensor<i=4 : f32>
  func.return %y : !ncd.tensor<i=4 : f32>
}
