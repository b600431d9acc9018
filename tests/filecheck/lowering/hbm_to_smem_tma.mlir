// hbm-to-smem{copy=tma}: a producer region and the consumers' loop meeting at mbarrier rings.
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:256" stream="k:64"},ncd-to-hbm,hbm-to-smem{stages=4 copy=tma}' | filecheck %s
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:256" stream="k:64"},ncd-to-hbm,hbm-to-smem{copy=tma layout=pad8}' 2>&1 | filecheck %s --check-prefix=LAYOUT
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:256" stream="k:32"},ncd-to-hbm,hbm-to-smem{copy=tma}' 2>&1 | filecheck %s --check-prefix=PANEL
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:256" stream="k:64"},ncd-to-hbm,hbm-to-smem{copy=bulk}' 2>&1 | filecheck %s --check-prefix=COPY
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:256" stream="k:64"},ncd-to-hbm,hbm-to-smem{copy=tma stages=17}' 2>&1 | filecheck %s --check-prefix=STAGES

// CHECK: %[[A:.*]] = smem.alloc : !smem.buffer<m=128, k=64 : bf16, stages=4, layout=swizzle>
// CHECK-NEXT: %[[B:.*]] = smem.alloc : !smem.buffer<k=64, n=256 : bf16, stages=4, layout=swizzle>
// CHECK-NEXT: %[[FULL:.*]] = smem.mbarrier_alloc : !smem.mbarrier<stages=4, arrivals=1>
// CHECK-NEXT: %[[EMPTY:.*]] = smem.mbarrier_alloc : !smem.mbarrier<stages=4, arrivals=1>
// CHECK-NEXT: %[[POS:.*]] = smem.ring_position : index
// CHECK-NEXT: smem.producer attributes {warps = 4 : i32} {
// CHECK-NEXT: scf.for %[[K:.*]] = %c0 to %{{.*}} step %{{.*}} {
// CHECK: %[[T:.*]] = arith.divui %[[K]], %{{.*}} : index
// CHECK-NEXT: %[[I:.*]] = arith.addi %[[T]], %[[POS]] : index
// CHECK-NEXT: %[[S:.*]] = arith.remui %[[I]], %{{.*}} : index
// CHECK-NEXT: %[[R:.*]] = arith.divui %[[I]], %{{.*}} : index
// CHECK-NEXT: %[[P:.*]] = arith.remui %[[R]], %{{.*}} : index
// CHECK: %[[PREV:.*]] = arith.subi %{{.*}}, %[[P]] : index
// CHECK-NEXT: smem.mbarrier_wait %[[EMPTY]][%[[S]]] parity %[[PREV]]
// CHECK-NEXT: smem.arrive_expect %[[FULL]][%[[S]]] {bytes = 49152 : i32}
// CHECK-NEXT: smem.tma_copy %a[%m0, %[[K]]] -> %[[A]][%[[S]]], %[[FULL]][%[[S]]]
// CHECK-NEXT: smem.tma_copy %b[%[[K]], %n0] -> %[[B]][%[[S]]], %[[FULL]][%[[S]]]
// CHECK-NEXT: } {hbm.stream = #hbm.stream<k>}
// CHECK-NEXT: }
// CHECK-NEXT: scf.for %k0 = %c0 to %{{.*}} step %{{.*}} iter_args(%acc = %{{.*}}) -> (!ncd.tensor<m=128, n=256 : f32>) {
// CHECK: smem.mbarrier_wait %[[FULL]][%[[CS:.*]]] parity %{{.*}}
// CHECK-NEXT: %[[TA:.*]] = smem.read %[[A]][%[[CS]]]
// CHECK-NEXT: %[[TB:.*]] = smem.read %[[B]][%[[CS]]]
// CHECK-NEXT: %{{.*}} = ncd.contract %[[TA]], %[[TB]] over [k]
// CHECK-NEXT: %[[NEW:.*]] = ncd.map add
// CHECK-NEXT: smem.arrive %[[EMPTY]][%[[CS]]]
// CHECK-NEXT: scf.yield %[[NEW]]
// CHECK-NEXT: } {hbm.stream = #hbm.stream<k>, smem.pipeline = #smem.pipeline<stages=4, copy=tma>}

// LAYOUT: napkin-opt: error: hbm-to-smem: TMA copies fill 128-byte swizzled buffers; layout=pad8 cannot be used with copy=tma
// PANEL: napkin-opt: error: hbm-to-smem: a TMA tile with 128-byte swizzle needs rows of whole 128-byte panels; !ncd.tensor<m=128, k=32 : bf16> has 64-byte rows along 'k'
// COPY: napkin-opt: error: hbm-to-smem: copy must be cp.async or tma, got 'bulk'
// STAGES: napkin-opt: error: hbm-to-smem: at most 16 stages (the mbarrier rings hold at most 16), got 17
