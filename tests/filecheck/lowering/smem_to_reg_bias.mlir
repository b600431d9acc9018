// smem-to-reg with a bias: the vector hbm-to-smem left in global memory becomes a reg.load
// of each warp's `col` fragment (a bias along the rows: `row`), just before the map that
// adds it to the accumulators; a bf16 bias is widened by the load itself (its cast to f32
// goes). The same under wgmma (a warp holds all the columns). Math on the vector alone
// (a bias doubled, ALONE) is computed on its fragment where the add reads it.
// RUN: napkin-opt %examples/gemm_bias.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3},smem-to-reg{warps="m:2,n:2"}' | filecheck %s
// RUN: sed -e 's/%bias: !ncd.tensor<n=192 : f32>/%bias: !ncd.tensor<m=256 : f32>/; s/!ncd.tensor<n=192 : f32> ->/!ncd.tensor<m=256 : f32> ->/' %examples/gemm_bias.mlir | napkin-opt -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3},smem-to-reg{warps="m:2,n:2"}' | filecheck %s --check-prefix=ROW
// RUN: sed -e 's/%bias: !ncd.tensor<n=192 : f32>/%bias: !ncd.tensor<n=192 : bf16>/; s/%y = ncd.map add %c, %bias/%b32 = ncd.map cast %bias : !ncd.tensor<n=192 : bf16> -> !ncd.tensor<n=192 : f32>\n  %y = ncd.map add %c, %b32/' %examples/gemm_bias.mlir | napkin-opt -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3},smem-to-reg{warps="m:2,n:2"}' | filecheck %s --check-prefix=BF16
// RUN: napkin-opt %examples/gemm_bias.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:64"},ncd-to-hbm,hbm-launch{persistent=true},hbm-to-smem{stages=3 copy=tma store=tma},smem-to-reg{mma=wgmma}' | filecheck %s --check-prefix=WGMMA
// RUN: sed -e 's/%y = ncd.map add %c, %bias/%b2 = ncd.map scale %bias by 2.0 : !ncd.tensor<n=192 : f32> -> !ncd.tensor<n=192 : f32>\n  %y = ncd.map add %c, %b2/' %examples/gemm_bias.mlir | napkin-opt -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3},smem-to-reg{warps="m:2,n:2"}' | filecheck %s --check-prefix=ALONE

// CHECK:      scf.for
// CHECK:      smem.wait {pending = 0 : i32}
// CHECK-NEXT: [[B:%.+]] = reg.load %bias[%n0] : !hbm.global<n=192 : f32> -> !reg.frag<col, n=64 : f32>
// CHECK-NEXT: [[Y:%.+]] = reg.map add %{{.+}}, [[B]] : !reg.frag<c, m=64, n=64 : f32>, !reg.frag<col, n=64 : f32> -> !reg.frag<c, m=64, n=64 : f32>
// CHECK-NEXT: reg.store [[Y]], %out[%m0, %n0] : !reg.frag<c, m=64, n=64 : f32>, !hbm.global<m=256, n=192 : bf16>
// CHECK-NOT:  hbm.load

// ROW:      [[B:%.+]] = reg.load %bias[%m0] : !hbm.global<m=256 : f32> -> !reg.frag<row, m=64 : f32>
// ROW-NEXT: reg.map add %{{.+}}, [[B]] : !reg.frag<c, m=64, n=64 : f32>, !reg.frag<row, m=64 : f32> -> !reg.frag<c, m=64, n=64 : f32>

// BF16:     scf.for
// BF16:     [[B:%.+]] = reg.load %bias[%n0] : !hbm.global<n=192 : bf16> -> !reg.frag<col, n=64 : f32>
// BF16-NEXT: reg.map add %{{.+}}, [[B]]
// BF16-NOT: ncd.map cast

// WGMMA:      reg.wgmma_wait {pending = 0 : i32}
// WGMMA:      [[B:%.+]] = reg.load %bias[%n0] : !hbm.global<n=192 : f32> -> !reg.frag<col, n=128 : f32>
// WGMMA-NEXT: [[Y:%.+]] = reg.map add %{{.+}}, [[B]] : !reg.frag<c, m=16, n=128 : f32>, !reg.frag<col, n=128 : f32> -> !reg.frag<c, m=16, n=128 : f32>
// WGMMA:      reg.stmatrix [[Y]]
// WGMMA:      reg.stmatrix [[Y]]

// ALONE:      [[B:%.+]] = reg.load %bias[%n0] : !hbm.global<n=192 : f32> -> !reg.frag<col, n=64 : f32>
// ALONE-NEXT: [[B2:%.+]] = reg.map scale [[B]] by 2.0 : !reg.frag<col, n=64 : f32> -> !reg.frag<col, n=64 : f32>
// ALONE-NEXT: reg.map add %{{.+}}, [[B2]] : !reg.frag<c, m=64, n=64 : f32>, !reg.frag<col, n=64 : f32> -> !reg.frag<c, m=64, n=64 : f32>
