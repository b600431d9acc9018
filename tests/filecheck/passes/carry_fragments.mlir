// reg-carry-fragments: the unrolled stream loop carries the next trip's first fragments.
// The first trip's wait, barrier and k:0 loads run before the loop; each trip ends with the
// next trip's, and yields their fragments; the peeled tile after the loop multiplies what
// the last trip loaded instead of waiting and loading again. A loop that nothing matching
// its head follows (not unrolled) and a causal stream stay as they are.
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=swizzle},smem-to-reg{warps="m:2,n:2"},smem-unroll-stages,reg-carry-fragments' | filecheck %s
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=swizzle},smem-to-reg{warps="m:2,n:2"},reg-carry-fragments' | filecheck %s --check-prefix=WHOLE
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 layout=pad8},smem-to-reg{warps="i:8"},smem-unroll-stages,reg-carry-fragments' | filecheck %s --check-prefix=CAUSAL

// CHECK:      smem.wait {pending = 1 : i32}
// CHECK-NEXT: smem.barrier
// CHECK-NEXT: %[[A0:.+]] = reg.ldmatrix %{{.+}} {at = #hbm.labels<k=0>} {{.+}} -> !reg.frag<a, m=64, k=16 : bf16>
// CHECK-NEXT: %[[B0:.+]] = reg.ldmatrix %{{.+}} {at = #hbm.labels<k=0>} {{.+}} -> !reg.frag<b, k=16, n=64 : bf16>
// CHECK-NEXT: %[[ACC:.+]], %[[A:.+]], %[[B:.+]] = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[C:.+]] = %{{.+}}, %[[AI:.+]] = %[[A0]], %[[BI:.+]] = %[[B0]])
// the first tile's copies, then its first product from the carried fragments
// CHECK-NOT:  smem.wait
// CHECK:      smem.commit
// CHECK-NEXT: reg.mma %[[AI]], %[[BI]], %[[C]]
// the second and third tiles wait at their start
// CHECK-COUNT-2: smem.wait {pending = 1 : i32}
// the next trip's head ends the body
// CHECK:      smem.wait {pending = 1 : i32}
// CHECK-NEXT: smem.barrier
// CHECK-NEXT: %[[A1:.+]] = reg.ldmatrix %{{.+}} {at = #hbm.labels<k=0>}
// CHECK-NEXT: %[[B1:.+]] = reg.ldmatrix %{{.+}} {at = #hbm.labels<k=0>}
// CHECK-NEXT: scf.yield %{{.+}}, %[[A1]], %[[B1]]
// CHECK-NEXT: } {hbm.stream = #hbm.stream<k>, smem.pipeline = #smem.pipeline<stages=3, copy=cp_async, unrolled=3>}
// tile 6 (peeled) takes the last trip's loads: no wait, no barrier, no k:0 load before its product
// CHECK-NOT:  smem.wait
// CHECK:      smem.commit
// CHECK-NEXT: reg.mma %[[A]], %[[B]], %[[ACC]]
// CHECK-NEXT: reg.ldmatrix %{{.+}} {at = #hbm.labels<k=16>}
// tile 7 waits as before
// CHECK:      smem.wait {pending = 1 : i32}
// CHECK-NEXT: smem.barrier

// WHOLE:      scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{[^,]+}} = %{{[^,]+}}) -> (!reg.frag<c, m=64, n=64 : f32>)
// WHOLE:      smem.wait {pending = 1 : i32}
// WHOLE-NEXT: smem.barrier

// CAUSAL:      scf.for {{.+}} iter_args(%row_max = %{{.+}}, %row_sum = %{{.+}}, %acc = %{{.+}}) -> (!reg.frag<row, i=16 : f32>, !reg.frag<row, i=16 : f32>, !reg.frag<c, i=16, d=64 : f32>) {
// CAUSAL:      smem.wait {pending = 0 : i32}
// CAUSAL-NEXT: smem.barrier
