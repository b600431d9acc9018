// xDSL's own xdsl-opt reads napkin IR and runs napkin's passes and targets, through the
// xdsl.universe entry point that napkin-ir installs.
// RUN: xdsl-opt %s -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm' | filecheck %s
// RUN: xdsl-opt %s -p napkin-sm80 -t ptx | filecheck %s --check-prefix=PTX
// RUN: xdsl-opt %s -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm' | napkin-opt - | filecheck %s

// CHECK:      hbm.kernel attributes {sym_name = "matmul", grid = #hbm.labels<m=128, n=128>, num_outputs = 1 : i32} {
// CHECK-NEXT: ^bb0(%a: !hbm.global<m=512, k=256 : bf16>, %b: !hbm.global<k=256, n=384 : bf16>, %out: !hbm.global<m=512, n=384 : bf16>

// PTX:      .target sm_80
// PTX:      .visible .entry matmul(
// PTX:      mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

func.func @matmul(%a: !ncd.tensor<m=512, k=256 : bf16>, %b: !ncd.tensor<k=256, n=384 : bf16>) -> !ncd.tensor<m=512, n=384 : bf16> {
  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=512, k=256 : bf16>, !ncd.tensor<k=256, n=384 : bf16> -> !ncd.tensor<m=512, n=384 : bf16>
  func.return %c : !ncd.tensor<m=512, n=384 : bf16>
}
