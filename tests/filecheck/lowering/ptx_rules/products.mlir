// reg-to-ptx's product rules (ptx_rules/products.py): reg.ldmatrix is ldmatrix.x4 (.trans
// for a k-major B) from a lane base register plus immediates; reg.mma one mma.sync per
// m16n8 tile, serpentine; reg.wgmma is wgmma.mma_async from two descriptors, fenced once
// after registers changed, committed and waited by group.
// Grouped-query attention (reg.warps <r=4, i=2>): the warps are numbered as A's rows
// (head by head), so a warpgroup's 64 rows of A start at its warp number / 4 x 64 rows;
// ldmatrix reads Q at the warp's head (32 rows a head) and its 16 positions.
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3},smem-to-reg{warps="m:2,n:2"},smem-unroll-stages,reg-prefetch,reg-to-ptx' -t ptx | filecheck %s
// RUN: napkin-opt %examples/matmul.mlir -p napkin-sm90 -t ptx | filecheck %s --check-prefix=WGMMA
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:128"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma},reg-to-ptx' -t ptx | filecheck %s --check-prefix=RS
// RUN: sed -e 's/k=256, n=384/n=384, k=256/g' %examples/matmul.mlir | napkin-opt -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3},smem-to-reg{warps="m:2,n:2"},smem-unroll-stages,reg-prefetch,reg-to-ptx' -t ptx | filecheck %s --check-prefix=NK
// RUN: napkin-opt %examples/gqa_causal_attention.mlir -p 'ncd-relabel{grid="b,g,r:4,i:32" stream="j:128"},ncd-to-hbm,hbm-launch{order=last},hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma},reg-to-ptx' -t ptx | filecheck %s --check-prefix=GQA
// RUN: napkin-opt %examples/gqa_causal_attention.mlir -p 'ncd-relabel{grid="b,g,r:4,i:32" stream="j:64"},ncd-to-hbm,hbm-launch{order=last},hbm-to-smem{stages=2 layout=pad8},smem-to-reg{warps="r:4,i:2"},reg-to-ptx' -t ptx | filecheck %s --check-prefix=GQA-LDMATRIX

// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [%r{{[0-9]+}}];
// CHECK: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// the next step's loads come before this step's products (reg-prefetch)
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{.*}}+{{[0-9]+}}];
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// NK-NOT: ldmatrix.sync.aligned.m8n8.x4.trans
// NK: mma.sync.aligned.m16n8k16

// WGMMA: wgmma.fence.sync.aligned;
// WGMMA: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// WGMMA: wgmma.commit_group.sync.aligned;
// WGMMA: wgmma.wait_group.sync.aligned 1;

// reg.wgmma_rs: A is the warp's four packed registers (one fence for the group, after they
// were all packed), B (V, stored [j, d]) N-major: the trailing 1 transposes it
// RS: wgmma.wait_group.sync.aligned 0;
// RS: ex2.approx.ftz.f32
// RS: cvt.rn.bf16x2.f32
// RS: wgmma.fence.sync.aligned;
// RS-NOT: cvt.rn.bf16x2.f32
// RS: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{{.*}}}, {%{{[a-z]+[0-9]+}}, %{{[a-z]+[0-9]+}}, %{{[a-z]+[0-9]+}}, %{{[a-z]+[0-9]+}}}, %rd{{[0-9]+}}, %p{{[0-9]+}}, 1, 1, 1;
// RS-COUNT-7: wgmma.mma_async.sync.aligned.m64n64k16
// RS-NEXT: wgmma.commit_group.sync.aligned;

// GQA: mov.u32 [[PRODUCER:%r[0-9]+]], 4;
// GQA-NEXT: sub.u32 [[WARP:%r[0-9]+]], %r{{[0-9]+}}, [[PRODUCER]];
// GQA: mov.u32 [[TWO:%r[0-9]+]], 2;
// GQA-NEXT: shr.u32 [[GROUP:%r[0-9]+]], [[WARP]], [[TWO]];
// GQA-NEXT: mov.u32 [[ROWS:%r[0-9]+]], 8192;
// GQA-NEXT: mul.lo.u32 %r{{[0-9]+}}, [[GROUP]], [[ROWS]];
// GQA: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16

// the warp's place along i (warp mod 2) x 16 rows, then along r (warp / 2) x 32 rows
// GQA-LDMATRIX: bar.sync 0;
// GQA-LDMATRIX: shr.u32 [[W:%r[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}};
// GQA-LDMATRIX-NEXT: mov.u32 %r{{[0-9]+}}, 1;
// GQA-LDMATRIX-NEXT: and.b32 [[WI:%r[0-9]+]], [[W]], %r{{[0-9]+}};
// GQA-LDMATRIX-NEXT: mov.u32 %r{{[0-9]+}}, 1;
// GQA-LDMATRIX-NEXT: shr.u32 [[WR:%r[0-9]+]], [[W]], %r{{[0-9]+}};
// GQA-LDMATRIX: mul.lo.u32 [[AT_I:%r[0-9]+]], [[WI]], %r{{[0-9]+}};
// GQA-LDMATRIX-NEXT: add.u32 [[ROW:%r[0-9]+]], %r{{[0-9]+}}, [[AT_I]];
// GQA-LDMATRIX-NEXT: mov.u32 [[HEAD_ROWS:%r[0-9]+]], 32;
// GQA-LDMATRIX-NEXT: mul.lo.u32 [[AT_R:%r[0-9]+]], [[WR]], [[HEAD_ROWS]];
// GQA-LDMATRIX-NEXT: add.u32 %r{{[0-9]+}}, [[ROW]], [[AT_R]];
// GQA-LDMATRIX: ldmatrix.sync.aligned.m8n8.x4.shared.b16
