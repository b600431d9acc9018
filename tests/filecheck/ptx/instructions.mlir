// Every instruction family prints as PTX that ptxas assembles for sm_90a.
// RUN: napkin-opt %S/../dialects/ptx/roundtrip.mlir -t ptx | filecheck %s
// RUN: napkin-opt %S/../dialects/ptx/roundtrip.mlir -t ptx -o %t.ptx
// RUN: %ptxas -arch=sm_90a %t.ptx -o %t.cubin
// An explicit sm_80 target refuses the Hopper instructions.
// RUN: not napkin-opt %S/../dialects/ptx/roundtrip.mlir -t "ptx{arch=sm_80}" 2>&1 | filecheck %s --check-prefix=SM80
// A vector red (red.global.add.v2.f32) makes the module PTX ISA 8.1; an older version asked for is refused.
// RUN: not napkin-opt %S/../dialects/ptx/roundtrip.mlir -t 'ptx{version="8.0"}' 2>&1 | filecheck %s --check-prefix=V80
// RUN: not napkin-opt %S/../dialects/ptx/roundtrip.mlir -t 'ptx{version="eight"}' 2>&1 | filecheck %s --check-prefix=VBAD
// The version written as a number, as quoted: a newer one is printed, a whole number refused by name.
// RUN: napkin-opt %S/../dialects/ptx/roundtrip.mlir -t 'ptx{version=8.3}' | filecheck %s --check-prefix=V83
// RUN: not napkin-opt %S/../dialects/ptx/roundtrip.mlir -t 'ptx{version=8}' 2>&1 | filecheck %s --check-prefix=V8

// CHECK:      .version 8.1
// CHECK-NEXT: .target sm_90a
// CHECK-NEXT: .address_size 64
// CHECK:      .extern .shared .align 128 .b8 dsmem[];
// CHECK:      .visible .entry all_ops(
// CHECK-NEXT: 	.param .u64 g,
// CHECK-NEXT: 	.param .align 64 .b8 tmap[128]
// CHECK-NEXT: )
// CHECK-NEXT: .reqntid 384, 1, 1
// CHECK-NEXT: {
// CHECK-DAG:  .reg .pred %p<4>;
// CHECK-DAG:  .reg .b32 %r<20>;
// CHECK-DAG:  .reg .b64 %rd<6>;
// CHECK-DAG:  .reg .b32 %bhh<2>;
// CHECK-DAG:  .reg .f32 %f<11>;
// CHECK-DAG:  .shared .align 128 .b8 smem[4096];
// CHECK:      ld.param.u64 %rd1, [g];
// CHECK-NEXT: mov.u64 %rd2, tmap;
// CHECK-NEXT: mov.u32 %r1, smem;
// CHECK-NEXT: mov.u32 %r2, %tid.x;
// CHECK-NEXT: mov.u32 %r3, 8;
// CHECK-NEXT: mov.f32 %f1, 0f3F800000;
// CHECK-NEXT: add.s32 %r4, %r2, %r3;
// CHECK-NEXT: mul.wide.s32 %rd3, %r4, %r3;
// CHECK-NEXT: shl.b32 %r5, %r4, %r3;
// CHECK-NEXT: ex2.approx.ftz.f32 %f2, %f1;
// CHECK-NEXT: cvt.rn.bf16x2.f32 %bhh1, %f2, %f1;
// CHECK-NEXT: setp.lt.s32 %p1, %r4, %r3;
// CHECK-NEXT: selp.b32 %r6, %r4, %r3, %p1;
// CHECK-NEXT: @%p1 ld.global.v2.f32 {%f3, %f4}, [%rd1+16];
// CHECK-NEXT: st.shared.v2.f32 [%r1], {%f3, %f4};
// CHECK-NEXT: @%p1 red.global.add.f32 [%rd1+4], %f3;
// CHECK-NEXT: @%p1 red.global.add.v2.f32 [%rd1+8], {%f3, %f4};
// CHECK-NEXT: bar.sync 0;
// CHECK-NEXT: bar.arrive %r{{[0-9]+}}, 256;
// CHECK-NEXT: shfl.sync.bfly.b32 %r7, %r4, 1, 31, 0xffffffff;
// CHECK-NEXT: vote.sync.ballot.b32 %r8, %p1, 0xffffffff;
// CHECK-NEXT: elect.sync %r9|%p2, 0xffffffff;
// CHECK-NEXT: cp.async.cg.shared.global [%r1], [%rd1], 16, %r3;
// CHECK-NEXT: cp.async.commit_group;
// CHECK-NEXT: cp.async.wait_group 0;
// CHECK-NEXT: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r10, %r11, %r12, %r13}, [%r1];
// CHECK-NEXT: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f5, %f6, %f7, %f8}, {%r10, %r11, %r12, %r13}, {%r10, %r11}, {%f1, %f1, %f1, %f1};
// CHECK-NEXT: stmatrix.sync.aligned.m8n8.x2.shared.b16 [%r1], {%r10, %r11};
// CHECK-NEXT: mbarrier.init.shared::cta.b64 [%r1], %r3;
// CHECK-NEXT: fence.mbarrier_init.release.cluster;
// CHECK-NEXT: mbarrier.arrive.expect_tx.shared::cta.b64 %rd4, [%r1], %r3;
// CHECK-NEXT: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd2, {%r4, %r3}], [%r1];
// CHECK-NEXT: mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r1], %r3;
// CHECK-NEXT: fence.proxy.async.shared::cta;
// CHECK-NEXT: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd2, {%r4, %r3}], [%r1];
// CHECK-NEXT: cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%rd2, {%r4, %r3}], [%r1];
// CHECK-NEXT: cp.async.bulk.commit_group;
// CHECK-NEXT: cp.async.bulk.wait_group.read 0;
// CHECK-NEXT: wgmma.fence.sync.aligned;
// The accumulators are written in place: the results reuse %f5..%f8.
// CHECK-NEXT: wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f5, %f6, %f7, %f8}, %rd3, %rd3, %p1, 1, 1, 0, 0;
// CHECK-NEXT: wgmma.commit_group.sync.aligned;
// CHECK-NEXT: wgmma.wait_group.sync.aligned 0;
// CHECK-NEXT: setmaxnreg.inc.sync.aligned.u32 240;
// 128B swizzle is mode 1 in bits 62-63: 1 << 62 | (1024 / 16) << 32 | (16 / 16) << 16
// CHECK-NEXT: cvt.u64.u32 %rd5, %r1;
// CHECK-NEXT: shr.u64 %rd5, %rd5, 4;
// CHECK-NEXT: and.b64 %rd5, %rd5, 16383;
// CHECK-NEXT: or.b64 %rd5, %rd5, 4611686293305360384;
// CHECK-NEXT: mbarrier.inval.shared::cta.b64 [%r1];
// CHECK-NEXT: @%p1 cp.async.cg.shared.global [%r1+1280], [%rd1+-32], 16, %r3;
// CHECK-NEXT: @%p1 cp.async.cg.shared.global [%r1], [%rd1+4096], 16;
// CHECK-NEXT: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r14, %r15, %r16, %r17}, [%r1+640];
// CHECK-NEXT: ld.acquire.gpu.global.u32 %r{{[0-9]+}}, [%rd1];
// CHECK-NEXT: st.release.gpu.global.u32 [%rd1], %r{{[0-9]+}};
// CHECK-NEXT: @%p1 atom.acq_rel.gpu.global.add.u32 %r19, [%rd1+8], %r4;
// CHECK-NEXT: bar.warp.sync 0xffffffff;
// CHECK-NEXT: mov.b32 %f9, 0;
// CHECK-NEXT: mov.b32 %f10, 0;
// CHECK-NEXT: @%p1 ld.global.v2.f32 {%f9, %f10}, [%rd1];
// CHECK-NEXT: ret;
// CHECK-NEXT: }

// V80: napkin-opt: error: the module adds vectors atomically (red.global.add.v2.f32), which PTX ISA 8.1 has, not 8.0
// VBAD: napkin-opt: error: unknown PTX ISA version 'eight'; expected major.minor, such as 8.1
// V83: .version 8.3
// V8: napkin-opt: error: unknown PTX ISA version '8'; expected major.minor, such as 8.1
// SM80: napkin-opt: error: ptx.{{[a-z_]+}} in @all_ops needs sm_90{{a?}}, but the target is sm_80
