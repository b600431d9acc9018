// napkin-model on grouped-query attention at the reg level, a group's 4 query heads packed
// into a block (warps <r=4, i=2>: each warp holds one head): every warp stores its own
// head's rows, so O is written once, whole (4 heads x 256 x 64 x 2 bytes x 2 groups), and
// K and V are read once per block for the group's 4 heads (causal: up to the diagonal).
// RUN: napkin-opt %examples/gqa_causal_attention.mlir -p 'ncd-relabel{grid="b,g,r:4,i:32" stream="j:128"},ncd-to-hbm,hbm-launch{order=last},hbm-to-smem{stages=3 copy=tma},smem-to-reg{mma=wgmma}' | napkin-model - | filecheck %s
// RUN: napkin-opt %examples/gqa_causal_attention.mlir -p 'ncd-relabel{grid="b,g,r:4,i:32" stream="j:64"},ncd-to-hbm,hbm-launch{order=last},hbm-to-smem{stages=2 layout=pad8},smem-to-reg{warps="r:4,i:2"}' | napkin-model - | filecheck %s

// CHECK: @gqa_causal_attention: reg level
// CHECK-NEXT: grid b:1, g:1, r:4, i:32: 1 x 2 x 1 x 8 = 16 blocks of {{[0-9]+}} warps
// CHECK: q read {{ +}}262144
// CHECK: out written {{ +}}262144
