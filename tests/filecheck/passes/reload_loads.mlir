// reg-reload-loads: a vector read from a global the kernel only reads, or staged in shared
// memory with its stream's tiles, and used again past a wgmma wait, is read again there.
// Spherical attention's dK and dV kernel divides the scores and dS by the streamed queries'
// norms (staged with Q by the TMA): the norms are read for P, and again for dS after the
// waits for dP and dV's products, not held across them. D (read once) and the causal
// softmax's statistics (each read once) are left alone.
// RUN: napkin-opt %examples/spherical_attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="spherical_attention_grad" results="1,2" cut="delta"},ncd-relabel{grid="b,h,j:64" stream="i:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma},reg-reload-loads' | filecheck %s
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="causal_attention_grad" results="1,2" cut="delta"},ncd-relabel{grid="b,h,j:64" stream="i:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma},reg-reload-loads' | filecheck %s --check-prefix=SOFTMAX
// The attention gradient's one kernel, scheduled: D, read before the wait for dP, is read past
// it, right before dS's math (its registers not held while dP's product runs).
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="attention_grad" results="0,1,2" cut="delta"},ncd-widen-results{result=0},ncd-relabel{grid="b,h,j:128" stream="i:64"},ncd-to-hbm,hbm-launch,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-schedule,reg-reload-loads' | filecheck %s --check-prefix=SINK

// SINK:      scf.for %i0 =
// SINK:      %[[L:.*]] = reg.read %2[
// SINK-NEXT: reg.map sub %{{.*}}, %[[L]]
// SINK:      reg.wgmma_wait {pending = 1 : i32}
// SINK-NEXT: %[[D:.*]] = reg.read %3[%{{.*}}] : !smem.buffer<b=1, h=1, i=64 : f32, stages=2, layout=row> -> !reg.frag<col, i=64 : f32>
// SINK-NEXT: reg.map sub %{{.*}}, %[[D]]

// CHECK:      scf.for %i0 =
// CHECK:      reg.wgmma_wait {pending = 0 : i32}
// CHECK-NEXT: %[[N0:.*]] = reg.read %[[NB:[0-9]+]][%{{.*}}] : !smem.buffer<b=1, h=1, i=64 : f32, stages=2, layout=row> -> !reg.frag<col, i=64 : f32>
// CHECK-NEXT: reg.map div %{{.*}}, %[[N0]]
// CHECK:      reg.wgmma_wait {pending = 0 : i32}
// CHECK:      reg.read
// CHECK-NOT:  reg.wgmma_wait
// CHECK:      %[[N1:.*]] = reg.read %[[NB]][
// CHECK-NEXT: reg.map div %{{.*}}, %[[N1]]
// CHECK-NOT:  %[[N0]]
// CHECK:      scf.yield

// SOFTMAX:     scf.for %i0 =
// SOFTMAX-COUNT-2: reg.read %{{[0-9]+}}[%{{.*}}] : !smem.buffer<b=1, h=1, i=64 : f32
// SOFTMAX-NOT: reg.read %{{[0-9]+}}[%{{.*}}] : !smem.buffer<b=1, h=1, i=64 : f32
// SOFTMAX-NOT: reg.load
// SOFTMAX:     scf.yield

// A hand-written kernel: the vector in %g is read again past the wait; the one in %w, a
// global the kernel also writes, is not (a second read could see the store); a load whose
// first use lies past the wait is moved there (not held across it).
// RUN: napkin-opt %s -p reg-reload-loads | filecheck %s --check-prefix=HAND

// HAND:      %[[G:.*]] = reg.load %g[%c0]
// HAND-NEXT: %[[W:.*]] = reg.load %w[%i0, %c0]
// HAND-NEXT: reg.map div %x, %[[G]]
// HAND-NEXT: reg.map div %x, %[[W]]
// HAND-NEXT: reg.wgmma_wait {pending = 0 : i32}
// HAND-NEXT: %[[L:.*]] = reg.load %g[%c0]
// HAND-NEXT: reg.map div %x, %[[L]]
// HAND-NEXT: %[[G1:.*]] = reg.load %g[%c0]
// HAND-NEXT: reg.map div %x, %[[G1]]
// HAND-NEXT: reg.map div %x, %[[W]]
// HAND-NEXT: reg.map div %x, %[[G1]]
// HAND-NEXT: reg.store

builtin.module {
  hbm.kernel attributes {sym_name = "reload", grid = #hbm.labels<i=16>, num_outputs = 1 : i32, reg.warps = #hbm.labels<i=1>} {
  ^bb0(%g: !hbm.global<d=8 : f32>, %w: !hbm.global<i=16, d=8 : f32>, %i0: index):
    %c0 = arith.constant 0 : index
    %x = reg.fill {value = 2.0 : f32} : !reg.frag<c, i=16, d=8 : f32>
    %n = reg.load %g[%c0] : !hbm.global<d=8 : f32> -> !reg.frag<col, d=8 : f32>
    %m = reg.load %w[%i0, %c0] : !hbm.global<i=16, d=8 : f32> -> !reg.frag<col, d=8 : f32>
    %l = reg.load %g[%c0] : !hbm.global<d=8 : f32> -> !reg.frag<col, d=8 : f32>
    %a = reg.map div %x, %n : !reg.frag<c, i=16, d=8 : f32>, !reg.frag<col, d=8 : f32> -> !reg.frag<c, i=16, d=8 : f32>
    %b = reg.map div %x, %m : !reg.frag<c, i=16, d=8 : f32>, !reg.frag<col, d=8 : f32> -> !reg.frag<c, i=16, d=8 : f32>
    reg.wgmma_wait {pending = 0 : i32}
    %c = reg.map div %x, %l : !reg.frag<c, i=16, d=8 : f32>, !reg.frag<col, d=8 : f32> -> !reg.frag<c, i=16, d=8 : f32>
    %d = reg.map div %x, %n : !reg.frag<c, i=16, d=8 : f32>, !reg.frag<col, d=8 : f32> -> !reg.frag<c, i=16, d=8 : f32>
    %e = reg.map div %x, %m : !reg.frag<c, i=16, d=8 : f32>, !reg.frag<col, d=8 : f32> -> !reg.frag<c, i=16, d=8 : f32>
    %f = reg.map div %x, %n : !reg.frag<c, i=16, d=8 : f32>, !reg.frag<col, d=8 : f32> -> !reg.frag<c, i=16, d=8 : f32>
    reg.store %f, %w[%i0, %c0] : !reg.frag<c, i=16, d=8 : f32>, !hbm.global<i=16, d=8 : f32>
    hbm.return
  }
}
