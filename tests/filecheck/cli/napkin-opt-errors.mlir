// napkin-opt answers bad input with one diagnostic and a non-zero exit, never a traceback.
// RUN: not napkin-opt %s 2>&1 | filecheck %s --check-prefix=VERIFY
// RUN: not napkin-opt %t.missing.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not napkin-opt %examples/matmul.mlir -p no-such-pass 2>&1 | filecheck %s --check-prefix=PASS
// RUN: echo 'func.func @f(%%a: !ncd.tensor<m=4' | not napkin-opt 2>&1 | filecheck %s --check-prefix=TRUNC
// RUN: echo 'func.func @f(%%a: !ncd.tensor<m=4 : f32>) { %%0 = ncd.frobnicate %%a : !ncd.tensor<m=4 : f32> func.return }' | not napkin-opt - 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: cat %examples/matmul.mlir | napkin-opt - | filecheck %s --check-prefix=STDIN
// RUN: not napkin-opt %examples/spherical_attention.mlir -p ncd-reassociate,napkin-sm90 2>&1 | filecheck %s --check-prefix=PROGRAM

// VERIFY: napkin-opt: error: {{.*}}ncd.map add: axis 'i' has size 4 in operand #0 but 8 in operand #1
// VERIFY-NOT: Traceback
// MISSING: napkin-opt: error: no such file: {{.*}}missing.mlir
// PASS: napkin-opt: error: in the pipeline 'no-such-pass': Unrecognized passes: ['no-such-pass']
// TRUNC: napkin-opt: error: cannot parse the input:
// TRUNC-NOT: Traceback
// UNKNOWN: napkin-opt: error: cannot parse the input:
// UNKNOWN: ncd.frobnicate
// STDIN: func.func @matmul
// PROGRAM: napkin-opt: error: napkin-sm90: compiles one function of {{.*}} This diagram is none of them (its 4 products are no one kernel's: `napkin_ir.plan.program.kernel_program` cuts it into a program of kernels
// PROGRAM-NOT: Traceback

func.func @f(%x: !ncd.tensor<i=4 : f32>, %y: !ncd.tensor<i=8 : f32>) {
  %0 = ncd.map add %x, %y : !ncd.tensor<i=4 : f32>, !ncd.tensor<i=8 : f32> -> !ncd.tensor<i=4 : f32>
  func.return
}
