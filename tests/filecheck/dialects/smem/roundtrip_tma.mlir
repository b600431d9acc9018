// RUN: napkin-opt %s | napkin-opt | filecheck %s
// RUN: napkin-opt %s --print-op-generic | napkin-opt | filecheck %s

// CHECK: %full = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
// CHECK-NEXT: %empty = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
// CHECK-NEXT: smem.producer attributes {warps = 4 : i32} {
// CHECK-NEXT: smem.mbarrier_wait %empty[%c0] parity %c1 : !smem.mbarrier<stages=2, arrivals=1>
// CHECK-NEXT: smem.arrive_expect %full[%c0] {bytes = 16384 : i32} : !smem.mbarrier<stages=2, arrivals=1>
// CHECK-NEXT: smem.tma_copy %a[%m0, %c0] -> %buf[%c0], %full[%c0] : !hbm.global<m=300, k=64 : bf16>, !smem.buffer<m=128, k=64 : bf16, stages=2, layout=swizzle>, !smem.mbarrier<stages=2, arrivals=1>
// CHECK-NEXT: }
// CHECK-NEXT: smem.mbarrier_wait %full[%c0] parity %c0 : !smem.mbarrier<stages=2, arrivals=1>
// CHECK-NEXT: smem.arrive %empty[%c0] : !smem.mbarrier<stages=2, arrivals=1>
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=128>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=300, k=64 : bf16>, %out: !hbm.global<m=300, k=64 : bf16>, %m0: index):
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %buf = smem.alloc : !smem.buffer<m=128, k=64 : bf16, stages=2, layout=swizzle>
  %full = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
  %empty = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
  smem.producer attributes {warps = 4 : i32} {
    smem.mbarrier_wait %empty[%c0] parity %c1 : !smem.mbarrier<stages=2, arrivals=1>
    smem.arrive_expect %full[%c0] {bytes = 16384 : i32} : !smem.mbarrier<stages=2, arrivals=1>
    smem.tma_copy %a[%m0, %c0] -> %buf[%c0], %full[%c0] : !hbm.global<m=300, k=64 : bf16>, !smem.buffer<m=128, k=64 : bf16, stages=2, layout=swizzle>, !smem.mbarrier<stages=2, arrivals=1>
  }
  smem.mbarrier_wait %full[%c0] parity %c0 : !smem.mbarrier<stages=2, arrivals=1>
  smem.arrive %empty[%c0] : !smem.mbarrier<stages=2, arrivals=1>
  hbm.return
}

// CHECK: %pos = smem.ring_position : index
// CHECK-NEXT: %tile = smem.tile_position : index
hbm.kernel attributes {sym_name = "k2", grid = #hbm.labels<m=128>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=300, k=64 : bf16>, %out: !hbm.global<m=300, k=64 : bf16>, %m0: index):
  %pos = smem.ring_position : index
  %tile = smem.tile_position : index
  hbm.return
}

// An f32 vector (a statistic of the streamed rows) into a plain buffer, on the tiles' ring.
// CHECK: smem.tma_copy %lse[%b0, %c0] -> %vec[%c0], %full[%c0] : !hbm.global<b=4, i=300 : f32>, !smem.buffer<b=1, i=64 : f32, stages=2, layout=row>, !smem.mbarrier<stages=2, arrivals=1>
hbm.kernel attributes {sym_name = "v", grid = #hbm.labels<b=1>, num_outputs = 1 : i32} {
^bb0(%lse: !hbm.global<b=4, i=300 : f32>, %out: !hbm.global<b=4, i=300 : f32>, %b0: index):
  %c0 = arith.constant 0 : index
  %vec = smem.alloc : !smem.buffer<b=1, i=64 : f32, stages=2, layout=row>
  %full = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
  smem.tma_copy %lse[%b0, %c0] -> %vec[%c0], %full[%c0] : !hbm.global<b=4, i=300 : f32>, !smem.buffer<b=1, i=64 : f32, stages=2, layout=row>, !smem.mbarrier<stages=2, arrivals=1>
  hbm.return
}

// A copy of the tile's first rows only (a global shorter than the tile): its bytes alone count
// CHECK: smem.arrive_expect %full2[%s0] {bytes = 1024 : i32} : !smem.mbarrier<stages=2, arrivals=1>
// CHECK-NEXT: smem.tma_copy %a[%m0, %s0] -> %buf2[%s0], %full2[%s0] {rows = 8 : i32} : !hbm.global<m=3, k=64 : bf16>, !smem.buffer<m=64, k=64 : bf16, stages=2, layout=swizzle>, !smem.mbarrier<stages=2, arrivals=1>
hbm.kernel attributes {sym_name = "short", grid = #hbm.labels<m=64>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=3, k=64 : bf16>, %out: !hbm.global<m=3, k=64 : bf16>, %m0: index):
  %s0 = arith.constant 0 : index
  %buf2 = smem.alloc : !smem.buffer<m=64, k=64 : bf16, stages=2, layout=swizzle>
  %full2 = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
  smem.arrive_expect %full2[%s0] {bytes = 1024 : i32} : !smem.mbarrier<stages=2, arrivals=1>
  smem.tma_copy %a[%m0, %s0] -> %buf2[%s0], %full2[%s0] {rows = 8 : i32} : !hbm.global<m=3, k=64 : bf16>, !smem.buffer<m=64, k=64 : bf16, stages=2, layout=swizzle>, !smem.mbarrier<stages=2, arrivals=1>
  hbm.return
}
