// smem-unroll-stages: a stream loop pipelined through 3 stages runs 6 of its 8 tiles in
// trips of 3 bodies whose stages are constants, and the last 2 tiles after it with their
// counters constant. A causal stream (bounds not constant) and a TMA-fed loop stay as they are.
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3},smem-to-reg{warps="m:2,n:2"},smem-unroll-stages' | filecheck %s
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 layout=pad8},smem-to-reg{warps="i:8"},smem-unroll-stages' | filecheck %s --check-prefix=CAUSAL
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:64"},ncd-to-hbm,hbm-to-smem{stages=4 copy=tma},smem-to-reg{mma=wgmma},smem-unroll-stages' | filecheck %s --check-prefix=TMA

// CHECK:      %[[UB:.+]] = arith.constant 192 : index
// CHECK-NEXT: %[[STEP:.+]] = arith.constant 96 : index
// CHECK-NEXT: scf.for %[[K:.+]] = %{{.+}} to %[[UB]] step %[[STEP]]
// CHECK-COUNT-3: smem.wait {pending = 1 : i32}
// CHECK-NOT:  smem.wait
// CHECK:      } {hbm.stream = #hbm.stream<k>, smem.pipeline = #smem.pipeline<stages=3, copy=cp_async, unrolled=3>}
// the peeled tiles 6 and 7 (their copies read tiles 8 and 9, past the end of k: at 256 and 288)
// CHECK:      smem.wait {pending = 1 : i32}
// CHECK:      %[[AT8:.+]] = arith.constant 256 : index
// CHECK:      smem.copy %a[%m0, %[[AT8]]]
// CHECK:      smem.wait {pending = 1 : i32}
// CHECK:      %[[AT9:.+]] = arith.constant 288 : index
// CHECK:      smem.copy %a[%m0, %[[AT9]]]
// CHECK:      smem.wait {pending = 0 : i32}
// CHECK-NEXT: reg.store

// CAUSAL:     scf.for
// CAUSAL-NOT: unrolled=
// CAUSAL:     } {hbm.stream = #hbm.stream<j>, smem.pipeline = #smem.pipeline<stages=2, copy=cp_async>}

// TMA:     scf.for
// TMA-NOT: unrolled=
// TMA:     smem.pipeline = #smem.pipeline<stages=4, copy=tma>
