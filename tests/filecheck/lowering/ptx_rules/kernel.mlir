// reg-to-ptx's kernel rule (ptx_rules/kernel.py): a plain grid of more than three axes.
// Grouped-query attention with one query head a block has the grid b, g, r, i: the last
// axis (i, walked from its end) on %ctaid.x, r on .y, and g and b share .z (g fastest).
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
// CHECK-NEXT: mov.u32 [[G:%r[0-9]+]], 2;
// CHECK-NEXT: rem.u32 %r{{[0-9]+}}, [[Z]], [[G]];
// CHECK-NEXT: mov.u32 [[G2:%r[0-9]+]], 2;
// CHECK-NEXT: div.u32 %r{{[0-9]+}}, [[Z]], [[G2]];
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
