// The kernels that tests/gpu runs on the device assemble here with ptxas, and print
// the instructions they exist to exercise.
// RUN: napkin-opt %S/../../gpu/kernels/mma_sync.mlir -p convert-arith-to-ptx -t ptx -o %t.mma.ptx
// RUN: %ptxas -arch=sm_80 %t.mma.ptx -o %t.mma.cubin
// RUN: filecheck %s --check-prefix=MMA < %t.mma.ptx
// RUN: napkin-opt %S/../../gpu/kernels/warp_reduce.mlir -p convert-arith-to-ptx -t ptx -o %t.warp.ptx
// RUN: %ptxas -arch=sm_80 %t.warp.ptx -o %t.warp.cubin
// RUN: filecheck %s --check-prefix=WARP < %t.warp.ptx
// RUN: %python %S/../../gpu/kernel_text.py 8 | napkin-opt -p convert-arith-to-ptx -t ptx -o %t.tma.ptx
// RUN: %ptxas -arch=sm_90a %t.tma.ptx -o %t.tma.cubin
// RUN: filecheck %s --check-prefix=TMA < %t.tma.ptx
// RUN: %python %S/../../gpu/kernel_text.py 128 | napkin-opt -p convert-arith-to-ptx -t ptx -o %t.tma128.ptx
// RUN: %ptxas -arch=sm_90a %t.tma128.ptx -o %t.tma128.cubin
// RUN: filecheck %s --check-prefix=N128 < %t.tma128.ptx
// RUN: %python %S/../../gpu/kernel_text.py 256 | napkin-opt -p convert-arith-to-ptx -t ptx -o %t.tma256.ptx
// RUN: %ptxas -arch=sm_90a %t.tma256.ptx -o %t.tma256.cubin

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
// TMA: .param .align 64 .b8 tma_wgmma_n8_param_1[128]
// TMA: mov.u64 [[P:%rd[0-9]+]], tma_wgmma_n8_param_1;
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

// N128: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%f{{[0-9]+}}, {{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, %p{{[0-9]+}}, 1, 1, 0, 0;

// RUN: napkin-opt %S/../../gpu/kernels/copies.mlir -p convert-arith-to-ptx -t ptx -o %t.copies.ptx
// RUN: %ptxas -arch=sm_80 %t.copies.ptx -o %t.copies.cubin
// RUN: filecheck %s --check-prefix=COPY < %t.copies.ptx
// RUN: napkin-opt %S/../../gpu/kernels/tma_swizzle.mlir -p convert-arith-to-ptx -t ptx -o %t.swz.ptx
// RUN: %ptxas -arch=sm_90a %t.swz.ptx -o %t.swz.cubin
// RUN: filecheck %s --check-prefix=SWZ < %t.swz.ptx

// COPY: ld.global.nc.v4.b32 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [%rd{{[0-9]+}}];
// COPY: st.global.v4.b32
// COPY: cp.async.cg.shared.global
// COPY: cp.async.ca.shared.global
// COPY: cp.async.wait_group 0;
// COPY: ld.shared.v4.b32
// COPY: st.global.cs.v4.b32

// SWZ: .shared .align 1024 .b8 tile[4096];
// SWZ: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
// SWZ: fence.proxy.async.shared::cta;
// SWZ-NEXT: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
// SWZ-NEXT: cp.async.bulk.commit_group;
// SWZ-NEXT: cp.async.bulk.wait_group 0;
