// reg-to-ptx's fragment-math rules (ptx_rules/fragments.py): a row max is a tree in the
// lane and two butterfly shuffles across the quad; exp2(x c - m) one fma and one ex2; the
// causal mask a compare and select per value; P packed to bf16 pairs for the next product.
// RUN: napkin-opt %examples/causal_attention.mlir -p napkin-sm80 -t ptx | filecheck %s
// RUN: napkin-opt %examples/gemm_exp.mlir -p napkin-sm80 -t ptx | filecheck %s --check-prefix=EXP
// RUN: napkin-opt %examples/gemm_bias.mlir -p napkin-sm80 -t ptx | filecheck %s --check-prefix=BIAS
// RUN: napkin-opt %examples/spherical_attention.mlir -p napkin-sm80 -t ptx | filecheck %s --check-prefix=SPHERICAL

// CHECK: max.f32
// CHECK: shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 1, 31, 0xffffffff;
// CHECK: shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 2, 31, 0xffffffff;
// CHECK: fma.rn.f32
// CHECK: ex2.approx.ftz.f32
// CHECK: setp.ge.s32
// CHECK: selp.f32
// CHECK: cvt.rn.bf16x2.f32

// exp(0.5 x) = 2^(0.5 x log2 e): two scalings, then ex2
// EXP: mov.f32 [[HALF:%f[0-9]+]], 0f3F000000;
// EXP: mul.f32 %f{{[0-9]+}}, %f{{[0-9]+}}, [[HALF]];
// EXP: mov.f32 [[LOG2E:%f[0-9]+]], 0f3FB8AA3B;
// EXP: mul.f32 [[X:%f[0-9]+]], %f{{[0-9]+}}, [[LOG2E]];
// EXP: ex2.approx.ftz.f32 %f{{[0-9]+}}, [[X]];

// a bias per column: value v of a lane adds the col fragment's value of its column, so the
// rows g and g + 8 of a tile (values 0, 2 and 1, 3) add the same two registers
// BIAS: @%p{{[0-9]+}} ld.global.v2.f32 {[[B0:%f[0-9]+]], [[B1:%f[0-9]+]]}
// BIAS: add.f32 %f{{[0-9]+}}, %f{{[0-9]+}}, [[B0]];
// BIAS-NEXT: add.f32 %f{{[0-9]+}}, %f{{[0-9]+}}, [[B1]];
// BIAS-NEXT: add.f32 %f{{[0-9]+}}, %f{{[0-9]+}}, [[B0]];
// BIAS-NEXT: add.f32 %f{{[0-9]+}}, %f{{[0-9]+}}, [[B1]];

// spherical attention's squared norm: a row's 16 values of a lane (64 keys) squared and
// summed as four fma chains of four, each started by a product (the fourth checked whole),
// the chains added as a tree, then across the quad
// SPHERICAL-COUNT-4: mul.f32 [[ACC:%f[0-9]+]], [[X:%f[0-9]+]], [[X]];{{$}}
// SPHERICAL-NEXT: fma.rn.f32 [[ACC2:%f[0-9]+]], [[Y:%f[0-9]+]], [[Y]], [[ACC]];
// SPHERICAL-NEXT: fma.rn.f32 [[ACC3:%f[0-9]+]], [[Z:%f[0-9]+]], [[Z]], [[ACC2]];
// SPHERICAL-NEXT: fma.rn.f32 %f{{[0-9]+}}, [[W:%f[0-9]+]], [[W]], [[ACC3]];
// SPHERICAL-NEXT: add.f32
// SPHERICAL-NEXT: add.f32
// SPHERICAL-NEXT: add.f32 [[LANE:%f[0-9]+]],
// SPHERICAL-NEXT: shfl.sync.bfly.b32 [[OTHER:%f[0-9]+]], [[LANE]], 1, 31, 0xffffffff;
// SPHERICAL-NEXT: add.f32 %f{{[0-9]+}}, [[LANE]], [[OTHER]];
// SPHERICAL: cvt.rn.bf16x2.f32
