// reg-to-ptx's kernel rule (ptx_rules/kernel.py): a plain grid of more than three axes.
// Grouped-query attention with one query head a block has the grid b, g, r, i: the last
// axis (i, walked from its end) on %ctaid.x, r on .y, and g and b share .z (g fastest:
// %ctaid.z mod 2 and / 2, a mask and a shift).
// Beyond three axes, an axis of one block takes no %ctaid: its origin is 0.
// RUN: sed -e 's/b=1/b=2/g' %examples/gqa_attention.mlir | napkin-opt -p 'ncd-relabel{grid="b,g,r,i:64" stream="j:64"},ncd-to-hbm,hbm-launch{order=last},hbm-to-smem{stages=2 layout=pad8},smem-to-reg{warps="i:4"},reg-to-ptx' -t ptx --launch-json %t.json | filecheck %s
// RUN: filecheck %s --check-prefix=LAUNCH < %t.json
// RUN: napkin-opt %examples/gqa_attention.mlir -p 'ncd-relabel{grid="b,g,r,i:64" stream="j:64"},ncd-to-hbm,hbm-launch{order=last},hbm-to-smem{stages=2 layout=pad8},smem-to-reg{warps="i:4"},reg-to-ptx' -t ptx --launch-json %t.one.json | filecheck %s --check-prefix=ONE
// RUN: filecheck %s --check-prefix=ONE-LAUNCH < %t.one.json

// CHECK: mov.u32 [[X:%r[0-9]+]], %ctaid.x;
// CHECK-NEXT: mov.u32 [[LAST:%r[0-9]+]], 3;
// CHECK-NEXT: sub.u32 [[I:%r[0-9]+]], [[LAST]], [[X]];
// CHECK: mov.u32 [[Y:%r[0-9]+]], %ctaid.y;
// CHECK: mov.u32 [[Z:%r[0-9]+]], %ctaid.z;
// CHECK-NEXT: mov.u32 [[G:%r[0-9]+]], 1;
// CHECK-NEXT: and.b32 %r{{[0-9]+}}, [[Z]], [[G]];
// CHECK-NEXT: mov.u32 [[G2:%r[0-9]+]], 1;
// CHECK-NEXT: shr.u32 %r{{[0-9]+}}, [[Z]], [[G2]];
// CHECK-NOT: %ctaid

// LAUNCH: "grid": [4, 4, 4],

// b has one block: i on .x, r on .y, g on .z
// ONE: mov.u32 %r{{[0-9]+}}, 0;
// ONE: %ctaid.x;
// ONE: %ctaid.y;
// ONE: mov.u32 [[Z:%r[0-9]+]], %ctaid.z;
// ONE-NEXT: mov.u32 [[ONE:%r[0-9]+]], 1;
// ONE-NEXT: mul.lo.u32 %r{{[0-9]+}}, [[Z]], [[ONE]];
// ONE-LAUNCH: "grid": [4, 4, 2],

// The causal gradient's key blocks (`hbm.order = "last_from_start"`: their streams of queries
// shrink along j) are walked from the start: block j on %ctaid.x, the longest first.
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="causal_attention_grad" results="1,2" cut="delta"},napkin-sm90{persistent=false}' -t ptx | filecheck %s --check-prefix=START
// START: mov.u32 [[J:%r[0-9]+]], %ctaid.x;
// START-NEXT: mov.u32 [[TILE:%r[0-9]+]], 128;
// START-NEXT: mul.lo.u32 %r{{[0-9]+}}, [[J]], [[TILE]];

// A persistent longest-first launch (attention, `order=last`): each block's turn t takes
// pair t / 2 x blocks + block of equal work along i, the last query block with the first:
// 32 pairs of the 64 query blocks (of 128 rows, given: at d=64 the default would be 192)
// of each of 32 heads; an even turn the longer tile
// (63 - pair's place), an odd one the shorter (the place itself). b and h: the pair / 32.
// (Divisions by powers of two are shifts and masks.)
// RUN: sed -e 's/h=4/h=16/g; s/=256/=8192/g' %examples/causal_attention.mlir | napkin-opt -p 'napkin-sm90{persistent=true block="128,128"}' -t ptx | filecheck %s --check-prefix=PERSISTENT
// PERSISTENT: mov.u32 [[B:%r[0-9]+]], %ctaid.x;
// PERSISTENT-NEXT: mov.u32 [[N:%r[0-9]+]], %nctaid.x;
// PERSISTENT: shr.u32 [[HALF:%r[0-9]+]], [[TURN:%r[0-9]+]], %r{{[0-9]+}};
// PERSISTENT-NEXT: mul.lo.u32 [[FIRST:%r[0-9]+]], [[HALF]], [[N]];
// PERSISTENT-NEXT: add.u32 [[PAIR:%r[0-9]+]], [[FIRST]], [[B]];
// PERSISTENT-NEXT: mov.u32 [[PAIRS:%r[0-9]+]], 1024;
// PERSISTENT-NEXT: setp.lt.u32 %p{{[0-9]+}}, [[PAIR]], [[PAIRS]];
// PERSISTENT: and.b32 [[PLACE:%r[0-9]+]], [[PAIR]], %r{{[0-9]+}};
// PERSISTENT: and.b32 [[PARITY:%r[0-9]+]], [[TURN]], %r{{[0-9]+}};
// PERSISTENT: setp.ne.u32 [[SECOND:%p[0-9]+]], [[PARITY]], %r{{[0-9]+}};
// PERSISTENT-NEXT: mov.u32 [[LASTQ:%r[0-9]+]], 63;
// PERSISTENT-NEXT: sub.u32 [[LONGER:%r[0-9]+]], [[LASTQ]], [[PLACE]];
// PERSISTENT-NEXT: selp.u32 %r{{[0-9]+}}, [[PLACE]], [[LONGER]], [[SECOND]];
// PERSISTENT-NEXT: mov.u32 [[PER:%r[0-9]+]], 5;
// PERSISTENT-NEXT: shr.u32 %r{{[0-9]+}}, [[PAIR]], [[PER]];
