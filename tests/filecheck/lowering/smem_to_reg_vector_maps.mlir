// smem-to-reg: a map of a vector read from global memory, on its own (the attention
// gradient's log-sum-exp in base 2 where no row kernel wrote it: ncd-fold-log2e, then only D
// cut), is computed where math with a tile reads it: the vector's `col` fragment loaded, the
// map on it, once a block, then the tile's math with the result.
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-fold-log2e,ncd-extract{function="attention_grad" result=1 cut="delta"},ncd-relabel{grid="b,h,j:64" stream="i:64"},ncd-to-hbm,hbm-to-smem{stages=2},smem-to-reg{warps="j:4"}' | filecheck %s
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-fold-log2e,ncd-extract{function="attention_grad" result=1 cut="delta"},napkin-sm80' -t ptx -o %t.k80.ptx
// RUN: %ptxas -arch=sm_80 %t.k80.ptx -o %t.k80.cubin
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-fold-log2e,ncd-extract{function="attention_grad" result=1 cut="delta"},napkin-sm90' -t ptx -o %t.k90.ptx
// RUN: %ptxas -arch=sm_90a %t.k90.ptx -o %t.k90.cubin

// CHECK:      scf.for %i0 =
// CHECK:      [[S:%.+]] = reg.map scale {{%.+}} by 0.18033{{.*}} : !reg.frag<c, j=16, i=64 : f32> -> !reg.frag<c, j=16, i=64 : f32>
// CHECK-NEXT: [[L:%.+]] = reg.load %lse[%b0, %h0, %i0] : !hbm.global<b=2, h=4, i=256 : f32> -> !reg.frag<col, i=64 : f32>
// CHECK-NEXT: [[L2:%.+]] = reg.map scale [[L]] by 1.44269{{.*}} : !reg.frag<col, i=64 : f32> -> !reg.frag<col, i=64 : f32>
// CHECK-NEXT: [[X:%.+]] = reg.map sub [[S]], [[L2]] : !reg.frag<c, j=16, i=64 : f32>, !reg.frag<col, i=64 : f32> -> !reg.frag<c, j=16, i=64 : f32>
// CHECK-NEXT: reg.map exp2 [[X]]
// CHECK-NOT:  reg.load %lse
// CHECK-NOT:  ncd.map
