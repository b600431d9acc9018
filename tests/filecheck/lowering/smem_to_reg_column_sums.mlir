// smem-to-reg on a kernel with no product that sums down its columns (a bias's gradient, the
// sum of dC's rows): the rows stream through shared memory, the block's 128 columns split over
// 2 warps of 64 (8 lanes a row, 4 rows at a time); each stage is read as the warp's `line`
// fragment, rows by the columns it lies along (whatever order the tile's axes were written in),
// summed down its columns by reg.col_reduce into a `line_col` fragment that the loop carries,
// and stored. Warps that split the rows would have to add across warps: refused.
// RUN: napkin-opt %s -p 'smem-to-reg{warps="n:2"}' | filecheck %s
// RUN: not napkin-opt %s -p 'smem-to-reg{warps="m:2,n:2"}' 2>&1 | filecheck %s --check-prefix=ROWS

// CHECK-LABEL: sym_name = "gemm_bias_grad_bias"
// CHECK-SAME:  reg.warps = #hbm.labels<n=2>
// CHECK:       [[Z:%.+]] = reg.fill {value = 0.000000e+00 : f32} : !reg.frag<line_col, n=64 : f32, span=64>
// CHECK:       scf.for {{.*}} iter_args([[ACC:%.+]] = [[Z]]) -> (!reg.frag<line_col, n=64 : f32, span=64>)
// CHECK:       [[X:%.+]] = reg.read %{{.+}} : !smem.buffer<m=32, n=128 : bf16, stages=3, layout=row> -> !reg.frag<line, m=32, n=64 : f32, span=64>
// CHECK-NEXT:  [[S:%.+]] = reg.col_reduce sum [[X]] : !reg.frag<line, m=32, n=64 : f32, span=64> -> !reg.frag<line_col, n=64 : f32, span=64>
// CHECK-NEXT:  [[A:%.+]] = reg.map add [[ACC]], [[S]]
// CHECK-NEXT:  scf.yield [[A]] : !reg.frag<line_col, n=64 : f32, span=64>
// CHECK:       reg.store %{{.+}}, %out[%n0] : !reg.frag<line_col, n=64 : f32, span=64>, !hbm.global<n=200 : f32>
// CHECK-NOT:   ncd.
// ROWS: smem-to-reg: @gemm_bias_grad_bias: warps may share only the columns ('n') of a kernel with no product: a warp holds its columns whole, and a reduction along 'm' stays within it
hbm.kernel attributes {sym_name = "gemm_bias_grad_bias", grid = #hbm.labels<n=128>, num_outputs = 1 : i32} {
^bb0(%d_o: !hbm.global<m=100, n=200 : bf16>, %out: !hbm.global<n=200 : f32>, %n0: index):
  %c0 = arith.constant 0 : index
  %0 = hbm.fill {value = 0.000000e+00 : f32} : !ncd.tensor<n=128 : f32>
  %1 = arith.constant 32 : index
  %2 = arith.constant 100 : index
  %3 = smem.alloc : !smem.buffer<m=32, n=128 : bf16, stages=3, layout=row>
  %4 = arith.constant 0 : index
  %5 = arith.constant 0 : index
  smem.copy %d_o[%4, %n0] -> %3[%5] : !hbm.global<m=100, n=200 : bf16>, !smem.buffer<m=32, n=128 : bf16, stages=3, layout=row>
  smem.commit
  %6 = arith.constant 32 : index
  %7 = arith.constant 1 : index
  smem.copy %d_o[%6, %n0] -> %3[%7] : !hbm.global<m=100, n=200 : bf16>, !smem.buffer<m=32, n=128 : bf16, stages=3, layout=row>
  smem.commit
  %8 = scf.for %m0 = %c0 to %2 step %1 iter_args(%acc = %0) -> (!ncd.tensor<n=128 : f32>) {
    %9 = arith.constant 32 : index
    %10 = arith.constant 3 : index
    %11 = arith.constant 64 : index
    %12 = arith.constant 2 : index
    %13 = arith.divui %m0, %9 : index
    %14 = arith.remui %13, %10 : index
    smem.wait {pending = 1 : i32}
    smem.barrier
    %d_o_tile = smem.read %3[%14] : !smem.buffer<m=32, n=128 : bf16, stages=3, layout=row> -> !ncd.tensor<m=32, n=128 : bf16>
    %15 = arith.addi %m0, %11 : index
    %16 = arith.addi %13, %12 : index
    %17 = arith.remui %16, %10 : index
    smem.copy %d_o[%15, %n0] -> %3[%17] : !hbm.global<m=100, n=200 : bf16>, !smem.buffer<m=32, n=128 : bf16, stages=3, layout=row>
    smem.commit
    %d_o_1 = ncd.map cast %d_o_tile : !ncd.tensor<m=32, n=128 : bf16> -> !ncd.tensor<n=128, m=32 : f32>
    %18 = ncd.reduce sum %d_o_1 along [m] : !ncd.tensor<n=128, m=32 : f32> -> !ncd.tensor<n=128 : f32>
    %acc_new = ncd.map add %acc, %18 : !ncd.tensor<n=128 : f32>, !ncd.tensor<n=128 : f32> -> !ncd.tensor<n=128 : f32>
    scf.yield %acc_new : !ncd.tensor<n=128 : f32>
  } {hbm.stream = #hbm.stream<m>, smem.pipeline = #smem.pipeline<stages=3, copy=cp_async>}
  smem.wait {pending = 0 : i32}
  hbm.store %8, %out[%n0] : !ncd.tensor<n=128 : f32>, !hbm.global<n=200 : f32>
  hbm.return
}
