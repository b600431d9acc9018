// hbm-to-smem{copy=tma} of a product over the block's rows: %s16, computed in the stream
// (rows j, the block's; columns i, the stream's), is contracted along j for %t (the
// attention gradient's dQ^T = K^T dS^T). The warps split j, so %s16 goes through a
// swizzled buffer: two stages where they fit, tile t in stage t mod 2, the consumers
// meeting once before the loop and, each tile, after their writes, fenced for the tensor
// cores, before the product reads it (the stage written was last read two tiles back,
// before that meeting of the tile between). Under a budget with room for one stage
// of each (ONE), the consumers meet before writing too (the last tile's product has read it).
// %t, added into its f32 output inside the stream, leaves through two stages of 128-byte
// swizzled f32 panels by the TMA's reduce-add, which a store role issues (smem.storer,
// beside the producer): per tile the consumers wait on the stage's empty barrier, write
// it and arrive on its full barrier with their writes fenced; the store role waits on the
// full barrier, adds the stage, waits until the add has read it and arrives on the empty
// barrier, over the same stream. The consumers meet once a tile (for %s16), not for the
// add. %s16's two stages are taken before %t's second (the prefix DS2, a budget with room for three
// stages, %s16 two and %t one, the consumers then waiting until the add has read %t's one
// stage, and meeting once a tile still). With cp.async the same diagram is refused.
// RUN: napkin-opt %s -p 'ncd-relabel{grid="j:128" stream="i:64"},ncd-to-hbm,hbm-to-smem{copy=tma stages=2}' | filecheck %s
// RUN: napkin-opt %s -p 'ncd-relabel{grid="j:128" stream="i:64"},ncd-to-hbm,hbm-to-smem{copy=tma stages=2 smem_bytes=150000}' | filecheck %s --check-prefix=DS2
// RUN: napkin-opt %s -p 'ncd-relabel{grid="j:128" stream="i:64"},ncd-to-hbm,hbm-to-smem{copy=tma stages=2 smem_bytes=120000}' | filecheck %s --check-prefix=ONE
// RUN: not napkin-opt %s -p 'ncd-relabel{grid="j:128" stream="i:64"},ncd-to-hbm,hbm-to-smem{stages=2}' 2>&1 | filecheck %s --check-prefix=CPASYNC
// RUN: napkin-opt %s -p 'ncd-relabel{grid="j:128" stream="i:64"},ncd-to-hbm,hbm-to-smem{copy=tma stages=2},smem-to-reg{mma=wgmma}' | filecheck %s --check-prefix=REG
// RUN: napkin-opt %s -p 'ncd-relabel{grid="j:128" stream="i:64"},ncd-to-hbm,hbm-to-smem{copy=tma stages=2},smem-to-reg{mma=wgmma},reg-to-ptx{arch=sm_90a}' -t ptx | filecheck %s --check-prefix=PTX

// CHECK: %[[BUF:.*]] = smem.alloc : !smem.buffer<j=128, i=64 : bf16, stages=2, layout=swizzle>
// CHECK: %[[ADD:.*]] = smem.alloc : !smem.buffer<i=64, d=128 : f32, stages=2, layout=swizzle>
// the store role steps on from the producer's rings' position (one step a stream trip)
// CHECK: %[[POS:.*]] = smem.ring_position : index
// CHECK-NOT: smem.ring_position
// CHECK: smem.mbarrier_alloc : !smem.mbarrier<stages=1, arrivals=1>
// CHECK-NEXT: %[[FULL:.*]] = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
// CHECK-NEXT: %[[EMPTY:.*]] = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
// CHECK-NEXT: smem.producer
// CHECK: smem.storer {
// CHECK-NEXT: scf.for %[[J:.*]] = %c0 to %[[END:.*]] step %[[STEP:.*]] {
// CHECK: %[[JT:.*]] = arith.divui %[[J]]
// CHECK-NEXT: %[[JP:.*]] = arith.addi %[[JT]], %[[POS]]
// CHECK-NEXT: %[[JS:.*]] = arith.remui %[[JP]]
// CHECK: smem.mbarrier_wait %[[FULL]][%[[JS]]] parity
// CHECK-NEXT: smem.tma_store %[[ADD]][%[[JS]]] -> %out0[%[[J]], %c0] {accumulate}
// CHECK-NEXT: smem.tma_store_wait {pending = 0 : i32}
// CHECK-NEXT: smem.arrive %[[EMPTY]][%[[JS]]] :
// CHECK-NEXT: } {hbm.stream = #hbm.stream<i>}
// CHECK: smem.barrier
// CHECK-NEXT: scf.for %[[I:.*]] = %c0 to %[[END]] step %[[STEP]]
// CHECK: %s16 = ncd.map cast %s
// CHECK-NEXT: %[[STEP2:.*]] = arith.constant 64 : index
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[T:.*]] = arith.divui %[[I]], %[[STEP2]] : index
// CHECK-NEXT: %[[S2:.*]] = arith.remui %[[T]], %[[TWO]] : index
// CHECK-NEXT: smem.write %s16 -> %[[BUF]][%[[S2]]] {at = #hbm.labels<>}
// CHECK-NEXT: smem.barrier {async_proxy}
// CHECK-NEXT: %[[R:.*]] = smem.read %[[BUF]][%[[S2]]]
// CHECK-NEXT: %t = ncd.contract %[[R]], %{{.*}} over [j] : !ncd.tensor<j=128, i=64 : bf16>, !ncd.tensor<j=128, d=128 : bf16> -> !ncd.tensor<d=128, i=64 : f32>
// CHECK: ncd.contract %s16, %{{.*}} over [i]
// CHECK-NOT: smem.tma_store
// CHECK: %[[IT:.*]] = arith.divui %[[I]]
// CHECK-NEXT: %[[IP:.*]] = arith.addi %[[IT]], %[[POS]]
// CHECK-NEXT: %[[S:.*]] = arith.remui %[[IP]]
// CHECK: smem.mbarrier_wait %[[EMPTY]][%[[S]]] parity
// CHECK-NEXT: smem.write %t -> %[[ADD]][%[[S]]] {at = #hbm.labels<>} : !ncd.tensor<d=128, i=64 : f32>, !smem.buffer<i=64, d=128 : f32, stages=2, layout=swizzle>
// CHECK-NEXT: smem.arrive %[[FULL]][%[[S]]] {async_proxy}
// CHECK-NEXT: scf.yield

// DS2: %[[BUF:.*]] = smem.alloc : !smem.buffer<j=128, i=64 : bf16, stages=2, layout=swizzle>
// DS2: %[[ADD:.*]] = smem.alloc : !smem.buffer<i=64, d=128 : f32, stages=1, layout=swizzle>
// DS2: smem.storer {
// DS2: smem.mbarrier_wait %[[FULL:[0-9]+]][%{{.*}}] parity %{{.*}} : !smem.mbarrier<stages=1, arrivals=1>
// DS2-NEXT: smem.tma_store %[[ADD]]
// DS2-NEXT: smem.tma_store_wait {pending = 0 : i32}
// DS2-NEXT: smem.arrive %[[EMPTY:[0-9]+]][
// DS2: smem.barrier
// DS2-NEXT: scf.for
// DS2-NOT: smem.barrier
// DS2: smem.write %s16 -> %[[BUF]]
// DS2-NEXT: smem.barrier {async_proxy}
// DS2-NOT: smem.barrier
// DS2: smem.mbarrier_wait %[[EMPTY]]
// DS2-NEXT: smem.write %t -> %[[ADD]]
// DS2-NEXT: smem.arrive %[[FULL]]{{.*}} {async_proxy}
// DS2-NEXT: scf.yield

// ONE: %[[BUF:.*]] = smem.alloc : !smem.buffer<j=128, i=64 : bf16, stages=1, layout=swizzle>
// ONE: smem.alloc : !smem.buffer<i=64, d=128 : f32, stages=1, layout=swizzle>
// ONE: smem.storer
// ONE-NOT: smem.barrier
// ONE: scf.for
// ONE: %s16 = ncd.map cast %s
// ONE-NEXT: %[[Z:.*]] = arith.constant 0 : index
// ONE-NEXT: smem.barrier
// ONE-NEXT: smem.write %s16 -> %[[BUF]][%[[Z]]] {at = #hbm.labels<>}
// ONE-NEXT: smem.barrier {async_proxy}
// ONE-NEXT: smem.read %[[BUF]][%[[Z]]]

// CPASYNC: hbm-to-smem: @f: s16 is computed in the stream and contracted along the block's rows (j), which the warps split: it goes through shared memory by stmatrix for wgmma, on sm_90a (copy=tma); with cp.async it is not lowered

// REG: reg.stmatrix %{{.*}} -> %[[BUF:.*]][%{{.*}}] {at = #hbm.labels<>} : !reg.frag<c, j=16, i=64 : f32>, !smem.buffer<j=128, i=64 : bf16, stages=2, layout=swizzle>
// REG-NEXT: smem.barrier {async_proxy}
// REG-NEXT: %[[Z:.*]] = reg.zeros : !reg.frag<c, d=16, i=64 : f32, split=8>
// REG-NEXT: reg.wgmma %{{.*}}, %[[BUF]][%{{.*}}], %[[Z]] {at = #hbm.labels<j=0>} : !smem.buffer<j=128, d=128 : bf16, stages=1, layout=swizzle>, !smem.buffer<j=128, i=64 : bf16, stages=2, layout=swizzle>, !reg.frag<c, d=16, i=64 : f32, split=8>
// REG: reg.write %{{.*}} -> %{{.*}}[%{{.*}}] {at = #hbm.labels<>} : !reg.frag<c, d=16, i=64 : f32, split=8>, !smem.buffer<i=64, d=128 : f32, stages=2, layout=swizzle>
// REG-NEXT: smem.arrive %{{.*}} {async_proxy}

// the store role on thread 32 (lane 0 of the producer's second warp): per tile a wait on
// the full barrier, one TMA reduce-add a panel, the wait until they have read the stage,
// one arrival on the empty barrier (initialised for one, the full one for the 8 consumer
// warps: a lane of each arrives once the warp's lanes have met; the counts are
// checked in tests/unit/lowering/test_store_role.py). The consumers: their barrier before
// the loop, none before the write; dS's write fenced for the async proxy, their barrier, the product with A M-major (K's
// panels) and B N-major (the staged tile); then no barrier: each waits on the stage's
// empty barrier, writes dQ^T's values into the swizzled panels, fences them and arrives
// PTX: mov.u32 %r[[TID:[0-9]+]], %tid.x;
// PTX: fence.mbarrier_init
// PTX: setmaxnreg.dec.sync.aligned.u32 24;
// PTX: setp.eq.u32 %p{{[0-9]+}}, %r[[TID]], %r{{[0-9]+}};
// PTX: mov.u32 %r[[T32:[0-9]+]], 32;
// PTX-NEXT: setp.eq.u32 %p{{[0-9]+}}, %r[[TID]], %r[[T32]];
// PTX: mbarrier.try_wait.parity.shared::cta.b64
// PTX: cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group
// PTX: cp.async.bulk.commit_group;
// PTX-NEXT: cp.async.bulk.wait_group.read 0;
// PTX: mbarrier.arrive.shared::cta.b64
// PTX: bar.sync 1, 256;
// PTX-NOT: bar.sync
// PTX: stmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-NOT: cp.async.bulk.wait_group
// PTX: fence.proxy.async.shared::cta;
// PTX-NEXT: bar.sync 1, 256;
// PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, 1, 1, 1, 1;
// PTX-NOT: bar.sync
// PTX: mbarrier.try_wait.parity.shared::cta.b64
// PTX-NOT: bar.sync
// PTX: st.shared.f32 [%r{{[0-9]+}}+1024]
// PTX-NOT: bar.sync
// PTX: fence.proxy.async.shared::cta;
// PTX: bar.warp.sync 0xffffffff;
// PTX: mbarrier.arrive.shared::cta.b64
// PTX-NOT: bar.sync
// PTX-NOT: cp.reduce.async.bulk

func.func @f(%b: !ncd.tensor<i=200, d=128 : bf16>, %k: !ncd.tensor<j=256, d=128 : bf16>) -> (!ncd.tensor<i=200, d=128 : f32>, !ncd.tensor<j=256, d=128 : f32>) {
  %s = ncd.contract %b, %k over [d] : !ncd.tensor<i=200, d=128 : bf16>, !ncd.tensor<j=256, d=128 : bf16> -> !ncd.tensor<i=200, j=256 : f32>
  %s16 = ncd.map cast %s : !ncd.tensor<i=200, j=256 : f32> -> !ncd.tensor<i=200, j=256 : bf16>
  %t = ncd.contract %s16, %k over [j] : !ncd.tensor<i=200, j=256 : bf16>, !ncd.tensor<j=256, d=128 : bf16> -> !ncd.tensor<i=200, d=128 : f32>
  %r = ncd.contract %s16, %b over [i] : !ncd.tensor<i=200, j=256 : bf16>, !ncd.tensor<i=200, d=128 : bf16> -> !ncd.tensor<j=256, d=128 : f32>
  func.return %t, %r : !ncd.tensor<i=200, d=128 : f32>, !ncd.tensor<j=256, d=128 : f32>
}
