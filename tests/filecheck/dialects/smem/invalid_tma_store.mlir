// RUN: napkin-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=128, n=256>, num_outputs = 1 : i32} {
^bb0(%out: !hbm.global<m=512, n=384 : bf16>, %m0: index, %n0: index):
  %t = hbm.fill {value = 1.000000e+00 : f32} : !ncd.tensor<m=128, n=256 : f32>
  %c = smem.alloc : !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>
  smem.write %t -> %c[%m0] {at = #hbm.labels<n=0>} : !ncd.tensor<m=128, n=256 : f32>, !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>
  hbm.return
}
// CHECK: smem.write: writes f32 into a buffer of bf16; cast first

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=128, n=256>, num_outputs = 1 : i32} {
^bb0(%out: !hbm.global<m=512, n=384 : bf16>, %m0: index, %n0: index):
  %t = hbm.fill {value = 1.000000e+00 : f32} : !ncd.tensor<m=128, n=256 : bf16>
  %c = smem.alloc : !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>
  smem.write %t -> %c[%m0] {at = #hbm.labels<n=224>} : !ncd.tensor<m=128, n=256 : bf16>, !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>
  hbm.return
}
// CHECK: smem.write: a window of 64 at 224 along 'n' does not fit the tile's 256

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=128, n=256>, num_outputs = 1 : i32} {
^bb0(%out: !hbm.global<m=512, n=384 : bf16>, %m0: index, %n0: index):
  %t = hbm.fill {value = 1.000000e+00 : f32} : !ncd.tensor<k=256, m=128 : bf16>
  %c = smem.alloc : !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>
  smem.write %t -> %c[%m0] {at = #hbm.labels<n=0>} : !ncd.tensor<k=256, m=128 : bf16>, !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>
  hbm.return
}
// CHECK: smem.write: the tile's axes ['k', 'm'] must be the buffer's ['m', 'n'], in some order

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=128, n=256>, num_outputs = 1 : i32} {
^bb0(%out: !hbm.global<m=512, n=384 : bf16>, %m0: index, %n0: index):
  %c = smem.alloc : !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>
  smem.tma_store %c[%m0] -> %out[%m0, %n0] {accumulate} : !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>, !hbm.global<m=512, n=384 : bf16>
  hbm.return
}
// CHECK: smem.tma_store: accumulate adds into an f32 global (partial sums rounded to bf16 would not add up)

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=128, n=256>, num_outputs = 1 : i32} {
^bb0(%out: !hbm.global<m=512, n=384 : bf16>, %m0: index, %n0: index):
  %t = hbm.fill {value = 1.000000e+00 : f32} : !ncd.tensor<m=128, n=256 : bf16>
  %c = smem.alloc : !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>
  smem.write %t -> %c[%m0] {at = #hbm.labels<k=0>} : !ncd.tensor<m=128, n=256 : bf16>, !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>
  hbm.return
}
// CHECK: smem.write: `at` names 'k', which the tile lacks

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=128, n=256>, num_outputs = 1 : i32} {
^bb0(%out: !hbm.global<m=512, n=384 : bf16>, %m0: index, %n0: index):
  %c = smem.alloc : !smem.buffer<m=128, n=64 : bf16, stages=2, layout=row>
  smem.tma_store %c[%m0] -> %out[%m0, %n0] : !smem.buffer<m=128, n=64 : bf16, stages=2, layout=row>, !hbm.global<m=512, n=384 : bf16>
  hbm.return
}
// CHECK: smem.tma_store: TMA stores here read 128-byte swizzled buffers (layout=swizzle), got layout=row

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=128, n=256>, num_outputs = 1 : i32} {
^bb0(%out: !hbm.global<m=512, n=384 : f16>, %m0: index, %n0: index):
  %c = smem.alloc : !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>
  smem.tma_store %c[%m0] -> %out[%m0, %n0] : !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>, !hbm.global<m=512, n=384 : f16>
  hbm.return
}
// CHECK: smem.tma_store: the buffer's element type bf16 differs from the global's f16

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=128, n=256>, num_outputs = 1 : i32} {
^bb0(%out: !hbm.global<m=512, n=384 : bf16>, %m0: index, %n0: index):
  %c = smem.alloc : !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>
  smem.tma_store %c[%m0] -> %out[%m0] : !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>, !hbm.global<m=512, n=384 : bf16>
  hbm.return
}
// CHECK: smem.tma_store: takes one offset per axis of the global (2), got 1

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=128, n=256>, num_outputs = 1 : i32} {
^bb0(%out: !hbm.global<m=512, n=384 : bf16>, %m0: index, %n0: index):
  smem.tma_store_wait {pending = 8 : i32}
  hbm.return
}
// CHECK: smem.tma_store_wait: pending must be in 0..7, got 8

// -----
// a store role runs on the producer warpgroup's second warp: without a producer, none
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<i=64>, num_outputs = 1 : i32} {
^bb0(%dq: !hbm.global<i=1000, d=128 : f32>, %i0: index):
  smem.storer {
    %z = arith.constant 0 : index
  }
  hbm.return
}
// CHECK: smem.storer: a store role runs on the producer warpgroup's second warp: the kernel needs an smem.producer beside it

// -----
// a store role only waits, stores and arrives: the consumers write the stages
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<i=64>, num_outputs = 1 : i32} {
^bb0(%dq: !hbm.global<i=1000, d=128 : f32>, %i0: index):
  %s = arith.constant 1 : index
  %q = hbm.fill {value = 1.000000e+00 : f32} : !ncd.tensor<d=128, i=64 : f32>
  %p = smem.alloc : !smem.buffer<i=64, d=128 : f32, stages=2, layout=swizzle>
  smem.producer attributes {warps = 4 : i32} {
    %z = arith.constant 0 : index
  }
  smem.storer {
    smem.write %q -> %p[%s] {at = #hbm.labels<>} : !ncd.tensor<d=128, i=64 : f32>, !smem.buffer<i=64, d=128 : f32, stages=2, layout=swizzle>
  }
  hbm.return
}
// CHECK: smem.storer: a store role only waits, stores and arrives; smem.write belongs to another role

// -----
// nor does it meet the consumers
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<i=64>, num_outputs = 1 : i32} {
^bb0(%dq: !hbm.global<i=1000, d=128 : f32>, %i0: index):
  smem.producer attributes {warps = 4 : i32} {
    %z = arith.constant 0 : index
  }
  smem.storer {
    smem.tma_store_wait {pending = 0 : i32}
    smem.barrier
  }
  hbm.return
}
// CHECK: smem.storer: a store role only waits, stores and arrives; smem.barrier belongs to another role

// -----
// a store role runs beside the producer, not in it
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<i=64>, num_outputs = 1 : i32} {
^bb0(%dq: !hbm.global<i=1000, d=128 : f32>, %i0: index):
  smem.producer attributes {warps = 4 : i32} {
    smem.storer {
      %y = arith.constant 0 : index
    }
  }
  hbm.return
}
// CHECK: smem.storer: a store role runs on the producer warpgroup's second warp: the kernel needs an smem.producer beside it
