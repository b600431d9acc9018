// smem-to-reg{mma=wgmma}, from hand-written shared-memory-level IR (what hbm-to-smem gives
// with copy=tma): a 64 x 64 GEMM tile streamed 64 along k through a two-stage TMA ring.
// One consumer warpgroup shares the 64 rows (reg.warps m=4, 16 rows a warp, each warp's
// accumulator 16 rows by the tile's 64 columns); each 16-wide k slice is a reg.wgmma from
// the swizzled stages, chained through the accumulator; the stage's four are one
// committed group, one group stays in flight (wait pending 1), and the stage the previous
// trip read is released (smem.arrive on the empty ring, not on the first trip) in place
// of the arrive the consumer had; after the loop every group is awaited (pending 0).
// The producer's region is left as it is.
// RUN: napkin-opt %s -p 'smem-to-reg{mma=wgmma}' | filecheck %s

// CHECK:       hbm.kernel attributes {{{.*}}reg.warps = #hbm.labels<m=4>}
// CHECK:       [[ZERO:%.+]] = reg.zeros : !reg.frag<c, m=16, n=64 : f32>
// CHECK:       smem.producer attributes {warps = 4 : i32} {
// CHECK:         smem.tma_copy %a[%m0, %k] -> %sa[%s], %full[%s]
// CHECK:       scf.for %k0 = %c0 to %c128 step %c64 iter_args([[ACC:%.+]] = [[ZERO]]) -> (!reg.frag<c, m=16, n=64 : f32>) {
// CHECK:         [[S:%.+]] = arith.remui
// CHECK:         smem.mbarrier_wait %full[[[S]]] parity
// CHECK-NEXT:    [[W0:%.+]] = reg.wgmma %sa[[[S]]], %sb[[[S]]], [[ACC]] {at = #hbm.labels<k=0>} : !smem.buffer<m=64, k=64 : bf16, stages=2, layout=swizzle>, !smem.buffer<k=64, n=64 : bf16, stages=2, layout=swizzle>, !reg.frag<c, m=16, n=64 : f32> -> !reg.frag<c, m=16, n=64 : f32>
// CHECK-NEXT:    [[W1:%.+]] = reg.wgmma %sa[[[S]]], %sb[[[S]]], [[W0]] {at = #hbm.labels<k=16>}
// CHECK-NEXT:    [[W2:%.+]] = reg.wgmma %sa[[[S]]], %sb[[[S]]], [[W1]] {at = #hbm.labels<k=32>}
// CHECK-NEXT:    [[W3:%.+]] = reg.wgmma %sa[[[S]]], %sb[[[S]]], [[W2]] {at = #hbm.labels<k=48>}
// CHECK-NEXT:    reg.wgmma_commit
// CHECK-NEXT:    reg.wgmma_wait {pending = 1 : i32}
// CHECK:         [[NEXT:%.+]] = arith.addi [[S]], [[ONE:%.+]] : index
// CHECK-NEXT:    [[PREV:%.+]] = arith.remui [[NEXT]], {{%.+}} : index
// CHECK-NEXT:    [[LATER:%.+]] = arith.cmpi ne, %k0, %c0 : index
// CHECK-NEXT:    scf.if [[LATER]] {
// CHECK-NEXT:      smem.arrive %empty[[[PREV]]] : !smem.mbarrier<stages=2, arrivals=1>
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.yield [[W3]] : !reg.frag<c, m=16, n=64 : f32>
// CHECK:       reg.wgmma_wait {pending = 0 : i32}
// CHECK-NEXT:  reg.store %c, %out[%m0, %n0] : !reg.frag<c, m=16, n=64 : f32>, !hbm.global<m=128, n=64 : bf16>
// CHECK-NEXT:  hbm.return

builtin.module {
  hbm.kernel attributes {sym_name = "mm", grid = #hbm.labels<m=64, n=64>, num_outputs = 1 : i32} {
  ^bb0(%a: !hbm.global<m=128, k=128 : bf16>, %b: !hbm.global<k=128, n=64 : bf16>, %out: !hbm.global<m=128, n=64 : bf16>, %m0: index, %n0: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %zero = hbm.fill {value = 0.000000e+00 : f32} : !ncd.tensor<m=64, n=64 : f32>
    %sa = smem.alloc : !smem.buffer<m=64, k=64 : bf16, stages=2, layout=swizzle>
    %sb = smem.alloc : !smem.buffer<k=64, n=64 : bf16, stages=2, layout=swizzle>
    %full = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
    %empty = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
    %pos = smem.ring_position : index
    smem.producer attributes {warps = 4 : i32} {
      scf.for %k = %c0 to %c128 step %c64 {
        %t = arith.divui %k, %c64 : index
        %u = arith.addi %t, %pos : index
        %s = arith.remui %u, %c2 : index
        %lap = arith.divui %u, %c2 : index
        %ph = arith.remui %lap, %c2 : index
        %free = arith.subi %c1, %ph : index
        smem.mbarrier_wait %empty[%s] parity %free : !smem.mbarrier<stages=2, arrivals=1>
        smem.arrive_expect %full[%s] {bytes = 16384 : i32} : !smem.mbarrier<stages=2, arrivals=1>
        smem.tma_copy %a[%m0, %k] -> %sa[%s], %full[%s] : !hbm.global<m=128, k=128 : bf16>, !smem.buffer<m=64, k=64 : bf16, stages=2, layout=swizzle>, !smem.mbarrier<stages=2, arrivals=1>
        smem.tma_copy %b[%k, %n0] -> %sb[%s], %full[%s] : !hbm.global<k=128, n=64 : bf16>, !smem.buffer<k=64, n=64 : bf16, stages=2, layout=swizzle>, !smem.mbarrier<stages=2, arrivals=1>
      } {hbm.stream = #hbm.stream<k>}
    }
    %c = scf.for %k0 = %c0 to %c128 step %c64 iter_args(%acc = %zero) -> (!ncd.tensor<m=64, n=64 : f32>) {
      %t = arith.divui %k0, %c64 : index
      %u = arith.addi %t, %pos : index
      %s = arith.remui %u, %c2 : index
      %lap = arith.divui %u, %c2 : index
      %ph = arith.remui %lap, %c2 : index
      smem.mbarrier_wait %full[%s] parity %ph : !smem.mbarrier<stages=2, arrivals=1>
      %a_tile = smem.read %sa[%s] : !smem.buffer<m=64, k=64 : bf16, stages=2, layout=swizzle> -> !ncd.tensor<m=64, k=64 : bf16>
      %b_tile = smem.read %sb[%s] : !smem.buffer<k=64, n=64 : bf16, stages=2, layout=swizzle> -> !ncd.tensor<k=64, n=64 : bf16>
      %p = ncd.contract %a_tile, %b_tile over [k] : !ncd.tensor<m=64, k=64 : bf16>, !ncd.tensor<k=64, n=64 : bf16> -> !ncd.tensor<m=64, n=64 : f32>
      %acc_new = ncd.map add %acc, %p : !ncd.tensor<m=64, n=64 : f32>, !ncd.tensor<m=64, n=64 : f32> -> !ncd.tensor<m=64, n=64 : f32>
      smem.arrive %empty[%s] : !smem.mbarrier<stages=2, arrivals=1>
      scf.yield %acc_new : !ncd.tensor<m=64, n=64 : f32>
    } {hbm.stream = #hbm.stream<k>, smem.pipeline = #smem.pipeline<stages=2, copy=tma>}
    %c_bf16 = ncd.map cast %c : !ncd.tensor<m=64, n=64 : f32> -> !ncd.tensor<m=64, n=64 : bf16>
    hbm.store %c_bf16, %out[%m0, %n0] : !ncd.tensor<m=64, n=64 : bf16>, !hbm.global<m=128, n=64 : bf16>
    hbm.return
  }
}
