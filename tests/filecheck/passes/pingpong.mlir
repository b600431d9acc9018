// reg-pingpong: each run of wgmma products (up to the commit a wait follows) is a turn of
// the consumer warpgroups: reg.turn_wait before its first product, reg.turn_pass after its
// commit, one reg.turn_start before the first; the interpreter checks they are taken in
// order and the numbers survive. A kernel of one consumer warpgroup takes no turns. In
// PTX: the last warpgroup hands the first turn over (bar.arrive), each turn is bar.sync on
// this warpgroup's named barrier and bar.arrive on the next one's.
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-overlap,reg-pingpong' | filecheck %s
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 copy=tma},smem-to-reg{mma=wgmma},reg-pingpong' | napkin-run --random-inputs --check | filecheck %s --check-prefix=NUMBERS
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:64" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 copy=tma},smem-to-reg{mma=wgmma},reg-pingpong' | filecheck %s --check-prefix=ONE
// RUN: napkin-opt %examples/attention.mlir -p napkin-sm90 -t ptx | filecheck %s --check-prefix=BARS

// CHECK: reg.turn_start
// CHECK-NEXT: reg.turn_wait
// CHECK-NEXT: reg.wgmma
// CHECK: reg.wgmma_commit
// CHECK-NEXT: reg.turn_pass
// CHECK-NEXT: reg.wgmma_wait {pending = 0 : i32}
// CHECK: scf.for
// CHECK: reg.turn_wait
// CHECK-NEXT: reg.wgmma
// CHECK: reg.wgmma_commit
// CHECK-NEXT: reg.wgmma_rs
// CHECK: reg.wgmma_commit
// CHECK-NEXT: reg.turn_pass
// CHECK-NEXT: reg.wgmma_wait {pending = 1 : i32}
// CHECK: reg.overlapped
// CHECK: reg.turn_wait
// CHECK-NEXT: reg.wgmma_rs

// NUMBERS: check against float64 reference: {{.*}}: ok
// ONE-NOT: reg.turn

// BARS: bar.arrive %r{{[0-9]+}}, 256;
// BARS: bar.sync %r{{[0-9]+}}, 256;
// BARS: wgmma.mma_async
// BARS: bar.arrive %r{{[0-9]+}}, 256;
