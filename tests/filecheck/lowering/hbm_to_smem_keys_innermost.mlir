// hbm-to-smem with copy=tma: a tile computed in the stream and contracted along the block's
// rows goes through shared memory. The attention gradient's dS in blocks of 128 keys: at 80
// queries a tile its rows of queries (160 bytes) fill no 128-byte panel, so the buffer holds
// the keys innermost (two panels of 64 keys: each warpgroup's keys in one) and dQ^T reads it
// K-major. reg-to-ptx writes it by stmatrix.trans, every warp at its panel (no branch), with
// N = 80 products; dV's products (P rounded for them) are issued between dS's writes and
// the writers' meeting; dK's A operand from registers is the pairs the stmatrix rounded (no
// second rounding past it); the statistics' stages lie 384 bytes apart (320, rounded up to
// the TMA's 128-byte alignment); ptxas spills nothing. The example at head dim 128 with 256
// queries: the last tile of 80 is ragged.
// RUN: sed -e 's/d=64/d=128/g; s/0.125/0.08838834764831845/' %examples/attention.mlir | napkin-opt -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="attention_grad" results="0,1,2" cut="delta"},ncd-widen-results{result=0},ncd-relabel{grid="b,h,j:128" stream="i:80"},ncd-to-hbm,hbm-launch,hbm-to-smem{stages=2 copy=tma}' | filecheck %s
// RUN: sed -e 's/d=64/d=128/g; s/0.125/0.08838834764831845/' %examples/attention.mlir | napkin-opt -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="attention_grad" results="0,1,2" cut="delta"},ncd-widen-results{result=0},napkin-sm90{block="128,80"}' -t ptx -o %t.ptx
// RUN: filecheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas -v -arch=sm_90a %t.ptx -o %t.cubin 2>&1 | filecheck %s --check-prefix=REPORT

// CHECK:      %[[DS:[0-9]+]] = smem.alloc : !smem.buffer<b=1, h=1, i=80, j=128 : bf16, stages=2, layout=swizzle>
// CHECK:      scf.for %i0 =
// CHECK:      smem.write %d_s16 -> %[[DS]][%{{.*}}] {at = #hbm.labels<>} : !ncd.tensor<b=1, h=1, j=128, i=80 : bf16>, !smem.buffer<b=1, h=1, i=80, j=128 : bf16, stages=2, layout=swizzle>
// CHECK-NEXT: smem.barrier {async_proxy}
// CHECK-NEXT: %[[R:.*]] = smem.read %[[DS]][%{{.*}}] : !smem.buffer<b=1, h=1, i=80, j=128 : bf16, stages=2, layout=swizzle> -> !ncd.tensor<b=1, h=1, i=80, j=128 : bf16>
// CHECK-NEXT: ncd.contract %[[R]], %k_tile over [j]

// PTX:       mov.u32 %r{{[0-9]+}}, 384;
// PTX:       wgmma.mma_async.sync.aligned.m64n80k16.f32.bf16.bf16
// PTX:       stmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTX-NOT:   bra
// PTX-COUNT-4: stmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTX-NOT:   {{bra|m64n80k16}}
// PTX-COUNT-5: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX-NOT:   {{bra|cvt.rn.bf16x2}}
// PTX:       bar.sync 1, 256;
// PTX-NOT:   cvt.rn.bf16x2
// PTX-COUNT-8: wgmma.mma_async.sync.aligned.m64n80k16.f32.bf16.bf16
// PTX-NOT:   cvt.rn.bf16x2
// PTX:       wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16

// REPORT-NOT: serialized
// REPORT:     0 bytes spill stores, 0 bytes spill loads
