// reg-to-ptx's rule for reg.load of a `line` fragment of one axis (a statistic of the rows of a
// kernel with no product): rows of 64 columns lie across 8 lanes, 4 rows at a time, so each
// lane reads the f32 value of its row (lane / 8, past the warp's first row) and of the row 4
// further on, from one base register, the second at +16 bytes; rows past the global's edge
// (36 rows, in blocks of 16) are not read.
// RUN: napkin-opt %s -p reg-to-ptx -t ptx | filecheck %s

// CHECK:      .entry rows_minus_lse
// CHECK:      shr.u32 [[SLOT:%r[0-9]+]], {{%r[0-9]+}}, {{%r[0-9]+}};
// CHECK:      @{{%p[0-9]+}} ld.global.f32 {{%f[0-9]+}}, [[[L:%rd[0-9]+]]];
// CHECK:      @{{%p[0-9]+}} ld.global.f32 {{%f[0-9]+}}, [[[L]]+16];
// CHECK-NOT:  ld.global
// CHECK:      ex2.approx.ftz.f32
  hbm.kernel attributes {sym_name = "rows_minus_lse", grid = #hbm.labels<i=16>, num_outputs = 1 : i32, reg.warps = #hbm.labels<i=2>} {
  ^bb0(%x: !hbm.global<i=36, j=64 : bf16>, %lse: !hbm.global<i=36 : f32>, %out: !hbm.global<i=36, j=64 : bf16>, %i0: index):
    %c0 = arith.constant 0 : index
    %0 = smem.alloc : !smem.buffer<i=16, j=64 : bf16, stages=1, layout=row>
    %1 = arith.constant 0 : index
    smem.copy %x[%i0, %c0] -> %0[%1] : !hbm.global<i=36, j=64 : bf16>, !smem.buffer<i=16, j=64 : bf16, stages=1, layout=row>
    smem.commit
    smem.wait {pending = 0 : i32}
    smem.barrier
    %2 = reg.read %0[%1] : !smem.buffer<i=16, j=64 : bf16, stages=1, layout=row> -> !reg.frag<line, i=8, j=64 : f32, span=64>
    %3 = reg.load %lse[%i0] : !hbm.global<i=36 : f32> -> !reg.frag<line, i=8 : f32, span=64>
    %4 = reg.map sub %2, %3 : !reg.frag<line, i=8, j=64 : f32, span=64>, !reg.frag<line, i=8 : f32, span=64> -> !reg.frag<line, i=8, j=64 : f32, span=64>
    %5 = reg.map scale %4 by 1.4426950216293335 : !reg.frag<line, i=8, j=64 : f32, span=64> -> !reg.frag<line, i=8, j=64 : f32, span=64>
    %6 = reg.map exp2 %5 : !reg.frag<line, i=8, j=64 : f32, span=64> -> !reg.frag<line, i=8, j=64 : f32, span=64>
    reg.store %6, %out[%i0, %c0] : !reg.frag<line, i=8, j=64 : f32, span=64>, !hbm.global<i=36, j=64 : bf16>
    hbm.return
  }
