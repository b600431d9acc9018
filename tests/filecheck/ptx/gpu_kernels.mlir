// The kernels that tests/gpu runs on the device assemble here with ptxas, and print
// the instructions they exist to exercise.
// RUN: napkin-opt %S/../../gpu/kernels/mma_sync.mlir -p convert-arith-to-ptx -t ptx -o %t.mma.ptx
// RUN: %ptxas -arch=sm_80 %t.mma.ptx -o %t.mma.cubin
// RUN: filecheck %s --check-prefix=MMA < %t.mma.ptx
// RUN: napkin-opt %S/../../gpu/kernels/warp_reduce.mlir -p convert-arith-to-ptx -t ptx -o %t.warp.ptx
// RUN: %ptxas -arch=sm_80 %t.warp.ptx -o %t.warp.cubin
// RUN: filecheck %s --check-prefix=WARP < %t.warp.ptx
// RUN: napkin-opt %S/../../gpu/kernels/tma_wgmma.mlir -p convert-arith-to-ptx -t ptx -o %t.tma.ptx
// RUN: %ptxas -arch=sm_90a %t.tma.ptx -o %t.tma.cubin
// RUN: filecheck %s --check-prefix=TMA < %t.tma.ptx

// MMA: .target sm_80
// MMA: .shared .align 128 .b8 sa[512];
// MMA: cp.async.cg.shared.global [%r{{[0-9]+}}], [%rd{{[0-9]+}}], 16;
// MMA: cp.async.wait_group 0;
// MMA: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// MMA: ldmatrix.sync.aligned.m8n8.x2.shared.b16
// MMA: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// MMA: st.global.v2.f32 [%rd{{[0-9]+}}+256]

// WARP: shfl.sync.bfly.b32 {{.*}}, 16, 31, 0xffffffff;
// WARP: shfl.sync.down.b32 {{.*}}, 1, 31, 0xffffffff;
// WARP: shfl.sync.idx.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, 31, 0xffffffff;
// WARP: vote.sync.ballot.b32
// WARP: vote.sync.all.pred

// TMA: .target sm_90a
// TMA: .param .align 64 .b8 tma_wgmma_param_1[128]
// TMA: mov.u64 [[P:%rd[0-9]+]], tma_wgmma_param_1;
// TMA-NEXT: cvta.param.u64 [[MAP:%rd[0-9]+]], [[P]];
// TMA: mbarrier.init.shared::cta.b64
// TMA: mbarrier.arrive.expect_tx.shared::cta.b64
// TMA: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r{{[0-9]+}}], [[[MAP]], {%r{{[0-9]+}}, %r{{[0-9]+}}}]
// TMA: mbarrier.try_wait.parity.shared::cta.b64
// One zero serves all four accumulators: each is copied to its own register, then fenced.
// TMA: wgmma.fence.sync.aligned;
// TMA-NEXT: mov.f32 [[D0:%f[0-9]+]], [[Z:%f[0-9]+]];
// TMA-NEXT: mov.f32 [[D1:%f[0-9]+]], [[Z]];
// TMA-NEXT: mov.f32 [[D2:%f[0-9]+]], [[Z]];
// TMA-NEXT: mov.f32 [[D3:%f[0-9]+]], [[Z]];
// TMA-NEXT: wgmma.fence.sync.aligned;
// TMA-NEXT: wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {[[D0]], [[D1]], [[D2]], [[D3]]}
// TMA: wgmma.wait_group.sync.aligned 0;
