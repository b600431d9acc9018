// A named pipeline (a PipelinePass, passes/composite.py) is spliced into the pipeline that
// runs it as the passes it chooses, when its turn comes: the passes before it run first,
// --print-between-passes shows the IR after each chosen pass, and a pass after it runs on
// what it left.
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},napkin-sm80' --print-between-passes -t ptx 2>&1 | filecheck %s
// RUN: napkin-opt %examples/matmul.mlir -p 'napkin-sm90,convert-arith-to-ptx' -t ptx | filecheck %s --check-prefix=AFTER

// the user's relabel runs first, then the named pipeline's own passes, each shown
// CHECK:      IR after ncd-relabel:
// CHECK:      IR after ncd-relabel:
// CHECK:      IR after ncd-to-hbm:
// CHECK:      hbm.kernel
// CHECK:      IR after hbm-launch:
// CHECK:      IR after hbm-to-smem:
// CHECK:      smem.alloc
// CHECK:      IR after smem-to-reg:
// CHECK:      reg.mma
// CHECK:      IR after smem-unroll-stages:
// CHECK:      IR after reg-carry-fragments:
// CHECK:      IR after reg-prefetch:
// CHECK-NOT:  IR after napkin-sm80
// CHECK:      .target sm_80
// CHECK:      mma.sync.aligned.m16n8k16

// AFTER: .target sm_90a
// AFTER: wgmma.mma_async
