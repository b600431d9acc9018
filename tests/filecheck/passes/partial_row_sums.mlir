// reg-partial-row-sums: the forward's running row sum kept as each lane's part. The fill
// becomes a `row_part`, each trip scales it by its correction and adds its probabilities
// in one chain (`reg.row_accumulate`, no `reg.row_reduce sum` left in a loop), and the
// quad's parts are added once after the loop, where the output divides by the sum. The
// numbers hold on the CPU interpreter (softmax, causal, spherical); the PTX assembles
// without spills; a GEMM is left alone; napkin-sm90 runs the pass by default on a long
// softmax forward and not with `partial_sums=false`; asked of a GEMM, it is refused.
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-overlap,reg-pingpong,reg-partial-row-sums' | filecheck %s
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-overlap,reg-pingpong,reg-partial-row-sums' | napkin-run --random-inputs --check | filecheck %s --check-prefix=NUMBERS
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-overlap,reg-pingpong,reg-early-waits{at="products"},reg-partial-row-sums' | napkin-run --random-inputs --check | filecheck %s --check-prefix=NUMBERS
// RUN: napkin-opt %examples/spherical_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-overlap,reg-partial-row-sums' | napkin-run --random-inputs --check | filecheck %s --check-prefix=NUMBERS
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-overlap,reg-pingpong,reg-early-waits{at="products"},reg-partial-row-sums,reg-to-ptx' -t ptx -o %t.ptx
// RUN: %ptxas -v -arch=sm_90a %t.ptx -o %t.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:256" stream="k:64"},ncd-to-hbm,hbm-to-smem{stages=4 copy=tma},smem-to-reg{mma=wgmma}' -o %t.gemm.mlir
// RUN: napkin-opt %t.gemm.mlir -p reg-partial-row-sums -o %t.gemm.after.mlir
// RUN: napkin-opt %t.gemm.mlir -o %t.gemm.before.mlir
// RUN: diff %t.gemm.before.mlir %t.gemm.after.mlir
// RUN: sed -e 's/i=256/i=4096/g; s/j=256/j=4096/g' %examples/attention.mlir | napkin-opt -p napkin-sm90 --dump-pass-pipeline -o /dev/null 2>&1 | filecheck %s --check-prefix=ON
// RUN: sed -e 's/i=256/i=16384/g; s/j=256/j=16384/g; s/d=64/d=128/g' %examples/attention.mlir | napkin-opt -p napkin-sm90 --dump-pass-pipeline -o /dev/null 2>&1 | filecheck %s --check-prefix=ON128
// RUN: sed -e 's/i=256/i=4096/g; s/j=256/j=4096/g' %examples/attention.mlir | napkin-opt -p 'napkin-sm90{partial_sums=false}' --dump-pass-pipeline -o /dev/null 2>&1 | filecheck %s --check-prefix=OFF
// RUN: not napkin-opt %examples/matmul.mlir -p 'napkin-sm90{partial_sums=true}' 2>&1 | filecheck %s --check-prefix=GEMMOPT

// CHECK:      %[[ZERO:.*]] = reg.fill {value = 0.000000e+00 : f32} : !reg.frag<row_part, i=16 : f32>
// CHECK:      %[[SCALED:.*]] = reg.map mul %[[ZERO]], %{{.*}} : !reg.frag<row_part, i=16 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<row_part, i=16 : f32>
// CHECK-NEXT: %[[FIRST:.*]] = reg.row_accumulate %[[SCALED]], %{{.*}} : !reg.frag<row_part, i=16 : f32>, !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<row_part, i=16 : f32>
// CHECK:      %{{[0-9]+}}, %[[END:[0-9]+]], {{.*}} = scf.for {{.*}} iter_args(%{{[0-9]+}} = %{{[0-9]+}}, %[[L:[0-9]+]] = %[[FIRST]],
// CHECK-NOT:  reg.row_reduce sum
// CHECK:      %[[TRIP:.*]] = reg.map mul %[[L]], %{{.*}} : !reg.frag<row_part, i=16 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<row_part, i=16 : f32>
// CHECK-NEXT: %[[NEXT:.*]] = reg.row_accumulate %[[TRIP]], %{{.*}}
// CHECK-NOT:  reg.row_reduce sum
// CHECK:      scf.yield %{{.*}}, %[[NEXT]],
// CHECK:      %[[SUM:.*]] = reg.row_combine %[[END]] : !reg.frag<row_part, i=16 : f32> -> !reg.frag<row, i=16 : f32>
// CHECK:      reg.map div %{{.*}}, %[[SUM]]

// NUMBERS: check against float64 reference: {{.*}}: ok
// REPORT-NOT: wgmma.mma_async instructions are serialized
// REPORT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// ON: reg-early-waits{at="scores"},reg-partial-row-sums,reg-to-ptx
// ON128: reg-early-waits{at="products"},reg-partial-row-sums,reg-lazy-rescale{slack=8.0},reg-to-ptx
// OFF-NOT: reg-partial-row-sums
// GEMMOPT: napkin-opt: error: napkin-sm90: partial_sums=true keeps a running row sum (an attention forward's softmax denominator, or spherical attention's) as each lane's part; this kernel has none
