// reg-to-ptx on a wgmma kernel: a producer warpgroup issuing TMA copies on mbarriers, two
// consumer warpgroups issuing wgmma from swizzled shared memory, the tensor maps prefetched
// by the producer first, the output through shared memory; ptxas accepts it for sm_90a.
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:256" stream="k:64"},ncd-to-hbm,hbm-to-smem{stages=4 copy=tma},smem-to-reg{mma=wgmma},reg-to-ptx' -t ptx -o %t.ptx
// RUN: filecheck %s < %t.ptx
// RUN: %ptxas -v -arch=sm_90a %t.ptx -o %t.cubin 2>&1 | filecheck %s --check-prefix=REPORT

// CHECK: .target sm_90a
// CHECK: .visible .entry matmul(
// CHECK-NEXT: .param .align 64 .b8 matmul_a[128],
// CHECK-NEXT: .param .align 64 .b8 matmul_b[128],
// CHECK-NEXT: .param .u64 matmul_out
// CHECK-NEXT: )
// CHECK-NEXT: .maxntid 384
// CHECK-NEXT: .minnctapersm 1
// CHECK: mbarrier.init.shared::cta.b64
// CHECK: fence.mbarrier_init.release.cluster;
// CHECK: bar.sync 0;
// CHECK: setmaxnreg.dec.sync.aligned.u32 24;
// CHECK: setmaxnreg.inc.sync.aligned.u32 240;
// CHECK-COUNT-2: prefetch.tensormap [%rd{{[0-9]+}}];
// CHECK-NOT: prefetch.tensormap
// CHECK: mbarrier.try_wait.parity.shared::cta.b64
// CHECK: mbarrier.arrive.expect_tx.shared::cta.b64
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK: mbarrier.try_wait.parity.shared::cta.b64
// CHECK: wgmma.fence.sync.aligned;
// CHECK: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {{.*}}, 1, 1, 0, 1;
// CHECK: wgmma.commit_group.sync.aligned;
// CHECK-NEXT: wgmma.wait_group.sync.aligned 1;
// CHECK: mbarrier.arrive.shared::cta.b64
// CHECK: wgmma.wait_group.sync.aligned 0;
// The tile leaves through the consumers' shared memory, in whole lines: they meet (their
// last reads of the stages done), each warp writes its rows and reads them back.
// CHECK: bar.sync 1, 256;
// CHECK: cvt.rn.bf16x2.f32
// CHECK: st.shared.b32
// CHECK: bar.warp.sync 0xffffffff;
// CHECK: ld.shared.v4.b32
// CHECK: st.global.v4.b32
// CHECK-NOT: st.global.b32

// REPORT: Compiling entry function 'matmul' for 'sm_90a'
// REPORT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
