// ncd-to-hbm and hbm-to-smem{copy=tma} take grouped-query attention as they are: with a
// group's 4 query heads whole in a block (grid "r:4"), Q's tile is heads by positions
// (<r=4, i=32>: one copy of 16 KiB, 128 rows), and K's and V's tiles, which lack r, are
// copied once for all four heads; the causal stream ends at the block's last position.
// RUN: napkin-opt %examples/gqa_causal_attention.mlir -p 'ncd-relabel{grid="b,g,r:4,i:32" stream="j:128"},ncd-to-hbm' | filecheck %s --check-prefix=HBM
// RUN: napkin-opt %examples/gqa_causal_attention.mlir -p 'ncd-relabel{grid="b,g,r:4,i:32" stream="j:128"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma}' | filecheck %s
// RUN: sed -e 's/i=256/i=77/g; s/j=256/j=77/g' %examples/gqa_causal_attention.mlir | napkin-opt -p 'ncd-relabel{grid="b,g,r:4,i:32" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma}' | napkin-run --random-inputs --check | filecheck %s --check-prefix=NUMBERS
// store=tma: the output's panels are the block's heads by positions by 64 columns, one box each
// RUN: napkin-opt %examples/gqa_causal_attention.mlir -p 'ncd-relabel{grid="b,g,r:4,i:32" stream="j:128"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma store=tma}' | filecheck %s --check-prefix=STORE
// RUN: sed -e 's/i=256/i=77/g; s/j=256/j=77/g' %examples/gqa_causal_attention.mlir | napkin-opt -p 'ncd-relabel{grid="b,g,r:4,i:32" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma store=tma}' | napkin-run --random-inputs --check | filecheck %s --check-prefix=NUMBERS

// HBM: hbm.kernel attributes {sym_name = "gqa_causal_attention", grid = #hbm.labels<b=1, g=1, r=4, i=32>
// HBM: %q_tile = hbm.load %q[%b0, %g0, %r0, %i0, %c0] : !hbm.global<b=1, g=2, r=4, i=256, d=64 : bf16> -> !ncd.tensor<b=1, g=1, r=4, i=32, d=64 : bf16>
// HBM: %i_end = arith.addi %i0, %{{.*}} : index
// HBM: %k_tile = hbm.load %k[%b0, %g0, %j0, %c0] : !hbm.global<b=1, g=2, j=256, d=64 : bf16> -> !ncd.tensor<b=1, g=1, j=128, d=64 : bf16>
// HBM: ncd.contract %q_tile, %k_tile over [d] : {{.*}} -> !ncd.tensor<b=1, g=1, r=4, i=32, j=128 : f32>
// HBM: ncd.mask causal %{{.*}} keep i >= j fill -inf at [%i0, %{{.*}}] : !ncd.tensor<b=1, g=1, r=4, i=32, j=128 : f32>
// HBM: hbm.store %{{.*}}, %out[%b0, %g0, %r0, %i0, %c0] : !ncd.tensor<b=1, g=1, r=4, i=32, d=64 : bf16>

// CHECK: smem.alloc : !smem.buffer<b=1, g=1, j=128, d=64 : bf16, stages=2, layout=swizzle>
// CHECK: smem.alloc : !smem.buffer<b=1, g=1, r=4, i=32, d=64 : bf16, stages=1, layout=swizzle>
// CHECK: smem.producer
// CHECK: smem.arrive_expect %{{.*}} {bytes = 16384 : i32} : !smem.mbarrier<stages=1, arrivals=1>
// CHECK-NEXT: smem.tma_copy %q[%b0, %g0, %r0, %i0, %c0] -> {{.*}} : !hbm.global<b=1, g=2, r=4, i=256, d=64 : bf16>, !smem.buffer<b=1, g=1, r=4, i=32, d=64 : bf16, stages=1, layout=swizzle>
// CHECK: smem.tma_copy %k[%b0, %g0, %{{.*}}, %c0]
// CHECK: smem.tma_copy %v[%b0, %g0, %{{.*}}, %c0]

// NUMBERS: check against float64 reference: {{.*}}: ok

// STORE: %[[PANEL:.*]] = smem.alloc : !smem.buffer<b=1, g=1, r=4, i=32, d=64 : bf16, stages=2, layout=swizzle>
// STORE: smem.write %{{.*}} -> %[[PANEL]][%{{.*}}] {at = #hbm.labels<d=0>}
// STORE-NEXT: smem.tma_store %[[PANEL]][%{{.*}}] -> %out[%b0, %g0, %r0, %i0, %c0]
// STORE-NOT: hbm.store
