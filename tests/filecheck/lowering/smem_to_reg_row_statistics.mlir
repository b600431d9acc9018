// smem-to-reg on a kernel with no product that reads a statistic of its rows (the forward's
// log-sum-exp, as a row softmax's gradient does): the vector left in global memory becomes a
// reg.load of a `line` fragment of the rows alone, of the tile's span (rows of 64 columns: 8
// lanes a row), broadcast along the columns by reg.map; or mapped on its own, a row vector.
// RUN: napkin-opt %s -p 'smem-to-reg{warps="i:2"}' | filecheck %s

// CHECK-LABEL: sym_name = "rows_minus_lse"
// CHECK:       [[X:%.+]] = reg.read %0[%1] : !smem.buffer<i=16, j=64 : bf16, stages=1, layout=row> -> !reg.frag<line, i=8, j=64 : f32, span=64>
// CHECK-NEXT:  [[L:%.+]] = reg.load %lse[%i0] : !hbm.global<i=36 : f32> -> !reg.frag<line, i=8 : f32, span=64>
// CHECK-NEXT:  reg.map sub [[X]], [[L]] : !reg.frag<line, i=8, j=64 : f32, span=64>, !reg.frag<line, i=8 : f32, span=64> -> !reg.frag<line, i=8, j=64 : f32, span=64>
// CHECK-NOT:   ncd.
hbm.kernel attributes {sym_name = "rows_minus_lse", grid = #hbm.labels<i=16>, num_outputs = 1 : i32} {
^bb0(%x: !hbm.global<i=36, j=64 : bf16>, %lse: !hbm.global<i=36 : f32>, %out: !hbm.global<i=36, j=64 : bf16>, %i0: index):
  %c0 = arith.constant 0 : index
  %0 = smem.alloc : !smem.buffer<i=16, j=64 : bf16, stages=1, layout=row>
  %1 = arith.constant 0 : index
  smem.copy %x[%i0, %c0] -> %0[%1] : !hbm.global<i=36, j=64 : bf16>, !smem.buffer<i=16, j=64 : bf16, stages=1, layout=row>
  smem.commit
  smem.wait {pending = 0 : i32}
  smem.barrier
  %x_tile = smem.read %0[%1] : !smem.buffer<i=16, j=64 : bf16, stages=1, layout=row> -> !ncd.tensor<i=16, j=64 : bf16>
  %x32 = ncd.map cast %x_tile : !ncd.tensor<i=16, j=64 : bf16> -> !ncd.tensor<i=16, j=64 : f32>
  %lse_tile = hbm.load %lse[%i0] : !hbm.global<i=36 : f32> -> !ncd.tensor<i=16 : f32>
  %2 = ncd.map sub %x32, %lse_tile : !ncd.tensor<i=16, j=64 : f32>, !ncd.tensor<i=16 : f32> -> !ncd.tensor<i=16, j=64 : f32>
  %p = ncd.map exp %2 : !ncd.tensor<i=16, j=64 : f32> -> !ncd.tensor<i=16, j=64 : f32>
  %o = ncd.map cast %p : !ncd.tensor<i=16, j=64 : f32> -> !ncd.tensor<i=16, j=64 : bf16>
  hbm.store %o, %out[%i0, %c0] : !ncd.tensor<i=16, j=64 : bf16>, !hbm.global<i=36, j=64 : bf16>
  hbm.return
}

// A statistic mapped on its own, a row vector of the kernel's (the attention gradient's
// log-sum-exp in base 2, written beside D = rowsum(dO * O)): the same `line` fragment of the
// rows, scaled and stored as the row sum is.
// CHECK-LABEL: sym_name = "sum_and_lse_log2"
// CHECK:       [[S:%.+]] = reg.row_reduce sum {{%.+}} : !reg.frag<line, i=8, j=64 : f32, span=64> -> !reg.frag<line, i=8 : f32, span=64>
// CHECK-NEXT:  [[L:%.+]] = reg.load %lse[%i0] : !hbm.global<i=36 : f32> -> !reg.frag<line, i=8 : f32, span=64>
// CHECK-NEXT:  [[L2:%.+]] = reg.map scale [[L]] by 1.44269{{.*}} : !reg.frag<line, i=8 : f32, span=64> -> !reg.frag<line, i=8 : f32, span=64>
// CHECK-NEXT:  reg.store [[S]], %out0[%i0]
// CHECK-NEXT:  reg.store [[L2]], %out1[%i0]
// CHECK-NOT:   ncd.
hbm.kernel attributes {sym_name = "sum_and_lse_log2", grid = #hbm.labels<i=16>, num_outputs = 2 : i32} {
^bb0(%x: !hbm.global<i=36, j=64 : bf16>, %lse: !hbm.global<i=36 : f32>, %out0: !hbm.global<i=36 : f32>, %out1: !hbm.global<i=36 : f32>, %i0: index):
  %c0 = arith.constant 0 : index
  %0 = smem.alloc : !smem.buffer<i=16, j=64 : bf16, stages=1, layout=row>
  %1 = arith.constant 0 : index
  smem.copy %x[%i0, %c0] -> %0[%1] : !hbm.global<i=36, j=64 : bf16>, !smem.buffer<i=16, j=64 : bf16, stages=1, layout=row>
  smem.commit
  smem.wait {pending = 0 : i32}
  smem.barrier
  %x_tile = smem.read %0[%1] : !smem.buffer<i=16, j=64 : bf16, stages=1, layout=row> -> !ncd.tensor<i=16, j=64 : bf16>
  %x32 = ncd.map cast %x_tile : !ncd.tensor<i=16, j=64 : bf16> -> !ncd.tensor<i=16, j=64 : f32>
  %s = ncd.reduce sum %x32 along [j] : !ncd.tensor<i=16, j=64 : f32> -> !ncd.tensor<i=16 : f32>
  %lse_tile = hbm.load %lse[%i0] : !hbm.global<i=36 : f32> -> !ncd.tensor<i=16 : f32>
  %lse_log2 = ncd.map scale %lse_tile by 1.4426950408889634 : !ncd.tensor<i=16 : f32> -> !ncd.tensor<i=16 : f32>
  hbm.store %s, %out0[%i0] : !ncd.tensor<i=16 : f32>, !hbm.global<i=36 : f32>
  hbm.store %lse_log2, %out1[%i0] : !ncd.tensor<i=16 : f32>, !hbm.global<i=36 : f32>
  hbm.return
}
