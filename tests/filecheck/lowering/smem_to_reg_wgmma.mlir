// smem-to-reg{mma=wgmma}: one reg.wgmma per 16-wide slice from the swizzled stages, one
// group in flight, the stage released one iteration late.
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:256" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=4 copy=tma},smem-to-reg{mma=wgmma}' 2>&1 | filecheck %s --check-prefix=PANEL
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:256" stream="k:64"},ncd-to-hbm,hbm-to-smem{stages=4 copy=tma},smem-to-reg{mma=wgmma}' | filecheck %s
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:256" stream="k:64"},ncd-to-hbm,hbm-to-smem{stages=4},smem-to-reg{mma=wgmma}' 2>&1 | filecheck %s --check-prefix=NOTMA
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:96,n:256" stream="k:64"},ncd-to-hbm,hbm-to-smem{copy=tma},smem-to-reg{mma=wgmma}' 2>&1 | filecheck %s --check-prefix=ROWS
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:256" stream="k:64"},ncd-to-hbm,hbm-to-smem{copy=tma},smem-to-reg{mma=hmma}' 2>&1 | filecheck %s --check-prefix=MMA

// CHECK: hbm.kernel attributes {{.*}}, reg.warps = #hbm.labels<m=8>}
// CHECK: %[[Z:.*]] = reg.zeros : !reg.frag<c, m=16, n=256 : f32>
// CHECK: scf.for %k0 = %c0 to %{{.*}} step %{{.*}} iter_args(%acc = %[[Z]]) -> (!reg.frag<c, m=16, n=256 : f32>) {
// CHECK: smem.mbarrier_wait
// CHECK-NEXT: %[[D0:.*]] = reg.wgmma %{{.*}}[%[[S:.*]]], %{{.*}}[%[[S]]], %acc {at = #hbm.labels<k=0>}
// CHECK-NEXT: %[[D1:.*]] = reg.wgmma %{{.*}}, %[[D0]] {at = #hbm.labels<k=16>}
// CHECK-NEXT: %[[D2:.*]] = reg.wgmma %{{.*}}, %[[D1]] {at = #hbm.labels<k=32>}
// CHECK-NEXT: %[[D3:.*]] = reg.wgmma %{{.*}}, %[[D2]] {at = #hbm.labels<k=48>}
// CHECK-NEXT: reg.wgmma_commit
// CHECK-NEXT: reg.wgmma_wait {pending = 1 : i32}
// CHECK: %[[PREV:.*]] = arith.remui
// CHECK-NEXT: %[[NOTFIRST:.*]] = arith.cmpi ne, %k0, %c0 : index
// CHECK-NEXT: scf.if %[[NOTFIRST]] {
// CHECK-NEXT: smem.arrive %{{.*}}[%[[PREV]]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %[[D3]]
// CHECK: reg.wgmma_wait {pending = 0 : i32}
// CHECK-NEXT: reg.store %{{.*}}, %out[%m0, %n0] : !reg.frag<c, m=16, n=256 : f32>, !hbm.global<m=512, n=384 : bf16>

// PANEL: napkin-opt: error: hbm-to-smem: a TMA tile with 128-byte swizzle needs rows of whole 128-byte panels
// NOTMA: napkin-opt: error: smem-to-reg: @matmul: mma=wgmma reads TMA-filled swizzled stages; run hbm-to-smem{copy=tma} first
// ROWS: napkin-opt: error: smem-to-reg: @matmul: wgmma splits the tile's 96 rows over warpgroups of 64; the rows must be 64, 128, 192 or 256
// MMA: napkin-opt: error: smem-to-reg: mma must be mma.sync or wgmma, got 'hmma'
