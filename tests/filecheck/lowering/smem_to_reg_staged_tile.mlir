// smem-to-reg: a staged 16-bit tile cast to f32 for math with the accumulators (the GEMM
// epilogue's gradient: dC, multiplied by the recomputed exp(0.5 A B)) is each warp's `c`
// fragment of it, read where the cast stands (`reg.read`), before its stage is released.
// dA = (dC * C) B^T takes the product as its first operand (`reg.to_a`); dB = A^T (dC * C),
// whose block recomputes C^T (rows n, the warps' axis), reads dC transposed and computes
// dB^T = (dC * C)^T A, so that the product is again the first operand (`reg.to_a`), on
// mma.sync and on wgmma (`reg.wgmma_rs`).
// RUN: napkin-opt %examples/gemm_exp.mlir -p 'ncd-grad,ncd-fold-casts,ncd-extract{function="gemm_exp_grad" result=0},ncd-relabel{grid="m:128" stream="n:64"},ncd-to-hbm,hbm-to-smem{layout=pad8},smem-to-reg{warps="m:8"}' | filecheck %s --check-prefix=DA
// RUN: napkin-opt %examples/gemm_exp.mlir -p 'ncd-grad,ncd-fold-casts,ncd-extract{function="gemm_exp_grad" result=1},ncd-relabel{grid="n:128" stream="m:64"},ncd-to-hbm,hbm-to-smem{layout=pad8},smem-to-reg{warps="n:8"}' | filecheck %s --check-prefix=DB
// RUN: napkin-opt %examples/gemm_exp.mlir -p 'ncd-grad,ncd-fold-casts,ncd-extract{function="gemm_exp_grad" result=0},ncd-relabel{grid="m:128" stream="n:64"},ncd-to-hbm,hbm-to-smem{copy=tma},smem-to-reg{mma=wgmma}' | filecheck %s --check-prefix=WGMMA
// RUN: napkin-opt %examples/gemm_exp.mlir -p 'ncd-grad,ncd-fold-casts,ncd-extract{function="gemm_exp_grad" result=1},ncd-relabel{grid="n:128" stream="m:128"},ncd-to-hbm,hbm-to-smem{copy=tma},smem-to-reg{mma=wgmma}' 2>&1 | filecheck %s --check-prefix=WGMMA-B

// DA: scf.for
// DA: [[E:%[0-9]+]] = reg.map exp2 %{{.*}} : !reg.frag<c, m=16, n=64 : f32>
// DA-NEXT: [[DC:%[0-9]+]] = reg.read [[BUF:%[0-9]+]][[[S:%[0-9]+]]] : !smem.buffer<m=128, n=64 : bf16, stages=3, layout=pad8> -> !reg.frag<c, m=16, n=64 : f32>
// DA-NEXT: [[P:%[0-9]+]] = reg.map mul [[DC]], [[E]] : !reg.frag<c, m=16, n=64 : f32>, !reg.frag<c, m=16, n=64 : f32> -> !reg.frag<c, m=16, n=64 : f32>
// DA-NEXT: [[G:%[0-9]+]] = reg.map scale [[P]] by 0.5
// DA-NEXT: reg.to_a [[G]] {at = #hbm.labels<n=0>} : !reg.frag<c, m=16, n=64 : f32> -> !reg.frag<a, m=16, n=16 : bf16>
// DA-NOT: smem.read

// DB: scf.for
// DB: [[E:%[0-9]+]] = reg.map exp2 %{{.*}} : !reg.frag<c, n=16, m=64 : f32>
// DB-NEXT: [[DC:%[0-9]+]] = reg.read %{{[0-9]+}}[%{{[0-9]+}}] : !smem.buffer<m=64, n=128 : bf16, stages=3, layout=pad8> -> !reg.frag<c, n=16, m=64 : f32>
// DB-NEXT: [[P:%[0-9]+]] = reg.map mul [[DC]], [[E]]
// DB-NEXT: [[G:%[0-9]+]] = reg.map scale [[P]] by 0.5
// DB-NEXT: [[A0:%[0-9]+]] = reg.to_a [[G]] {at = #hbm.labels<m=0>} : !reg.frag<c, n=16, m=64 : f32> -> !reg.frag<a, n=16, m=16 : bf16>
// DB-NEXT: [[B0:%[0-9]+]] = reg.ldmatrix %{{.*}} {at = #hbm.labels<m=0>} : !smem.buffer<m=64, k=128 : bf16, stages=3, layout=pad8> -> !reg.frag<b, m=16, k=128 : bf16>
// DB-NEXT: reg.mma [[A0]], [[B0]], %acc : !reg.frag<a, n=16, m=16 : bf16>, !reg.frag<b, m=16, k=128 : bf16>, !reg.frag<c, n=16, k=128 : f32> -> !reg.frag<c, n=16, k=128 : f32>
// DB: reg.to_a [[G]] {at = #hbm.labels<m=48>}
// DB-NOT: smem.read

// WGMMA: reg.map exp2
// WGMMA-NEXT: smem.mbarrier_wait [[FULL:%[0-9]+]][[[S:%[0-9]+]]]
// WGMMA-NEXT: reg.read %{{[0-9]+}}[[[S]]] : !smem.buffer<m=128, n=64 : bf16, stages=3, layout=swizzle> -> !reg.frag<c, m=16, n=64 : f32>
// WGMMA-NEXT: smem.arrive %{{[0-9]+}}[[[S]]]
// WGMMA-NEXT: reg.map mul
// WGMMA: reg.wgmma_rs

// WGMMA-B: reg.read %{{[0-9]+}}[%{{[0-9]+}}] : !smem.buffer<m=128, n=128 : bf16, stages=3, layout=swizzle> -> !reg.frag<c, n=16, m=128 : f32>
// WGMMA-B: reg.to_a %{{[0-9]+}} {at = #hbm.labels<m=0>} : !reg.frag<c, n=16, m=128 : f32> -> !reg.frag<a, n=16, m=16 : bf16>
// WGMMA-B: reg.wgmma_rs
