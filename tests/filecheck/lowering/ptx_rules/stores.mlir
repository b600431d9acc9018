// reg-to-ptx's store rules (ptx_rules/stores.py): 16-bit rows of whole lines leave through
// shared memory (st.shared, a barrier, ld.shared.v4, st.global.v4); f32 pairs as
// st.global.v2.f32; wgmma accumulators into a swizzled panel with stmatrix, for a TMA store.
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3},smem-to-reg{warps="m:2,n:2"},smem-unroll-stages,reg-prefetch,reg-to-ptx' -t ptx | filecheck %s
// RUN: sed -e 's/n=384 : bf16>$/n=384 : f32>/; s/-> !ncd.tensor<m=512, n=384 : bf16>/-> !ncd.tensor<m=512, n=384 : f32>/g; s/return %c : !ncd.tensor<m=512, n=384 : bf16>/return %c : !ncd.tensor<m=512, n=384 : f32>/' %examples/matmul.mlir | napkin-opt -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3},smem-to-reg{warps="m:2,n:2"},smem-unroll-stages,reg-prefetch,reg-to-ptx' -t ptx | filecheck %s --check-prefix=F32
// RUN: napkin-opt %examples/matmul.mlir -p napkin-sm90 -t ptx | filecheck %s --check-prefix=STSM

// CHECK: bar.sync 0;
// CHECK: cvt.rn.bf16x2.f32
// CHECK: st.shared.b32
// CHECK: bar.sync 0;
// CHECK: ld.shared.v4.b32
// CHECK: st.global.v4.b32

// F32-NOT: st.shared
// F32: st.global.v2.f32

// STSM: stmatrix.sync.aligned.m8n8.x4.shared.b16
// STSM: fence.proxy.async.shared::cta;
// STSM: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
