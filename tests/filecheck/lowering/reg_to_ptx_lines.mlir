// reg-to-ptx's rules for `line` fragments (a kernel with no product), from a hand-written
// register-level row softmax with its row sums: reg.read is one ld.shared.v4.b32 a lane per
// 256 columns of a row (the span and row in immediates) and its pairs widened to f32; the
// row max and sum are a tree in the lane and butterfly shuffles 16, 8, 4, 2, 1; exp2 of the
// scaled difference is one fma and one ex2; the division a reciprocal and a product; the
// store packs bf16 pairs into one st.global.v4.b32 a lane per span, guarded where the rows
// (36, in blocks of 8) end; the row sums leave from lane 0. The same module prints for
// sm_90a when the printer is asked to.
// RUN: napkin-opt %s -p reg-to-ptx -t ptx | filecheck %s
// RUN: napkin-opt %s -p reg-to-ptx -t "ptx{arch=sm_90a}" | filecheck %s --check-prefix=SM90

// CHECK:      .target sm_80
// CHECK:      .reqntid 128
// CHECK:      cp.async.cg.shared.global
// CHECK:      ld.shared.v4.b32 {[[W:%r[0-9]+]], {{%r[0-9]+}}, {{%r[0-9]+}}, {{%r[0-9]+}}}, [[[A:%r[0-9]+]]];
// CHECK-NEXT: mov.b32 {[[H:%bh[0-9]+]], {{%bh[0-9]+}}}, [[W]];
// CHECK-NEXT: cvt.f32.bf16 {{%f[0-9]+}}, [[H]];
// CHECK:      ld.shared.v4.b32 {{.*}}, [[[A]]+512];
// CHECK:      ld.shared.v4.b32 {{.*}}, [[[A]]+1024];
// CHECK:      ld.shared.v4.b32 {{.*}}, [[[A]]+1536];
// CHECK-NOT:  ld.shared
// CHECK:      max.f32
// CHECK:      shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 16, 31, 0xffffffff;
// CHECK:      shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 8, 31, 0xffffffff;
// CHECK:      shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 4, 31, 0xffffffff;
// CHECK:      shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 2, 31, 0xffffffff;
// CHECK:      shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 1, 31, 0xffffffff;
// CHECK:      fma.rn.f32
// CHECK:      ex2.approx.ftz.f32
// CHECK:      add.f32
// CHECK:      shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 16, 31, 0xffffffff;
// CHECK:      rcp.approx.ftz.f32
// CHECK:      mul.f32
// CHECK:      cvt.rn.bf16x2.f32
// CHECK:      @[[ROW0:%p[0-9]+]] st.global.v4.b32 [[[O:%rd[0-9]+]]], {{{%bhh[0-9]+}}, {{%bhh[0-9]+}}, {{%bhh[0-9]+}}, {{%bhh[0-9]+}}};
// CHECK:      @[[ROW0]] st.global.v4.b32 [[[O]]+512],
// CHECK:      @{{%p[0-9]+}} st.global.v4.b32 [[[O]]+1024],
// CHECK:      @{{%p[0-9]+}} st.global.v4.b32 [[[O]]+1536],
// CHECK:      setp.eq.u32 [[LANE0:%p[0-9]+]],
// CHECK:      st.global.f32 [{{%rd[0-9]+}}],
// CHECK:      st.global.f32 [{{%rd[0-9]+}}+4],
// CHECK:      ret;

// SM90: .target sm_90a
// SM90: shfl.sync.bfly.b32
hbm.kernel attributes {sym_name = "row_softmax", grid = #hbm.labels<i=8>, num_outputs = 2 : i32, reg.warps = #hbm.labels<i=4>} {
^bb0(%x: !hbm.global<i=36, j=512 : bf16>, %out: !hbm.global<i=36, j=512 : bf16>, %sums: !hbm.global<i=36 : f32>, %i0: index):
  %c0 = arith.constant 0 : index
  %buf = smem.alloc : !smem.buffer<i=8, j=512 : bf16, stages=1, layout=row>
  %s = arith.constant 0 : index
  smem.copy %x[%i0, %c0] -> %buf[%s] : !hbm.global<i=36, j=512 : bf16>, !smem.buffer<i=8, j=512 : bf16, stages=1, layout=row>
  smem.commit
  smem.wait {pending = 0 : i32}
  smem.barrier
  %a = reg.read %buf[%s] : !smem.buffer<i=8, j=512 : bf16, stages=1, layout=row> -> !reg.frag<line, i=2, j=512 : f32>
  %y = reg.map scale %a by 1.4426950216293335 : !reg.frag<line, i=2, j=512 : f32> -> !reg.frag<line, i=2, j=512 : f32>
  %m = reg.row_reduce max %y : !reg.frag<line, i=2, j=512 : f32> -> !reg.frag<line, i=2 : f32>
  %d = reg.map sub %y, %m : !reg.frag<line, i=2, j=512 : f32>, !reg.frag<line, i=2 : f32> -> !reg.frag<line, i=2, j=512 : f32>
  %e = reg.map exp2 %d : !reg.frag<line, i=2, j=512 : f32> -> !reg.frag<line, i=2, j=512 : f32>
  %l = reg.row_reduce sum %e : !reg.frag<line, i=2, j=512 : f32> -> !reg.frag<line, i=2 : f32>
  %p = reg.map div %e, %l : !reg.frag<line, i=2, j=512 : f32>, !reg.frag<line, i=2 : f32> -> !reg.frag<line, i=2, j=512 : f32>
  reg.store %p, %out[%i0, %c0] : !reg.frag<line, i=2, j=512 : f32>, !hbm.global<i=36, j=512 : bf16>
  reg.store %l, %sums[%i0] : !reg.frag<line, i=2 : f32>, !hbm.global<i=36 : f32>
  hbm.return
}
