// reg-to-ptx's copy rules (ptx_rules/copies.py): smem.alloc takes parts of one dynamic
// array; smem.copy is cp.async of 16-byte chunks from one base register per copy, stage and
// chunk in immediates; swizzled stages XOR the chunk by the row; a tile that may start past
// the end is guarded, rows that may straddle it zero-filled (src-size 0).
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3},smem-to-reg{warps="m:2,n:2"},smem-unroll-stages,reg-prefetch,reg-to-ptx' -t ptx | filecheck %s
// RUN: sed -e 's/k=256/k=200/g' %examples/matmul.mlir | napkin-opt -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8},smem-to-reg{warps="m:2,n:2"},smem-unroll-stages,reg-to-ptx' -t ptx | filecheck %s --check-prefix=RAGGED
// RUN: napkin-opt %examples/attention.mlir -p napkin-sm80 -t ptx | filecheck %s --check-prefix=ROWS
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:64"},ncd-to-hbm,hbm-to-smem{stages=3 layout=swizzle},smem-to-reg{warps="m:2,n:2"},smem-unroll-stages,reg-prefetch,reg-to-ptx' -t ptx | filecheck %s --check-prefix=SWIZZLE

// CHECK: .extern .shared .align 128 .b8 napkin_smem[];
// CHECK: mov.u32 %r{{[0-9]+}}, napkin_smem;
// CHECK: cp.async.cg.shared.global [%r{{[0-9]+}}], [%rd{{[0-9]+}}], 16;
// CHECK: cp.async.commit_group;
// CHECK: cp.async.wait_group 1;
// CHECK-NEXT: bar.sync 0;
// a stage as an immediate: the second stage of A (128 rows x 64 bytes)
// CHECK: cp.async.cg.shared.global [%r{{[0-9]+}}+{{[0-9]+}}], [%rd{{[0-9]+}}+{{[0-9]+}}], 16;

// RAGGED: setp.lt.s32
// RAGGED: selp.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %p{{[0-9]+}};
// RAGGED: selp.b64 %rd{{[0-9]+}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, %p{{[0-9]+}};
// RAGGED: cp.async.cg.shared.global [%r{{[0-9]+}}{{.*}}], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};

// ROWS: @%p{{[0-9]+}} cp.async.cg.shared.global

// the swizzle: the row mod 8, shifted to a 16-byte chunk, XORed into the place
// SWIZZLE: and.b32 [[KEY:%r[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}};
// SWIZZLE: shl.b32 [[CHUNK:%r[0-9]+]], [[KEY]], %r{{[0-9]+}};
// SWIZZLE: xor.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, [[CHUNK]];
// SWIZZLE: cp.async.cg.shared.global
