// hbm-to-smem{copy=tma} on causal attention: Q, loaded once, is copied by the producer
// before its stream into a one-stage buffer on a barrier of its own (the consumers wait
// for its phase 0 before the first product); the unmasked and the diagonal loops are one
// stream: one producer loop over both, each consumer loop numbering its steps from 0.
// K and V arrive on full rings of their own, each waited for just before its first use
// (the scores do not wait for V), and are released on empty rings of their own, each just
// after its last use (K once the scores are made, V after P V is accumulated).
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma}' | filecheck %s
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma}' | napkin-run --random-inputs --check | filecheck %s --check-prefix=NUMBERS
// A persistent block refills Q for each of its tiles: Q's rings take a step a tile (their
// parity is the tile's position mod 2), the producer waits for Q's empty barrier before the
// copy, and the consumers release it after the last loop that reads it.
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-launch{persistent=true order=last},hbm-to-smem{stages=2 copy=tma}' | filecheck %s --check-prefix=PERSISTENT
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-launch{persistent=true order=last},hbm-to-smem{stages=2 copy=tma}' | napkin-run --random-inputs --check | filecheck %s --check-prefix=NUMBERS

// CHECK: %[[K:.*]] = smem.alloc : !smem.buffer<b=1, h=1, j=64, d=64 : bf16, stages=2, layout=swizzle>
// CHECK: %[[V:.*]] = smem.alloc : !smem.buffer<b=1, h=1, j=64, d=64 : bf16, stages=2, layout=swizzle>
// CHECK-NEXT: %[[KFULL:.*]] = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
// CHECK-NEXT: %[[VFULL:.*]] = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
// CHECK-NEXT: %[[KEMPTY:.*]] = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
// CHECK-NEXT: %[[VEMPTY:.*]] = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
// CHECK: %[[Q:.*]] = smem.alloc : !smem.buffer<b=1, h=1, i=128, d=64 : bf16, stages=1, layout=swizzle>
// CHECK-NEXT: %[[QBAR:.*]] = smem.mbarrier_alloc : !smem.mbarrier<stages=1, arrivals=1>
// CHECK: smem.producer
// CHECK-NEXT: smem.arrive_expect %[[QBAR]][%{{.*}}] {bytes = 16384 : i32}
// CHECK-NEXT: smem.tma_copy %q[%b0, %h0, %i0, %c0] -> %[[Q]][%{{.*}}], %[[QBAR]]
// CHECK-NEXT: scf.for %{{.*}} = %c0 to %j_end step
// CHECK: smem.mbarrier_wait %[[KEMPTY]][%[[S:.*]]] parity %[[P:.*]] :
// CHECK-NEXT: smem.arrive_expect %[[KFULL]][%[[S]]] {bytes = 8192 : i32}
// CHECK-NEXT: smem.tma_copy %k{{.*}}, %[[KFULL]]
// CHECK-NEXT: smem.mbarrier_wait %[[VEMPTY]][%[[S]]] parity %[[P]] :
// CHECK-NEXT: smem.arrive_expect %[[VFULL]][%[[S]]] {bytes = 8192 : i32}
// CHECK-NEXT: smem.tma_copy %v{{.*}}, %[[VFULL]]
// CHECK: smem.mbarrier_wait %[[QBAR]][%[[Z:.*]]] parity %[[Z]]
// CHECK-NEXT: %q_tile = smem.read %[[Q]]
// CHECK: scf.for %j0 = %c0 to %j_masked
// CHECK: smem.mbarrier_wait %[[KFULL]]
// CHECK-NEXT: %k_tile = smem.read %[[K]]
// CHECK-NEXT: ncd.contract %q_tile, %k_tile
// K's part of the stage is released once the scores are made, V's after P V
// CHECK-NEXT: smem.arrive %[[KEMPTY]]
// CHECK: smem.mbarrier_wait %[[VFULL]]
// CHECK-NEXT: %v_tile = smem.read %[[V]]
// CHECK-NEXT: ncd.contract %{{.*}}, %v_tile
// CHECK: ncd.map add
// CHECK-NEXT: smem.arrive %[[VEMPTY]]
// CHECK: {hbm.stream = #hbm.stream<j>, smem.pipeline = #smem.pipeline<stages=2, copy=tma>}
// CHECK: scf.for %j0_1 = %j_masked to %j_end
// CHECK: smem.mbarrier_wait %[[KFULL]]
// CHECK: ncd.mask causal
// CHECK: {hbm.stream = #hbm.stream<j>, smem.pipeline = #smem.pipeline<stages=2, copy=tma>}

// NUMBERS: check against float64 reference: {{.*}}: ok
// PERSISTENT: %[[POS:.*]] = smem.ring_position : index
// PERSISTENT: %[[TILE:.*]] = smem.tile_position : index
// PERSISTENT-NEXT: %[[TWO:.*]] = arith.constant 2 : index
// PERSISTENT-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// PERSISTENT-NEXT: %[[PAR:.*]] = arith.remui %[[TILE]], %[[TWO]] : index
// PERSISTENT-NEXT: %[[PREV:.*]] = arith.subi %[[ONE]], %[[PAR]] : index
// PERSISTENT-NEXT: %[[Q:.*]] = smem.alloc : !smem.buffer<b=1, h=1, i=128, d=64 : bf16, stages=1, layout=swizzle>
// PERSISTENT-NEXT: %[[QFULL:.*]] = smem.mbarrier_alloc : !smem.mbarrier<stages=1, arrivals=1>
// PERSISTENT-NEXT: %[[QEMPTY:.*]] = smem.mbarrier_alloc : !smem.mbarrier<stages=1, arrivals=1>
// PERSISTENT-NEXT: smem.producer
// PERSISTENT-NEXT: smem.mbarrier_wait %[[QEMPTY]][%[[Z:.*]]] parity %[[PREV]]
// PERSISTENT-NEXT: smem.arrive_expect %[[QFULL]][%[[Z]]] {bytes = 16384 : i32}
// PERSISTENT-NEXT: smem.tma_copy %q[%b0, %h0, %i0, %c0] -> %[[Q]][%[[Z]]], %[[QFULL]][%[[Z]]]
// PERSISTENT: smem.mbarrier_wait %[[QFULL]][%[[Z]]] parity %[[PAR]]
// PERSISTENT: scf.for %j0_1 = %j_masked to %j_end
// PERSISTENT: {hbm.stream = #hbm.stream<j>, smem.pipeline = #smem.pipeline<stages=2, copy=tma>}
// PERSISTENT-NEXT: smem.arrive %[[QEMPTY]][%[[Z]]]
// PERSISTENT-NEXT: %normalised = ncd.map div
