// reg-hoist-loads: a reg.load whose offsets no trip changes, from a global the kernel only
// reads, leaves the loop. The causal attention gradient's dQ kernel (blocks of queries,
// keys streamed): the queries' log-sum-exp and D are read once before each of its two
// loops, none inside; the numbers survive on the interpreter. The dK and dV kernel
// streams the queries: their statistics move with the loop and come with its tiles (read
// from shared memory in it).
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="causal_attention_grad" result=0 cut="delta"},ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma},reg-hoist-loads' | filecheck %s
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="causal_attention_grad" results="1,2" cut="delta"},ncd-relabel{grid="b,h,j:64" stream="i:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma},reg-hoist-loads' | filecheck %s --check-prefix=KV

// CHECK:      %[[L0:.*]] = reg.load %lse[%b0, %h0, %i0]
// CHECK-NEXT: %[[D0:.*]] = reg.load %delta[%b0, %h0, %i0]
// CHECK-NEXT: scf.for %j0 =
// CHECK-NOT:  reg.load
// CHECK:      } {hbm.stream = #hbm.stream<j>
// CHECK-NEXT: %[[L1:.*]] = reg.load %lse[%b0, %h0, %i0]
// CHECK-NEXT: %[[D1:.*]] = reg.load %delta[%b0, %h0, %i0]
// CHECK-NEXT: scf.for %j0_1 =
// CHECK-NOT:  reg.load
// CHECK:      } {hbm.stream = #hbm.stream<j>

// KV:     scf.for %i0 =
// KV:     reg.read %{{[0-9]+}}[%{{.*}}] : !smem.buffer<b=1, h=1, i=64 : f32, stages=2, layout=row>
// KV:     reg.read %{{[0-9]+}}[%{{.*}}] : !smem.buffer<b=1, h=1, i=64 : f32, stages=2, layout=row>
// KV:     scf.yield

// A hand-written kernel: the vector in %g leaves the loop; the one in %w, a global the
// kernel also writes inside the loop, stays (a later trip reads what an earlier wrote),
// as does a load whose offset is the loop's induction variable.
// RUN: napkin-opt %s -p reg-hoist-loads | filecheck %s --check-prefix=HAND

// HAND:      %[[G:.*]] = reg.load %g[%c0]
// HAND-NEXT: scf.for %[[I:.*]] = %c0 to %c4 step %c1 {
// HAND-NEXT:   %[[W:.*]] = reg.load %w[%i0, %c0]
// HAND-NEXT:   %[[L:.*]] = reg.load %g[%[[I]]]
// HAND-NOT:    reg.load
// HAND:        reg.store
// HAND:      }

builtin.module {
  hbm.kernel attributes {sym_name = "hoist", grid = #hbm.labels<i=16>, num_outputs = 1 : i32, reg.warps = #hbm.labels<i=1>} {
  ^bb0(%g: !hbm.global<d=32 : f32>, %w: !hbm.global<i=16, d=8 : f32>, %i0: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %x = reg.fill {value = 2.0 : f32} : !reg.frag<c, i=16, d=8 : f32>
    scf.for %t = %c0 to %c4 step %c1 {
      %n = reg.load %g[%c0] : !hbm.global<d=32 : f32> -> !reg.frag<col, d=8 : f32>
      %m = reg.load %w[%i0, %c0] : !hbm.global<i=16, d=8 : f32> -> !reg.frag<col, d=8 : f32>
      %l = reg.load %g[%t] : !hbm.global<d=32 : f32> -> !reg.frag<col, d=8 : f32>
      %a = reg.map div %x, %n : !reg.frag<c, i=16, d=8 : f32>, !reg.frag<col, d=8 : f32> -> !reg.frag<c, i=16, d=8 : f32>
      %b = reg.map div %a, %m : !reg.frag<c, i=16, d=8 : f32>, !reg.frag<col, d=8 : f32> -> !reg.frag<c, i=16, d=8 : f32>
      %c = reg.map div %b, %l : !reg.frag<c, i=16, d=8 : f32>, !reg.frag<col, d=8 : f32> -> !reg.frag<c, i=16, d=8 : f32>
      reg.store %c, %w[%i0, %c0] : !reg.frag<c, i=16, d=8 : f32>, !hbm.global<i=16, d=8 : f32>
    }
    hbm.return
  }
}
