// RUN: napkin-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

func.func @f(%b: !smem.mbarrier<stages=0, arrivals=1>) {
  func.return
}
// CHECK: !smem.mbarrier: stages must be in 1..16, got 0

// -----
func.func @f(%b: !smem.mbarrier<stages=2, arrivals=0>) {
  func.return
}
// CHECK: !smem.mbarrier: arrivals must be at least 1, got 0

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=128>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=300, k=64 : bf16>, %out: !hbm.global<m=300, k=64 : bf16>, %m0: index):
  %buf = smem.alloc : !smem.buffer<m=128, k=64 : bf16, stages=2, layout=pad8>
  %full = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
  smem.tma_copy %a[%m0, %m0] -> %buf[%m0], %full[%m0] : !hbm.global<m=300, k=64 : bf16>, !smem.buffer<m=128, k=64 : bf16, stages=2, layout=pad8>, !smem.mbarrier<stages=2, arrivals=1>
  hbm.return
}
// CHECK: smem.tma_copy: TMA copies here fill 128-byte swizzled buffers (layout=swizzle), or an f32 vector into a plain one (layout=row), got !smem.buffer<m=128, k=64 : bf16, stages=2, layout=pad8>

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=128>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=300, k=64 : bf16>, %out: !hbm.global<m=300, k=64 : bf16>, %m0: index):
  %buf = smem.alloc : !smem.buffer<m=128, k=64 : bf16, stages=2, layout=swizzle>
  %full = smem.mbarrier_alloc : !smem.mbarrier<stages=3, arrivals=1>
  smem.tma_copy %a[%m0, %m0] -> %buf[%m0], %full[%m0] : !hbm.global<m=300, k=64 : bf16>, !smem.buffer<m=128, k=64 : bf16, stages=2, layout=swizzle>, !smem.mbarrier<stages=3, arrivals=1>
  hbm.return
}
// CHECK: smem.tma_copy: the buffer has 2 stages but the barrier ring 3

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=128>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=300, k=64 : bf16>, %out: !hbm.global<m=300, k=64 : bf16>, %m0: index):
  %full = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
  smem.arrive_expect %full[%m0] {bytes = 0 : i32} : !smem.mbarrier<stages=2, arrivals=1>
  hbm.return
}
// CHECK: smem.arrive_expect: expects between 1 byte and 1 MiB per phase, got 0

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=128>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=300, k=64 : bf16>, %out: !hbm.global<m=300, k=64 : bf16>, %m0: index):
  smem.producer attributes {warps = 2 : i32} {
    %z = arith.constant 0 : index
  }
  hbm.return
}
// CHECK: smem.producer: a producer is one warp or one warpgroup (4 warps), got 2

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=128>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=300, k=64 : bf16>, %out: !hbm.global<m=300, k=64 : bf16>, %m0: index):
  %buf = smem.alloc : !smem.buffer<m=128, k=64 : bf16, stages=2, layout=swizzle>
  smem.producer attributes {warps = 4 : i32} {
    %t = smem.read %buf[%m0] : !smem.buffer<m=128, k=64 : bf16, stages=2, layout=swizzle> -> !ncd.tensor<m=128, k=64 : bf16>
  }
  hbm.return
}
// CHECK: smem.producer: a producer only copies and waits; smem.read belongs to the consumers

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=128>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=300, k=64 : f32>, %out: !hbm.global<m=300, k=64 : f32>, %m0: index):
  %buf = smem.alloc : !smem.buffer<m=128, k=64 : f32, stages=2, layout=row>
  %full = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
  smem.tma_copy %a[%m0, %m0] -> %buf[%m0], %full[%m0] : !hbm.global<m=300, k=64 : f32>, !smem.buffer<m=128, k=64 : f32, stages=2, layout=row>, !smem.mbarrier<stages=2, arrivals=1>
  hbm.return
}
// CHECK: smem.tma_copy: TMA copies here fill 128-byte swizzled buffers (layout=swizzle), or an f32 vector into a plain one (layout=row), got !smem.buffer<m=128, k=64 : f32, stages=2, layout=row>

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=64>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=3, k=64 : bf16>, %out: !hbm.global<m=3, k=64 : bf16>, %m0: index):
  %buf = smem.alloc : !smem.buffer<m=64, k=64 : bf16, stages=2, layout=swizzle>
  %full = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
  smem.tma_copy %a[%m0, %m0] -> %buf[%m0], %full[%m0] {rows = 12 : i32} : !hbm.global<m=3, k=64 : bf16>, !smem.buffer<m=64, k=64 : bf16, stages=2, layout=swizzle>, !smem.mbarrier<stages=2, arrivals=1>
  hbm.return
}
// CHECK: smem.tma_copy: rows must be a multiple of 8 below the tile's 64 rows of a two-axis swizzled buffer, got 12

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=64>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=3, k=64 : bf16>, %out: !hbm.global<m=3, k=64 : bf16>, %m0: index):
  %buf = smem.alloc : !smem.buffer<m=64, k=64 : bf16, stages=2, layout=swizzle>
  %full = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
  smem.tma_copy %a[%m0, %m0] -> %buf[%m0], %full[%m0] {rows = 64 : i32} : !hbm.global<m=3, k=64 : bf16>, !smem.buffer<m=64, k=64 : bf16, stages=2, layout=swizzle>, !smem.mbarrier<stages=2, arrivals=1>
  hbm.return
}
// CHECK: smem.tma_copy: rows must be a multiple of 8 below the tile's 64 rows of a two-axis swizzled buffer, got 64
