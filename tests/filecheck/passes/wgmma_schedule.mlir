// reg-wgmma-schedule: in a loop whose groups are each waited for right after their commit,
// each group is issued as soon as its operands are ready (taking along the wait on its
// stage's full barrier and its zeros) and waited for just before its results are first
// read; releases made right after a group's wait move to the loop's end, after one wait
// for all. The causal attention gradient's dK and dV: S and dP in flight together, then
// dV in flight while dS is computed, dK last. The interpreter checks the numbers survive
// (against the same kernel unscheduled). A loop reg-wgmma-overlap has pipelined (waits
// that leave a group pending) is left as it is.
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="causal_attention_grad" results="1,2" cut="delta"},ncd-relabel{grid="b,h,j:64" stream="i:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-schedule' | filecheck %s
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="attention_grad" results="0,1,2" cut="delta"},ncd-widen-results{result=0},ncd-relabel{grid="b,h,j:128" stream="i:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-schedule' | filecheck %s --check-prefix=ROLE
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="attention_grad" results="0,1,2" cut="delta"},ncd-widen-results{result=0},ncd-relabel{grid="b,h,j:128" stream="i:128"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-schedule' | filecheck %s --check-prefix=RS
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-overlap' > %t.overlapped.mlir
// RUN: napkin-opt %t.overlapped.mlir -p reg-wgmma-schedule > %t.scheduled.mlir
// RUN: diff %t.overlapped.mlir %t.scheduled.mlir
// RUN: not napkin-opt %examples/row_softmax.mlir -p 'napkin-sm90{schedule=true}' -t ptx 2>&1 | filecheck %s --check-prefix=ROWS
// RUN: napkin-opt %examples/attention.mlir -p 'napkin-sm90{schedule=false}' --dump-pass-pipeline -o /dev/null 2>&1 | filecheck %s --check-prefix=OFF

// the masked loop, then the unmasked one: the same order in each
// CHECK-COUNT-2: scf.for
// CHECK:      smem.mbarrier_wait
// CHECK-NEXT: reg.zeros
// CHECK-NEXT: reg.wgmma
// CHECK:      reg.wgmma_commit
// CHECK-NEXT: smem.mbarrier_wait
// CHECK-NEXT: reg.zeros
// CHECK-NEXT: reg.wgmma
// CHECK:      reg.wgmma_commit
// CHECK-NEXT: reg.wgmma_wait {pending = 1 : i32}
// CHECK-NEXT: reg.mask causal
// CHECK:      reg.map exp2
// CHECK:      reg.wgmma_rs
// CHECK:      reg.wgmma_commit
// CHECK-NEXT: reg.read %{{[0-9]+}}[%{{.*}}] : !smem.buffer<b=1, h=1, i=64 : f32, stages=2, layout=row>
// CHECK-NEXT: reg.wgmma_wait {pending = 1 : i32}
// CHECK-NEXT: reg.map sub
// CHECK:      reg.wgmma_rs
// CHECK:      reg.wgmma_commit
// CHECK-NEXT: reg.wgmma_wait {pending = 0 : i32}
// CHECK-NEXT: smem.arrive
// CHECK-NEXT: smem.arrive
// CHECK-NEXT: scf.yield

// dQ, dK and dV from one kernel, dQ added by a store role: the consumers' wait for dQ's
// stage (on the ring the role gives stages back on) does not keep dO's release from the
// loop's end, so dV's product still runs under dS (one group left in flight); dQ's stage is
// written while dK's product runs and handed to the role before its wait (the group reads
// none of the role's buffers), then the releases
// ROLE:      reg.wgmma_rs
// ROLE:      reg.wgmma_commit
// ROLE-NEXT: reg.read %{{[0-9]+}}[%{{.*}}] : !smem.buffer<b=1, h=1, i=64 : f32, stages=2, layout=row>
// ROLE-NEXT: reg.wgmma_wait {pending = 1 : i32}
// ROLE:      smem.barrier {async_proxy}
// ROLE:      reg.wgmma_rs
// ROLE:      reg.wgmma_commit
// ROLE:      smem.mbarrier_wait
// ROLE-NEXT: reg.wgmma_wait {pending = 1 : i32}
// ROLE-NEXT: reg.write
// ROLE-NEXT: smem.arrive %{{.*}} {async_proxy}
// ROLE-NEXT: reg.wgmma_wait {pending = 0 : i32}
// ROLE-NEXT: smem.arrive
// ROLE-NEXT: smem.arrive
// ROLE-NEXT: scf.yield

// The same kernel at 128 queries a tile: issued right after P, dV's product would hold
// P's bf16 copy beside S, dP, D and the accumulators while dS is computed, past a consumer's
// 240 registers; so it is issued after dS's math and dS's write into its stage (a buffer
// it does not read), its conversions with it, just before the writers' fenced meeting, so
// that it runs while they wait (FlashAttention-4's order); dP is waited for with S's group
// retired first
// RS:      scf.for %i0
// RS:      reg.wgmma_wait {pending = 1 : i32}
// RS:      reg.map exp2
// RS-NEXT: reg.read
// RS-NEXT: reg.wgmma_wait {pending = 0 : i32}
// RS-NEXT: reg.map sub
// RS-NEXT: reg.map mul
// RS-NEXT: reg.map scale
// RS-NOT:  reg.wgmma
// RS:      reg.stmatrix
// RS-NEXT: reg.to_a
// RS:      reg.wgmma_rs
// RS:      reg.wgmma_commit
// RS-NEXT: smem.barrier {async_proxy}

// ROWS: napkin-sm90: schedule=true orders wgmma groups; this kernel's products are none (a row reduction)
// OFF: reg-wgmma-overlap,reg-pingpong,reg-reload-loads,reg-to-ptx
