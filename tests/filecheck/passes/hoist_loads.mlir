// reg-hoist-loads: a reg.load whose offsets no trip changes, from a global the kernel only
// reads, leaves the loop. The causal attention gradient's dQ kernel (blocks of queries,
// keys streamed): the queries' log-sum-exp and D are read once before each of its two
// loops, none inside; the numbers survive on the interpreter. The dK and dV kernel
// streams the queries: their statistics move with the loop and stay in it.
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
// KV:     reg.load %lse[%b0, %h0, %i0]
// KV:     reg.load %delta[%b0, %h0, %i0]
// KV:     scf.yield
