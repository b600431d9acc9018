// reg-to-ptx on a wgmma kernel whose output leaves through shared memory: stmatrix into a
// swizzled panel, a fence for the async proxy, the consumers' named barrier, one thread's
// TMA store per panel in a bulk group, its wait before the stage is reused and before the
// consumers leave (until the stores have read their panels: `.read`); the output is a tensor-map parameter. ptxas accepts it, without spills.
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:256" stream="k:64"},ncd-to-hbm,hbm-launch{group=8 persistent=true},hbm-to-smem{stages=4 copy=tma store=tma},smem-to-reg{mma=wgmma},reg-to-ptx' -t ptx -o %t.ptx
// RUN: filecheck %s < %t.ptx
// RUN: %ptxas -v -arch=sm_90a %t.ptx -o %t.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:256" stream="k:64"},ncd-to-hbm,hbm-launch{group=8 persistent=true},hbm-to-smem{stages=4 copy=tma store=tma},smem-to-reg{mma=wgmma},reg-to-ptx' | filecheck %s --check-prefix=ATTRS

// CHECK: .visible .entry matmul(
// CHECK-NEXT: .param .align 64 .b8 matmul_a[128],
// CHECK-NEXT: .param .align 64 .b8 matmul_b[128],
// CHECK-NEXT: .param .align 64 .b8 matmul_out[128]
// CHECK: setmaxnreg.inc.sync.aligned.u32 240;
// CHECK: wgmma.wait_group.sync.aligned 0;
// CHECK: cp.async.bulk.wait_group.read 1;
// CHECK: bar.sync 1, 256;
// CHECK-COUNT-4: stmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: fence.proxy.async.shared::cta;
// CHECK-NEXT: bar.sync 1, 256;
// CHECK: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}}], [%r{{[0-9]+}}];
// CHECK-NEXT: cp.async.bulk.commit_group;
// CHECK-COUNT-3: cp.async.bulk.commit_group;
// CHECK: cp.async.bulk.wait_group.read 0;
// CHECK-NOT: st.global

// REPORT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// ATTRS: napkin.tma = [#ptx.tma_box<"a", box = 128x64, swizzle = "128B">, #ptx.tma_box<"b", box = 64x64, swizzle = "128B">, #ptx.tma_box<"out", box = 128x64, swizzle = "128B">]
