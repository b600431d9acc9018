// reg-lazy-rescale: the forward's running row max in the stream loop becomes a
// `reg.lazy_max` (kept until a row of the warp outgrows it by 2^8), and the output's
// corrections by it in the loop (at the trip's top, carried from the last trip) become
// `reg.rescale`; the first tile's max, made before the loop from -inf, and the correction
// after the loop stay as they are. The numbers hold on the CPU interpreter (softmax,
// causal); the PTX holds the votes and assembles without spills; spherical attention (no
// running max) and a GEMM are left alone; napkin-sm90 runs the pass by default on a long softmax forward at d=128 and not
// with `lazy_rescale=false` or at d=64 without a mask; asked of spherical attention, it is
// refused.
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-overlap,reg-pingpong,reg-partial-row-sums,reg-lazy-rescale' | filecheck %s
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-overlap,reg-pingpong,reg-partial-row-sums,reg-lazy-rescale' | napkin-run --random-inputs --check | filecheck %s --check-prefix=NUMBERS
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-overlap,reg-pingpong,reg-early-waits{at="products"},reg-partial-row-sums,reg-lazy-rescale' | napkin-run --random-inputs --check | filecheck %s --check-prefix=NUMBERS
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-overlap,reg-pingpong,reg-early-waits{at="products"},reg-partial-row-sums,reg-lazy-rescale,reg-to-ptx' -t ptx -o %t.ptx
// RUN: filecheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas -v -arch=sm_90a %t.ptx -o %t.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: napkin-opt %examples/spherical_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-overlap' -o %t.sph.mlir
// RUN: napkin-opt %t.sph.mlir -p reg-lazy-rescale -o %t.sph.after.mlir
// RUN: napkin-opt %t.sph.mlir -o %t.sph.before.mlir
// RUN: diff %t.sph.before.mlir %t.sph.after.mlir
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:256" stream="k:64"},ncd-to-hbm,hbm-to-smem{stages=4 copy=tma},smem-to-reg{mma=wgmma}' -o %t.gemm.mlir
// RUN: napkin-opt %t.gemm.mlir -p reg-lazy-rescale -o %t.gemm.after.mlir
// RUN: napkin-opt %t.gemm.mlir -o %t.gemm.before.mlir
// RUN: diff %t.gemm.before.mlir %t.gemm.after.mlir
// RUN: sed -e 's/i=256/i=16384/g; s/j=256/j=16384/g; s/d=64/d=128/g' %examples/attention.mlir | napkin-opt -p napkin-sm90 --dump-pass-pipeline -o /dev/null 2>&1 | filecheck %s --check-prefix=ON
// RUN: sed -e 's/i=256/i=16384/g; s/j=256/j=16384/g; s/d=64/d=128/g' %examples/attention.mlir | napkin-opt -p 'napkin-sm90{lazy_rescale=false}' --dump-pass-pipeline -o /dev/null 2>&1 | filecheck %s --check-prefix=OFF
// RUN: sed -e 's/i=256/i=16384/g; s/j=256/j=16384/g' %examples/attention.mlir | napkin-opt -p napkin-sm90 --dump-pass-pipeline -o /dev/null 2>&1 | filecheck %s --check-prefix=OFF
// RUN: not napkin-opt %examples/spherical_attention.mlir -p 'napkin-sm90{lazy_rescale=true}' 2>&1 | filecheck %s --check-prefix=SPHOPT
// RUN: not napkin-opt %t.gemm.mlir -p 'reg-lazy-rescale{slack=-1.0}' 2>&1 | filecheck %s --check-prefix=SLACK

// CHECK:      %[[FIRST:.*]] = reg.map max %{{.*}}, %{{.*}} : !reg.frag<row, i=16 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<row, i=16 : f32>
// CHECK:      scf.for {{.*}} iter_args(%[[M:[0-9]+]] = %[[FIRST]], %{{[0-9]+}} = %{{[0-9]+}}, %[[O:[0-9]+]] = %{{[0-9]+}}, %[[C:[0-9]+]] = %{{[0-9]+}},
// CHECK:      %[[OC:.*]] = reg.rescale %[[O]], %[[C]] : !reg.frag<c, i=16, d=64 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<c, i=16, d=64 : f32>
// CHECK:      reg.wgmma_rs %{{.*}}, %{{.*}}, %[[OC]]
// CHECK-NOT:  reg.map max
// CHECK:      %[[MN:.*]] = reg.lazy_max %[[M]], %{{.*}} slack 8.0 : !reg.frag<row, i=16 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<row, i=16 : f32>
// CHECK-NEXT: %[[D:.*]] = reg.map sub %[[M]], %[[MN]]
// CHECK-NEXT: %[[NEXT:.*]] = reg.map exp2 %[[D]]
// CHECK:      scf.yield %[[MN]], %{{.*}}, %{{.*}}, %[[NEXT]],
// CHECK-NOT:  reg.rescale
// CHECK:      reg.map mul %{{.*}}, %{{.*}} : !reg.frag<c, i=16, d=64 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<c, i=16, d=64 : f32>

// NUMBERS: check against float64 reference: {{.*}}: ok
// PTX: vote.sync.all.pred
// REPORT-NOT: wgmma.mma_async instructions are serialized
// REPORT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// ON: reg-partial-row-sums,reg-lazy-rescale{slack=8.0},reg-to-ptx
// OFF-NOT: reg-lazy-rescale
// SPHOPT: napkin-opt: error: napkin-sm90: lazy_rescale=true keeps a running row max (a softmax attention forward's) until a row outgrows it; this kernel has none
// SLACK: reg-lazy-rescale: the slack is the log2 units a running max may stay below a row's values (0 to 64), got -1.0
