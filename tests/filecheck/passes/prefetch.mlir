// reg-prefetch: each step's fragments load while the step before multiplies. Loads of step
// s + 1 come before the product of step s; the last product of a tile goes after the next
// tile's wait, barrier and first loads; the copies sit among the loads (spread=true).
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3},smem-to-reg{warps="m:2,n:2"},smem-unroll-stages,reg-prefetch' | filecheck %s
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3},smem-to-reg{warps="m:2,n:2"},smem-unroll-stages,reg-prefetch{spread=false}' | filecheck %s --check-prefix=PLAIN

// CHECK:      scf.for
// CHECK:        smem.wait {pending = 1 : i32}
// CHECK-NEXT:   smem.barrier
// CHECK:        %[[A0:.+]] = reg.ldmatrix {{.+}} {at = #hbm.labels<k=0>}
// CHECK:        %[[B0:.+]] = reg.ldmatrix {{.+}} {at = #hbm.labels<k=0>}
// CHECK:        smem.copy %a
// CHECK:        %[[A1:.+]] = reg.ldmatrix {{.+}} {at = #hbm.labels<k=16>}
// CHECK:        %[[B1:.+]] = reg.ldmatrix {{.+}} {at = #hbm.labels<k=16>}
// CHECK:        smem.copy %b
// CHECK-NEXT:   smem.commit
// CHECK-NEXT:   %[[C0:.+]] = reg.mma %[[A0]], %[[B0]]
// the second product waits for the next tile's first loads
// CHECK:        smem.wait {pending = 1 : i32}
// CHECK-NEXT:   smem.barrier
// CHECK:        reg.ldmatrix {{.+}} {at = #hbm.labels<k=0>}
// CHECK:        reg.mma %[[A1]], %[[B1]], %[[C0]]

// PLAIN:      smem.barrier
// PLAIN:      smem.copy %a
// PLAIN:      smem.copy %b
// PLAIN-NEXT: smem.commit
// PLAIN:      reg.ldmatrix {{.+}} {at = #hbm.labels<k=0>}
