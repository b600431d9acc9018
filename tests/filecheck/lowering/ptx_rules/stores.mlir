// reg-to-ptx's store rules (ptx_rules/stores.py): 16-bit rows of whole lines leave through
// shared memory (st.shared, a barrier, ld.shared.v4, st.global.v4); f32 pairs as
// st.global.v2.f32; wgmma accumulators into a swizzled panel with stmatrix, for a TMA store.
// Grouped-query attention: a warp's rows are at its head (warp / 2, 16384 elements a
// head) and its positions; ragged positions are kept by each row's own.
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3},smem-to-reg{warps="m:2,n:2"},smem-unroll-stages,reg-prefetch,reg-to-ptx' -t ptx | filecheck %s
// RUN: sed -e 's/n=384 : bf16>$/n=384 : f32>/; s/-> !ncd.tensor<m=512, n=384 : bf16>/-> !ncd.tensor<m=512, n=384 : f32>/g; s/return %c : !ncd.tensor<m=512, n=384 : bf16>/return %c : !ncd.tensor<m=512, n=384 : f32>/' %examples/matmul.mlir | napkin-opt -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3},smem-to-reg{warps="m:2,n:2"},smem-unroll-stages,reg-prefetch,reg-to-ptx' -t ptx | filecheck %s --check-prefix=F32
// RUN: napkin-opt %examples/matmul.mlir -p napkin-sm90 -t ptx | filecheck %s --check-prefix=STSM
// RUN: sed -e 's/i=256/i=77/g; s/j=256/j=77/g' %examples/gqa_causal_attention.mlir | napkin-opt -p 'ncd-relabel{grid="b,g,r:4,i:32" stream="j:128"},ncd-to-hbm,hbm-launch{order=last},hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma},reg-to-ptx' -t ptx | filecheck %s --check-prefix=GQA

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

// GQA: setmaxnreg.inc
// GQA: and.b32 [[WI:%r[0-9]+]], [[W:%r[0-9]+]], %r{{[0-9]+}};
// GQA-NEXT: mov.u32 %r{{[0-9]+}}, 1;
// GQA-NEXT: shr.u32 [[WR:%r[0-9]+]], [[W]], %r{{[0-9]+}};
// GQA: mov.u32 %r{{[0-9]+}}, 4928;
// GQA: mov.u32 [[HEAD:%r[0-9]+]], 4928;
// GQA-NEXT: mul.lo.u32 %r{{[0-9]+}}, [[WR]], [[HEAD]];
// the row's room to the sequence's end: 77 - (i0 + its row along i)
// GQA: mov.s32 [[N:%r[0-9]+]], 77;
// GQA: sub.s32 [[ROOM:%r[0-9]+]], [[N]], %r{{[0-9]+}};
// GQA: setp.gt.s32 [[IN:%p[0-9]+]], [[ROOM]], %r{{[0-9]+}};
// GQA: @[[IN]] st.global.b32
