// hbm-to-smem{copy=tma store=tma}: where no panel stage fits beside Q and the stream's
// stages, the output (Q's shape and type) leaves by TMA from Q's own room once the last
// product has read Q (FlashAttention's O in Q's room). The consumers meet before writing it
// (a store wait); a persistent block releases Q to its producer for the next tile only once
// that store has read the room.
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:64" stream="j:64"},ncd-to-hbm,hbm-launch{persistent=true},hbm-to-smem{stages=3 copy=tma store=tma smem_bytes=61440}' | filecheck %s
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:64" stream="j:64"},ncd-to-hbm,hbm-launch{persistent=true},hbm-to-smem{stages=3 copy=tma store=tma smem_bytes=61440}' | napkin-run --random-inputs --check | filecheck %s --check-prefix=NUMBERS
// On a plain grid Q is never refilled: no release.
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:64" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 copy=tma store=tma smem_bytes=61440}' | filecheck %s --check-prefix=PLAIN
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:64" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 copy=tma store=tma smem_bytes=61440}' | napkin-run --random-inputs --check | filecheck %s --check-prefix=NUMBERS
// Where a panel stage fits, the output keeps its own panel buffer.
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:64" stream="j:64"},ncd-to-hbm,hbm-launch{persistent=true},hbm-to-smem{stages=3 copy=tma store=tma}' | filecheck %s --check-prefix=PANELS

// CHECK:      %[[Q:.*]] = smem.alloc : !smem.buffer<b=1, h=1, i=64, d=64 : bf16, stages=1, layout=swizzle>
// CHECK-NEXT: %[[FULL:.*]] = smem.mbarrier_alloc : !smem.mbarrier<stages=1, arrivals=1>
// CHECK-NEXT: %[[EMPTY:.*]] = smem.mbarrier_alloc : !smem.mbarrier<stages=1, arrivals=1>
// CHECK-NOT:  smem.alloc
// CHECK:      smem.mbarrier_wait %[[EMPTY]]
// CHECK:      smem.tma_copy %q[{{.*}}] -> %[[Q]]
// CHECK:      %q_tile = smem.read %[[Q]]
// CHECK-NOT:  smem.arrive %[[EMPTY]]
// CHECK:      smem.tma_store_wait {pending = 0 : i32}
// CHECK-NEXT: smem.write %{{.*}} -> %[[Q]][%[[S:.*]]] {at = #hbm.labels<>}
// CHECK-NEXT: smem.tma_store %[[Q]][%[[S]]] -> %out[%b0, %h0, %i0, %c0]
// CHECK-NEXT: smem.tma_store_wait {pending = 0 : i32}
// CHECK-NEXT: smem.arrive %[[EMPTY]]
// CHECK-NEXT: hbm.return

// PLAIN:      %[[Q:.*]] = smem.alloc : !smem.buffer<b=1, h=1, i=64, d=64 : bf16, stages=1, layout=swizzle>
// PLAIN-NOT:  smem.alloc
// PLAIN:      smem.tma_store_wait {pending = 0 : i32}
// PLAIN-NEXT: smem.write %{{.*}} -> %[[Q]]
// PLAIN-NEXT: smem.tma_store %[[Q]]
// PLAIN-NEXT: hbm.return

// PANELS: smem.alloc : !smem.buffer<b=1, h=1, i=64, d=64 : bf16, stages=2, layout=swizzle>
// PANELS: smem.tma_store %{{.*}}[%{{.*}}] -> %out

// NUMBERS: check against float64 reference: {{.*}}: ok
