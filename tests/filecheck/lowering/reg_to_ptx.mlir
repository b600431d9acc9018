// reg-to-ptx: the register-level GEMM kernel becomes sm_80 PTX that ptxas accepts.
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8},smem-to-reg{warps="m:2,n:2"},reg-to-ptx' -t ptx -o %t.ptx
// RUN: filecheck %s < %t.ptx
// RUN: %ptxas -arch=sm_80 %t.ptx -o %t.cubin
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=swizzle},smem-to-reg,reg-to-ptx' 2>&1 | filecheck %s --check-prefix=SWIZZLE
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,reg-to-ptx' 2>&1 | filecheck %s --check-prefix=NOREG

// CHECK:      .target sm_80
// CHECK:      .extern .shared .align 128 .b8 napkin_smem[];
// CHECK:      .visible .entry matmul(
// CHECK-NEXT: .param .u64 matmul_a,
// CHECK-NEXT: .param .u64 matmul_b,
// CHECK-NEXT: .param .u64 matmul_out
// CHECK-NEXT: )
// CHECK-NEXT: .reqntid 128
// CHECK:      mov.u32 %r{{[0-9]+}}, %ctaid.x;
// CHECK:      cp.async.cg.shared.global [%r{{[0-9]+}}], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
// CHECK:      cp.async.commit_group;
// The stream loop: wait for this tile's group, meet at the barrier, compute.
// CHECK:      $L__BB0_1:
// CHECK:      setp.lt.s32
// CHECK:      cp.async.wait_group 1;
// CHECK-NEXT: bar.sync 0;
// CHECK:      ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK:      ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK:      mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK:      bra.uni $L__BB0_1;
// The epilogue: pairs to bf16, stored where they lie inside.
// CHECK:      cp.async.wait_group 0;
// CHECK:      cvt.rn.bf16x2.f32 %bhh{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}};
// CHECK:      @%p{{[0-9]+}} st.global.b32 [%rd{{[0-9]+}}], %bhh{{[0-9]+}};
// CHECK:      ret;

// SWIZZLE: napkin-opt: error: reg-to-ptx: @matmul: the swizzled layout is not emitted yet; use layout=pad8 or row
// NOREG: napkin-opt: error: reg-to-ptx: @matmul has no reg.warps; run smem-to-reg first
