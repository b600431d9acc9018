// smem-to-reg{mma=wgmma a_registers=true}: Q, read before the stream loops, is loaded into
// each warp's `a` fragments once, right after its barrier wait (one reg.ldmatrix per
// 16-wide slice of d, shared by the masked and the unmasked loop), and S = Q K^T is one
// reg.wgmma_rs per slice from them; P V is reg.wgmma_rs as before. Without a_registers
// each product of S reads Q from its stage. The reg level keeps the numbers (napkin-run
// against float64), and napkin-sm90{q_registers=true} takes the same route. In a
// persistent block Q's stage is released right after the loads (its next tile's Q then
// lands while this tile's stream runs), not after the stream.
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma a_registers=true}' | filecheck %s
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma a_registers=true}' | napkin-run --random-inputs --check | filecheck %s --check-prefix=NUMBERS
// RUN: napkin-opt %examples/spherical_attention.mlir -p 'ncd-relabel{grid="b,h,i:64" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 copy=tma},smem-to-reg{mma=wgmma a_registers=true},reg-wgmma-overlap' | napkin-run --random-inputs --check | filecheck %s --check-prefix=NUMBERS
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma}' | filecheck %s --check-prefix=SHARED
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-launch{order=last persistent=true},hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma a_registers=true}' | filecheck %s --check-prefix=PERSISTENT
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-launch{order=last persistent=true},hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma a_registers=true},reg-wgmma-overlap,reg-pingpong' | napkin-run --random-inputs --check | filecheck %s --check-prefix=NUMBERS
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-launch{order=last persistent=true},hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma}' | filecheck %s --check-prefix=PERSISTENT-SHARED
// RUN: napkin-opt %examples/causal_attention.mlir -p 'napkin-sm90{q_registers=true}' -t ptx | filecheck %s --check-prefix=PIPELINE
// RUN: not napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2},smem-to-reg{a_registers=true}' 2>&1 | filecheck %s --check-prefix=MMA-SYNC

// CHECK: smem.mbarrier_wait {{.*}} : !smem.mbarrier<stages=1, arrivals=1>
// CHECK-NEXT: [[Q0:%[0-9]+]] = reg.ldmatrix [[Q:%[0-9]+]][%{{.*}}] {at = #hbm.labels<d=0>} : !smem.buffer<b=1, h=1, i=128, d=64 : bf16, stages=1, layout=swizzle> -> !reg.frag<a, i=16, d=16 : bf16>
// CHECK-NEXT: [[Q1:%[0-9]+]] = reg.ldmatrix [[Q]][%{{.*}}] {at = #hbm.labels<d=16>}
// CHECK-NEXT: [[Q2:%[0-9]+]] = reg.ldmatrix [[Q]][%{{.*}}] {at = #hbm.labels<d=32>}
// CHECK-NEXT: [[Q3:%[0-9]+]] = reg.ldmatrix [[Q]][%{{.*}}] {at = #hbm.labels<d=48>}
// CHECK-NEXT: scf.for
// CHECK-NOT: reg.ldmatrix
// CHECK: reg.wgmma_rs [[Q0]], %{{.*}} {at = #hbm.labels<d=0>} : !reg.frag<a, i=16, d=16 : bf16>, !smem.buffer<b=1, h=1, j=64, d=64 : bf16, stages=2, layout=swizzle>, !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<c, i=16, j=64 : f32>
// CHECK-NEXT: reg.wgmma_rs [[Q1]]
// CHECK-NEXT: reg.wgmma_rs [[Q2]]
// CHECK-NEXT: reg.wgmma_rs [[Q3]]
// CHECK-NEXT: reg.wgmma_commit
// CHECK: reg.wgmma_rs %{{.*}} {at = #hbm.labels<j=0>}
// the unmasked loop reads the same fragments
// CHECK: scf.for
// CHECK-NOT: reg.ldmatrix
// CHECK: reg.wgmma_rs [[Q0]], %{{.*}} {at = #hbm.labels<d=0>}
// CHECK-NOT: reg.wgmma %

// SHARED-NOT: reg.ldmatrix
// SHARED: reg.wgmma %{{.*}} {at = #hbm.labels<d=0>}

// PERSISTENT: smem.producer
// PERSISTENT: smem.mbarrier_wait [[EMPTY:%[0-9]+]][%{{.*}}] parity %{{.*}} : !smem.mbarrier<stages=1, arrivals=1>
// PERSISTENT: reg.ldmatrix {{.*}} {at = #hbm.labels<d=48>}
// PERSISTENT-NEXT: smem.arrive [[EMPTY]][%{{.*}}] : !smem.mbarrier<stages=1, arrivals=1>
// PERSISTENT-NEXT: scf.for
// PERSISTENT-NOT: smem.arrive [[EMPTY]]

// the same launch with Q in shared memory releases it after the stream
// PERSISTENT-SHARED: smem.producer
// PERSISTENT-SHARED: smem.mbarrier_wait [[EMPTY:%[0-9]+]][%{{.*}}] parity %{{.*}} : !smem.mbarrier<stages=1, arrivals=1>
// PERSISTENT-SHARED: scf.for
// PERSISTENT-SHARED: scf.for
// PERSISTENT-SHARED: smem.arrive [[EMPTY]][%{{.*}}] : !smem.mbarrier<stages=1, arrivals=1>

// NUMBERS: check against float64 reference: {{.*}}: ok

// PIPELINE: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PIPELINE: wgmma.mma_async.sync.aligned.m64n{{[0-9]+}}k16.f32.bf16.bf16 {{.*}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, %p{{[0-9]+}}, 1, 1, 0;

// MMA-SYNC: smem-to-reg: a_registers=true chooses where wgmma reads A; mma.sync always reads its operands from registers
