// smem-to-reg{rows="n"}: a GEMM computed with wgmma's rows over the output's columns n (two
// warpgroups of 64, reg.warps n=8) and its N over the rows m, a tile of 152 (any multiple of 8):
// B's [k, n] stage is wgmma's A, A's [m, k] its B; the accumulators' fragment is n x m, and it
// leaves through the output's panels of 64 columns transposed (reg.stmatrix of an n x m
// fragment into an m x 64 buffer: stmatrix.trans).
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:152,n:128" stream="k:64"},ncd-to-hbm,hbm-launch,hbm-to-smem{stages=3 copy="tma" store="tma"},smem-to-reg{mma="wgmma" rows="n"}' | filecheck %s
// A name that is no axis of the accumulator is refused by name.
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:152,n:128" stream="k:64"},ncd-to-hbm,hbm-launch,hbm-to-smem{stages=3 copy="tma" store="tma"},smem-to-reg{mma="wgmma" rows="q"}' 2>&1 | filecheck %s --check-prefix=NAME

// CHECK: hbm.kernel attributes {{.*}}reg.warps = #hbm.labels<n=8>
// CHECK: reg.zeros : !reg.frag<c, n=16, m=152 : f32>
// CHECK: scf.for
// CHECK: reg.wgmma [[B:%.+]][{{%.+}}], [[A:%.+]][{{%.+}}], %acc {at = #hbm.labels<k=0>} : !smem.buffer<k=64, n=128 : bf16, stages=3, layout=swizzle>, !smem.buffer<m=152, k=64 : bf16, stages=3, layout=swizzle>, !reg.frag<c, n=16, m=152 : f32> -> !reg.frag<c, n=16, m=152 : f32>
// CHECK: reg.stmatrix {{%.+}} -> {{%.+}}[{{%.+}}] {at = #hbm.labels<n=0>} : !reg.frag<c, n=16, m=152 : f32>, !smem.buffer<m=152, n=64 : bf16, stages=2, layout=swizzle>
// CHECK: reg.stmatrix {{%.+}} -> {{%.+}}[{{%.+}}] {at = #hbm.labels<n=64>} : !reg.frag<c, n=16, m=152 : f32>, !smem.buffer<m=152, n=64 : bf16, stages=2, layout=swizzle>
// NAME: smem-to-reg: @matmul: rows='q' names no axis of the accumulator !ncd.tensor<m=152, n=128 : f32>
