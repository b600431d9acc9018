// smem-to-reg on a kernel with no product whose rows are shorter than 256 columns (the
// attention backward's D = rowsum(dO * O) over a head dim of 64): each warp's rows become
// `line` fragments of span 64 (a row across 8 lanes, 4 rows a warp at a time), the row sum
// a `line` fragment of the rows alone with the same span. A row of 72 columns, which no
// lanes hold evenly, and a warp's rows that are not a whole number of 4 are refused, each
// saying what would do.
// RUN: napkin-opt %examples/attention_delta.mlir -p 'ncd-relabel{grid="b,h,i:16"},ncd-to-hbm,hbm-to-smem,smem-to-reg{warps="i:4"}' | filecheck %s
// RUN: sed -e 's/d=64/d=128/g' %examples/attention_delta.mlir | napkin-opt -p 'ncd-relabel{grid="b,h,i:16"},ncd-to-hbm,hbm-to-smem,smem-to-reg{warps="i:4"}' | filecheck %s --check-prefix=D128
// RUN: sed -e 's/d=64/d=72/g' %examples/attention_delta.mlir | not napkin-opt -p 'ncd-relabel{grid="b,h,i:16"},ncd-to-hbm,hbm-to-smem,smem-to-reg{warps="i:4"}' 2>&1 | filecheck %s --check-prefix=D72
// RUN: not napkin-opt %examples/attention_delta.mlir -p 'ncd-relabel{grid="b,h,i:8"},ncd-to-hbm,hbm-to-smem,smem-to-reg{warps="i:4"}' 2>&1 | filecheck %s --check-prefix=STEP

// CHECK:      reg.warps = #hbm.labels<i=4>
// CHECK:      [[O:%.+]] = reg.read {{%.+}} : !smem.buffer<b=1, h=1, i=16, d=64 : bf16, stages=1, layout=row> -> !reg.frag<line, i=4, d=64 : f32, span=64>
// CHECK:      [[DO:%.+]] = reg.read {{%.+}} : !smem.buffer<b=1, h=1, i=16, d=64 : bf16, stages=1, layout=row> -> !reg.frag<line, i=4, d=64 : f32, span=64>
// CHECK-NEXT: [[P:%.+]] = reg.map mul [[DO]], [[O]] : !reg.frag<line, i=4, d=64 : f32, span=64>, !reg.frag<line, i=4, d=64 : f32, span=64> -> !reg.frag<line, i=4, d=64 : f32, span=64>
// CHECK-NEXT: [[D:%.+]] = reg.row_reduce sum [[P]] : !reg.frag<line, i=4, d=64 : f32, span=64> -> !reg.frag<line, i=4 : f32, span=64>
// CHECK-NEXT: reg.store [[D]], {{%.+}} : !reg.frag<line, i=4 : f32, span=64>, !hbm.global<b=2, h=4, i=256 : f32>

// D128: reg.row_reduce sum {{%.+}} : !reg.frag<line, i=4, d=128 : f32, span=128> -> !reg.frag<line, i=4 : f32, span=128>

// D72: napkin-opt: error: smem-to-reg: @attention_delta: the rows along 'd' are 72 columns long, which a warp cannot hold: each lane holds 8 adjacent columns (16 bytes of bf16) of a row that lies across 1, 2, 4, 8, 16 or 32 lanes, so a row is 8, 16, 32, 64, 128 or a multiple of 256 columns long; pad the rows to 128

// STEP: napkin-opt: error: smem-to-reg: @attention_delta: rows of 64 columns lie across 8 lanes, a warp holding 4 at a time, so each warp's rows ('i') must be a multiple of 4; 8 rows a block over 4 warp(s) give each 2: use a multiple of 16 rows a block, or 2 warp(s)
