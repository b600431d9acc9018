// napkin-sm90 compiles grouped-query attention with a group's query heads packed into a
// block: 128 rows of 4 heads by 32 query positions (8 by 16; on a long stream at d=64,
// 192 rows of 4 heads by 48), so each K and V tile is TMA-loaded once for all of them. Q
// arrives as one 5-D box (heads x positions x 64) into the block's swizzled rows, and the
// output leaves the same way (stmatrix, a 5-D TMA store); the
// causal mask and the ragged rows go by each row's own position.
// Softmax, causal and spherical, head dims 64 and 128, 4 and 8 heads a group, bf16 and
// f16, even and ragged sequences: each assembles without spills. Q is held in registers
// (ldmatrix from the packed rows' panels) and keys stream 128 a tile.
// RUN: napkin-opt %examples/gqa_attention.mlir -p napkin-sm90 --print-between-passes -t ptx -o %t.softmax.ptx 2>&1 | filecheck %s --check-prefix=LABELS
// RUN: %ptxas -v -arch=sm_90a %t.softmax.ptx -o %t.softmax.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s < %t.softmax.ptx
// RUN: napkin-opt %examples/gqa_causal_attention.mlir -p napkin-sm90 -t ptx -o %t.causal.ptx
// RUN: %ptxas -v -arch=sm_90a %t.causal.ptx -o %t.causal.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=CAUSAL < %t.causal.ptx
// RUN: sed -e 's/i=256/i=1000/g; s/j=256/j=1000/g; s/d=64/d=128/g; s/0.125/0.08838834764831845/' %examples/gqa_causal_attention.mlir | napkin-opt -p napkin-sm90 -t ptx -o %t.c128.ptx
// RUN: %ptxas -v -arch=sm_90a %t.c128.ptx -o %t.c128.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: sed -e 's/r=4/r=8/g; s/i=256/i=77/g; s/j=256/j=77/g; s/bf16/f16/g' %examples/gqa_causal_attention.mlir | napkin-opt -p napkin-sm90 --print-between-passes -t ptx -o %t.r8.ptx 2>&1 | filecheck %s --check-prefix=EIGHT
// RUN: %ptxas -v -arch=sm_90a %t.r8.ptx -o %t.r8.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: sed -e 's/r=4/r=8/g; s/d=64/d=128/g; s/ncd.softmax %%s along j scale 0.125/ncd.l2norm %%s along j/' %examples/gqa_attention.mlir | napkin-opt -p napkin-sm90 -t ptx -o %t.sph.ptx
// RUN: %ptxas -v -arch=sm_90a %t.sph.ptx -o %t.sph.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=SPHERICAL < %t.sph.ptx
// a group of 3 heads does not divide 128 rows into whole warps' rows a head: one head a block
// a long stream at d=64: three consumer warpgroups, 192 rows of 4 heads by 48 positions
// (86 blocks along 4096 queries, the last ragged), Q in shared memory, a block a tile
// RUN: sed -e 's/i=256/i=4096/g; s/j=256/j=4096/g' %examples/gqa_attention.mlir | napkin-opt -p napkin-sm90 --print-between-passes -t ptx -o %t.long.ptx --launch-json %t.long.json 2>&1 | filecheck %s --check-prefix=LONG
// RUN: %ptxas -v -arch=sm_90a %t.long.ptx -o %t.long.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=LONG-PTX < %t.long.ptx
// RUN: filecheck %s --check-prefix=LONG-LAUNCH < %t.long.json
// RUN: sed -e 's/r=4/r=3/g' %examples/gqa_causal_attention.mlir | napkin-opt -p napkin-sm90 --print-between-passes -t ptx -o %t.r3.ptx 2>&1 | filecheck %s --check-prefix=THREE
// RUN: %ptxas -v -arch=sm_90a %t.r3.ptx -o %t.r3.cubin 2>&1 | filecheck %s --check-prefix=REPORT

// REPORT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// LABELS: ncd.grid = #hbm.labels<b=1, g=1, r=4, i=32>, ncd.stream = #hbm.labels<j=128>
// LABELS: reg.warps = #hbm.labels<r=4, i=2>

// CHECK: .maxntid 384
// CHECK: cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK: cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK-COUNT-4: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{{.*}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, %p{{[0-9]+}}, 1, 1, 0;
// CHECK: ex2.approx.ftz.f32
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// the output by stmatrix into a panel of the heads' rows, then one 5-D box
// CHECK: stmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: cp.async.bulk.tensor.5d.global.shared::cta.bulk_group

// CAUSAL: wgmma.mma_async.sync.aligned.m64n128k16
// the diagonal tiles, masked, in a loop of their own
// CAUSAL: setp.{{.*}}
// CAUSAL: wgmma.mma_async.sync.aligned.m64n128k16

// EIGHT: ncd.grid = #hbm.labels<b=1, g=1, r=8, i=16>, ncd.stream = #hbm.labels<j=64>
// EIGHT: reg.warps = #hbm.labels<r=8, i=1>

// SPHERICAL-NOT: ex2.approx
// SPHERICAL-DAG: sqrt
// SPHERICAL-DAG: wgmma.mma_async.sync.aligned.m64n128k16

// THREE: ncd.grid = #hbm.labels<b=1, g=1, r=1, i=128>, ncd.stream = #hbm.labels<j=128>
// THREE: reg.warps = #hbm.labels<i=8>

// LONG: ncd.grid = #hbm.labels<b=1, g=1, r=4, i=48>, ncd.stream = #hbm.labels<j=128>
// LONG: reg.warps = #hbm.labels<r=4, i=3>
// LONG-PTX: .maxntid 512
// LONG-PTX: setmaxnreg.inc.sync.aligned.u32 160;
// LONG-PTX-NOT: ldmatrix
// LONG-PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, %p{{[0-9]+}}, 1, 1, 0, 0;
// LONG-LAUNCH: "grid": [86,
// LONG-LAUNCH: "persistent_blocks_per_sm": 0,
