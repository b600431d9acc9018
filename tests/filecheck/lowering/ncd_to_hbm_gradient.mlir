// ncd-to-hbm on the attention gradient's dK, a block of keys streaming queries:
// - the tiles it computes put the streamed axis last (the scores are K Q^T: [j, i]);
// - the log-sum-exp and D, one value per streamed query, load per tile (hbm-to-smem leaves
//   them to registers: no stage);
// - the causal mask keeps i >= j with the streamed i as its row: the tiles below the block's
//   first key are skipped (the stream begins at floor(j0 / 64) * 64), the tiles crossing the
//   diagonal run masked, the rest unmasked.
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="causal_attention_grad" result=1 cut="delta"},ncd-relabel{grid="b,h,j:128" stream="i:64"},ncd-to-hbm' | filecheck %s
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="causal_attention_grad" result=1 cut="delta"},ncd-relabel{grid="b,h,j:128" stream="i:64"},ncd-to-hbm,hbm-to-smem{stages=2 layout=pad8}' | filecheck %s --check-prefix=SMEM

// CHECK:       %i_begin = arith.muli {{%.+}}, %[[T:.+]] : index
// CHECK:       %i_masked = arith.minui
// CHECK:       scf.for %i0 = %i_begin to %i_masked step %[[T]]
// CHECK:         %s = ncd.contract %q_tile, %k_tile over [d] : {{.*}} -> !ncd.tensor<b=1, h=1, j=128, i=64 : f32>
// CHECK-NEXT:    ncd.mask causal %s keep i >= j fill -inf at [%i0, %j0] : !ncd.tensor<b=1, h=1, j=128, i=64 : f32>
// CHECK:         %lse_tile = hbm.load %lse[%b0, %h0, %i0]
// CHECK:         %delta_tile = hbm.load %delta[%b0, %h0, %i0]
// CHECK:       scf.for %i0_1 = %i_masked to %{{.+}} step %[[T]]
// CHECK-NOT:     ncd.mask causal
// CHECK:         ncd.contract
// SMEM:        smem.alloc : !smem.buffer<b=1, h=1, i=64, d=64 : bf16, stages=2, layout=pad8>
// SMEM-NOT:    smem.alloc : !smem.buffer<{{.*}}i=64 : f32
// SMEM:        hbm.load %lse
// SMEM:        hbm.load %delta
