// smem-to-reg on grouped-query attention whose block packs a group's query heads (r) by
// query positions (i): 4 heads by 32 positions. Every place of r has warps of its own,
// which hold it: fragments lack r, the masks compare each row's own position along i and
// the store writes each warp's rows at its head. With mma=wgmma the warps are found from
// the products' rows (`r=4, i=2`: 16 rows of one head a warp), and A (Q) folds its rows
// from r and i; with mma.sync they are given (`warps="r:4,i:2"`).
// RUN: napkin-opt %examples/gqa_causal_attention.mlir -p 'ncd-relabel{grid="b,g,r:4,i:32" stream="j:128"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma}' | filecheck %s
// RUN: napkin-opt %examples/gqa_causal_attention.mlir -p 'ncd-relabel{grid="b,g,r:4,i:32" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 layout=pad8},smem-to-reg{warps="r:4,i:2"}' | filecheck %s --check-prefix=SYNC
// the numbers, against float64, on the CPU
// RUN: sed -e 's/i=256/i=77/g; s/j=256/j=77/g' %examples/gqa_causal_attention.mlir | napkin-opt -p 'ncd-relabel{grid="b,g,r:4,i:32" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma}' | napkin-run --random-inputs --check | filecheck %s --check-prefix=NUMBERS
// RUN: sed -e 's/i=256/i=77/g; s/j=256/j=77/g' %examples/gqa_attention.mlir | napkin-opt -p 'ncd-relabel{grid="b,g,r:4,i:16" stream="j:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8},smem-to-reg{warps="r:4,i:1"}' | napkin-run --random-inputs --check | filecheck %s --check-prefix=NUMBERS
// what the warps cannot hold
// RUN: not napkin-opt %examples/gqa_causal_attention.mlir -p 'ncd-relabel{grid="b,g,r:4,i:32" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 layout=pad8},smem-to-reg{warps="r:2,i:2"}' 2>&1 | filecheck %s --check-prefix=HELD
// RUN: not napkin-opt %examples/gqa_causal_attention.mlir -p 'ncd-relabel{grid="b,g,r:4,i:8" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma}' 2>&1 | filecheck %s --check-prefix=ROWS
// RUN: sed -e 's/r=4/r=8/g' %examples/gqa_causal_attention.mlir | not napkin-opt -p 'ncd-relabel{grid="b,g,r:8,i:8" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma}' 2>&1 | filecheck %s --check-prefix=SIXTEEN

// CHECK: hbm.kernel attributes {{{.*}}reg.warps = #hbm.labels<r=4, i=2>}
// CHECK: reg.fill {value = 0xff800000 : f32} : !reg.frag<row, i=16 : f32>
// CHECK: reg.zeros : !reg.frag<c, i=16, d=64 : f32>
// CHECK: reg.wgmma %{{.*}} {at = #hbm.labels<d=0>} : !smem.buffer<b=1, g=1, r=4, i=32, d=64 : bf16, stages=1, layout=swizzle>, !smem.buffer<b=1, g=1, j=128, d=64 : bf16, stages=2, layout=swizzle>, !reg.frag<c, i=16, j=128 : f32> -> !reg.frag<c, i=16, j=128 : f32>
// CHECK: reg.row_reduce max %{{.*}} : !reg.frag<c, i=16, j=128 : f32> -> !reg.frag<row, i=16 : f32>
// CHECK: reg.wgmma_rs %{{.*}} : !reg.frag<a, i=16, j=16 : bf16>, !smem.buffer<b=1, g=1, j=128, d=64 : bf16, stages=2, layout=swizzle>, !reg.frag<c, i=16, d=64 : f32> -> !reg.frag<c, i=16, d=64 : f32>
// the diagonal tiles: each row's own query position
// CHECK: reg.mask causal %{{.*}} keep i >= j fill -inf at [%i0, %{{.*}}] : !reg.frag<c, i=16, j=128 : f32>
// CHECK: reg.store %{{.*}}, %out[%b0, %g0, %r0, %i0, %c0] : !reg.frag<c, i=16, d=64 : f32>, !hbm.global<b=1, g=2, r=4, i=256, d=64 : bf16>

// SYNC: hbm.kernel attributes {{{.*}}reg.warps = #hbm.labels<r=4, i=2>}
// SYNC: reg.ldmatrix %{{.*}} {at = #hbm.labels<d=0>} : !smem.buffer<b=1, g=1, r=4, i=32, d=64 : bf16, stages=1, layout=pad8> -> !reg.frag<a, i=16, d=16 : bf16>
// SYNC: reg.mma %{{.*}} : !reg.frag<a, i=16, d=16 : bf16>, !reg.frag<b, d=16, j=64 : bf16>, !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<c, i=16, j=64 : f32>
// SYNC: reg.mask causal %{{.*}} keep i >= j fill -inf at [%i0, %{{.*}}] : !reg.frag<c, i=16, j=64 : f32>
// SYNC: reg.store %{{.*}}, %out[%b0, %g0, %r0, %i0, %c0] : !reg.frag<c, i=16, d=64 : f32>

// NUMBERS: check against float64 reference: {{.*}}: ok

// HELD: smem-to-reg: @gqa_causal_attention: a tile computed in registers has one or two axes of more than one place, got !ncd.tensor<b=1, g=1, r=4, i=32, j=64 : f32>; warps that hold a place each of r take it out of the fragments (warps="r:4,...")
// ROWS: smem-to-reg: @gqa_causal_attention: wgmma splits the tile's 4 (r) x 8 (i) rows over warpgroups of 64; the rows must be 64, 128, 192 or 256
// SIXTEEN: smem-to-reg: @gqa_causal_attention: the block's rows are r x i: each warp holds 16 rows of one place of r, so the tile's 8 along 'i' must be a multiple of 16
