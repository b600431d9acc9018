// smem-to-reg{mma=wgmma} after hbm-to-smem{store=tma}: each panel written into shared
// memory becomes a reg.stmatrix of the accumulators (the cast folded in), after all wgmma
// groups are done.
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:256" stream="k:64"},ncd-to-hbm,hbm-to-smem{stages=4 copy=tma store=tma},smem-to-reg{mma=wgmma}' | filecheck %s

// CHECK: %[[C:.*]] = smem.alloc : !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>
// CHECK: %[[ACC:.*]] = scf.for
// CHECK: reg.wgmma
// CHECK: reg.wgmma_wait {pending = 0 : i32}
// CHECK-NOT: ncd.map
// CHECK: smem.tma_store_wait {pending = 1 : i32}
// CHECK-NEXT: reg.stmatrix %[[ACC]] -> %[[C]][%{{.*}}] {at = #hbm.labels<n=0>} : !reg.frag<c, m=16, n=256 : f32>, !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>
// CHECK-NEXT: smem.tma_store %[[C]]
// CHECK: reg.stmatrix %[[ACC]] -> %[[C]][%{{.*}}] {at = #hbm.labels<n=64>}
// CHECK: reg.stmatrix %[[ACC]] -> %[[C]][%{{.*}}] {at = #hbm.labels<n=128>}
// CHECK: reg.stmatrix %[[ACC]] -> %[[C]][%{{.*}}] {at = #hbm.labels<n=192>}
// CHECK-NEXT: smem.tma_store %[[C]]
// CHECK-NOT: reg.store
// CHECK: hbm.return
