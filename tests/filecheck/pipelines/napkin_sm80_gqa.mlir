// napkin-sm80 compiles grouped-query attention with a group's query heads packed into a
// block: 128 rows of 4 heads by 32 query positions over 8 warps, two a head, so each K
// and V tile is copied once for the group (cp.async of Q splits each row into its head and
// position). Softmax, causal and spherical, head dims 64 and 128, ragged sequences, 8
// heads a group: each assembles without spills.
// RUN: napkin-opt %examples/gqa_attention.mlir -p napkin-sm80 --print-between-passes -t ptx -o %t.softmax.ptx 2>&1 | filecheck %s --check-prefix=LABELS
// RUN: %ptxas -v -arch=sm_80 %t.softmax.ptx -o %t.softmax.cubin 2>&1 | filecheck %s --check-prefix=NOSPILL
// RUN: filecheck %s < %t.softmax.ptx
// RUN: napkin-opt %examples/gqa_causal_attention.mlir -p napkin-sm80 -t ptx -o %t.causal.ptx
// RUN: %ptxas -v -arch=sm_80 %t.causal.ptx -o %t.causal.cubin 2>&1 | filecheck %s --check-prefix=NOSPILL
// RUN: sed -e 's/i=256/i=1000/g; s/j=256/j=1000/g; s/d=64/d=128/g; s/0.125/0.08838834764831845/' %examples/gqa_causal_attention.mlir | napkin-opt -p napkin-sm80 -t ptx -o %t.c128.ptx
// RUN: %ptxas -v -arch=sm_80 %t.c128.ptx -o %t.c128.cubin 2>&1 | filecheck %s --check-prefix=NOSPILL
// RUN: sed -e 's/r=4/r=8/g; s/i=256/i=77/g; s/j=256/j=77/g; s/ncd.softmax %%s along j scale 0.125/ncd.l2norm %%s along j/' %examples/gqa_attention.mlir | napkin-opt -p napkin-sm80 --print-between-passes -t ptx -o %t.r8.ptx 2>&1 | filecheck %s --check-prefix=EIGHT
// RUN: %ptxas -v -arch=sm_80 %t.r8.ptx -o %t.r8.cubin 2>&1 | filecheck %s --check-prefix=NOSPILL
// four warps: a warp a head, 32 positions each; two warps: a block holds two heads of
// the group (the group over two blocks), 64 positions a warp
// RUN: napkin-opt %examples/gqa_attention.mlir -p 'napkin-sm80{warps="4"}' --print-between-passes -t ptx -o %t.w4.ptx 2>&1 | filecheck %s --check-prefix=FOUR
// RUN: %ptxas -v -arch=sm_80 %t.w4.ptx -o %t.w4.cubin 2>&1 | filecheck %s --check-prefix=NOSPILL
// RUN: napkin-opt %examples/gqa_attention.mlir -p 'napkin-sm80{warps="2"}' --print-between-passes -t ptx -o %t.w2.ptx 2>&1 | filecheck %s --check-prefix=TWO
// RUN: %ptxas -arch=sm_80 %t.w2.ptx -o %t.w2.cubin

// NOSPILL: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// LABELS: ncd.grid = #hbm.labels<b=1, g=1, r=4, i=32>, ncd.stream = #hbm.labels<j=64>
// LABELS: reg.warps = #hbm.labels<r=4, i=2>

// CHECK: .reqntid 256
// CHECK: cp.async.cg.shared.global
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// EIGHT: ncd.grid = #hbm.labels<b=1, g=1, r=8, i=16>, ncd.stream = #hbm.labels<j=64>
// EIGHT: reg.warps = #hbm.labels<r=8, i=1>

// FOUR: ncd.grid = #hbm.labels<b=1, g=1, r=4, i=32>, ncd.stream = #hbm.labels<j=64>
// FOUR: reg.warps = #hbm.labels<r=4, i=1>

// TWO: ncd.grid = #hbm.labels<b=1, g=1, r=2, i=64>, ncd.stream = #hbm.labels<j=64>
// TWO: reg.warps = #hbm.labels<r=2, i=1>
