// hbm-to-smem{copy=tma} adds an f32 tile into a global inside the stream only by a store
// role beside the producer; a stream that loads nothing has no producer, and is refused by
// name, with a non-zero exit and no traceback.
// RUN: not napkin-opt %s -p 'hbm-to-smem{stages=2 copy=tma}' 2>&1 | filecheck %s
// CHECK: napkin-opt: error: hbm-to-smem: @adds: an f32 tile added into a global inside the stream leaves by a store role beside the producer, the same adds in every loop of the stream at its position; it has no producer (no tile is copied by the TMA)
// CHECK-NOT: Traceback
builtin.module {
  hbm.kernel attributes {sym_name = "adds", grid = #hbm.labels<j=128>, num_outputs = 1 : i32} {
  ^bb0(%k: !hbm.global<j=256, d=128 : bf16>, %out: !hbm.global<i=256, d=128 : f32>, %j0: index):
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %c256 = arith.constant 256 : index
    scf.for %i0 = %c0 to %c256 step %c64 {
      %t = hbm.fill {value = 1.000000e+00 : f32} : !ncd.tensor<i=64, d=128 : f32>
      hbm.store %t, %out[%i0, %c0] {accumulate} : !ncd.tensor<i=64, d=128 : f32>, !hbm.global<i=256, d=128 : f32>
    } {hbm.stream = #hbm.stream<i>}
    hbm.return
  }
}
