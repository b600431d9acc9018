// hbm-to-smem on attention: Q copied once, K and V streamed through one pipeline that
// runs across the unmasked and the masked loop of a causal stream, the copies guarded by
// where the block's stream ends.
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8}' | filecheck %s
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 layout=pad8}' | filecheck %s --check-prefix=FIXED
// RUN: sed -e 's/j=256/j=200/g' %examples/attention.mlir | napkin-opt -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8}' | filecheck %s --check-prefix=RAGGED
// RUN: not napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:256" stream="j:256"},ncd-to-hbm,hbm-to-smem{stages=4 layout=pad8}' 2>&1 | filecheck %s --check-prefix=BUDGET

// Q: a one-stage buffer, its own group, where it was loaded.
// CHECK:      [[Q:%.+]] = smem.alloc : !smem.buffer<b=1, h=1, i=128, d=64 : bf16, stages=1, layout=pad8>
// CHECK-NEXT: [[Z:%.+]] = arith.constant 0 : index
// CHECK-NEXT: smem.copy %q[%b0, %h0, %i0, %c0] -> [[Q]][[[Z]]]
// CHECK-NEXT: smem.commit
// CHECK:      %j_end = arith.minui
// CHECK:      %j_masked = arith.minui
// CHECK:      [[K:%.+]] = smem.alloc : !smem.buffer<b=1, h=1, j=64, d=64 : bf16, stages=3, layout=pad8>
// CHECK-NEXT: [[V:%.+]] = smem.alloc : !smem.buffer<b=1, h=1, j=64, d=64 : bf16, stages=3, layout=pad8>
// The prologue: tiles 0 and 1, each only where the stream reaches it.
// CHECK:      [[IN0:%.+]] = arith.cmpi ult, [[P0:%.+]], %j_end : index
// CHECK-NEXT: scf.if [[IN0]] {
// CHECK-NEXT:   smem.copy %k[%b0, %h0, [[P0]], %c0] -> [[K]]
// CHECK-NEXT:   smem.copy %v[%b0, %h0, [[P0]], %c0] -> [[V]]
// CHECK-NEXT: }
// CHECK-NEXT: smem.commit
// CHECK:      scf.if
// CHECK:      smem.commit
// Q is read after its group (the prologue's two may stay in flight) and a barrier.
// CHECK-NEXT: smem.wait {pending = 2 : i32}
// CHECK-NEXT: smem.barrier
// CHECK-NEXT: [[QT:%.+]] = smem.read [[Q]][[[Z]]]
// The unmasked loop: tile numbers count from the stream's start.
// CHECK-NEXT: scf.for %j0 = %c0 to %j_masked
// CHECK:      [[T:%.+]] = arith.divui %j0,
// CHECK-NEXT: [[S:%.+]] = arith.remui [[T]]
// CHECK-NEXT: smem.wait {pending = 1 : i32}
// CHECK-NEXT: smem.barrier
// CHECK-NEXT: [[KT:%.+]] = smem.read [[K]][[[S]]]
// CHECK-NEXT: [[VT:%.+]] = smem.read [[V]][[[S]]]
// CHECK:      [[IN:%.+]] = arith.cmpi ult, [[NXT:%.+]], %j_end : index
// CHECK-NEXT: scf.if [[IN]] {
// CHECK-NEXT:   smem.copy %k[%b0, %h0, [[NXT]], %c0]
// CHECK-NEXT:   smem.copy %v[%b0, %h0, [[NXT]], %c0]
// CHECK-NEXT: }
// CHECK-NEXT: smem.commit
// CHECK:      ncd.contract [[QT]], [[KT]] over [d]
// CHECK:      } {hbm.stream = #hbm.stream<j>, smem.pipeline = #smem.pipeline<stages=3, copy=cp_async>}
// The masked loop goes on with the same buffers and the same count; no wait in between.
// CHECK-NEXT: scf.for %j0_1 = %j_masked to %j_end
// CHECK:      arith.divui %j0_1,
// CHECK:      smem.wait {pending = 1 : i32}
// CHECK:      smem.read [[K]]
// CHECK:      ncd.mask causal
// CHECK:      } {hbm.stream = #hbm.stream<j>, smem.pipeline = #smem.pipeline<stages=3, copy=cp_async>}
// CHECK-NEXT: smem.wait {pending = 0 : i32}
// CHECK-NOT:  hbm.load

// Known bounds: no guards.
// FIXED:     smem.commit
// FIXED-NOT: scf.if
// FIXED:     smem.wait {pending = 1 : i32}
// FIXED-NEXT: smem.barrier
// FIXED-NEXT: smem.read
// FIXED-NEXT: scf.for %j0 = %c0 to
// FIXED:     smem.wait {pending = 0 : i32}
// FIXED-NOT: scf.if

// A ragged key axis: the unmasked tiles, then the last one masked, one pipeline.
// RAGGED:      scf.for %j0 = %c0 to [[E:%.+]] step
// RAGGED:      } {hbm.stream = #hbm.stream<j>, smem.pipeline = #smem.pipeline<stages=3, copy=cp_async>}
// RAGGED:      scf.for %j0_1 = [[E]] to
// RAGGED:      ncd.mask_bound
// RAGGED:      } {hbm.stream = #hbm.stream<j>, smem.pipeline = #smem.pipeline<stages=3, copy=cp_async>}
// RAGGED-NEXT: smem.wait {pending = 0 : i32}

// BUDGET: napkin-opt: error: hbm-to-smem: @attention needs {{[0-9]+}} bytes of shared memory ({{.*}}stages=1{{.*}}), over the budget of 232448; use fewer stages or smaller tiles
