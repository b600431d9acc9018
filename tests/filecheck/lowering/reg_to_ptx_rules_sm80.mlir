// reg-to-ptx, one rule at a time, from hand-written register-level IR (what smem-to-reg
// gives for sm_80: cp.async, ldmatrix, mma.sync). One small kernel per rule of
// napkin_ir/lowering/ptx_rules/ (control, copies, products, fragments, stores, kernel);
// the sm_90a rules are in reg_to_ptx_rules_sm90.mlir.
// RUN: napkin-opt %s --split-input-file -p reg-to-ptx -t ptx | filecheck %s
// RUN: napkin-opt %s --split-input-file -p reg-to-ptx | filecheck %s --check-prefix=IR

// reg.zeros (fragments.py) is one register at 0.0; reg.store (stores.py) of a bf16 output
// whose 16-column rows are not whole lines: each lane's pairs rounded with cvt.rn.bf16x2
// and stored from one base register, the 8-column tiles 16 bytes apart and the rows g + 8
// 8 x 32 x 2 = 512 bytes on; hbm.return (kernel.py) is ret. Without wgmma or the TMA the
// target is sm_80 and a block is one warp per reg.warps place.
// CHECK-LABEL: .visible .entry store_bf16(
// CHECK-NEXT:  .param .u64 store_bf16_out
// CHECK:       .reqntid 32
// CHECK:       ld.param.u64 [[P:%rd[0-9]+]], [store_bf16_out];
// CHECK-NEXT:  cvta.to.global.u64 %rd{{[0-9]+}}, [[P]];
// CHECK:       mov.u32 %r{{[0-9]+}}, %ctaid.x;
// CHECK:       mov.u32 %r{{[0-9]+}}, %ctaid.y;
// CHECK:       mov.f32 [[Z:%f[0-9]+]], 0f00000000;
// CHECK:       add.u64 [[BASE:%rd[0-9]+]], %rd{{[0-9]+}}, %rd{{[0-9]+}};
// CHECK-NEXT:  cvt.rn.bf16x2.f32 [[H0:%bhh[0-9]+]], [[Z]], [[Z]];
// CHECK-NEXT:  st.global.b32 {{\[}}[[BASE]]], [[H0]];
// CHECK:       st.global.b32 {{\[}}[[BASE]]+16], %bhh{{[0-9]+}};
// CHECK:       st.global.b32 {{\[}}[[BASE]]+512], %bhh{{[0-9]+}};
// CHECK:       st.global.b32 {{\[}}[[BASE]]+528], %bhh{{[0-9]+}};
// CHECK-NEXT:  ret;
// CHECK-NEXT:  }
// IR: builtin.module attributes {ptx.target = "sm_80"}

builtin.module {
  hbm.kernel attributes {sym_name = "store_bf16", grid = #hbm.labels<m=16, n=16>, num_outputs = 1 : i32, reg.warps = #hbm.labels<m=1, n=1>} {
  ^bb0(%out: !hbm.global<m=32, n=32 : bf16>, %m0: index, %n0: index):
    %0 = reg.zeros : !reg.frag<c, m=16, n=16 : f32>
    reg.store %0, %out[%m0, %n0] : !reg.frag<c, m=16, n=16 : f32>, !hbm.global<m=32, n=32 : bf16>
    hbm.return
  }
}

// -----

// reg.fill: its value as a hex float; reg.store of an f32 output: st.global.v2.f32 pairs,
// 8 columns (32 bytes) and 8 rows (8 x 32 x 4 bytes) apart
// CHECK-LABEL: .visible .entry store_f32(
// CHECK:       mov.f32 [[ONE:%f[0-9]+]], 0f3F800000;
// CHECK:       add.u64 [[BASE:%rd[0-9]+]],
// CHECK-NEXT:  st.global.v2.f32 {{\[}}[[BASE]]], {[[ONE]], [[ONE]]};
// CHECK-NEXT:  st.global.v2.f32 {{\[}}[[BASE]]+32], {[[ONE]], [[ONE]]};
// CHECK-NEXT:  st.global.v2.f32 {{\[}}[[BASE]]+1024], {[[ONE]], [[ONE]]};
// CHECK-NEXT:  st.global.v2.f32 {{\[}}[[BASE]]+1056], {[[ONE]], [[ONE]]};
// CHECK-NOT:   cvt.rn.bf16x2

builtin.module {
  hbm.kernel attributes {sym_name = "store_f32", grid = #hbm.labels<m=16, n=16>, num_outputs = 1 : i32, reg.warps = #hbm.labels<m=1, n=1>} {
  ^bb0(%out: !hbm.global<m=32, n=32 : f32>, %m0: index, %n0: index):
    %0 = reg.fill {value = 1.0 : f32} : !reg.frag<c, m=16, n=16 : f32>
    reg.store %0, %out[%m0, %n0] : !reg.frag<c, m=16, n=16 : f32>, !hbm.global<m=32, n=32 : f32>
    hbm.return
  }
}

// -----

// reg.store of bf16 rows of whole 128-byte lines (64 columns) goes through shared memory:
// a barrier, st.shared of the rounded pairs, a barrier, then ld.shared.v4 and st.global.v4,
// 16 bytes a lane; the kernel takes the dynamic shared array for it
// CHECK:       .extern .shared .align 128 .b8 napkin_smem[];
// CHECK-LABEL: .visible .entry store_lines(
// CHECK:       bar.sync 0;
// CHECK:       cvt.rn.bf16x2.f32 [[H:%bhh[0-9]+]], %f{{[0-9]+}}, %f{{[0-9]+}};
// CHECK-NEXT:  st.shared.b32 [%r{{[0-9]+}}], [[H]];
// CHECK:       st.shared.b32 [%r{{[0-9]+}}+1024], %bhh{{[0-9]+}};
// CHECK:       bar.sync 0;
// CHECK:       ld.shared.v4.b32 {[[V0:%r[0-9]+]], [[V1:%r[0-9]+]], [[V2:%r[0-9]+]], [[V3:%r[0-9]+]]}, [%r{{[0-9]+}}];
// CHECK-NEXT:  st.global.v4.b32 [%rd{{[0-9]+}}], {[[V0]], [[V1]], [[V2]], [[V3]]};
// CHECK-NOT:   st.global.b32
// CHECK:       ret;

builtin.module {
  hbm.kernel attributes {sym_name = "store_lines", grid = #hbm.labels<m=16, n=64>, num_outputs = 1 : i32, reg.warps = #hbm.labels<m=1, n=1>} {
  ^bb0(%out: !hbm.global<m=32, n=64 : bf16>, %m0: index, %n0: index):
    %0 = reg.zeros : !reg.frag<c, m=16, n=64 : f32>
    reg.store %0, %out[%m0, %n0] : !reg.frag<c, m=16, n=64 : f32>, !hbm.global<m=32, n=64 : bf16>
    hbm.return
  }
}

// -----

// reg.row_reduce (max, then sum): the lane's values of a row, then butterfly shuffles
// across the quad (lanes 1 and 2 apart); reg.map scale is folded into what reads it
// (its max scaled after the reduction, an fma before ex2); sub by a row fragment and exp2:
// fma and ex2; div: a reciprocal per row and a multiply per value.
// CHECK-LABEL: .visible .entry frag_math(
// CHECK:       mov.f32 [[NINF:%f[0-9]+]], 0fFF800000;
// CHECK-NEXT:  mov.f32 [[X:%f[0-9]+]], 0f40000000;
// CHECK-NEXT:  max.f32 [[M0:%f[0-9]+]], [[X]], [[X]];
// CHECK-NEXT:  shfl.sync.bfly.b32 [[S1:%f[0-9]+]], [[M0]], 1, 31, 0xffffffff;
// CHECK-NEXT:  max.f32 [[M1:%f[0-9]+]], [[M0]], [[S1]];
// CHECK-NEXT:  shfl.sync.bfly.b32 [[S2:%f[0-9]+]], [[M1]], 2, 31, 0xffffffff;
// CHECK-NEXT:  max.f32 [[ROWMAX:%f[0-9]+]], [[M1]], [[S2]];
// CHECK:       mov.f32 [[HALF:%f[0-9]+]], 0f3F000000;
// CHECK-NEXT:  mul.f32 [[SCALED:%f[0-9]+]], [[ROWMAX]], [[HALF]];
// CHECK:       max.f32 [[NEWMAX:%f[0-9]+]], [[NINF]], [[SCALED]];
// CHECK:       neg.f32 [[NEG:%f[0-9]+]], [[NEWMAX]];
// CHECK:       fma.rn.f32 [[E:%f[0-9]+]], [[X]], %f{{[0-9]+}}, [[NEG]];
// CHECK:       ex2.approx.ftz.f32 [[P0:%f[0-9]+]], [[E]];
// CHECK-NEXT:  ex2.approx.ftz.f32 [[P1:%f[0-9]+]],
// CHECK:       add.f32 [[T0:%f[0-9]+]], [[P0]], [[P1]];
// CHECK-NEXT:  shfl.sync.bfly.b32 %f{{[0-9]+}}, [[T0]], 1, 31, 0xffffffff;
// CHECK:       shfl.sync.bfly.b32 %f{{[0-9]+}}, %f{{[0-9]+}}, 2, 31, 0xffffffff;
// CHECK-NEXT:  add.f32 [[SUM:%f[0-9]+]],
// CHECK:       rcp.approx.ftz.f32 [[R:%f[0-9]+]], [[SUM]];
// CHECK:       mul.f32 %f{{[0-9]+}}, [[P0]], [[R]];
// CHECK-NEXT:  mul.f32 %f{{[0-9]+}}, [[P1]], [[R]];

builtin.module {
  hbm.kernel attributes {sym_name = "frag_math", grid = #hbm.labels<i=16>, num_outputs = 1 : i32, reg.warps = #hbm.labels<i=1>} {
  ^bb0(%out: !hbm.global<i=16, d=8 : f32>, %i0: index):
    %c0 = arith.constant 0 : index
    %m = reg.fill {value = 0xff800000 : f32} : !reg.frag<row, i=16 : f32>
    %x = reg.fill {value = 2.0 : f32} : !reg.frag<c, i=16, d=8 : f32>
    %s = reg.map scale %x by 0.5 : !reg.frag<c, i=16, d=8 : f32> -> !reg.frag<c, i=16, d=8 : f32>
    %r = reg.row_reduce max %s : !reg.frag<c, i=16, d=8 : f32> -> !reg.frag<row, i=16 : f32>
    %mx = reg.map max %m, %r : !reg.frag<row, i=16 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<row, i=16 : f32>
    %d = reg.map sub %s, %mx : !reg.frag<c, i=16, d=8 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<c, i=16, d=8 : f32>
    %e = reg.map exp2 %d : !reg.frag<c, i=16, d=8 : f32> -> !reg.frag<c, i=16, d=8 : f32>
    %sum = reg.row_reduce sum %e : !reg.frag<c, i=16, d=8 : f32> -> !reg.frag<row, i=16 : f32>
    %o = reg.map div %e, %sum : !reg.frag<c, i=16, d=8 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<c, i=16, d=8 : f32>
    reg.store %o, %out[%i0, %c0] : !reg.frag<c, i=16, d=8 : f32>, !hbm.global<i=16, d=8 : f32>
    hbm.return
  }
}

// -----

// reg.map ge (a ReLU's gradient: 1.0 where the value is at least 0.0, else 0.0): a compare
// and a select per value, against the constant `by` or a second fragment.
// CHECK-LABEL: .visible .entry relu_grad(
// CHECK:       mov.f32 [[X:%f[0-9]+]], 0fC0000000;
// CHECK-NEXT:  mov.f32 [[ONE:%f[0-9]+]], 0f3F800000;
// CHECK-NEXT:  mov.f32 [[ZERO:%f[0-9]+]], 0f00000000;
// CHECK-NEXT:  mov.f32 [[BY:%f[0-9]+]], 0f00000000;
// CHECK-NEXT:  setp.ge.f32 [[P:%p[0-9]+]], [[X]], [[BY]];
// CHECK-NEXT:  selp.f32 [[G:%f[0-9]+]], [[ONE]], [[ZERO]], [[P]];
// CHECK-NEXT:  setp.ge.f32 {{%p[0-9]+}}, [[X]], [[BY]];
// CHECK:       setp.ge.f32 {{%p[0-9]+}}, [[G]], [[X]];
// IR-LABEL:    sym_name = "relu_grad"
// IR:          ptx.selp

builtin.module {
  hbm.kernel attributes {sym_name = "relu_grad", grid = #hbm.labels<i=16>, num_outputs = 1 : i32, reg.warps = #hbm.labels<i=1>} {
  ^bb0(%out: !hbm.global<i=16, d=8 : f32>, %i0: index):
    %c0 = arith.constant 0 : index
    %x = reg.fill {value = -2.0 : f32} : !reg.frag<c, i=16, d=8 : f32>
    %g = reg.map ge %x by 0.0 : !reg.frag<c, i=16, d=8 : f32> -> !reg.frag<c, i=16, d=8 : f32>
    %h = reg.map ge %g, %x : !reg.frag<c, i=16, d=8 : f32>, !reg.frag<c, i=16, d=8 : f32> -> !reg.frag<c, i=16, d=8 : f32>
    reg.store %h, %out[%i0, %c0] : !reg.frag<c, i=16, d=8 : f32>, !hbm.global<i=16, d=8 : f32>
    hbm.return
  }
}

// -----

// reg.mask causal (keep i >= j at [i0, j0]): one compare of the lane's i - j against each
// value's column offset and a select of -inf; reg.mask_bound (keep j < 24 at [j0]): the
// room 24 - j compared with setp.gt and a select; the store is guarded where the columns
// (24 of them) may end inside the tile.
// CHECK-LABEL: .visible .entry masks(
// CHECK:       mov.f32 [[Z:%f[0-9]+]], 0f00000000;
// CHECK-NEXT:  mov.f32 [[NINF:%f[0-9]+]], 0fFF800000;
// CHECK:       sub.s32 [[DIFF:%r[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}};
// CHECK-NEXT:  mov.s32 [[C0:%r[0-9]+]], 0;
// CHECK-NEXT:  setp.ge.s32 [[K0:%p[0-9]+]], [[DIFF]], [[C0]];
// CHECK-NEXT:  selp.f32 [[M0:%f[0-9]+]], [[Z]], [[NINF]], [[K0]];
// CHECK-NEXT:  mov.s32 [[C1:%r[0-9]+]], 1;
// CHECK-NEXT:  setp.ge.s32 [[K1:%p[0-9]+]], [[DIFF]], [[C1]];
// CHECK-NEXT:  selp.f32 %f{{[0-9]+}}, [[Z]], [[NINF]], [[K1]];
// CHECK:       mov.s32 [[END:%r[0-9]+]], 24;
// CHECK:       sub.s32 [[ROOM:%r[0-9]+]], [[END]], %r{{[0-9]+}};
// CHECK-NEXT:  mov.s32 [[B0:%r[0-9]+]], 0;
// CHECK-NEXT:  setp.gt.s32 [[IN:%p[0-9]+]], [[ROOM]], [[B0]];
// CHECK-NEXT:  selp.f32 [[OUT0:%f[0-9]+]], [[M0]], %f{{[0-9]+}}, [[IN]];
// CHECK:       @%p{{[0-9]+}} st.global.v2.f32 [%rd{{[0-9]+}}], {[[OUT0]], %f{{[0-9]+}}};

builtin.module {
  hbm.kernel attributes {sym_name = "masks", grid = #hbm.labels<i=16>, num_outputs = 1 : i32, reg.warps = #hbm.labels<i=1>} {
  ^bb0(%out: !hbm.global<i=32, j=24 : f32>, %i0: index):
    %c0 = arith.constant 0 : index
    %j0 = arith.constant 8 : index
    %x = reg.zeros : !reg.frag<c, i=16, j=16 : f32>
    %m = reg.mask causal %x keep i >= j fill -inf at [%i0, %j0] : !reg.frag<c, i=16, j=16 : f32> -> !reg.frag<c, i=16, j=16 : f32>
    %b = reg.mask_bound %m keep j < 24 fill -inf at [%j0] : !reg.frag<c, i=16, j=16 : f32> -> !reg.frag<c, i=16, j=16 : f32>
    reg.store %b, %out[%i0, %c0] : !reg.frag<c, i=16, j=16 : f32>, !hbm.global<i=32, j=24 : f32>
    hbm.return
  }
}

// -----

// smem.alloc: parts of the one dynamic array (A's two 16 x 16 bf16 stages, 1024 bytes,
// then B's); smem.copy: cp.async.cg of 16-byte chunks, a stage and a column offset as
// immediates on the same base registers (stage 1 of A: +512 in shared memory, 16 columns
// on: +32 in global); smem.commit: commit_group; smem.wait: wait_group N; smem.barrier:
// bar.sync 0. reg.ldmatrix: ldmatrix.x4 for A (row-major, m by k), .trans for a k-major B;
// reg.mma: one mma.sync m16n8k16 per 8 columns, the two halves of B's x4.
// CHECK-LABEL: .visible .entry copies(
// CHECK:       mov.u32 [[SMEM:%r[0-9]+]], napkin_smem;
// CHECK-NEXT:  mov.u32 [[ABYTES:%r[0-9]+]], 1024;
// CHECK-NEXT:  add.u32 %r{{[0-9]+}}, [[SMEM]], [[ABYTES]];
// CHECK:       add.u64 [[GA:%rd[0-9]+]], %rd{{[0-9]+}}, %rd{{[0-9]+}};
// CHECK-NEXT:  cp.async.cg.shared.global [%r{{[0-9]+}}], {{\[}}[[GA]]], 16;
// CHECK:       cp.async.cg.shared.global [%r{{[0-9]+}}], [%rd{{[0-9]+}}], 16;
// CHECK-NEXT:  cp.async.commit_group;
// CHECK:       cp.async.cg.shared.global [%r{{[0-9]+}}+512], {{\[}}[[GA]]+32], 16;
// CHECK-NEXT:  cp.async.commit_group;
// CHECK-NEXT:  cp.async.wait_group 1;
// CHECK-NEXT:  bar.sync 0;
// CHECK:       ldmatrix.sync.aligned.m8n8.x4.shared.b16 {[[A0:%r[0-9]+]], [[A1:%r[0-9]+]], [[A2:%r[0-9]+]], [[A3:%r[0-9]+]]}, [%r{{[0-9]+}}];
// CHECK:       ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {[[B0:%r[0-9]+]], [[B1:%r[0-9]+]], [[B2:%r[0-9]+]], [[B3:%r[0-9]+]]}, [%r{{[0-9]+}}];
// CHECK-NEXT:  mov.f32 [[Z:%f[0-9]+]], 0f00000000;
// CHECK-NEXT:  mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}}}, {[[A0]], [[A1]], [[A2]], [[A3]]}, {[[B0]], [[B1]]}, {[[Z]], [[Z]], [[Z]], [[Z]]};
// CHECK-NEXT:  mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}}}, {[[A0]], [[A1]], [[A2]], [[A3]]}, {[[B2]], [[B3]]}, {[[Z]], [[Z]], [[Z]], [[Z]]};

builtin.module {
  hbm.kernel attributes {sym_name = "copies", grid = #hbm.labels<m=16, n=16>, num_outputs = 1 : i32, reg.warps = #hbm.labels<m=1, n=1>} {
  ^bb0(%a: !hbm.global<m=32, k=32 : bf16>, %b: !hbm.global<k=32, n=32 : bf16>, %out: !hbm.global<m=32, n=32 : f32>, %m0: index, %n0: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %sa = smem.alloc : !smem.buffer<m=16, k=16 : bf16, stages=2, layout=row>
    %sb = smem.alloc : !smem.buffer<k=16, n=16 : bf16, stages=2, layout=row>
    smem.copy %a[%m0, %c0] -> %sa[%c0] : !hbm.global<m=32, k=32 : bf16>, !smem.buffer<m=16, k=16 : bf16, stages=2, layout=row>
    smem.copy %b[%c0, %n0] -> %sb[%c0] : !hbm.global<k=32, n=32 : bf16>, !smem.buffer<k=16, n=16 : bf16, stages=2, layout=row>
    smem.commit
    smem.copy %a[%m0, %c16] -> %sa[%c1] : !hbm.global<m=32, k=32 : bf16>, !smem.buffer<m=16, k=16 : bf16, stages=2, layout=row>
    smem.commit
    smem.wait {pending = 1 : i32}
    smem.barrier
    %fa = reg.ldmatrix %sa[%c0] {at = #hbm.labels<k=0>} : !smem.buffer<m=16, k=16 : bf16, stages=2, layout=row> -> !reg.frag<a, m=16, k=16 : bf16>
    %fb = reg.ldmatrix %sb[%c0] {at = #hbm.labels<k=0>} : !smem.buffer<k=16, n=16 : bf16, stages=2, layout=row> -> !reg.frag<b, k=16, n=16 : bf16>
    %z = reg.zeros : !reg.frag<c, m=16, n=16 : f32>
    %c = reg.mma %fa, %fb, %z : !reg.frag<a, m=16, k=16 : bf16>, !reg.frag<b, k=16, n=16 : bf16>, !reg.frag<c, m=16, n=16 : f32> -> !reg.frag<c, m=16, n=16 : f32>
    reg.store %c, %out[%m0, %n0] : !reg.frag<c, m=16, n=16 : f32>, !hbm.global<m=32, n=32 : f32>
    hbm.return
  }
}

// -----

// reg.to_a: an accumulator becomes the A operand of the next product, its pairs packed to
// bf16 (cvt.rn.bf16x2.f32), four registers for the m16k16 tile, straight into mma.sync; a
// pair rounded before in the block is not rounded again (a filled fragment: one register)
// CHECK-LABEL: .visible .entry to_a(
// CHECK:       mov.f32 [[P:%f[0-9]+]], 0f3F800000;
// CHECK-NEXT:  cvt.rn.bf16x2.f32 [[X0:%bhh[0-9]+]], [[P]], [[P]];
// CHECK-NOT:   cvt.rn.bf16x2.f32
// CHECK:       ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {[[V0:%r[0-9]+]], [[V1:%r[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}}}, [%r{{[0-9]+}}];
// CHECK:       mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}}}, {[[X0]], [[X0]], [[X0]], [[X0]]}, {[[V0]], [[V1]]},

builtin.module {
  hbm.kernel attributes {sym_name = "to_a", grid = #hbm.labels<i=16>, num_outputs = 1 : i32, reg.warps = #hbm.labels<i=1>} {
  ^bb0(%v: !hbm.global<j=16, d=16 : bf16>, %out: !hbm.global<i=16, d=16 : f32>, %i0: index):
    %c0 = arith.constant 0 : index
    %sv = smem.alloc : !smem.buffer<j=16, d=16 : bf16, stages=1, layout=row>
    smem.copy %v[%c0, %c0] -> %sv[%c0] : !hbm.global<j=16, d=16 : bf16>, !smem.buffer<j=16, d=16 : bf16, stages=1, layout=row>
    smem.commit
    smem.wait {pending = 0 : i32}
    smem.barrier
    %p = reg.fill {value = 1.0 : f32} : !reg.frag<c, i=16, j=16 : f32>
    %pa = reg.to_a %p {at = #hbm.labels<j=0>} : !reg.frag<c, i=16, j=16 : f32> -> !reg.frag<a, i=16, j=16 : bf16>
    %vb = reg.ldmatrix %sv[%c0] {at = #hbm.labels<j=0>} : !smem.buffer<j=16, d=16 : bf16, stages=1, layout=row> -> !reg.frag<b, j=16, d=16 : bf16>
    %z = reg.zeros : !reg.frag<c, i=16, d=16 : f32>
    %o = reg.mma %pa, %vb, %z : !reg.frag<a, i=16, j=16 : bf16>, !reg.frag<b, j=16, d=16 : bf16>, !reg.frag<c, i=16, d=16 : f32> -> !reg.frag<c, i=16, d=16 : f32>
    reg.store %o, %out[%i0, %c0] : !reg.frag<c, i=16, d=16 : f32>, !hbm.global<i=16, d=16 : f32>
    hbm.return
  }
}

// -----

// reg.load of an f32 bias along the columns: ld.global.v2.f32 of a lane's column pair per
// 8-column tile (32 bytes on); reg.map add of a column fragment: rows g and g + 8 add the
// same pair
// CHECK-LABEL: .visible .entry bias(
// CHECK:       mov.f32 [[Z:%f[0-9]+]], 0f00000000;
// CHECK:       add.u64 [[BP:%rd[0-9]+]],
// CHECK-NEXT:  ld.global.v2.f32 {[[B0:%f[0-9]+]], [[B1:%f[0-9]+]]}, {{\[}}[[BP]]];
// CHECK-NEXT:  ld.global.v2.f32 {[[B2:%f[0-9]+]], [[B3:%f[0-9]+]]}, {{\[}}[[BP]]+32];
// CHECK-NEXT:  add.f32 %f{{[0-9]+}}, [[Z]], [[B0]];
// CHECK-NEXT:  add.f32 %f{{[0-9]+}}, [[Z]], [[B1]];
// CHECK-NEXT:  add.f32 %f{{[0-9]+}}, [[Z]], [[B0]];
// CHECK-NEXT:  add.f32 %f{{[0-9]+}}, [[Z]], [[B1]];
// CHECK-NEXT:  add.f32 %f{{[0-9]+}}, [[Z]], [[B2]];

builtin.module {
  hbm.kernel attributes {sym_name = "bias", grid = #hbm.labels<m=16, n=16>, num_outputs = 1 : i32, reg.warps = #hbm.labels<m=1, n=1>} {
  ^bb0(%bias: !hbm.global<n=32 : f32>, %out: !hbm.global<m=32, n=32 : f32>, %m0: index, %n0: index):
    %x = reg.zeros : !reg.frag<c, m=16, n=16 : f32>
    %b = reg.load %bias[%n0] : !hbm.global<n=32 : f32> -> !reg.frag<col, n=16 : f32>
    %y = reg.map add %x, %b : !reg.frag<c, m=16, n=16 : f32>, !reg.frag<col, n=16 : f32> -> !reg.frag<c, m=16, n=16 : f32>
    reg.store %y, %out[%m0, %n0] : !reg.frag<c, m=16, n=16 : f32>, !hbm.global<m=32, n=32 : f32>
    hbm.return
  }
}

// -----

// scf.for (its loop facts left off: reg-to-ptx reads none) without wgmma accumulators is
// tested at its head (setp.lt, a conditional branch into the body, an unconditional one
// out), carrying the fragment's registers through block arguments (mov); the index ops:
// divui by a power of two a shift, remui a mask, addi add.s32, cmpi ult setp.lt.u32. An
// scf.if of copies alone predicates each cp.async (the condition and-ed with the edge
// guard), with no branch.
// CHECK-LABEL: .visible .entry loop(
// CHECK:       mov.s32 [[STEP:%r[0-9]+]], 16;
// CHECK-NEXT:  mov.s32 [[UB:%r[0-9]+]], 64;
// CHECK:       bra.uni [[HEAD:\$L__BB[0-9_]+]];
// CHECK-NEXT:  [[HEAD]]:
// CHECK-NEXT:  setp.lt.s32 [[GO:%p[0-9]+]], [[IV:%r[0-9]+]], [[UB]];
// CHECK-NEXT:  @[[GO]] bra [[BODY:\$L__BB[0-9_]+]];
// CHECK-NEXT:  bra.uni [[EXIT:\$L__BB[0-9_]+]];
// CHECK-NEXT:  [[BODY]]:
// CHECK-NEXT:  mov.u32 [[FOUR:%r[0-9]+]], 4;
// CHECK-NEXT:  shr.u32 [[TRIP:%r[0-9]+]], [[IV]], [[FOUR]];
// CHECK-NEXT:  mov.u32 [[ONE:%r[0-9]+]], 1;
// CHECK-NEXT:  and.b32 %r{{[0-9]+}}, [[TRIP]], [[ONE]];
// CHECK-NEXT:  add.s32 [[NEXT:%r[0-9]+]], [[IV]], [[STEP]];
// CHECK-NEXT:  setp.lt.u32 [[MORE:%p[0-9]+]], [[NEXT]], [[UB]];
// CHECK:       and.pred [[G:%p[0-9]+]], [[MORE]], %p{{[0-9]+}};
// CHECK-NEXT:  @[[G]] cp.async.cg.shared.global [%r{{[0-9]+}}], [%rd{{[0-9]+}}+32], 16;
// CHECK-NEXT:  cp.async.commit_group;
// CHECK-NEXT:  add.f32
// CHECK:       bra.uni [[HEAD]];
// CHECK-NEXT:  [[EXIT]]:
// CHECK:       st.global.v2.f32

builtin.module {
  hbm.kernel attributes {sym_name = "loop", grid = #hbm.labels<m=16, n=16>, num_outputs = 1 : i32, reg.warps = #hbm.labels<m=1, n=1>} {
  ^bb0(%a: !hbm.global<m=32, k=64 : bf16>, %out: !hbm.global<m=32, n=32 : f32>, %m0: index, %n0: index):
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %c2 = arith.constant 2 : index
    %sa = smem.alloc : !smem.buffer<m=16, k=16 : bf16, stages=2, layout=row>
    %z = reg.zeros : !reg.frag<c, m=16, n=16 : f32>
    %r = scf.for %k0 = %c0 to %c64 step %c16 iter_args(%acc = %z) -> (!reg.frag<c, m=16, n=16 : f32>) {
      %t = arith.divui %k0, %c16 : index
      %s = arith.remui %t, %c2 : index
      %next = arith.addi %k0, %c16 : index
      %more = arith.cmpi ult, %next, %c64 : index
      scf.if %more {
        smem.copy %a[%m0, %next] -> %sa[%s] : !hbm.global<m=32, k=64 : bf16>, !smem.buffer<m=16, k=16 : bf16, stages=2, layout=row>
      }
      smem.commit
      %acc2 = reg.map add %acc, %acc : !reg.frag<c, m=16, n=16 : f32>, !reg.frag<c, m=16, n=16 : f32> -> !reg.frag<c, m=16, n=16 : f32>
      scf.yield %acc2 : !reg.frag<c, m=16, n=16 : f32>
    }
    reg.store %r, %out[%m0, %n0] : !reg.frag<c, m=16, n=16 : f32>, !hbm.global<m=32, n=32 : f32>
    hbm.return
  }
}

// -----

// scf.if of other ops: a branch around them; an scf.if with results: both regions under
// branches meeting at a block whose argument is the result. The index ops subi, muli,
// minui, maxui, cmpi ne: sub.s32, mul.lo.s32, min.u32, max.u32, setp.ne.s32.
// CHECK-LABEL: .visible .entry if_forms(
// CHECK:       mov.s32 [[C3:%r[0-9]+]], 3;
// CHECK-NEXT:  mov.s32 [[C40:%r[0-9]+]], 40;
// CHECK-NEXT:  sub.s32 [[D:%r[0-9]+]], [[C40]], [[M0:%r[0-9]+]];
// CHECK-NEXT:  mul.lo.s32 [[P:%r[0-9]+]], [[D]], [[C3]];
// CHECK-NEXT:  min.u32 [[MIN:%r[0-9]+]], [[P]], [[C40]];
// CHECK-NEXT:  max.u32 %r{{[0-9]+}}, [[MIN]], [[M0]];
// CHECK-NEXT:  mov.s32 [[C0:%r[0-9]+]], 0;
// CHECK-NEXT:  mov.s32 [[C16:%r[0-9]+]], 16;
// CHECK-NEXT:  setp.ne.s32 [[GO:%p[0-9]+]], [[M0]], [[C0]];
// CHECK:       @[[GO]] bra [[THEN:\$L__BB[0-9_]+]];
// CHECK-NEXT:  bra.uni [[JOIN:\$L__BB[0-9_]+]];
// CHECK-NEXT:  [[THEN]]:
// CHECK-NEXT:  cp.async.commit_group;
// CHECK-NEXT:  bra.uni [[JOIN]];
// CHECK-NEXT:  [[JOIN]]:
// CHECK-NEXT:  @[[GO]] bra [[YES:\$L__BB[0-9_]+]];
// CHECK-NEXT:  bra.uni [[NO:\$L__BB[0-9_]+]];
// CHECK-NEXT:  [[YES]]:
// CHECK-NEXT:  mov.b32 [[T1:%r[0-9]+]], [[C16]];
// CHECK-NEXT:  mov.b32 [[ROW:%r[0-9]+]], [[T1]];
// CHECK-NEXT:  bra.uni [[END:\$L__BB[0-9_]+]];
// CHECK-NEXT:  [[NO]]:
// CHECK-NEXT:  mov.b32 [[T2:%r[0-9]+]], [[C0]];
// CHECK-NEXT:  mov.b32 [[ROW]], [[T2]];
// CHECK-NEXT:  bra.uni [[END]];
// CHECK-NEXT:  [[END]]:

builtin.module {
  hbm.kernel attributes {sym_name = "if_forms", grid = #hbm.labels<m=16>, num_outputs = 1 : i32, reg.warps = #hbm.labels<m=1>} {
  ^bb0(%out: !hbm.global<m=32, n=16 : f32>, %m0: index):
    %c3 = arith.constant 3 : index
    %c40 = arith.constant 40 : index
    %0 = arith.subi %c40, %m0 : index
    %1 = arith.muli %0, %c3 : index
    %2 = arith.minui %1, %c40 : index
    %3 = arith.maxui %2, %m0 : index
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %go = arith.cmpi ne, %m0, %c0 : index
    scf.if %go {
      smem.commit
    }
    %row = scf.if %go -> (index) {
      scf.yield %c16 : index
    } else {
      scf.yield %c0 : index
    }
    %z = reg.zeros : !reg.frag<c, m=16, n=16 : f32>
    reg.store %z, %out[%row, %3] : !reg.frag<c, m=16, n=16 : f32>, !hbm.global<m=32, n=16 : f32>
    hbm.return
  }
}

// -----

// A division by a `col` fragment multiplies by the approximate reciprocal of each of its
// values (spherical attention's gradient divides by the streamed rows' norms): no div.rn,
// no rcp.rn (a sequence with a slow path, where rcp.approx.ftz is one instruction).
// CHECK-LABEL: .entry div_by_cols(
// CHECK-NOT:   {{div|rcp}}.rn.f32
// CHECK:       rcp.approx.ftz.f32 [[R:%f[0-9]+]], [[N:%f[0-9]+]];
// CHECK:       mul.f32 %f{{[0-9]+}}, %f{{[0-9]+}}, [[R]];
// CHECK-NOT:   div.rn.f32
// CHECK:       ret;

builtin.module {
  hbm.kernel attributes {sym_name = "div_by_cols", grid = #hbm.labels<i=16>, num_outputs = 1 : i32, reg.warps = #hbm.labels<i=1>} {
  ^bb0(%out: !hbm.global<i=16, d=8 : f32>, %i0: index):
    %c0 = arith.constant 0 : index
    %x = reg.fill {value = 2.0 : f32} : !reg.frag<c, i=16, d=8 : f32>
    %n = reg.fill {value = 4.0 : f32} : !reg.frag<col, d=8 : f32>
    %q = reg.map div %x, %n : !reg.frag<c, i=16, d=8 : f32>, !reg.frag<col, d=8 : f32> -> !reg.frag<c, i=16, d=8 : f32>
    reg.store %q, %out[%i0, %c0] : !reg.frag<c, i=16, d=8 : f32>, !hbm.global<i=16, d=8 : f32>
    hbm.return
  }
}
