// smem-to-reg (mma.sync), from hand-written shared-memory-level IR (what hbm-to-smem gives
// with cp.async): a 16 x 16 GEMM tile streamed 16 along k through two stages, one warp.
// The f32 accumulator becomes the warp's c fragment (hbm.fill 0.0: reg.zeros), carried by
// the loop; contract(read A, read B) + acc becomes, per 16-wide k slice, reg.ldmatrix of
// A and B from the stage the reads named and reg.mma onto acc; the copies, waits and
// barrier stay; the cast and store at the end become one reg.store of the f32 fragment
// into the bf16 global. The loop keeps its facts.
// RUN: napkin-opt %s -p 'smem-to-reg{warps="m:1,n:1"}' | filecheck %s

// CHECK:       hbm.kernel attributes {{{.*}}reg.warps = #hbm.labels<m=1, n=1>}
// CHECK:       [[ZERO:%.+]] = reg.zeros : !reg.frag<c, m=16, n=16 : f32>
// CHECK-NOT:   hbm.fill
// CHECK:       [[SA:%.+]] = smem.alloc : !smem.buffer<m=16, k=16 : bf16, stages=2, layout=row>
// CHECK-NEXT:  [[SB:%.+]] = smem.alloc : !smem.buffer<k=16, n=16 : bf16, stages=2, layout=row>
// CHECK:       scf.for %k0 = %c0 to %c32 step %c16 iter_args([[ACC:%.+]] = [[ZERO]]) -> (!reg.frag<c, m=16, n=16 : f32>) {
// CHECK:         [[S:%.+]] = arith.remui
// CHECK-NEXT:    smem.wait {pending = 0 : i32}
// CHECK-NEXT:    smem.barrier
// CHECK-NOT:     smem.read
// CHECK:         smem.commit
// CHECK-NEXT:    [[FA:%.+]] = reg.ldmatrix [[SA]][[[S]]] {at = #hbm.labels<k=0>} : !smem.buffer<m=16, k=16 : bf16, stages=2, layout=row> -> !reg.frag<a, m=16, k=16 : bf16>
// CHECK-NEXT:    [[FB:%.+]] = reg.ldmatrix [[SB]][[[S]]] {at = #hbm.labels<k=0>} : !smem.buffer<k=16, n=16 : bf16, stages=2, layout=row> -> !reg.frag<b, k=16, n=16 : bf16>
// CHECK-NEXT:    [[P:%.+]] = reg.mma [[FA]], [[FB]], [[ACC]] : !reg.frag<a, m=16, k=16 : bf16>, !reg.frag<b, k=16, n=16 : bf16>, !reg.frag<c, m=16, n=16 : f32> -> !reg.frag<c, m=16, n=16 : f32>
// CHECK-NEXT:    scf.yield [[P]] : !reg.frag<c, m=16, n=16 : f32>
// CHECK-NOT:   ncd.
// CHECK:       reg.store %c, %out[%m0, %n0] : !reg.frag<c, m=16, n=16 : f32>, !hbm.global<m=32, n=32 : bf16>
// CHECK-NEXT:  hbm.return

builtin.module {
  hbm.kernel attributes {sym_name = "mm", grid = #hbm.labels<m=16, n=16>, num_outputs = 1 : i32} {
  ^bb0(%a: !hbm.global<m=32, k=32 : bf16>, %b: !hbm.global<k=32, n=32 : bf16>, %out: !hbm.global<m=32, n=32 : bf16>, %m0: index, %n0: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %zero = hbm.fill {value = 0.000000e+00 : f32} : !ncd.tensor<m=16, n=16 : f32>
    %sa = smem.alloc : !smem.buffer<m=16, k=16 : bf16, stages=2, layout=row>
    %sb = smem.alloc : !smem.buffer<k=16, n=16 : bf16, stages=2, layout=row>
    smem.copy %a[%m0, %c0] -> %sa[%c0] : !hbm.global<m=32, k=32 : bf16>, !smem.buffer<m=16, k=16 : bf16, stages=2, layout=row>
    smem.copy %b[%c0, %n0] -> %sb[%c0] : !hbm.global<k=32, n=32 : bf16>, !smem.buffer<k=16, n=16 : bf16, stages=2, layout=row>
    smem.commit
    %c = scf.for %k0 = %c0 to %c32 step %c16 iter_args(%acc = %zero) -> (!ncd.tensor<m=16, n=16 : f32>) {
      %t = arith.divui %k0, %c16 : index
      %s = arith.remui %t, %c2 : index
      smem.wait {pending = 0 : i32}
      smem.barrier
      %a_tile = smem.read %sa[%s] : !smem.buffer<m=16, k=16 : bf16, stages=2, layout=row> -> !ncd.tensor<m=16, k=16 : bf16>
      %b_tile = smem.read %sb[%s] : !smem.buffer<k=16, n=16 : bf16, stages=2, layout=row> -> !ncd.tensor<k=16, n=16 : bf16>
      %next = arith.addi %k0, %c16 : index
      %t1 = arith.addi %t, %c1 : index
      %s1 = arith.remui %t1, %c2 : index
      smem.copy %a[%m0, %next] -> %sa[%s1] : !hbm.global<m=32, k=32 : bf16>, !smem.buffer<m=16, k=16 : bf16, stages=2, layout=row>
      smem.copy %b[%next, %n0] -> %sb[%s1] : !hbm.global<k=32, n=32 : bf16>, !smem.buffer<k=16, n=16 : bf16, stages=2, layout=row>
      smem.commit
      %p = ncd.contract %a_tile, %b_tile over [k] : !ncd.tensor<m=16, k=16 : bf16>, !ncd.tensor<k=16, n=16 : bf16> -> !ncd.tensor<m=16, n=16 : f32>
      %acc_new = ncd.map add %acc, %p : !ncd.tensor<m=16, n=16 : f32>, !ncd.tensor<m=16, n=16 : f32> -> !ncd.tensor<m=16, n=16 : f32>
      scf.yield %acc_new : !ncd.tensor<m=16, n=16 : f32>
    } {hbm.stream = #hbm.stream<k>, smem.pipeline = #smem.pipeline<stages=2, copy=cp_async>}
    smem.wait {pending = 0 : i32}
    %c_bf16 = ncd.map cast %c : !ncd.tensor<m=16, n=16 : f32> -> !ncd.tensor<m=16, n=16 : bf16>
    hbm.store %c_bf16, %out[%m0, %n0] : !ncd.tensor<m=16, n=16 : bf16>, !hbm.global<m=32, n=32 : bf16>
    hbm.return
  }
}
