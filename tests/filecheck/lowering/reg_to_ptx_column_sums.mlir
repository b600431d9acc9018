// reg-to-ptx's rules for a sum down the columns (a bias's gradient), from the register level of
// a kernel whose 2 warps split the block's 128 columns, 64 each (8 lanes a row, 4 rows at a
// time): reg.read moves each lane's base by its warp's first column (2 bytes a column) and reads
// one ld.shared.v4.b32 a row step (rows of 256 bytes, 4 a step: 1024 bytes apart);
// reg.col_reduce adds each column's values of the lane's 8 row steps as a tree, then across the
// lanes of the other 3 row slots (butterflies 16 and 8); the `line_col` result leaves from the
// lanes of the first row slot, 8 f32 columns a lane in two st.global.v4.f32, guarded where the
// 200 columns end.
// RUN: napkin-opt %s -p reg-to-ptx -t ptx | filecheck %s

// CHECK:      .entry gemm_bias_grad_bias
// CHECK:      setp.eq.u32 [[SLOT0:%p[0-9]+]],
// CHECK:      cp.async.cg.shared.global
// CHECK:      ld.shared.v4.b32 {{.*}}, [[[A:%r[0-9]+]]];
// CHECK:      ld.shared.v4.b32 {{.*}}, [[[A]]+1024];
// CHECK:      ld.shared.v4.b32 {{.*}}, [[[A]]+7168];
// CHECK-NOT:  ld.shared
// CHECK:      add.f32
// CHECK:      shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 16, 31, 0xffffffff;
// CHECK-NEXT: add.f32
// CHECK-NEXT: shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 8, 31, 0xffffffff;
// CHECK-NOT:  shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 4,
// CHECK:      and.pred [[OK:%p[0-9]+]], [[SLOT0]],
// CHECK-NEXT: @[[OK]] st.global.v4.f32 [[[O:%rd[0-9]+]]], {{{%f[0-9]+}}, {{%f[0-9]+}}, {{%f[0-9]+}}, {{%f[0-9]+}}};
// CHECK-NEXT: @[[OK]] st.global.v4.f32 [[[O]]+16],
hbm.kernel attributes {sym_name = "gemm_bias_grad_bias", grid = #hbm.labels<n=128>, num_outputs = 1 : i32, reg.warps = #hbm.labels<n=2>} {
^bb0(%d_o: !hbm.global<m=100, n=200 : bf16>, %out: !hbm.global<n=200 : f32>, %n0: index):
  %c0 = arith.constant 0 : index
  %0 = reg.fill {value = 0.000000e+00 : f32} : !reg.frag<line_col, n=64 : f32, span=64>
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
  %8 = scf.for %m0 = %c0 to %2 step %1 iter_args(%acc = %0) -> (!reg.frag<line_col, n=64 : f32, span=64>) {
    %9 = arith.constant 32 : index
    %10 = arith.constant 3 : index
    %11 = arith.constant 64 : index
    %12 = arith.constant 2 : index
    %13 = arith.divui %m0, %9 : index
    %14 = arith.remui %13, %10 : index
    smem.wait {pending = 1 : i32}
    smem.barrier
    %15 = arith.addi %m0, %11 : index
    %16 = arith.addi %13, %12 : index
    %17 = arith.remui %16, %10 : index
    smem.copy %d_o[%15, %n0] -> %3[%17] : !hbm.global<m=100, n=200 : bf16>, !smem.buffer<m=32, n=128 : bf16, stages=3, layout=row>
    smem.commit
    %18 = reg.read %3[%14] : !smem.buffer<m=32, n=128 : bf16, stages=3, layout=row> -> !reg.frag<line, m=32, n=64 : f32, span=64>
    %19 = reg.col_reduce sum %18 : !reg.frag<line, m=32, n=64 : f32, span=64> -> !reg.frag<line_col, n=64 : f32, span=64>
    %20 = reg.map add %acc, %19 : !reg.frag<line_col, n=64 : f32, span=64>, !reg.frag<line_col, n=64 : f32, span=64> -> !reg.frag<line_col, n=64 : f32, span=64>
    scf.yield %20 : !reg.frag<line_col, n=64 : f32, span=64>
  } {hbm.stream = #hbm.stream<m>, smem.pipeline = #smem.pipeline<stages=3, copy=cp_async>}
  smem.wait {pending = 0 : i32}
  reg.store %8, %out[%n0] : !reg.frag<line_col, n=64 : f32, span=64>, !hbm.global<n=200 : f32>
  hbm.return
}
