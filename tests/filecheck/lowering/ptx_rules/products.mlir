// reg-to-ptx's product rules (ptx_rules/products.py): reg.ldmatrix is ldmatrix.x4 (.trans
// for a k-major B) from a lane base register plus immediates; reg.mma one mma.sync per
// m16n8 tile, serpentine; reg.wgmma is wgmma.mma_async from two descriptors, fenced once
// after registers changed, committed and waited by group.
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3},smem-to-reg{warps="m:2,n:2"},smem-unroll-stages,reg-prefetch,reg-to-ptx' -t ptx | filecheck %s
// RUN: napkin-opt %examples/matmul.mlir -p napkin-sm90 -t ptx | filecheck %s --check-prefix=WGMMA
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:128"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma},reg-to-ptx' -t ptx | filecheck %s --check-prefix=RS
// RUN: sed -e 's/k=256, n=384/n=384, k=256/g' %examples/matmul.mlir | napkin-opt -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3},smem-to-reg{warps="m:2,n:2"},smem-unroll-stages,reg-prefetch,reg-to-ptx' -t ptx | filecheck %s --check-prefix=NK

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
