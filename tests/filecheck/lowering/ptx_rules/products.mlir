// reg-to-ptx's product rules (ptx_rules/products.py): reg.ldmatrix is ldmatrix.x4 (.trans
// for a k-major B) from a lane base register plus immediates; reg.mma one mma.sync per
// m16n8 tile, serpentine; reg.wgmma is wgmma.mma_async from two descriptors, fenced once
// after registers changed, committed and waited by group.
// Grouped-query attention (reg.warps <r=4, i=2>): the warps are numbered as A's rows
// (head by head), so a warpgroup's 64 rows of A start at its warp number / 4 x 64 rows;
// ldmatrix reads Q at the warp's head (32 rows a head) and its 16 positions.
// Q in registers (smem-to-reg{a_registers=true}, d=128): ldmatrix.x4 from Q's TMA panels,
// lane l at row l mod 16 of its warp's 16 and the 16-byte chunk l / 16 of the slice, the
// chunk swizzled by XOR with the row mod 8; the second panel (columns 64-127) is 128 rows
// x 128 bytes on, an immediate; S = Q K^T takes the fragments as wgmma's A.
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3},smem-to-reg{warps="m:2,n:2"},smem-unroll-stages,reg-prefetch,reg-to-ptx' -t ptx | filecheck %s
// RUN: napkin-opt %examples/matmul.mlir -p 'napkin-sm90{block="128,256,64"}' -t ptx | filecheck %s --check-prefix=WGMMA
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:128"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma},reg-to-ptx' -t ptx | filecheck %s --check-prefix=RS
// RUN: sed -e 's/k=256, n=384/n=384, k=256/g' %examples/matmul.mlir | napkin-opt -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3},smem-to-reg{warps="m:2,n:2"},smem-unroll-stages,reg-prefetch,reg-to-ptx' -t ptx | filecheck %s --check-prefix=NK
// RUN: napkin-opt %examples/gqa_causal_attention.mlir -p 'ncd-relabel{grid="b,g,r:4,i:32" stream="j:128"},ncd-to-hbm,hbm-launch{order=last},hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma},reg-to-ptx' -t ptx | filecheck %s --check-prefix=GQA
// RUN: napkin-opt %examples/gqa_causal_attention.mlir -p 'ncd-relabel{grid="b,g,r:4,i:32" stream="j:64"},ncd-to-hbm,hbm-launch{order=last},hbm-to-smem{stages=2 layout=pad8},smem-to-reg{warps="r:4,i:2"},reg-to-ptx' -t ptx | filecheck %s --check-prefix=GQA-LDMATRIX
// RUN: sed -e 's/d=64/d=128/g' %examples/attention.mlir | napkin-opt -p 'ncd-relabel{grid="b,h,i:128" stream="j:128"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma a_registers=true},reg-to-ptx' -t ptx | filecheck %s --check-prefix=QREG
// RUN: sed -e 's/d=64/d=128/g' %examples/attention.mlir | napkin-opt -p 'ncd-relabel{grid="b,h,i:128" stream="j:128"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma a_registers=true},reg-to-ptx' -t ptx > %t.ptx && %ptxas -arch=sm_90a %t.ptx -o %t.cubin

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
// GQA-LDMATRIX: shr.u32 [[TW:%r[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}};
// the warp's index broadcast from its lane 0, so that ptxas knows it is uniform
// GQA-LDMATRIX-NEXT: shfl.sync.idx.b32 [[W:%r[0-9]+]], [[TW]], 0, 31, 0xffffffff;
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

// QREG: setmaxnreg.inc.sync.aligned.u32 240;
// QREG: and.b32 [[LANE:%r[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}};
// QREG-NEXT: mov.u32 [[C15:%r[0-9]+]], 15;
// QREG-NEXT: and.b32 [[LROW:%r[0-9]+]], [[LANE]], [[C15]];
// QREG-NEXT: mov.u32 [[C4:%r[0-9]+]], 4;
// QREG-NEXT: shr.u32 [[CHUNK:%r[0-9]+]], [[LANE]], [[C4]];
// QREG-NEXT: mov.u32 [[C16:%r[0-9]+]], 16;
// QREG-NEXT: mul.lo.u32 [[COL:%r[0-9]+]], [[CHUNK]], [[C16]];
// QREG: mul.lo.u32 [[WROW:%r[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}};
// QREG-NEXT: add.u32 [[ROW:%r[0-9]+]], [[LROW]], [[WROW]];
// QREG-NEXT: mov.u32 [[C128:%r[0-9]+]], 128;
// QREG-NEXT: mul.lo.u32 [[RB:%r[0-9]+]], [[ROW]], [[C128]];
// QREG-NEXT: add.u32 [[PLAIN:%r[0-9]+]], [[RB]], [[COL]];
// QREG-NEXT: mov.u32 [[C7:%r[0-9]+]], 7;
// QREG-NEXT: and.b32 [[R8:%r[0-9]+]], [[ROW]], [[C7]];
// QREG-NEXT: mov.u32 [[C4B:%r[0-9]+]], 4;
// QREG-NEXT: shl.b32 [[KEY:%r[0-9]+]], [[R8]], [[C4B]];
// QREG-NEXT: xor.b32 [[AT:%r[0-9]+]], [[PLAIN]], [[KEY]];
// QREG-NEXT: add.u32 [[BASE:%r[0-9]+]], %r{{[0-9]+}}, [[AT]];
// QREG: mbarrier.try_wait.parity.shared::cta.b64
// QREG: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {[[A0:%r[0-9]+]], [[A1:%r[0-9]+]], [[A2:%r[0-9]+]], [[A3:%r[0-9]+]]}, {{\[}}[[BASE]]];
// QREG-COUNT-3: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{.*}}, [%r{{[0-9]+}}];
// QREG-NEXT: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{.*}}, {{\[}}[[BASE]]+16384];
// QREG-COUNT-3: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{.*}}+16384];
// QREG-NOT: ldmatrix
// QREG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, {[[A0]], [[A1]], [[A2]], [[A3]]}, %rd{{[0-9]+}}, %p{{[0-9]+}}, 1, 1, 0;
