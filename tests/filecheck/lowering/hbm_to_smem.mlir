// hbm-to-smem: the stream's loads become multi-stage buffers fed stages-1 tiles ahead.
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=swizzle}' | filecheck %s
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=4}' | filecheck %s --check-prefix=FOUR
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=1}' 2>&1 | filecheck %s --check-prefix=ONE
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:512,n:384" stream="k:256"},ncd-to-hbm,hbm-to-smem{stages=4}' 2>&1 | filecheck %s --check-prefix=BUDGET
// RUN: not napkin-opt %examples/matmul.mlir -p hbm-to-smem 2>&1 | filecheck %s --check-prefix=NOKERNEL

// CHECK:      [[A:%.+]] = smem.alloc : !smem.buffer<m=128, k=32 : bf16, stages=3, layout=swizzle>
// CHECK-NEXT: [[B:%.+]] = smem.alloc : !smem.buffer<k=32, n=128 : bf16, stages=3, layout=swizzle>
// The prologue fills stages 0 and 1, one group each.
// CHECK:      smem.copy %a[%m0, [[K0:%.+]]] -> [[A]][[[S0:%.+]]]
// CHECK-NEXT: smem.copy %b[[[K0]], %n0] -> [[B]][[[S0]]]
// CHECK-NEXT: smem.commit
// CHECK:      smem.copy %a[%m0, [[K1:%.+]]] -> [[A]][[[S1:%.+]]]
// CHECK-NEXT: smem.copy %b[[[K1]], %n0] -> [[B]][[[S1]]]
// CHECK-NEXT: smem.commit
// CHECK:      scf.for %k0 =
// CHECK:      smem.wait {pending = 1 : i32}
// CHECK-NEXT: smem.barrier
// CHECK-NEXT: [[TA:%.+]] = smem.read [[A]][[[S:%.+]]]
// CHECK-NEXT: [[TB:%.+]] = smem.read [[B]][[[S]]]
// CHECK:      smem.copy %a[%m0, [[NK:%.+]]] -> [[A]][[[NS:%.+]]]
// CHECK-NEXT: smem.copy %b[[[NK]], %n0] -> [[B]][[[NS]]]
// CHECK-NEXT: smem.commit
// CHECK-NEXT: ncd.contract [[TA]], [[TB]] over [k]
// CHECK:      } {hbm.stream = #hbm.stream<k>, smem.pipeline = #smem.pipeline<stages=3, copy=cp_async>}
// CHECK-NEXT: smem.wait {pending = 0 : i32}
// CHECK-NOT:  hbm.load

// FOUR-COUNT-3: smem.commit
// FOUR: scf.for
// FOUR: smem.wait {pending = 2 : i32}

// ONE: napkin-opt: error: hbm-to-smem: stages must be at least 2 (one buffer cannot overlap copy and compute), got 1
// BUDGET: napkin-opt: error: hbm-to-smem: @matmul needs 1835008 bytes of shared memory ({{.*}}), over the budget of 232448; use fewer stages or smaller tiles
// NOKERNEL: napkin-opt: error: hbm-to-smem: the module has no hbm.kernel; run ncd-to-hbm first
