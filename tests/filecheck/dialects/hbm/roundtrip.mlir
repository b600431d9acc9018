// RUN: napkin-opt %s | napkin-opt | filecheck %s
// RUN: napkin-opt %s --print-op-generic | napkin-opt | filecheck %s

// CHECK: hbm.kernel attributes {sym_name = "gemm", grid = #hbm.labels<m=64, n=32>, num_outputs = 1 : i32} {
// CHECK-NEXT: ^bb0(%a: !hbm.global<m=100, k=48 : f16>, %b: !hbm.global<k=48, n=70 : f16>, %out: !hbm.global<m=100, n=70 : f16>, %m0: index, %n0: index):
// CHECK: %z = hbm.fill {value = 0.000000e+00 : f32} : !ncd.tensor<m=64, n=32 : f32>
// CHECK: %ta = hbm.load %a[%m0, %k0] : !hbm.global<m=100, k=48 : f16> -> !ncd.tensor<m=64, k=16 : f16>
// CHECK: } {hbm.stream = #hbm.stream<k>}
// CHECK: hbm.store %r, %out[%m0, %n0] : !ncd.tensor<m=64, n=32 : f16>, !hbm.global<m=100, n=70 : f16>
// CHECK: hbm.return
hbm.kernel attributes {sym_name = "gemm", grid = #hbm.labels<m=64, n=32>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=100, k=48 : f16>, %b: !hbm.global<k=48, n=70 : f16>, %out: !hbm.global<m=100, n=70 : f16>, %m0: index, %n0: index):
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c48 = arith.constant 48 : index
  %z = hbm.fill {value = 0.0 : f32} : !ncd.tensor<m=64, n=32 : f32>
  %acc = scf.for %k0 = %c0 to %c48 step %c16 iter_args(%s = %z) -> (!ncd.tensor<m=64, n=32 : f32>) {
    %ta = hbm.load %a[%m0, %k0] : !hbm.global<m=100, k=48 : f16> -> !ncd.tensor<m=64, k=16 : f16>
    %tb = hbm.load %b[%k0, %n0] : !hbm.global<k=48, n=70 : f16> -> !ncd.tensor<k=16, n=32 : f16>
    %p = ncd.contract %ta, %tb over [k] : !ncd.tensor<m=64, k=16 : f16>, !ncd.tensor<k=16, n=32 : f16> -> !ncd.tensor<m=64, n=32 : f32>
    %s2 = ncd.map add %s, %p : !ncd.tensor<m=64, n=32 : f32>, !ncd.tensor<m=64, n=32 : f32> -> !ncd.tensor<m=64, n=32 : f32>
    scf.yield %s2 : !ncd.tensor<m=64, n=32 : f32>
  } {hbm.stream = #hbm.stream<k>}
  %r = ncd.map cast %acc : !ncd.tensor<m=64, n=32 : f32> -> !ncd.tensor<m=64, n=32 : f16>
  hbm.store %r, %out[%m0, %n0] : !ncd.tensor<m=64, n=32 : f16>, !hbm.global<m=100, n=70 : f16>
  hbm.return
}

// #hbm.labels: axis names in order with integers, printed and read back alike; empty labels too.
// CHECK: func.func @labelled() attributes {ncd.grid = #hbm.labels<b=1, h=1, i=128>, ncd.stream = #hbm.labels<>, offsets = #hbm.labels<k=0, n=64>}
func.func @labelled() attributes {ncd.grid = #hbm.labels<b=1, h=1, i=128>, ncd.stream = #hbm.labels< >, offsets = #hbm.labels<k = 0, n = 64>} {
  func.return
}

// A store that adds its tile into an f32 global (a block's part of a split sum).
// CHECK: hbm.store %p, %acc_out[%m0, %c0] {accumulate} : !ncd.tensor<m=8, n=4 : f32>, !hbm.global<m=16, n=4 : f32>
hbm.kernel attributes {sym_name = "part", grid = #hbm.labels<m=8, k=16>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=16, k=64 : bf16>, %b: !hbm.global<k=64, n=4 : bf16>, %acc_out: !hbm.global<m=16, n=4 : f32>, %m0: index, %k0: index):
  %c0 = arith.constant 0 : index
  %ta = hbm.load %a[%m0, %k0] : !hbm.global<m=16, k=64 : bf16> -> !ncd.tensor<m=8, k=16 : bf16>
  %tb = hbm.load %b[%k0, %c0] : !hbm.global<k=64, n=4 : bf16> -> !ncd.tensor<k=16, n=4 : bf16>
  %p = ncd.contract %ta, %tb over [k] : !ncd.tensor<m=8, k=16 : bf16>, !ncd.tensor<k=16, n=4 : bf16> -> !ncd.tensor<m=8, n=4 : f32>
  hbm.store %p, %acc_out[%m0, %c0] {accumulate} : !ncd.tensor<m=8, n=4 : f32>, !hbm.global<m=16, n=4 : f32>
  hbm.return
}

// A tile computed with its axes the other way round (a product computed transposed) is stored by name.
// CHECK: hbm.store %t, %acc_out[%m0, %c0] {accumulate} : !ncd.tensor<n=4, m=8 : f32>, !hbm.global<m=16, n=4 : f32>
hbm.kernel attributes {sym_name = "transposed", grid = #hbm.labels<m=8, k=16>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=16, k=64 : bf16>, %b: !hbm.global<k=64, n=4 : bf16>, %acc_out: !hbm.global<m=16, n=4 : f32>, %m0: index, %k0: index):
  %c0 = arith.constant 0 : index
  %ta = hbm.load %a[%m0, %k0] : !hbm.global<m=16, k=64 : bf16> -> !ncd.tensor<m=8, k=16 : bf16>
  %tb = hbm.load %b[%k0, %c0] : !hbm.global<k=64, n=4 : bf16> -> !ncd.tensor<k=16, n=4 : bf16>
  %t = ncd.contract %tb, %ta over [k] : !ncd.tensor<k=16, n=4 : bf16>, !ncd.tensor<m=8, k=16 : bf16> -> !ncd.tensor<n=4, m=8 : f32>
  hbm.store %t, %acc_out[%m0, %c0] {accumulate} : !ncd.tensor<n=4, m=8 : f32>, !hbm.global<m=16, n=4 : f32>
  hbm.return
}

// A part of a sum rounded into a bf16 global once the parts are summed.
// CHECK: hbm.kernel attributes {sym_name = "rounded", grid = #hbm.labels<m=8, k=16>, num_outputs = 1 : i32} {
// CHECK: hbm.store %p, %out[%m0, %c0] {accumulate} : !ncd.tensor<m=8, n=4 : f32>, !hbm.global<m=16, n=4 : bf16>
hbm.kernel attributes {sym_name = "rounded", grid = #hbm.labels<m=8, k=16>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=16, k=64 : bf16>, %b: !hbm.global<k=64, n=4 : bf16>, %out: !hbm.global<m=16, n=4 : bf16>, %m0: index, %k0: index):
  %c0 = arith.constant 0 : index
  %ta = hbm.load %a[%m0, %k0] : !hbm.global<m=16, k=64 : bf16> -> !ncd.tensor<m=8, k=16 : bf16>
  %tb = hbm.load %b[%k0, %c0] : !hbm.global<k=64, n=4 : bf16> -> !ncd.tensor<k=16, n=4 : bf16>
  %p = ncd.contract %ta, %tb over [k] : !ncd.tensor<m=8, k=16 : bf16>, !ncd.tensor<k=16, n=4 : bf16> -> !ncd.tensor<m=8, n=4 : f32>
  hbm.store %p, %out[%m0, %c0] {accumulate} : !ncd.tensor<m=8, n=4 : f32>, !hbm.global<m=16, n=4 : bf16>
  hbm.return
}

// A cluster of a grid whose sums are split over it: the parts of each tile, all of them (k: 48 in tiles of 16, 3 parts).
// CHECK: hbm.kernel attributes {sym_name = "parts", grid = #hbm.labels<m=64, k=16>, num_outputs = 1 : i32, hbm.cluster = 3 : i32} {
hbm.kernel attributes {sym_name = "parts", grid = #hbm.labels<m=64, k=16>, num_outputs = 1 : i32, hbm.cluster = 3 : i32} {
^bb0(%a: !hbm.global<m=64, k=48 : f32>, %out: !hbm.global<m=64 : f32>, %m0: index, %k0: index):
  hbm.return
}
