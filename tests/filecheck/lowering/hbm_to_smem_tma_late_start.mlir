// hbm-to-smem{copy=tma}: a stream that starts past 0 (the attention gradient's dK and dV
// blocks skip the queries a causal mask hides) numbers its ring steps from its start: the
// producer's loop starts there too, and each step is (k0 - start) / step.
// RUN: napkin-opt %s -p 'hbm-to-smem{stages=2 copy=tma}' | filecheck %s

// CHECK-LABEL: hbm.kernel
// CHECK:         smem.producer
// CHECK:           scf.for %[[P:.+]] = %c64 to %c128 step %c64
// CHECK:             arith.subi %[[P]], %c64
// CHECK:             smem.tma_copy
// CHECK:         scf.for %[[K:.+]] = %c64 to %c128 step %c64
// CHECK:           arith.subi %[[K]], %c64
// CHECK:           smem.mbarrier_wait
builtin.module {
  hbm.kernel attributes {sym_name = "start_late", grid = #hbm.labels<m=64, n=64>, num_outputs = 1 : i32} {
  ^bb0(%a: !hbm.global<m=128, k=128 : bf16>, %b: !hbm.global<k=128, n=64 : bf16>, %out: !hbm.global<m=128, n=64 : bf16>, %m0: index, %n0: index):
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %zero = hbm.fill {value = 0.000000e+00 : f32} : !ncd.tensor<m=64, n=64 : f32>
    %c = scf.for %k0 = %c64 to %c128 step %c64 iter_args(%acc = %zero) -> (!ncd.tensor<m=64, n=64 : f32>) {
      %a_tile = hbm.load %a[%m0, %k0] : !hbm.global<m=128, k=128 : bf16> -> !ncd.tensor<m=64, k=64 : bf16>
      %b_tile = hbm.load %b[%k0, %n0] : !hbm.global<k=128, n=64 : bf16> -> !ncd.tensor<k=64, n=64 : bf16>
      %p = ncd.contract %a_tile, %b_tile over [k] : !ncd.tensor<m=64, k=64 : bf16>, !ncd.tensor<k=64, n=64 : bf16> -> !ncd.tensor<m=64, n=64 : f32>
      %acc_new = ncd.map add %acc, %p : !ncd.tensor<m=64, n=64 : f32>, !ncd.tensor<m=64, n=64 : f32> -> !ncd.tensor<m=64, n=64 : f32>
      scf.yield %acc_new : !ncd.tensor<m=64, n=64 : f32>
    } {hbm.stream = #hbm.stream<k>}
    %c_bf16 = ncd.map cast %c : !ncd.tensor<m=64, n=64 : f32> -> !ncd.tensor<m=64, n=64 : bf16>
    hbm.store %c_bf16, %out[%m0, %n0] : !ncd.tensor<m=64, n=64 : bf16>, !hbm.global<m=128, n=64 : bf16>
    hbm.return
  }
}

