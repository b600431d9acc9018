// smem-to-reg{mma=wgmma} on attention: the consumer warps split the query rows, 16 each
// (warpgroups of 64); S = Q K^T is one reg.wgmma per 16-wide slice of d from the stages,
// committed and waited for before the softmax reads it; P, rounded to bf16, is packed into
// `a` fragments (all before the first product of its group) for reg.wgmma_rs with V.
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:128"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma}' | filecheck %s
// RUN: napkin-opt %examples/spherical_attention.mlir -p 'ncd-relabel{grid="b,h,i:64" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 copy=tma},smem-to-reg{mma=wgmma}' | napkin-run --random-inputs --check | filecheck %s --check-prefix=NUMBERS
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:128"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma}' | napkin-run --random-inputs --check | filecheck %s --check-prefix=NUMBERS
// RUN: not napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:32" stream="j:128"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma}' 2>&1 | filecheck %s --check-prefix=ROWS

// CHECK: reg.warps = #hbm.labels<i=8>
// CHECK: scf.for %j0 = {{.*}} iter_args(%row_max = %{{.*}}, %row_sum = %{{.*}}, %acc = %{{.*}}) -> (!reg.frag<row, i=16 : f32>, !reg.frag<row, i=16 : f32>, !reg.frag<c, i=16, d=64 : f32>)
// CHECK: %[[S0:.*]] = reg.wgmma %{{.*}}, %{{.*}}, %{{.*}} {at = #hbm.labels<d=0>} : !smem.buffer<b=1, h=1, i=128, d=64 : bf16, stages=1, layout=swizzle>, !smem.buffer<b=1, h=1, j=128, d=64 : bf16, stages=2, layout=swizzle>, !reg.frag<c, i=16, j=128 : f32> -> !reg.frag<c, i=16, j=128 : f32>
// CHECK: reg.wgmma {{.*}} {at = #hbm.labels<d=48>}
// CHECK-NEXT: reg.wgmma_commit
// CHECK-NEXT: reg.wgmma_wait {pending = 0 : i32}
// CHECK: reg.row_reduce max
// CHECK: reg.map exp2
// CHECK: %[[P0:.*]] = reg.to_a %{{.*}} {at = #hbm.labels<j=0>}
// CHECK-COUNT-7: reg.to_a
// CHECK-NEXT: reg.wgmma_rs %[[P0]], %{{.*}}, %{{.*}} {at = #hbm.labels<j=0>} : !reg.frag<a, i=16, j=16 : bf16>, !smem.buffer<b=1, h=1, j=128, d=64 : bf16, stages=2, layout=swizzle>, !reg.frag<c, i=16, d=64 : f32> -> !reg.frag<c, i=16, d=64 : f32>
// CHECK-COUNT-7: reg.wgmma_rs
// CHECK-NEXT: reg.wgmma_commit
// CHECK-NEXT: reg.wgmma_wait {pending = 0 : i32}
// CHECK: smem.arrive
// CHECK: reg.store

// NUMBERS: check against float64 reference: {{.*}}: ok
// ROWS: smem-to-reg: @attention: wgmma splits the tile's 32 rows over warpgroups of 64; the rows must be 64, 128, 192 or 256
