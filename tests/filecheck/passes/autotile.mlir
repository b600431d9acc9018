// ncd-autotile lets the napkin model choose the labels, and says what and why;
// napkin-sm80/napkin-sm90{autotile=true} choose every tile and compile. ncd-relabel with
// no labels says how to get them.
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-autotile{hw=h200}' 2>%t.err | filecheck %s
// RUN: filecheck %s --check-prefix=SAID < %t.err
// RUN: napkin-opt %examples/matmul.mlir -p 'napkin-sm80{autotile=true hw=h200}' -t ptx -o %t.sm80.ptx 2>%t.sm80.err
// RUN: filecheck %s --check-prefix=SM80 < %t.sm80.err
// RUN: %ptxas -arch=sm_80 %t.sm80.ptx -o %t.sm80.cubin
// RUN: napkin-opt %examples/matmul.mlir -p 'napkin-sm90{autotile=true hw=h200}' -t ptx -o %t.sm90.ptx 2>%t.sm90.err
// RUN: filecheck %s --check-prefix=SM90 < %t.sm90.err
// RUN: %ptxas -arch=sm_90a %t.sm90.ptx -o %t.sm90.cubin
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-autotile{hw=tpu}' 2>&1 | filecheck %s --check-prefix=HW
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel' 2>&1 | filecheck %s --check-prefix=NONE

// CHECK: func.func @matmul
// CHECK-SAME: ncd.autotile = "chose grid m:{{[0-9]+}},n:{{[0-9]+}}, stream k:{{[0-9]+}}
// CHECK-SAME: on the H200 SXM 141GB, bound by
// CHECK-SAME: ncd.grid = #hbm.labels<m={{[0-9]+}}, n={{[0-9]+}}>, ncd.stream = #hbm.labels<k={{[0-9]+}}>
// SAID: ncd-autotile: chose grid m:{{[0-9]+}},n:{{[0-9]+}}, stream k:{{[0-9]+}}, warps {{.*}} stages: predicted {{.*}} candidates
// SM80: napkin-sm80: autotile chose grid
// SM90: napkin-sm90: autotile chose grid
// HW: napkin-opt: error: {{.*}}unknown hardware 'tpu'; expected one of a100, h100, h200
// NONE: napkin-opt: error: ncd-relabel: no labels given; {{.*}} ncd-autotile{hw=h200}
