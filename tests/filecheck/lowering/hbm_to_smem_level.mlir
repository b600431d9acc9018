// hbm-to-smem, from hand-written HBM-level IR (what ncd-to-hbm gives): a 64 x 64 GEMM
// tile whose A and B tiles are loaded each trip of a loop streaming k (128, 64 a trip).
// cp.async (the default): a buffer of `stages` per loaded tile, the first stage's copies
// issued and committed before the loop; each trip waits for its stage (pending = the
// copies still allowed in flight) and a barrier, reads it, then copies the tile
// stages - 1 trips ahead into the stage that trip will read, and commits; after the loop
// the last groups are awaited. The math and the store stay as they are.
// RUN: napkin-opt %s -p 'hbm-to-smem{stages=2}' | filecheck %s
// RUN: napkin-opt %s -p 'hbm-to-smem{stages=2 copy=tma}' | filecheck %s --check-prefix=TMA
// RUN: napkin-opt %s -p 'hbm-to-smem{stages=2 copy=tma store=tma}' | filecheck %s --check-prefix=STORE

// CHECK:       [[SA:%.+]] = smem.alloc : !smem.buffer<m=64, k=64 : bf16, stages=2, layout=row>
// CHECK-NEXT:  [[SB:%.+]] = smem.alloc : !smem.buffer<k=64, n=64 : bf16, stages=2, layout=row>
// CHECK-NEXT:  [[K0:%.+]] = arith.constant 0 : index
// CHECK-NEXT:  [[S0:%.+]] = arith.constant 0 : index
// CHECK-NEXT:  smem.copy %a[%m0, [[K0]]] -> [[SA]][[[S0]]] : !hbm.global<m=128, k=128 : bf16>, !smem.buffer<m=64, k=64 : bf16, stages=2, layout=row>
// CHECK-NEXT:  smem.copy %b[[[K0]], %n0] -> [[SB]][[[S0]]] : !hbm.global<k=128, n=64 : bf16>, !smem.buffer<k=64, n=64 : bf16, stages=2, layout=row>
// CHECK-NEXT:  smem.commit
// CHECK-NEXT:  %c = scf.for %k0 = %c0 to %c128 step %c64 iter_args(%acc = %zero) -> (!ncd.tensor<m=64, n=64 : f32>) {
// CHECK:         [[TRIP:%.+]] = arith.divui %k0, {{%.+}} : index
// CHECK-NEXT:    [[S:%.+]] = arith.remui [[TRIP]], {{%.+}} : index
// CHECK-NEXT:    smem.wait {pending = 0 : i32}
// CHECK-NEXT:    smem.barrier
// CHECK-NEXT:    %a_tile = smem.read [[SA]][[[S]]] : !smem.buffer<m=64, k=64 : bf16, stages=2, layout=row> -> !ncd.tensor<m=64, k=64 : bf16>
// CHECK-NEXT:    %b_tile = smem.read [[SB]][[[S]]] : !smem.buffer<k=64, n=64 : bf16, stages=2, layout=row> -> !ncd.tensor<k=64, n=64 : bf16>
// CHECK-NEXT:    [[AHEAD:%.+]] = arith.addi %k0, {{%.+}} : index
// CHECK-NEXT:    [[T1:%.+]] = arith.addi [[TRIP]], {{%.+}} : index
// CHECK-NEXT:    [[S1:%.+]] = arith.remui [[T1]], {{%.+}} : index
// CHECK-NEXT:    smem.copy %a[%m0, [[AHEAD]]] -> [[SA]][[[S1]]]
// CHECK-NEXT:    smem.copy %b[[[AHEAD]], %n0] -> [[SB]][[[S1]]]
// CHECK-NEXT:    smem.commit
// CHECK-NEXT:    %p = ncd.contract %a_tile, %b_tile over [k]
// CHECK-NOT:     hbm.load
// CHECK:       smem.wait {pending = 0 : i32}
// CHECK-NEXT:  %c_bf16 = ncd.map cast %c
// CHECK-NEXT:  hbm.store %c_bf16, %out[%m0, %n0]

// copy=tma: swizzled stages, a full and an empty mbarrier ring, and a producer warpgroup
// whose loop waits for a free stage (parity 1 - lap mod 2), expects the stage's bytes
// (2 x 64 x 64 x 2) and issues the TMA copies on the full ring; the consumers' loop waits
// on the full ring and arrives on the empty one after its math. No cp.async waits remain.
// TMA:       [[SA:%.+]] = smem.alloc : !smem.buffer<m=64, k=64 : bf16, stages=2, layout=swizzle>
// TMA-NEXT:  [[SB:%.+]] = smem.alloc : !smem.buffer<k=64, n=64 : bf16, stages=2, layout=swizzle>
// TMA-NEXT:  [[FULL:%.+]] = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
// TMA-NEXT:  [[EMPTY:%.+]] = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
// TMA-NEXT:  [[POS:%.+]] = smem.ring_position : index
// TMA-NEXT:  smem.producer attributes {warps = 4 : i32} {
// TMA-NEXT:    scf.for [[K:%.+]] = %c0 to %c128 step %c64 {
// TMA:           [[U:%.+]] = arith.addi {{%.+}}, [[POS]] : index
// TMA-NEXT:      [[S:%.+]] = arith.remui [[U]], {{%.+}} : index
// TMA:           [[FREE:%.+]] = arith.subi {{%.+}}, {{%.+}} : index
// TMA-NEXT:      smem.mbarrier_wait [[EMPTY]][[[S]]] parity [[FREE]] : !smem.mbarrier<stages=2, arrivals=1>
// TMA-NEXT:      smem.arrive_expect [[FULL]][[[S]]] {bytes = 16384 : i32} : !smem.mbarrier<stages=2, arrivals=1>
// TMA-NEXT:      smem.tma_copy %a[%m0, [[K]]] -> [[SA]][[[S]]], [[FULL]][[[S]]]
// TMA-NEXT:      smem.tma_copy %b[[[K]], %n0] -> [[SB]][[[S]]], [[FULL]][[[S]]]
// TMA-NEXT:    }
// TMA-NEXT:  }
// TMA-NEXT:  %c = scf.for %k0 = %c0 to %c128 step %c64 iter_args(%acc = %zero) -> (!ncd.tensor<m=64, n=64 : f32>) {
// TMA:           [[CS:%.+]] = arith.remui {{%.+}}, {{%.+}} : index
// TMA:           smem.mbarrier_wait [[FULL]][[[CS]]] parity {{%.+}} : !smem.mbarrier<stages=2, arrivals=1>
// TMA-NEXT:      %a_tile = smem.read [[SA]][[[CS]]]
// TMA-NEXT:      %b_tile = smem.read [[SB]][[[CS]]]
// TMA:           smem.arrive [[EMPTY]][[[CS]]] : !smem.mbarrier<stages=2, arrivals=1>
// TMA-NEXT:      scf.yield %acc_new
// TMA-NOT:   smem.wait
// TMA:       hbm.store %c_bf16, %out[%m0, %n0]

// store=tma: the output goes out through a two-stage swizzled panel buffer (allocated
// first): wait for earlier stores to have read it, write the rounded tile, TMA-store it.
// STORE:       [[PANEL:%.+]] = smem.alloc : !smem.buffer<m=64, n=64 : bf16, stages=2, layout=swizzle>
// STORE:       %c_bf16 = ncd.map cast %c
// STORE-NEXT:  [[P0:%.+]] = arith.constant 0 : index
// STORE-NEXT:  smem.tma_store_wait {pending = 0 : i32}
// STORE-NEXT:  smem.write %c_bf16 -> [[PANEL]][[[P0]]] {at = #hbm.labels<n=0>} : !ncd.tensor<m=64, n=64 : bf16>, !smem.buffer<m=64, n=64 : bf16, stages=2, layout=swizzle>
// STORE-NEXT:  smem.tma_store [[PANEL]][[[P0]]] -> %out[%m0, %n0] : !smem.buffer<m=64, n=64 : bf16, stages=2, layout=swizzle>, !hbm.global<m=128, n=64 : bf16>
// STORE-NEXT:  hbm.return

builtin.module {
  hbm.kernel attributes {sym_name = "mm", grid = #hbm.labels<m=64, n=64>, num_outputs = 1 : i32} {
  ^bb0(%a: !hbm.global<m=128, k=128 : bf16>, %b: !hbm.global<k=128, n=64 : bf16>, %out: !hbm.global<m=128, n=64 : bf16>, %m0: index, %n0: index):
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %zero = hbm.fill {value = 0.000000e+00 : f32} : !ncd.tensor<m=64, n=64 : f32>
    %c = scf.for %k0 = %c0 to %c128 step %c64 iter_args(%acc = %zero) -> (!ncd.tensor<m=64, n=64 : f32>) {
      %a_tile = hbm.load %a[%m0, %k0] : !hbm.global<m=128, k=128 : bf16> -> !ncd.tensor<m=64, k=64 : bf16>
      %b_tile = hbm.load %b[%k0, %n0] : !hbm.global<k=128, n=64 : bf16> -> !ncd.tensor<k=64, n=64 : bf16>
      %p = ncd.contract %a_tile, %b_tile over [k] : !ncd.tensor<m=64, k=64 : bf16>, !ncd.tensor<k=64, n=64 : bf16> -> !ncd.tensor<m=64, n=64 : f32>
      %acc_new = ncd.map add %acc, %p : !ncd.tensor<m=64, n=64 : f32>, !ncd.tensor<m=64, n=64 : f32> -> !ncd.tensor<m=64, n=64 : f32>
      scf.yield %acc_new : !ncd.tensor<m=64, n=64 : f32>
    } {hbm.stream = #hbm.stream<k>}
    %c_bf16 = ncd.map cast %c : !ncd.tensor<m=64, n=64 : f32> -> !ncd.tensor<m=64, n=64 : bf16>
    hbm.store %c_bf16, %out[%m0, %n0] : !ncd.tensor<m=64, n=64 : bf16>, !hbm.global<m=128, n=64 : bf16>
    hbm.return
  }
}
