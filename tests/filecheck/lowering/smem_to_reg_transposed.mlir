// smem-to-reg: a product's accumulator whose second axis is the one the warps split (the MLP's
// dW1 [k, h], warps="h:8") takes those rows as its fragment's rows: the product is computed
// transposed, h x k, so that dH, a tile computed in registers with rows h, is its A (reg.to_a,
// as attention's P is) and X [m, k] its B from shared memory; the accumulators are stored
// transposed (reg.store of an h x k fragment into the [k, h] output).
// RUN: napkin-opt %examples/mlp.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="mlp_grad" result=1},ncd-relabel{grid="h:128" stream="m:64"},ncd-to-hbm,hbm-to-smem{stages=2 layout="pad8"},smem-to-reg{warps="h:8"}' | filecheck %s
// Stored through shared memory for TMA, the rows would be the panels' columns: refused by name.
// RUN: not napkin-opt %examples/mlp.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="mlp_grad" result=1},ncd-relabel{grid="h:128" stream="m:64"},ncd-to-hbm,hbm-launch,hbm-to-smem{copy="tma" store="tma"},smem-to-reg{mma="wgmma"},reg-to-ptx{arch="sm_90a"}' -t ptx 2>&1 | filecheck %s --check-prefix=STMATRIX

// CHECK: reg.zeros : !reg.frag<c, h=16, k=128 : f32>
// CHECK: scf.for
// CHECK: [[DH:%.+]] = reg.map mul {{.*}} -> !reg.frag<c, h=16, m=64 : f32>
// CHECK: [[A:%.+]] = reg.to_a [[DH]] {at = #hbm.labels<m=0>} : !reg.frag<c, h=16, m=64 : f32> -> !reg.frag<a, h=16, m=16 : bf16>
// CHECK-NEXT: [[B:%.+]] = reg.ldmatrix {{.*}} : !smem.buffer<m=64, k=128 : bf16, stages=2, layout=pad8> -> !reg.frag<b, m=16, k=128 : bf16>
// CHECK-NEXT: reg.mma [[A]], [[B]], {{.*}} -> !reg.frag<c, h=16, k=128 : f32>
// CHECK: reg.store {{.*}} : !reg.frag<c, h=16, k=128 : f32>, !hbm.global<k=128, h=512 : bf16>
// STMATRIX: smem-to-reg: @mlp_grad_w1: stmatrix writes a fragment's rows as rows of the panel; the rows of !reg.frag<c, h=16, k=128 : f32> ('h') are the columns of !smem.buffer<k=128, h=64 : bf16, stages=2, layout=swizzle> (a product computed transposed): it leaves from registers
