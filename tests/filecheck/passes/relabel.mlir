// ncd-relabel writes the labels on each function and refuses labels that cannot hold.
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:64" stream="k:32"}' | filecheck %s
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid=" b:1 , i:128 "}' | filecheck %s --check-prefix=SPACES
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"}' | filecheck %s --check-prefix=BARE
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="q:16"}' 2>&1 | filecheck %s --check-prefix=NOAXIS
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:1024"}' | filecheck %s --check-prefix=LONGER
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:0"}' 2>&1 | filecheck %s --check-prefix=ZERO
// RUN: not napkin-opt %examples/gemm_exp.mlir -p 'ncd-relabel{grid="k:32"},ncd-to-hbm' 2>&1 | filecheck %s --check-prefix=NOTOUT
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{stream="m:32"}' 2>&1 | filecheck %s --check-prefix=STREAMOUT
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:32" stream="m:32"}' 2>&1 | filecheck %s --check-prefix=BOTH
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:64,k:128" stream="k:32"}' | filecheck %s --check-prefix=SPLIT
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:64,k:100" stream="k:32"}' 2>&1 | filecheck %s --check-prefix=PART
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m=32"}' 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{tile="m:32"}' 2>&1 | filecheck %s --check-prefix=OPTION

// CHECK: func.func @matmul({{.*}}) -> !ncd.tensor<m=512, n=384 : bf16> attributes {ncd.grid = #hbm.labels<m=128, n=64>, ncd.stream = #hbm.labels<k=32>}
// SPACES: attributes {ncd.grid = #hbm.labels<b=1, i=128>, ncd.stream = #hbm.labels<>}
// BARE: attributes {ncd.grid = #hbm.labels<b=1, h=1, i=128>, ncd.stream = #hbm.labels<j=64>}
// NOAXIS: napkin-opt: error: ncd-relabel: the grid label 'q' names no axis of @matmul; its axes are m, k, n
// LONGER: attributes {ncd.grid = #hbm.labels<m=1024>, ncd.stream = #hbm.labels<>}
// ZERO: napkin-opt: error: ncd-relabel: a tile of 0 along 'm' in @matmul: tiles are 1 or more elements
// NOTOUT: napkin-opt: error: ncd-to-hbm: @gemm_exp: ncd.contract (%c) sums along 'k', which is split over the grid: each block adds its part into the output, so the sum must be a result of the function, in f32 as it is or rounded to 16 bits once (here !ncd.tensor<m=256, n=192 : f32>, used by ncd.map scale (%s))
// STREAMOUT: napkin-opt: error: ncd-relabel: axis 'm' is an axis of @matmul's output; stream only axes that are reduced
// BOTH: napkin-opt: error: ncd-relabel: axis 'm' is an axis of @matmul's output; stream only axes that are reduced
// SPLIT: attributes {ncd.grid = #hbm.labels<m=128, n=64, k=128>, ncd.stream = #hbm.labels<k=32>}
// PART: napkin-opt: error: ncd-relabel: axis 'k' is split over the grid in parts of 100 and streamed 32 at a time; a part must be a whole number of stream tiles
// SYNTAX: napkin-opt: error: ncd-relabel: cannot read grid="m=32": 'm=32' should be axis:tile, e.g. m:128, or an axis alone for tiles of 1
// OPTION: napkin-opt: error: {{.*}}tile
