// reg-to-ptx, one rule at a time, from hand-written register-level IR (what smem-to-reg
// gives for sm_90a: TMA, mbarrier rings, wgmma, warp roles). Each kernel exercises a few
// rules of napkin_ir/lowering/ptx_rules/ (tma, products, stores, kernel, control); the
// sm_80 rules are in reg_to_ptx_rules_sm80.mlir. The loops carry no loop facts
// (hbm.stream, the pipeline): reg-to-ptx reads none.
// RUN: napkin-opt %s --split-input-file -p reg-to-ptx -t ptx | filecheck %s
// RUN: napkin-opt %s --split-input-file -p reg-to-ptx | filecheck %s --check-prefix=IR

// A GEMM tile, 64 x 64, two 64-wide k steps through a two-stage ring.
// smem.producer (kernel.py): tensor-map parameters for the TMA's globals; thread 0 inits
// the rings (mbarrier_alloc: 1 arrival for the full ring, 4 (a lane of each warp of one
// consumer warpgroup) for the empty one, 8 bytes a stage); warpgroup 0 gives up registers and its thread 0
// prefetches the tensor maps; the consumers take 256 registers.
// smem.ring_position outside a persistent launch is 0.
// smem.mbarrier_wait: a try_wait.parity loop; smem.arrive_expect: the stage's bytes;
// smem.tma_copy: cp.async.bulk.tensor.2d at {column, row} (k, then m for A).
// scf.for carrying wgmma accumulators is tested at its bottom: the carried registers move
// only where it goes round.
// reg.wgmma: a fence, then wgmma.mma_async m64n64k16 from two descriptors, each k step of
// 16 two bytes on in A's descriptor (32 bytes >> 4) and 128 (16 rows x 128 bytes >> 4) in B's;
// reg.wgmma_commit / reg.wgmma_wait: commit_group, wait_group N.
// smem.arrive (under scf.if: a branch): the warp's lanes meet, lane 0 arrives.
// smem.tma_store_wait: one thread waits for the bulk group's reads; reg.stmatrix: pairs
// rounded, stmatrix.x4 into the swizzled panel (the chunk XOR-ed with the row), a fence
// for the async proxy; smem.tma_store: one thread stores the panel, and commits.
// IR: builtin.module attributes {ptx.target = "sm_90a"}
// CHECK:       .target sm_90a
// CHECK-LABEL: .visible .entry gemm_tma(
// CHECK-NEXT:  .param .align 64 .b8 gemm_tma_a[128],
// CHECK-NEXT:  .param .align 64 .b8 gemm_tma_b[128],
// CHECK-NEXT:  .param .align 64 .b8 gemm_tma_out[128]
// CHECK-NEXT:  )
// CHECK-NEXT:  .maxntid 256
// CHECK:       mov.u64 [[PA:%rd[0-9]+]], gemm_tma_a;
// CHECK-NEXT:  cvta.param.u64 [[TA:%rd[0-9]+]], [[PA]];
// CHECK-NEXT:  mov.u64 [[PB:%rd[0-9]+]], gemm_tma_b;
// CHECK-NEXT:  cvta.param.u64 [[TB:%rd[0-9]+]], [[PB]];
// CHECK-NEXT:  mov.u64 [[PO:%rd[0-9]+]], gemm_tma_out;
// CHECK-NEXT:  cvta.param.u64 [[TO:%rd[0-9]+]], [[PO]];
// CHECK:       setp.eq.u32 [[T0:%p[0-9]+]], [[TID:%r[0-9]+]], %r{{[0-9]+}};
// CHECK-NEXT:  @[[T0]] bra [[INIT:\$L__BB[0-9_]+]];
// CHECK:       [[INIT]]:
// CHECK-NEXT:  mov.u32 [[ONE:%r[0-9]+]], 1;
// CHECK-NEXT:  mbarrier.init.shared::cta.b64 {{\[}}[[FULL:%r[0-9]+]]], [[ONE]];
// CHECK-NEXT:  mov.u32 [[EIGHT:%r[0-9]+]], 8;
// CHECK-NEXT:  add.u32 [[FULL1:%r[0-9]+]], [[FULL]], [[EIGHT]];
// CHECK-NEXT:  mbarrier.init.shared::cta.b64 {{\[}}[[FULL1]]], [[ONE]];
// CHECK-NEXT:  mov.u32 [[WG:%r[0-9]+]], 4;
// CHECK-NEXT:  mbarrier.init.shared::cta.b64 {{\[}}[[EMPTY:%r[0-9]+]]], [[WG]];
// CHECK:       mbarrier.init.shared::cta.b64 [%r{{[0-9]+}}], [[WG]];
// CHECK-NEXT:  fence.mbarrier_init.release.cluster;
// CHECK:       bar.sync 0;
// CHECK-NEXT:  mov.u32 [[C128:%r[0-9]+]], 128;
// CHECK-NEXT:  setp.lt.u32 [[PROD:%p[0-9]+]], [[TID]], [[C128]];
// CHECK-NEXT:  @[[PROD]] bra [[PRODUCER:\$L__BB[0-9_]+]];
// CHECK-NEXT:  bra.uni [[CONSUMER:\$L__BB[0-9_]+]];
// CHECK-NEXT:  [[PRODUCER]]:
// CHECK-NEXT:  setmaxnreg.dec.sync.aligned.u32 24;
// CHECK:       [[CONSUMER]]:
// CHECK-NEXT:  setmaxnreg.inc.sync.aligned.u32 256;
// CHECK:       prefetch.tensormap {{\[}}[[TA]]];
// CHECK-NEXT:  prefetch.tensormap {{\[}}[[TB]]];
// CHECK-NEXT:  prefetch.tensormap {{\[}}[[TO]]];
// the producer's wait on the empty ring, its expect and copies on the full one
// CHECK:       mbarrier.try_wait.parity.shared::cta.b64 [[W:%p[0-9]+]], [%r{{[0-9]+}}], %r{{[0-9]+}};
// CHECK-NEXT:  @[[W]] bra [[GOT:\$L__BB[0-9_]+]];
// CHECK-NEXT:  bra.uni [[RETRY:\$L__BB[0-9_]+]];
// CHECK:       mov.u32 [[BYTES:%r[0-9]+]], 16384;
// CHECK-NEXT:  mbarrier.arrive.expect_tx.shared::cta.b64 %rd{{[0-9]+}}, [%r{{[0-9]+}}], [[BYTES]];
// CHECK:       cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r{{[0-9]+}}], {{\[}}[[TA]], {[[K:%r[0-9]+]], [[M0:%r[0-9]+]]}], [%r{{[0-9]+}}];
// CHECK:       cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r{{[0-9]+}}], {{\[}}[[TB]], {[[N0:%r[0-9]+]], [[K]]}], [%r{{[0-9]+}}];
// the consumers' loop: a wait on the full ring, four products, the empty ring's arrive
// CHECK:       [[BODY:\$L__BB[0-9_]+]]:
// CHECK:       mbarrier.try_wait.parity.shared::cta.b64
// CHECK:       or.b64 [[ADESC:%rd[0-9]+]], [[ADESC]], {{[0-9]+}};
// CHECK:       or.b64 [[BDESC:%rd[0-9]+]], [[BDESC]], {{[0-9]+}};
// CHECK-NEXT:  wgmma.fence.sync.aligned;
// CHECK-NEXT:  wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {[[ACC:%f[0-9]+, .*]]}, [[ADESC]], [[BDESC]], %p{{[0-9]+}}, 1, 1, 0, 1;
// CHECK-NEXT:  mov.s64 [[TWO:%rd[0-9]+]], 2;
// CHECK-NEXT:  add.s64 [[A1:%rd[0-9]+]], [[ADESC]], [[TWO]];
// CHECK-NEXT:  mov.s64 [[B128:%rd[0-9]+]], 128;
// CHECK-NEXT:  add.s64 [[B1:%rd[0-9]+]], [[BDESC]], [[B128]];
// CHECK-NEXT:  wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {[[ACC]]}, [[A1]], [[B1]],
// CHECK-NOT:   wgmma.fence
// CHECK:       wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {[[ACC]]},
// CHECK:       wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {[[ACC]]},
// CHECK-NEXT:  wgmma.commit_group.sync.aligned;
// CHECK-NEXT:  wgmma.wait_group.sync.aligned 1;
// CHECK:       @%p{{[0-9]+}} bra [[ARRIVE:\$L__BB[0-9_]+]];
// CHECK:       [[ARRIVE]]:
// CHECK:       bar.warp.sync 0xffffffff;
// CHECK:       setp.lt.s32 [[MORE:%p[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}};
// CHECK-NEXT:  @[[MORE]] mov.b32
// CHECK:       @[[MORE]] bra [[BODY]];
// CHECK:       mbarrier.arrive.shared::cta.b64 %rd{{[0-9]+}}, [%r{{[0-9]+}}];
// CHECK:       wgmma.wait_group.sync.aligned 0;
// CHECK:       cp.async.bulk.wait_group.read 0;
// CHECK:       bar.sync 1, 128;
// CHECK:       cvt.rn.bf16x2.f32 [[S0:%bhh[0-9]+]], %f{{[0-9]+}}, %f{{[0-9]+}};
// CHECK-NEXT:  cvt.rn.bf16x2.f32 [[S1:%bhh[0-9]+]],
// CHECK-NEXT:  cvt.rn.bf16x2.f32 [[S2:%bhh[0-9]+]],
// CHECK-NEXT:  cvt.rn.bf16x2.f32 [[S3:%bhh[0-9]+]],
// CHECK-NEXT:  stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r{{[0-9]+}}], {[[S0]], [[S1]], [[S2]], [[S3]]};
// CHECK-COUNT-3: stmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK-NEXT:  fence.proxy.async.shared::cta;
// CHECK-NEXT:  bar.sync 1, 128;
// CHECK:       cp.async.bulk.tensor.2d.global.shared::cta.bulk_group {{\[}}[[TO]], {%r{{[0-9]+}}, %r{{[0-9]+}}}], [%r{{[0-9]+}}];
// CHECK-NEXT:  cp.async.bulk.commit_group;
// CHECK:       cp.async.bulk.wait_group.read 0;
// CHECK:       ret;
// CHECK-NEXT:  }

builtin.module {
  hbm.kernel attributes {sym_name = "gemm_tma", grid = #hbm.labels<m=64, n=64>, num_outputs = 1 : i32, reg.warps = #hbm.labels<m=4>} {
  ^bb0(%a: !hbm.global<m=128, k=128 : bf16>, %b: !hbm.global<k=128, n=64 : bf16>, %out: !hbm.global<m=128, n=64 : bf16>, %m0: index, %n0: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %so = smem.alloc : !smem.buffer<m=64, n=64 : bf16, stages=2, layout=swizzle>
    %sa = smem.alloc : !smem.buffer<m=64, k=64 : bf16, stages=2, layout=swizzle>
    %sb = smem.alloc : !smem.buffer<k=64, n=64 : bf16, stages=2, layout=swizzle>
    %full = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
    %empty = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
    %pos = smem.ring_position : index
    %z = reg.zeros : !reg.frag<c, m=16, n=64 : f32>
    smem.producer attributes {warps = 4 : i32} {
      scf.for %k = %c0 to %c128 step %c64 {
        %t = arith.divui %k, %c64 : index
        %u = arith.addi %t, %pos : index
        %s = arith.remui %u, %c2 : index
        %lap = arith.divui %u, %c2 : index
        %ph = arith.remui %lap, %c2 : index
        %free = arith.subi %c1, %ph : index
        smem.mbarrier_wait %empty[%s] parity %free : !smem.mbarrier<stages=2, arrivals=1>
        smem.arrive_expect %full[%s] {bytes = 16384 : i32} : !smem.mbarrier<stages=2, arrivals=1>
        smem.tma_copy %a[%m0, %k] -> %sa[%s], %full[%s] : !hbm.global<m=128, k=128 : bf16>, !smem.buffer<m=64, k=64 : bf16, stages=2, layout=swizzle>, !smem.mbarrier<stages=2, arrivals=1>
        smem.tma_copy %b[%k, %n0] -> %sb[%s], %full[%s] : !hbm.global<k=128, n=64 : bf16>, !smem.buffer<k=64, n=64 : bf16, stages=2, layout=swizzle>, !smem.mbarrier<stages=2, arrivals=1>
      }
    }
    %r = scf.for %k0 = %c0 to %c128 step %c64 iter_args(%acc = %z) -> (!reg.frag<c, m=16, n=64 : f32>) {
      %t = arith.divui %k0, %c64 : index
      %u = arith.addi %t, %pos : index
      %s = arith.remui %u, %c2 : index
      %lap = arith.divui %u, %c2 : index
      %ph = arith.remui %lap, %c2 : index
      smem.mbarrier_wait %full[%s] parity %ph : !smem.mbarrier<stages=2, arrivals=1>
      %0 = reg.wgmma %sa[%s], %sb[%s], %acc {at = #hbm.labels<k=0>} : !smem.buffer<m=64, k=64 : bf16, stages=2, layout=swizzle>, !smem.buffer<k=64, n=64 : bf16, stages=2, layout=swizzle>, !reg.frag<c, m=16, n=64 : f32> -> !reg.frag<c, m=16, n=64 : f32>
      %1 = reg.wgmma %sa[%s], %sb[%s], %0 {at = #hbm.labels<k=16>} : !smem.buffer<m=64, k=64 : bf16, stages=2, layout=swizzle>, !smem.buffer<k=64, n=64 : bf16, stages=2, layout=swizzle>, !reg.frag<c, m=16, n=64 : f32> -> !reg.frag<c, m=16, n=64 : f32>
      %2 = reg.wgmma %sa[%s], %sb[%s], %1 {at = #hbm.labels<k=32>} : !smem.buffer<m=64, k=64 : bf16, stages=2, layout=swizzle>, !smem.buffer<k=64, n=64 : bf16, stages=2, layout=swizzle>, !reg.frag<c, m=16, n=64 : f32> -> !reg.frag<c, m=16, n=64 : f32>
      %3 = reg.wgmma %sa[%s], %sb[%s], %2 {at = #hbm.labels<k=48>} : !smem.buffer<m=64, k=64 : bf16, stages=2, layout=swizzle>, !smem.buffer<k=64, n=64 : bf16, stages=2, layout=swizzle>, !reg.frag<c, m=16, n=64 : f32> -> !reg.frag<c, m=16, n=64 : f32>
      reg.wgmma_commit
      reg.wgmma_wait {pending = 1 : i32}
      %prev = arith.addi %s, %c1 : index
      %ps = arith.remui %prev, %c2 : index
      %later = arith.cmpi ne, %k0, %c0 : index
      scf.if %later {
        smem.arrive %empty[%ps] : !smem.mbarrier<stages=2, arrivals=1>
      }
      scf.yield %3 : !reg.frag<c, m=16, n=64 : f32>
    }
    reg.wgmma_wait {pending = 0 : i32}
    smem.tma_store_wait {pending = 0 : i32}
    reg.stmatrix %r -> %so[%c0] {at = #hbm.labels<n=0>} : !reg.frag<c, m=16, n=64 : f32>, !smem.buffer<m=64, n=64 : bf16, stages=2, layout=swizzle>
    smem.tma_store %so[%c0] -> %out[%m0, %n0] : !smem.buffer<m=64, n=64 : bf16, stages=2, layout=swizzle>, !hbm.global<m=128, n=64 : bf16>
    hbm.return
  }
}

// -----

// Two consumer warpgroups (reg.warps i=8) taking turns: reg.turn_start lets the last
// warpgroup arrive at the first one's named barrier (2); reg.turn_wait syncs at 2 + the
// warpgroup; reg.turn_pass arrives at 2 + the next one (256 threads each). A global
// stored from registers (out) stays a .u64 parameter beside the tensor maps.
// smem.tile_position outside a persistent launch is 0: the one-stage barrier's parity.
// reg.wgmma onto reg.zeros: scale-d false (setp.ne 0, 0), no accumulator moves.
// reg.to_a at j=16: the second k16 slice of S (values 8-15) packed to bf16 pairs;
// reg.wgmma_rs: those four registers as A, B's descriptor 16 rows on (16 x 128 bytes >> 4 = 128).
// CHECK-LABEL: .visible .entry turns_rs(
// CHECK-NEXT:  .param .align 64 .b8 turns_rs_q[128],
// CHECK-NEXT:  .param .align 64 .b8 turns_rs_k[128],
// CHECK-NEXT:  .param .align 64 .b8 turns_rs_v[128],
// CHECK-NEXT:  .param .u64 turns_rs_out
// CHECK-NEXT:  )
// CHECK-NEXT:  .maxntid 384
// CHECK:       mov.u32 [[TILE:%r[0-9]+]], 0;
// CHECK:       setmaxnreg.inc.sync.aligned.u32 240;
// CHECK:       shr.u32 [[WGP:%r[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}};
// CHECK:       mov.u32 [[Z0:%r[0-9]+]], 0;
// CHECK-NEXT:  mov.u32 [[Z1:%r[0-9]+]], 0;
// CHECK-NEXT:  setp.ne.u32 [[FRESH:%p[0-9]+]], [[Z0]], [[Z1]];
// CHECK:       mov.u32 [[QBYTES:%r[0-9]+]], 32768;
// CHECK-NEXT:  mbarrier.arrive.expect_tx.shared::cta.b64 %rd{{[0-9]+}}, [%r{{[0-9]+}}], [[QBYTES]];
// CHECK-COUNT-3: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK:       mbarrier.try_wait.parity.shared::cta.b64 %p{{[0-9]+}}, [%r{{[0-9]+}}], [[TILE]];
// CHECK:       mov.u32 [[LAST:%r[0-9]+]], 1;
// CHECK-NEXT:  setp.eq.u32 [[ISLAST:%p[0-9]+]], [[WG:%r[0-9]+]], [[LAST]];
// CHECK-NEXT:  @[[ISLAST]] bra [[START:\$L__BB[0-9_]+]];
// CHECK:       [[START]]:
// CHECK-NEXT:  mov.u32 [[B2:%r[0-9]+]], 2;
// CHECK-NEXT:  bar.arrive [[B2]], 256;
// CHECK:       mov.u32 [[OFF:%r[0-9]+]], 2;
// CHECK-NEXT:  add.u32 [[MINE:%r[0-9]+]], [[WG]], [[OFF]];
// CHECK-NEXT:  bar.sync [[MINE]], 256;
// CHECK-NEXT:  wgmma.fence.sync.aligned;
// CHECK-NEXT:  wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%f{{[0-9]+}}, {{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, [[FRESH]], 1, 1, 0, 0;
// CHECK-NEXT:  wgmma.commit_group.sync.aligned;
// CHECK:       add.u32 [[NEXT:%r[0-9]+]], [[WG]], %r{{[0-9]+}};
// CHECK:       bar.arrive %r{{[0-9]+}}, 256;
// CHECK-NEXT:  wgmma.wait_group.sync.aligned 0;
// CHECK-NEXT:  cvt.rn.bf16x2.f32 [[P0:%bhh[0-9]+]], %f11, %f10;
// CHECK-NEXT:  cvt.rn.bf16x2.f32 [[P1:%bhh[0-9]+]], %f13, %f12;
// CHECK-NEXT:  cvt.rn.bf16x2.f32 [[P2:%bhh[0-9]+]], %f15, %f14;
// CHECK-NEXT:  cvt.rn.bf16x2.f32 [[P3:%bhh[0-9]+]], %f17, %f16;
// CHECK:       mov.s64 [[K16:%rd[0-9]+]], 128;
// CHECK-NEXT:  add.s64 [[VDESC:%rd[0-9]+]], %rd{{[0-9]+}}, [[K16]];
// CHECK-NEXT:  wgmma.fence.sync.aligned;
// CHECK-NEXT:  wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%f{{[0-9]+}}, {{.*}}}, {[[P0]], [[P1]], [[P2]], [[P3]]}, [[VDESC]], [[FRESH]], 1, 1, 1;
// CHECK-NEXT:  wgmma.commit_group.sync.aligned;
// CHECK-NEXT:  wgmma.wait_group.sync.aligned 0;
// CHECK:       st.global.v2.f32

builtin.module {
  hbm.kernel attributes {sym_name = "turns_rs", grid = #hbm.labels<i=128>, num_outputs = 1 : i32, reg.warps = #hbm.labels<i=8>} {
  ^bb0(%q: !hbm.global<i=128, d=64 : bf16>, %k: !hbm.global<j=64, d=64 : bf16>, %v: !hbm.global<j=64, d=64 : bf16>, %out: !hbm.global<i=128, d=64 : f32>, %i0: index):
    %c0 = arith.constant 0 : index
    %sq = smem.alloc : !smem.buffer<i=128, d=64 : bf16, stages=1, layout=swizzle>
    %sk = smem.alloc : !smem.buffer<j=64, d=64 : bf16, stages=1, layout=swizzle>
    %sv = smem.alloc : !smem.buffer<j=64, d=64 : bf16, stages=1, layout=swizzle>
    %bar = smem.mbarrier_alloc : !smem.mbarrier<stages=1, arrivals=1>
    %tile = smem.tile_position : index
    smem.producer attributes {warps = 4 : i32} {
      smem.arrive_expect %bar[%c0] {bytes = 32768 : i32} : !smem.mbarrier<stages=1, arrivals=1>
      smem.tma_copy %q[%i0, %c0] -> %sq[%c0], %bar[%c0] : !hbm.global<i=128, d=64 : bf16>, !smem.buffer<i=128, d=64 : bf16, stages=1, layout=swizzle>, !smem.mbarrier<stages=1, arrivals=1>
      smem.tma_copy %k[%c0, %c0] -> %sk[%c0], %bar[%c0] : !hbm.global<j=64, d=64 : bf16>, !smem.buffer<j=64, d=64 : bf16, stages=1, layout=swizzle>, !smem.mbarrier<stages=1, arrivals=1>
      smem.tma_copy %v[%c0, %c0] -> %sv[%c0], %bar[%c0] : !hbm.global<j=64, d=64 : bf16>, !smem.buffer<j=64, d=64 : bf16, stages=1, layout=swizzle>, !smem.mbarrier<stages=1, arrivals=1>
    }
    smem.mbarrier_wait %bar[%c0] parity %tile : !smem.mbarrier<stages=1, arrivals=1>
    reg.turn_start
    %z = reg.zeros : !reg.frag<c, i=16, j=64 : f32>
    reg.turn_wait
    %s = reg.wgmma %sq[%c0], %sk[%c0], %z {at = #hbm.labels<d=0>} : !smem.buffer<i=128, d=64 : bf16, stages=1, layout=swizzle>, !smem.buffer<j=64, d=64 : bf16, stages=1, layout=swizzle>, !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<c, i=16, j=64 : f32>
    reg.wgmma_commit
    reg.turn_pass
    reg.wgmma_wait {pending = 0 : i32}
    %p = reg.to_a %s {at = #hbm.labels<j=16>} : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<a, i=16, j=16 : bf16>
    %zo = reg.zeros : !reg.frag<c, i=16, d=64 : f32>
    %o = reg.wgmma_rs %p, %sv[%c0], %zo {at = #hbm.labels<j=16>} : !reg.frag<a, i=16, j=16 : bf16>, !smem.buffer<j=64, d=64 : bf16, stages=1, layout=swizzle>, !reg.frag<c, i=16, d=64 : f32> -> !reg.frag<c, i=16, d=64 : f32>
    reg.wgmma_commit
    reg.wgmma_wait {pending = 0 : i32}
    reg.store %o, %out[%i0, %c0] : !reg.frag<c, i=16, d=64 : f32>, !hbm.global<i=128, d=64 : f32>
    hbm.return
  }
}

// -----

// A persistent launch (hbm.persistent): both roles loop over the tiles p = block +
// i x blocks (%ctaid.x, %nctaid.x) while p < 2; smem.ring_position is bound by that loop
// and counts on by the stream's two trips a tile. (One k16 product a trip: the test is
// about the tile loop, not the sum.)
// CHECK-LABEL: .visible .entry gemm_persistent(
// CHECK:       setmaxnreg.inc.sync.aligned.u32 256;
// CHECK-NEXT:  mov.u32 %r{{[0-9]+}}, %ctaid.x;
// CHECK-NEXT:  mov.u32 %r{{[0-9]+}}, %nctaid.x;
// CHECK:       prefetch.tensormap
// CHECK:       mov.u32 [[CTA:%r[0-9]+]], %ctaid.x;
// CHECK-NEXT:  mov.u32 [[NCTA:%r[0-9]+]], %nctaid.x;
// CHECK:       mul.lo.u32 [[OFF:%r[0-9]+]], [[I:%r[0-9]+]], [[NCTA]];
// CHECK-NEXT:  add.u32 [[P:%r[0-9]+]], [[OFF]], [[CTA]];
// CHECK-NEXT:  mov.u32 [[NT:%r[0-9]+]], 2;
// CHECK-NEXT:  setp.lt.u32 %p{{[0-9]+}}, [[P]], [[NT]];
// CHECK:       add.s32 %r{{[0-9]+}}, %r{{[0-9]+}}, [[RING:%r[0-9]+]];
// CHECK:       mov.u32 [[TRIPS:%r[0-9]+]], 2;
// CHECK-NEXT:  add.u32 %r{{[0-9]+}}, [[RING]], [[TRIPS]];
// CHECK:       mbarrier.try_wait.parity.shared::cta.b64
// CHECK:       cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK:       wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK:       st.global.v2.f32

builtin.module {
  hbm.kernel attributes {sym_name = "gemm_persistent", grid = #hbm.labels<m=64, n=64>, num_outputs = 1 : i32, hbm.blocks_per_sm = 1 : i32, hbm.persistent, reg.warps = #hbm.labels<m=4>} {
  ^bb0(%a: !hbm.global<m=128, k=128 : bf16>, %b: !hbm.global<k=128, n=64 : bf16>, %out: !hbm.global<m=128, n=64 : f32>, %m0: index, %n0: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %sa = smem.alloc : !smem.buffer<m=64, k=64 : bf16, stages=2, layout=swizzle>
    %sb = smem.alloc : !smem.buffer<k=64, n=64 : bf16, stages=2, layout=swizzle>
    %full = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
    %empty = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
    %pos = smem.ring_position : index
    %z = reg.zeros : !reg.frag<c, m=16, n=64 : f32>
    smem.producer attributes {warps = 4 : i32} {
      scf.for %k = %c0 to %c128 step %c64 {
        %t = arith.divui %k, %c64 : index
        %u = arith.addi %t, %pos : index
        %s = arith.remui %u, %c2 : index
        %lap = arith.divui %u, %c2 : index
        %ph = arith.remui %lap, %c2 : index
        %free = arith.subi %c1, %ph : index
        smem.mbarrier_wait %empty[%s] parity %free : !smem.mbarrier<stages=2, arrivals=1>
        smem.arrive_expect %full[%s] {bytes = 16384 : i32} : !smem.mbarrier<stages=2, arrivals=1>
        smem.tma_copy %a[%m0, %k] -> %sa[%s], %full[%s] : !hbm.global<m=128, k=128 : bf16>, !smem.buffer<m=64, k=64 : bf16, stages=2, layout=swizzle>, !smem.mbarrier<stages=2, arrivals=1>
        smem.tma_copy %b[%k, %n0] -> %sb[%s], %full[%s] : !hbm.global<k=128, n=64 : bf16>, !smem.buffer<k=64, n=64 : bf16, stages=2, layout=swizzle>, !smem.mbarrier<stages=2, arrivals=1>
      }
    }
    %r = scf.for %k0 = %c0 to %c128 step %c64 iter_args(%acc = %z) -> (!reg.frag<c, m=16, n=64 : f32>) {
      %t = arith.divui %k0, %c64 : index
      %u = arith.addi %t, %pos : index
      %s = arith.remui %u, %c2 : index
      %lap = arith.divui %u, %c2 : index
      %ph = arith.remui %lap, %c2 : index
      smem.mbarrier_wait %full[%s] parity %ph : !smem.mbarrier<stages=2, arrivals=1>
      %0 = reg.wgmma %sa[%s], %sb[%s], %acc {at = #hbm.labels<k=0>} : !smem.buffer<m=64, k=64 : bf16, stages=2, layout=swizzle>, !smem.buffer<k=64, n=64 : bf16, stages=2, layout=swizzle>, !reg.frag<c, m=16, n=64 : f32> -> !reg.frag<c, m=16, n=64 : f32>
      reg.wgmma_commit
      reg.wgmma_wait {pending = 1 : i32}
      %prev = arith.addi %s, %c1 : index
      %ps = arith.remui %prev, %c2 : index
      %later = arith.cmpi ne, %k0, %c0 : index
      scf.if %later {
        smem.arrive %empty[%ps] : !smem.mbarrier<stages=2, arrivals=1>
      }
      scf.yield %0 : !reg.frag<c, m=16, n=64 : f32>
    }
    reg.wgmma_wait {pending = 0 : i32}
    reg.store %r, %out[%m0, %n0] : !reg.frag<c, m=16, n=64 : f32>, !hbm.global<m=128, n=64 : f32>
    hbm.return
  }
}

// -----

// reg.read of a `c` fragment whose rows (n) are a TMA-swizzled buffer's columns: each
// lane's 16-byte row of an 8x8 matrix (rows m of the buffer, 16 bytes of n) is found
// through the 128-byte swizzle (chunk XOR-ed with the row mod 8), its warp's 32 bytes of
// n (consumer warp w, 4-7 past the producers) in panel (32 w + lane bytes) >> 7, 128 rows
// of 128 bytes each; then one ldmatrix.x4.trans per 16 rows of m, 2048 bytes apart.
// (tests/unit/lowering/test_read_transposed_from_panels.py runs it in the emulator.)
// CHECK-LABEL: .visible .entry read_t(
// CHECK:       setmaxnreg.inc.sync.aligned.u32 240;
// CHECK:       sub.u32 [[W:%r[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}};
// CHECK-NEXT:  mov.u32 [[C32:%r[0-9]+]], 32;
// CHECK-NEXT:  mul.lo.u32 [[WCOL:%r[0-9]+]], [[W]], [[C32]];
// CHECK-NEXT:  add.u32 [[COL:%r[0-9]+]], [[LCOL:%r[0-9]+]], [[WCOL]];
// CHECK-NEXT:  mov.u32 [[SEVEN:%r[0-9]+]], 7;
// CHECK-NEXT:  shr.u32 [[PIDX:%r[0-9]+]], [[COL]], [[SEVEN]];
// CHECK-NEXT:  mov.u32 [[PBYTES:%r[0-9]+]], 16384;
// CHECK-NEXT:  mul.lo.u32 [[PANEL:%r[0-9]+]], [[PIDX]], [[PBYTES]];
// CHECK-NEXT:  mov.u32 [[M127:%r[0-9]+]], 127;
// CHECK-NEXT:  and.b32 [[IN:%r[0-9]+]], [[COL]], [[M127]];
// CHECK-NEXT:  mov.u32 [[C128:%r[0-9]+]], 128;
// CHECK-NEXT:  mul.lo.u32 [[ROWB:%r[0-9]+]], [[ROW:%r[0-9]+]], [[C128]];
// CHECK-NEXT:  add.u32 [[PLAIN:%r[0-9]+]], [[ROWB]], [[IN]];
// CHECK-NEXT:  mov.u32 [[M7:%r[0-9]+]], 7;
// CHECK-NEXT:  and.b32 [[KEY:%r[0-9]+]], [[ROW]], [[M7]];
// CHECK-NEXT:  mov.u32 [[C4:%r[0-9]+]], 4;
// CHECK-NEXT:  shl.b32 [[KEYB:%r[0-9]+]], [[KEY]], [[C4]];
// CHECK-NEXT:  xor.b32 [[SWZ:%r[0-9]+]], [[PLAIN]], [[KEYB]];
// CHECK-NEXT:  add.u32 [[AT:%r[0-9]+]], [[PANEL]], [[SWZ]];
// CHECK-NEXT:  add.u32 [[BASE:%r[0-9]+]], %r{{[0-9]+}}, [[AT]];
// CHECK:       ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [[[BASE]]];
// CHECK-NEXT:  ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {{.*}}, [[[BASE]]+2048];
// CHECK-COUNT-5: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK-NEXT:  ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {{.*}}, [[[BASE]]+14336];
// CHECK-NEXT:  mov.b32 {[[LO:%bh[0-9]+]], [[HI:%bh[0-9]+]]}, %r{{[0-9]+}};
// CHECK-NEXT:  cvt.f32.bf16 %f{{[0-9]+}}, [[LO]];
// CHECK-NEXT:  cvt.f32.bf16 %f{{[0-9]+}}, [[HI]];

builtin.module {
  hbm.kernel attributes {sym_name = "read_t", grid = #hbm.labels<n=128>, num_outputs = 1 : i32, reg.warps = #hbm.labels<n=8>} {
  ^bb0(%d: !hbm.global<m=128, n=256 : bf16>, %out: !hbm.global<n=256, m=128 : bf16>, %n0: index):
    %c0 = arith.constant 0 : index
    %buf = smem.alloc : !smem.buffer<m=128, n=128 : bf16, stages=1, layout=swizzle>
    %full = smem.mbarrier_alloc : !smem.mbarrier<stages=1, arrivals=1>
    smem.producer attributes {warps = 4 : i32} {
      smem.arrive_expect %full[%c0] {bytes = 32768 : i32} : !smem.mbarrier<stages=1, arrivals=1>
      smem.tma_copy %d[%c0, %n0] -> %buf[%c0], %full[%c0] : !hbm.global<m=128, n=256 : bf16>, !smem.buffer<m=128, n=128 : bf16, stages=1, layout=swizzle>, !smem.mbarrier<stages=1, arrivals=1>
    }
    smem.mbarrier_wait %full[%c0] parity %c0 : !smem.mbarrier<stages=1, arrivals=1>
    %r = reg.read %buf[%c0] : !smem.buffer<m=128, n=128 : bf16, stages=1, layout=swizzle> -> !reg.frag<c, n=16, m=128 : f32>
    reg.store %r, %out[%n0, %c0] : !reg.frag<c, n=16, m=128 : f32>, !hbm.global<n=256, m=128 : bf16>
    hbm.return
  }
}
