// reg-to-ptx's copy rules (ptx_rules/copies.py): smem.alloc takes parts of one dynamic
// array; smem.copy is cp.async of 16-byte chunks from one base register per copy, stage and
// chunk in immediates; swizzled stages XOR the chunk by the row; a tile that may start past
// the end is guarded, rows that may straddle it zero-filled (src-size 0). reg.load reads a
// bias from global memory: a column pair a lane, 8 columns (32 bytes) on per m16n8 tile, as
// ld.global.v2.f32 (a bf16 pair as .b32, unpacked and widened), each row alone (g and g + 8,
// 32 bytes apart); guarded where the tile may cross the edge (its registers zeroed before
// the load), not where the tiles divide the axes.
// Grouped-query attention's Q tile folds its rows from a group's query heads r and the
// positions i (4 x 32): each thread's row is split into its head and position, whose
// strides place it; a pass of 32 rows moves a head on (an immediate); ragged positions
// are zero-filled by the row's own position, not its row in the tile.
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3},smem-to-reg{warps="m:2,n:2"},smem-unroll-stages,reg-prefetch,reg-to-ptx' -t ptx | filecheck %s
// RUN: sed -e 's/k=256/k=200/g' %examples/matmul.mlir | napkin-opt -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8},smem-to-reg{warps="m:2,n:2"},smem-unroll-stages,reg-to-ptx' -t ptx | filecheck %s --check-prefix=RAGGED
// RUN: napkin-opt %examples/attention.mlir -p napkin-sm80 -t ptx | filecheck %s --check-prefix=ROWS
// RUN: napkin-opt %examples/gemm_bias.mlir -p napkin-sm80 -t ptx | filecheck %s --check-prefix=BIAS
// RUN: sed -e 's/n=192/n=256/g' %examples/gemm_bias.mlir | napkin-opt -p napkin-sm80 -t ptx | filecheck %s --check-prefix=BIAS-EVEN
// RUN: sed -e 's/%bias: !ncd.tensor<n=192 : f32>/%bias: !ncd.tensor<m=256 : f32>/; s/!ncd.tensor<n=192 : f32> ->/!ncd.tensor<m=256 : f32> ->/' %examples/gemm_bias.mlir | napkin-opt -p 'napkin-sm80{block="128,128,32" warps="2,2"}' -t ptx | filecheck %s --check-prefix=BIAS-ROW
// RUN: sed -e 's/%bias: !ncd.tensor<n=192 : f32>/%bias: !ncd.tensor<n=192 : bf16>/; s/%y = ncd.map add %c, %bias/%b32 = ncd.map cast %bias : !ncd.tensor<n=192 : bf16> -> !ncd.tensor<n=192 : f32>\n  %y = ncd.map add %c, %b32/' %examples/gemm_bias.mlir | napkin-opt -p napkin-sm80 -t ptx | filecheck %s --check-prefix=BIAS-BF16
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:64"},ncd-to-hbm,hbm-to-smem{stages=3 layout=swizzle},smem-to-reg{warps="m:2,n:2"},smem-unroll-stages,reg-prefetch,reg-to-ptx' -t ptx | filecheck %s --check-prefix=SWIZZLE
// RUN: napkin-opt %examples/gqa_causal_attention.mlir -p 'ncd-relabel{grid="b,g,r:4,i:32" stream="j:64"},ncd-to-hbm,hbm-launch{order=last},hbm-to-smem{stages=2 layout=pad8},smem-to-reg{warps="r:4,i:2"},reg-to-ptx' -t ptx | filecheck %s --check-prefix=GQA
// RUN: sed -e 's/i=256/i=77/g; s/j=256/j=77/g' %examples/gqa_causal_attention.mlir | napkin-opt -p 'ncd-relabel{grid="b,g,r:4,i:32" stream="j:64"},ncd-to-hbm,hbm-launch{order=last},hbm-to-smem{stages=2 layout=pad8},smem-to-reg{warps="r:4,i:2"},reg-to-ptx' -t ptx | filecheck %s --check-prefix=GQA-RAGGED

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
// SWIZZLE: mov.u32 [[SEVEN:%r[0-9]+]], 7;
// SWIZZLE: and.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, [[SEVEN]];
// SWIZZLE: shl.b32 [[CHUNK:%r[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}};
// SWIZZLE: xor.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, [[CHUNK]];
// SWIZZLE: cp.async.cg.shared.global

// the guarded load's registers are zeroed first (no value of a trip before can come
// through, so none is kept alive around a loop), and no select follows
// BIAS: cp.async.wait_group 0;
// BIAS: setp.gt.s32 [[IN0:%p[0-9]+]], [[ROOM:%r[0-9]+]], %r{{[0-9]+}};
// BIAS-NEXT: mov.b32 [[X0:%f[0-9]+]], 0;
// BIAS-NEXT: mov.b32 [[X1:%f[0-9]+]], 0;
// BIAS-NEXT: @[[IN0]] ld.global.v2.f32 {[[X0]], [[X1]]}, [[[BASE:%rd[0-9]+]]];
// BIAS-NOT: selp.f32 %f{{[0-9]+}}, [[X0]]
// BIAS: setp.gt.s32 [[IN1:%p[0-9]+]], [[ROOM]], %r{{[0-9]+}};
// BIAS-NEXT: mov.b32
// BIAS-NEXT: mov.b32
// BIAS-NEXT: @[[IN1]] ld.global.v2.f32 {%f{{[0-9]+}}, %f{{[0-9]+}}}, [[[BASE]]+32];

// BIAS-EVEN-NOT: @%p{{[0-9]+}} ld.global
// BIAS-EVEN: ld.global.v2.f32 {%f{{[0-9]+}}, %f{{[0-9]+}}}, [[[BASE:%rd[0-9]+]]];
// BIAS-EVEN-NEXT: ld.global.v2.f32 {%f{{[0-9]+}}, %f{{[0-9]+}}}, [[[BASE]]+32];
// BIAS-EVEN-NOT: selp.f32

// BIAS-ROW: ld.global.f32 %f{{[0-9]+}}, [[[BASE:%rd[0-9]+]]];
// BIAS-ROW-NEXT: ld.global.f32 %f{{[0-9]+}}, [[[BASE]]+32];
// BIAS-ROW-NEXT: ld.global.f32 %f{{[0-9]+}}, [[[BASE]]+64];

// BIAS-BF16: mov.b32 [[PAIR:%r[0-9]+]], 0;
// BIAS-BF16-NEXT: @[[IN:%p[0-9]+]] ld.global.b32 [[PAIR]], [%rd{{[0-9]+}}];
// BIAS-BF16-NEXT: mov.b32 {[[LO:%bh[0-9]+]], [[HI:%bh[0-9]+]]}, [[PAIR]];
// BIAS-BF16-NEXT: cvt.f32.bf16 %f{{[0-9]+}}, [[LO]];
// BIAS-BF16-NEXT: cvt.f32.bf16 %f{{[0-9]+}}, [[HI]];

// the thread's row t / 8: head (t / 8) / 32 (16384 elements a head), position (t / 8) mod 32
// (64 a position); divisions by powers of two are shifts and masks
// GQA: mov.u32 [[THREE:%r[0-9]+]], 3;
// GQA-NEXT: shr.u32 [[ROW:%r[0-9]+]], %r{{[0-9]+}}, [[THREE]];
// GQA: mov.u32 [[FIVE:%r[0-9]+]], 5;
// GQA-NEXT: shr.u32 [[HEAD:%r[0-9]+]], [[ROW]], [[FIVE]];
// GQA-NEXT: mov.u32 [[RS:%r[0-9]+]], 16384;
// GQA-NEXT: mul.lo.u32 %r{{[0-9]+}}, [[HEAD]], [[RS]];
// GQA-NEXT: mov.u32 [[MASK:%r[0-9]+]], 31;
// GQA-NEXT: and.b32 [[POS:%r[0-9]+]], [[ROW]], [[MASK]];
// GQA-NEXT: mov.u32 [[IS:%r[0-9]+]], 64;
// GQA-NEXT: mul.lo.u32 %r{{[0-9]+}}, [[POS]], [[IS]];
// GQA: cp.async.cg.shared.global [[[DST:%r[0-9]+]]], [[[SRC:%rd[0-9]+]]], 16;
// GQA-NEXT: cp.async.cg.shared.global [[[DST]]+4608], [[[SRC]]+32768], 16;
// GQA-NEXT: cp.async.cg.shared.global [[[DST]]+9216], [[[SRC]]+65536], 16;
// GQA-NEXT: cp.async.cg.shared.global [[[DST]]+13824], [[[SRC]]+98304], 16;

// GQA-RAGGED: add.u64 %rd{{[0-9]+}}, %rd{{[0-9]+}}, %rd{{[0-9]+}};
// GQA-RAGGED-NEXT: mov.u32 [[MASK:%r[0-9]+]], 31;
// GQA-RAGGED-NEXT: and.b32 [[POS:%r[0-9]+]], %r{{[0-9]+}}, [[MASK]];
// GQA-RAGGED-NEXT: mov.s32 [[N:%r[0-9]+]], 77;
// GQA-RAGGED-NEXT: add.u32 [[AT:%r[0-9]+]], %r{{[0-9]+}}, [[POS]];
// GQA-RAGGED-NEXT: sub.s32 [[ROOM:%r[0-9]+]], [[N]], [[AT]];
// GQA-RAGGED: setp.gt.s32 [[IN:%p[0-9]+]], [[ROOM]], %r{{[0-9]+}};
// GQA-RAGGED: cp.async.cg.shared.global [%r{{[0-9]+}}], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
// GQA-RAGGED: setp.gt.s32 %p{{[0-9]+}}, [[ROOM]], %r{{[0-9]+}};
// GQA-RAGGED: cp.async.cg.shared.global [%r{{[0-9]+}}+4608], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
