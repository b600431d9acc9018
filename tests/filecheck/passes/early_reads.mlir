// reg-early-reads: a row statistic staged in shared memory, which the results of a block's
// first awaited products meet, is read right after the wait that fills its stage, before
// any product is issued. The attention gradient's one kernel: the log-sum-exp, staged with
// Q, is read after Q's wait, before S's products; D, staged with dO and met after the wait
// for dP, stays where it is read.
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="attention_grad" results="0,1,2" cut="delta"},ncd-widen-results{result=0},ncd-relabel{grid="b,h,j:128" stream="i:64"},ncd-to-hbm,hbm-launch,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-schedule,reg-reload-loads,reg-early-reads' | filecheck %s

// CHECK:      smem.tma_copy %lse[{{.*}}] -> %[[LSE:[0-9]+]][%{{.*}}], %[[FULL:[0-9]+]][
// CHECK:      smem.tma_copy %delta[{{.*}}] -> %[[D:[0-9]+]][
// CHECK:      scf.for %i0 =
// CHECK:      smem.mbarrier_wait %[[FULL]][%[[S:[0-9]+]]]
// CHECK-NEXT: %[[L:[0-9]+]] = reg.read %[[LSE]][%[[S]]]
// CHECK-NEXT: reg.zeros
// CHECK-NEXT: reg.wgmma
// CHECK:      reg.wgmma_wait {pending = 1 : i32}
// CHECK-NOT:  reg.read
// CHECK:      reg.map sub %{{.*}}, %[[L]]
// CHECK:      reg.wgmma_wait {pending = 1 : i32}
// CHECK-NEXT: %[[DV:[0-9]+]] = reg.read %[[D]][%[[S]]]
// CHECK-NEXT: reg.map sub %{{.*}}, %[[DV]]

// With later=true, D is read just before the wait for dP, whose results it meets.
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="attention_grad" results="0,1,2" cut="delta"},ncd-widen-results{result=0},ncd-relabel{grid="b,h,j:128" stream="i:64"},ncd-to-hbm,hbm-launch,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-schedule,reg-reload-loads,reg-early-reads{later=true}' | filecheck %s --check-prefix=LATER

// LATER:      smem.tma_copy %lse[{{.*}}] -> %[[LSE:[0-9]+]][%{{.*}}], %[[FULL:[0-9]+]][
// LATER:      smem.tma_copy %delta[{{.*}}] -> %[[D:[0-9]+]][
// LATER:      scf.for %i0 =
// LATER:      smem.mbarrier_wait %[[FULL]][%[[S:[0-9]+]]]
// LATER-NEXT: %[[L:[0-9]+]] = reg.read %[[LSE]][%[[S]]]
// LATER:      reg.wgmma_wait {pending = 1 : i32}
// LATER-NOT:  reg.read
// LATER:      reg.map sub %{{.*}}, %[[L]]
// LATER:      %[[DV:[0-9]+]] = reg.read %[[D]][%[[S]]]
// LATER-NEXT: reg.wgmma_wait {pending = 1 : i32}
// LATER-NEXT: reg.map sub %{{.*}}, %[[DV]]

// A hand-written kernel: %a (filled through %full, waited for, met after the first wait)
// moves to the wait; %c (filled through %other, which this block does not wait on) and %b
// (met only after the second wait) stay.
// RUN: napkin-opt %s -p reg-early-reads | filecheck %s --check-prefix=HAND

// HAND:      smem.mbarrier_wait %full[%c0]
// HAND-NEXT: %ra = reg.read %a[%c0]
// HAND-NEXT: reg.fill
// HAND-NEXT: reg.wgmma_commit
// HAND-NEXT: reg.wgmma_wait {pending = 0 : i32}
// HAND-NEXT: reg.map scale
// HAND-NEXT: %rc = reg.read %c[%c0]
// HAND-NEXT: reg.map sub %y, %ra
// HAND-NEXT: reg.map sub %p, %rc
// HAND-NEXT: reg.wgmma_wait {pending = 0 : i32}
// HAND-NEXT: %rb = reg.read %b[%c0]

// later=true: %b, met after the second wait and filled through %full, which the block
// waited on before it, is read just before that wait; with first=false, %a stays where
// it was read.
// RUN: napkin-opt %s -p 'reg-early-reads{later=true}' | filecheck %s --check-prefix=BOTH
// RUN: napkin-opt %s -p 'reg-early-reads{first=false later=true}' | filecheck %s --check-prefix=LATERONLY

// BOTH:      smem.mbarrier_wait %full[%c0]
// BOTH-NEXT: %ra = reg.read %a[%c0]
// BOTH:      reg.map sub %p, %rc
// BOTH-NEXT: %rb = reg.read %b[%c0]
// BOTH-NEXT: reg.wgmma_wait {pending = 0 : i32}
// BOTH-NEXT: reg.map sub %q, %rb

// LATERONLY:      smem.mbarrier_wait %full[%c0]
// LATERONLY-NEXT: reg.fill
// LATERONLY:      reg.map scale
// LATERONLY-NEXT: %ra = reg.read %a[%c0]
// LATERONLY:      reg.map sub %p, %rc
// LATERONLY-NEXT: %rb = reg.read %b[%c0]
// LATERONLY-NEXT: reg.wgmma_wait {pending = 0 : i32}

builtin.module {
  hbm.kernel attributes {sym_name = "early", grid = #hbm.labels<j=64>, num_outputs = 1 : i32, reg.warps = #hbm.labels<j=4>} {
  ^bb0(%g: !hbm.global<i=64 : f32>, %w: !hbm.global<i=64 : f32>, %o: !hbm.global<j=64, i=64 : f32>, %j0: index):
    %c0 = arith.constant 0 : index
    %a = smem.alloc : !smem.buffer<i=64 : f32, stages=1, layout=row>
    %b = smem.alloc : !smem.buffer<i=64 : f32, stages=1, layout=row>
    %c = smem.alloc : !smem.buffer<i=64 : f32, stages=1, layout=row>
    %full = smem.mbarrier_alloc : !smem.mbarrier<stages=1, arrivals=1>
    %other = smem.mbarrier_alloc : !smem.mbarrier<stages=1, arrivals=1>
    smem.producer attributes {warps = 4 : i32} {
      smem.tma_copy %g[%c0] -> %a[%c0], %full[%c0] : !hbm.global<i=64 : f32>, !smem.buffer<i=64 : f32, stages=1, layout=row>, !smem.mbarrier<stages=1, arrivals=1>
      smem.tma_copy %g[%c0] -> %b[%c0], %full[%c0] : !hbm.global<i=64 : f32>, !smem.buffer<i=64 : f32, stages=1, layout=row>, !smem.mbarrier<stages=1, arrivals=1>
      smem.tma_copy %w[%c0] -> %c[%c0], %other[%c0] : !hbm.global<i=64 : f32>, !smem.buffer<i=64 : f32, stages=1, layout=row>, !smem.mbarrier<stages=1, arrivals=1>
    }
    smem.mbarrier_wait %full[%c0] parity %c0 : !smem.mbarrier<stages=1, arrivals=1>
    %x = reg.fill {value = 2.0 : f32} : !reg.frag<c, j=16, i=64 : f32>
    reg.wgmma_commit
    reg.wgmma_wait {pending = 0 : i32}
    %y = reg.map scale %x by 0.5 : !reg.frag<c, j=16, i=64 : f32> -> !reg.frag<c, j=16, i=64 : f32>
    %ra = reg.read %a[%c0] : !smem.buffer<i=64 : f32, stages=1, layout=row> -> !reg.frag<col, i=64 : f32>
    %rc = reg.read %c[%c0] : !smem.buffer<i=64 : f32, stages=1, layout=row> -> !reg.frag<col, i=64 : f32>
    %p = reg.map sub %y, %ra : !reg.frag<c, j=16, i=64 : f32>, !reg.frag<col, i=64 : f32> -> !reg.frag<c, j=16, i=64 : f32>
    %q = reg.map sub %p, %rc : !reg.frag<c, j=16, i=64 : f32>, !reg.frag<col, i=64 : f32> -> !reg.frag<c, j=16, i=64 : f32>
    reg.wgmma_wait {pending = 0 : i32}
    %rb = reg.read %b[%c0] : !smem.buffer<i=64 : f32, stages=1, layout=row> -> !reg.frag<col, i=64 : f32>
    %r = reg.map sub %q, %rb : !reg.frag<c, j=16, i=64 : f32>, !reg.frag<col, i=64 : f32> -> !reg.frag<c, j=16, i=64 : f32>
    reg.store %r, %o[%j0, %c0] : !reg.frag<c, j=16, i=64 : f32>, !hbm.global<j=64, i=64 : f32>
    hbm.return
  }
}
