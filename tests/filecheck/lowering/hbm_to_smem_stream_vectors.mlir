// hbm-to-smem with copy=tma: a statistic of the streamed rows (the attention gradient's
// log-sum-exp and D, one f32 a streamed query) rides with the tiles first used before it:
// the producer copies the log-sum-exp on Q's full barrier (its bytes counted with Q's:
// 8192 + 256) and D on dO's, into plain f32 buffers of the ring's stages; the consumers read
// each from the stage after the tile's wait. reg-to-ptx copies each with one unswizzled
// TMA box and reads a lane's columns in pairs from shared memory, not from global memory.
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="attention_grad" results="0,1,2" cut="delta"},ncd-widen-results{result=0},ncd-relabel{grid="b,h,j:128" stream="i:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma}' | filecheck %s
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="attention_grad" results="0,1,2" cut="delta"},ncd-widen-results{result=0},napkin-sm90' -t ptx | filecheck %s --check-prefix=PTX
// A statistic mapped on its own before the tiles it rides with are used (the log-sum-exp in
// base 2 where no row kernel wrote it: ncd-fold-log2e, then only D cut): the consumers wait
// for the group and read it before that map, not at the tile's first use (FOLDED).
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-fold-log2e,ncd-extract{function="attention_grad" result=1 cut="delta"},ncd-relabel{grid="b,h,j:128" stream="i:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma}' | filecheck %s --check-prefix=FOLDED
// FOLDED:      scf.for %i0 =
// FOLDED:      smem.mbarrier_wait
// FOLDED:      %lse_tile = smem.read
// FOLDED-NEXT: %lse_log2 = ncd.map scale %lse_tile by 1.44269
// FOLDED-NEXT: %s = ncd.contract %q_tile, %k_tile

// CHECK-DAG:  %[[LSE:.*]] = smem.alloc : !smem.buffer<b=1, h=1, i=64 : f32, stages=2, layout=row>
// CHECK:      smem.producer
// CHECK:      smem.arrive_expect %[[QFULL:.*]][%{{.*}}] {bytes = 8448 : i32}
// CHECK-NEXT: smem.tma_copy %q[
// CHECK-NEXT: smem.tma_copy %lse[%b0, %h0, %{{.*}}] -> %{{.*}}[%{{.*}}], %[[QFULL]][
// CHECK:      smem.arrive_expect %[[OFULL:.*]][%{{.*}}] {bytes = 8448 : i32}
// CHECK-NEXT: smem.tma_copy %d_o[
// CHECK-NEXT: smem.tma_copy %delta[%b0, %h0, %{{.*}}] -> %{{.*}}[%{{.*}}], %[[OFULL]][
// CHECK:      scf.for %i0 =
// CHECK:      smem.mbarrier_wait %[[QFULL]]
// CHECK-NEXT: %q_tile = smem.read
// CHECK-NEXT: %lse_tile = smem.read %{{.*}} : !smem.buffer<b=1, h=1, i=64 : f32, stages=2, layout=row> -> !ncd.tensor<b=1, h=1, i=64 : f32>
// CHECK:      smem.mbarrier_wait %[[OFULL]]
// CHECK-NEXT: %d_o_tile = smem.read
// CHECK-NEXT: %delta_tile = smem.read
// CHECK-NOT:  hbm.load %lse
// CHECK-NOT:  hbm.load %delta

// PTX-NOT:   ld.global.v2.f32
// PTX:       cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes
// PTX:       cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes
// PTX:       ld.shared.v2.f32 {%f{{[0-9]+}}, %f{{[0-9]+}}}, [[[V:%r[0-9]+]]];
// PTX-NEXT:  ld.shared.v2.f32 {%f{{[0-9]+}}, %f{{[0-9]+}}}, [[[V]]+32];
// PTX-COUNT-6: ld.shared.v2.f32
// PTX-NOT:   ld.global.v2.f32
