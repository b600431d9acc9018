// reg-to-ptx's rules for `line` fragments of rows shorter than 256 columns, from a
// hand-written register-level row softmax over 64 columns with its row sums: a row lies
// across 8 lanes (span 64), 4 rows a warp at a time, so each lane's base is its row among
// the 4 (lane / 8) and its 16 bytes in the row (lane mod 8); reg.read is one
// ld.shared.v4.b32 a lane per 4 rows (the next 4 rows 512 bytes on, in the immediate);
// the row max and sum shuffle only within the 8 lanes of a row (butterflies 4, 2, 1); the
// store packs bf16 pairs into one st.global.v4.b32 a lane per 4 rows, guarded where the
// rows (36, in blocks of 32) end; the row sums leave from the first lane of each row. The
// same kernel over 128 columns (span 128) shuffles 8, 4, 2, 1 and reads 2 rows at a time.
// RUN: napkin-opt %s -p reg-to-ptx -t ptx | filecheck %s
// RUN: sed -e 's/j=64/j=128/g' -e 's/span=64/span=128/g' %s | napkin-opt -p reg-to-ptx -t ptx | filecheck %s --check-prefix=S128

// CHECK:      .target sm_80
// CHECK:      .reqntid 128
// CHECK:      cp.async.cg.shared.global
// CHECK:      and.b32 [[LANE:%r[0-9]+]], %r{{[0-9]+}}, [[C31:%r[0-9]+]];
// CHECK:      shr.u32 [[SLOT:%r[0-9]+]], [[LANE]], [[C3:%r[0-9]+]];
// CHECK:      and.b32 [[PLACE:%r[0-9]+]], [[LANE]], [[C7:%r[0-9]+]];
// CHECK:      mul.lo.u32 [[CHUNK:%r[0-9]+]], [[PLACE]], [[C16:%r[0-9]+]];
// CHECK:      mul.lo.u32 [[ROW:%r[0-9]+]], [[SLOT]], [[C128:%r[0-9]+]];
// CHECK:      add.u32 {{%r[0-9]+}}, [[CHUNK]], [[ROW]];
// CHECK:      ld.shared.v4.b32 {[[W:%r[0-9]+]], {{%r[0-9]+}}, {{%r[0-9]+}}, {{%r[0-9]+}}}, [[[A:%r[0-9]+]]];
// CHECK-NEXT: mov.b32 {[[H:%bh[0-9]+]], {{%bh[0-9]+}}}, [[W]];
// CHECK-NEXT: cvt.f32.bf16 {{%f[0-9]+}}, [[H]];
// CHECK:      ld.shared.v4.b32 {{.*}}, [[[A]]+512];
// CHECK-NOT:  ld.shared
// CHECK:      max.f32
// CHECK-NOT:  shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 16,
// CHECK-NOT:  shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 8,
// CHECK:      shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 4, 31, 0xffffffff;
// CHECK:      shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 2, 31, 0xffffffff;
// CHECK:      shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 1, 31, 0xffffffff;
// CHECK:      fma.rn.f32
// CHECK:      ex2.approx.ftz.f32
// CHECK:      add.f32
// CHECK-NOT:  shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 8,
// CHECK:      shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 4, 31, 0xffffffff;
// CHECK:      rcp.approx.ftz.f32
// CHECK:      mul.f32
// CHECK:      add.u32 [[LROW:%r[0-9]+]], {{%r[0-9]+}}, [[SLOT]];
// CHECK:      mul.lo.u32 [[LCOL:%r[0-9]+]], [[PLACE]], {{%r[0-9]+}};
// CHECK:      cvt.rn.bf16x2.f32
// CHECK:      @[[ROW0:%p[0-9]+]] st.global.v4.b32 [[[O:%rd[0-9]+]]], {{{%bhh[0-9]+}}, {{%bhh[0-9]+}}, {{%bhh[0-9]+}}, {{%bhh[0-9]+}}};
// CHECK:      @{{%p[0-9]+}} st.global.v4.b32 [[[O]]+512],
// CHECK-NOT:  st.global.v4
// CHECK:      setp.eq.u32 [[FIRST:%p[0-9]+]], [[PLACE]],
// CHECK:      and.pred [[OK:%p[0-9]+]], [[FIRST]],
// CHECK:      @[[OK]] st.global.f32 [[[S:%rd[0-9]+]]],
// CHECK:      st.global.f32 [[[S]]+16],
// CHECK:      ret;

// S128:      .target sm_80
// S128:      ld.shared.v4.b32 {{.*}}, [[[A:%r[0-9]+]]];
// S128:      ld.shared.v4.b32 {{.*}}, [[[A]]+512];
// S128:      ld.shared.v4.b32 {{.*}}, [[[A]]+1024];
// S128:      ld.shared.v4.b32 {{.*}}, [[[A]]+1536];
// S128-NOT:  ld.shared
// S128-NOT:  shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 16,
// S128:      shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 8, 31, 0xffffffff;
// S128:      shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 4, 31, 0xffffffff;
// S128:      shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 2, 31, 0xffffffff;
// S128:      shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 1, 31, 0xffffffff;
// S128:      st.global.v4.b32 [[[O:%rd[0-9]+]]],
// S128:      st.global.v4.b32 [[[O]]+512],
// S128:      st.global.v4.b32 [[[O]]+1024],
// S128:      st.global.v4.b32 [[[O]]+1536],
// S128:      st.global.f32 [[[S:%rd[0-9]+]]],
// S128:      st.global.f32 [[[S]]+8],
// S128:      st.global.f32 [[[S]]+16],
// S128:      st.global.f32 [[[S]]+24],
hbm.kernel attributes {sym_name = "row_softmax", grid = #hbm.labels<i=32>, num_outputs = 2 : i32, reg.warps = #hbm.labels<i=4>} {
^bb0(%x: !hbm.global<i=36, j=64 : bf16>, %out: !hbm.global<i=36, j=64 : bf16>, %sums: !hbm.global<i=36 : f32>, %i0: index):
  %c0 = arith.constant 0 : index
  %buf = smem.alloc : !smem.buffer<i=32, j=64 : bf16, stages=1, layout=row>
  %s = arith.constant 0 : index
  smem.copy %x[%i0, %c0] -> %buf[%s] : !hbm.global<i=36, j=64 : bf16>, !smem.buffer<i=32, j=64 : bf16, stages=1, layout=row>
  smem.commit
  smem.wait {pending = 0 : i32}
  smem.barrier
  %a = reg.read %buf[%s] : !smem.buffer<i=32, j=64 : bf16, stages=1, layout=row> -> !reg.frag<line, i=8, j=64 : f32, span=64>
  %y = reg.map scale %a by 1.4426950216293335 : !reg.frag<line, i=8, j=64 : f32, span=64> -> !reg.frag<line, i=8, j=64 : f32, span=64>
  %m = reg.row_reduce max %y : !reg.frag<line, i=8, j=64 : f32, span=64> -> !reg.frag<line, i=8 : f32, span=64>
  %d = reg.map sub %y, %m : !reg.frag<line, i=8, j=64 : f32, span=64>, !reg.frag<line, i=8 : f32, span=64> -> !reg.frag<line, i=8, j=64 : f32, span=64>
  %e = reg.map exp2 %d : !reg.frag<line, i=8, j=64 : f32, span=64> -> !reg.frag<line, i=8, j=64 : f32, span=64>
  %l = reg.row_reduce sum %e : !reg.frag<line, i=8, j=64 : f32, span=64> -> !reg.frag<line, i=8 : f32, span=64>
  %p = reg.map div %e, %l : !reg.frag<line, i=8, j=64 : f32, span=64>, !reg.frag<line, i=8 : f32, span=64> -> !reg.frag<line, i=8, j=64 : f32, span=64>
  reg.store %p, %out[%i0, %c0] : !reg.frag<line, i=8, j=64 : f32, span=64>, !hbm.global<i=36, j=64 : bf16>
  reg.store %l, %sums[%i0] : !reg.frag<line, i=8 : f32, span=64>, !hbm.global<i=36 : f32>
  hbm.return
}
