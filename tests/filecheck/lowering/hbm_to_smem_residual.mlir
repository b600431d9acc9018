// hbm-to-smem with a residual (a tile of the output's shape added to the sums, loaded once
// outside the stream): the producer copies it by TMA into a one-stage buffer before the
// stream, and the consumers wait for it, read it and cast it where the add uses it, past
// the stream loop (its cast had stood before the loop, above the buffer and barrier).
// RUN: napkin-opt %examples/gemm_residual.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:64"},ncd-to-hbm,hbm-launch{persistent=true},hbm-to-smem{stages=3 copy=tma store=tma}' | filecheck %s

// CHECK:      %[[BUF:.*]] = smem.alloc : !smem.buffer<m=128, n=128 : bf16, stages=1, layout=swizzle>
// CHECK-NEXT: %[[FULL:.*]] = smem.mbarrier_alloc : !smem.mbarrier<stages=1, arrivals=1>
// CHECK-NEXT: %[[EMPTY:.*]] = smem.mbarrier_alloc : !smem.mbarrier<stages=1, arrivals=1>
// CHECK-NEXT: smem.producer
// CHECK-NEXT: smem.mbarrier_wait %[[EMPTY]]
// CHECK-NEXT: smem.arrive_expect %[[FULL]][%{{.*}}] {bytes = 32768 : i32}
// CHECK-NEXT: smem.tma_copy %res[%m0, %n0] -> %[[BUF]][%{{.*}}], %[[FULL]]
// CHECK:      } {hbm.stream = #hbm.stream<k>, smem.pipeline = #smem.pipeline<stages=3, copy=tma>}
// CHECK-NEXT: smem.mbarrier_wait %[[FULL]]
// CHECK-NEXT: %[[R:.*]] = smem.read %[[BUF]]
// CHECK-NEXT: %[[R32:.*]] = ncd.map cast %[[R]]
// CHECK-NEXT: smem.arrive %[[EMPTY]]
// CHECK-NEXT: %z = ncd.map add %{{.*}}, %[[R32]]
