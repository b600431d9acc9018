// ncd-to-hbm: each block computes one output tile; the streamed axis becomes an scf.for
// carrying an f32 accumulator; a mask on a tile learns where the tile starts.
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm' | filecheck %s --check-prefix=GEMM
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b:1,i:64"},ncd-to-hbm' | filecheck %s --check-prefix=CAUSAL
// RUN: not napkin-opt %examples/matmul.mlir -p ncd-to-hbm 2>&1 | filecheck %s --check-prefix=UNLABELLED

// GEMM:      hbm.kernel attributes {sym_name = "matmul", grid = #hbm.labels<m=128, n=128>, num_outputs = 1 : i32} {
// GEMM-NEXT: ^bb0(%a: !hbm.global<m=512, k=256 : bf16>, %b: !hbm.global<k=256, n=384 : bf16>, %out: !hbm.global<m=512, n=384 : bf16>, %m0: index, %n0: index):
// GEMM:      [[INIT:%.+]] = hbm.fill {value = 0.000000e+00 : f32} : !ncd.tensor<m=128, n=128 : f32>
// GEMM:      [[ACC:%.+]] = scf.for %k0 = %c0 to %{{.+}} step %{{.+}} iter_args(%acc = [[INIT]]) -> (!ncd.tensor<m=128, n=128 : f32>) {
// GEMM-NEXT:   [[A:%.+]] = hbm.load %a[%m0, %k0] : !hbm.global<m=512, k=256 : bf16> -> !ncd.tensor<m=128, k=32 : bf16>
// GEMM-NEXT:   [[B:%.+]] = hbm.load %b[%k0, %n0] : !hbm.global<k=256, n=384 : bf16> -> !ncd.tensor<k=32, n=128 : bf16>
// GEMM-NEXT:   [[P:%.+]] = ncd.contract [[A]], [[B]] over [k] : {{.*}} -> !ncd.tensor<m=128, n=128 : f32>
// GEMM-NEXT:   [[S:%.+]] = ncd.map add %acc, [[P]]
// GEMM-NEXT:   scf.yield [[S]]
// GEMM-NEXT: } {hbm.stream = #hbm.stream<k>}
// GEMM-NEXT: [[C:%.+]] = ncd.map cast [[ACC]] : !ncd.tensor<m=128, n=128 : f32> -> !ncd.tensor<m=128, n=128 : bf16>
// GEMM-NEXT: hbm.store [[C]], %out[%m0, %n0]
// GEMM-NEXT: hbm.return

// CAUSAL: ^bb0(%q: {{.*}}, %out: !hbm.global<b=2, h=4, i=256, d=64 : bf16>, %b0: index, %i0: index):
// CAUSAL: hbm.load %q[%b0, %c0, %i0, %c0] : !hbm.global<b=2, h=4, i=256, d=64 : bf16> -> !ncd.tensor<b=1, h=4, i=64, d=64 : bf16>
// CAUSAL: hbm.load %k[%b0, %c0, %c0, %c0] : {{.*}} -> !ncd.tensor<b=1, h=4, j=256, d=64 : bf16>
// CAUSAL: ncd.mask causal %{{.+}} keep i >= j fill -inf at [%i0, %c0] : !ncd.tensor<b=1, h=4, i=64, j=256 : f32>
// CAUSAL: ncd.softmax
// CAUSAL: hbm.store %{{.+}}, %out[%b0, %c0, %i0, %c0]

// UNLABELLED: napkin-opt: error: ncd-to-hbm: @matmul: the function has no labels; run ncd-relabel first
