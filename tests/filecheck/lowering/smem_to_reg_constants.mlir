// smem-to-reg on a kernel of maps alone that reads a statistic of its rows and a constant (the
// gradient of the attention backward's D = rowsum(dO * O) with respect to O: D's cotangent,
// broadcast along the head dim by adding ncd-grad's zero, times dO): the constant is filled
// where the map uses it, as a fragment of the map's result; the rows are the staged tile's, 64
// columns long (span 64), and so are the statistic's.
// RUN: napkin-opt %s -p 'smem-to-reg{warps="i:4"}' | filecheck %s

// CHECK-LABEL: sym_name = "attention_delta_grad_o"
// CHECK:       [[X:%.+]] = reg.read %{{.+}} -> !reg.frag<line, i=4, d=64 : f32, span=64>
// CHECK-NEXT:  [[D:%.+]] = reg.load %d_delta[%h0, %i0] : !hbm.global<h=2, i=50 : f32> -> !reg.frag<line, i=4 : f32, span=64>
// CHECK-NEXT:  [[Z:%.+]] = reg.fill {value = 0.000000e+00 : f32} : !reg.frag<line, i=4, d=64 : f32, span=64>
// CHECK-NEXT:  [[B:%.+]] = reg.map add [[D]], [[Z]] : !reg.frag<line, i=4 : f32, span=64>, !reg.frag<line, i=4, d=64 : f32, span=64> -> !reg.frag<line, i=4, d=64 : f32, span=64>
// CHECK-NEXT:  [[P:%.+]] = reg.map mul [[B]], [[X]]
// CHECK-NEXT:  reg.store [[P]], %out[%h0, %i0, %c0] : !reg.frag<line, i=4, d=64 : f32, span=64>, !hbm.global<h=2, i=50, d=64 : bf16>
// CHECK-NOT:   ncd.
hbm.kernel attributes {sym_name = "attention_delta_grad_o", grid = #hbm.labels<h=1, i=16>, num_outputs = 1 : i32} {
^bb0(%d_o: !hbm.global<h=2, i=50, d=64 : bf16>, %d_delta: !hbm.global<h=2, i=50 : f32>, %out: !hbm.global<h=2, i=50, d=64 : bf16>, %h0: index, %i0: index):
  %c0 = arith.constant 0 : index
  %0 = smem.alloc : !smem.buffer<h=1, i=16, d=64 : bf16, stages=1, layout=row>
  %1 = arith.constant 0 : index
  smem.copy %d_o[%h0, %i0, %c0] -> %0[%1] : !hbm.global<h=2, i=50, d=64 : bf16>, !smem.buffer<h=1, i=16, d=64 : bf16, stages=1, layout=row>
  smem.commit
  smem.wait {pending = 0 : i32}
  smem.barrier
  %d_o_tile = smem.read %0[%1] : !smem.buffer<h=1, i=16, d=64 : bf16, stages=1, layout=row> -> !ncd.tensor<h=1, i=16, d=64 : bf16>
  %d_o32 = ncd.map cast %d_o_tile : !ncd.tensor<h=1, i=16, d=64 : bf16> -> !ncd.tensor<h=1, i=16, d=64 : f32>
  %2 = ncd.constant 0.0 : !ncd.tensor<d=64 : f32>
  %d_delta_tile = hbm.load %d_delta[%h0, %i0] : !hbm.global<h=2, i=50 : f32> -> !ncd.tensor<h=1, i=16 : f32>
  %d_p = ncd.map add %d_delta_tile, %2 : !ncd.tensor<h=1, i=16 : f32>, !ncd.tensor<d=64 : f32> -> !ncd.tensor<h=1, i=16, d=64 : f32>
  %d_o32_1 = ncd.map mul %d_p, %d_o32 : !ncd.tensor<h=1, i=16, d=64 : f32>, !ncd.tensor<h=1, i=16, d=64 : f32> -> !ncd.tensor<h=1, i=16, d=64 : f32>
  %d_o_1 = ncd.map cast %d_o32_1 : !ncd.tensor<h=1, i=16, d=64 : f32> -> !ncd.tensor<h=1, i=16, d=64 : bf16>
  hbm.store %d_o_1, %out[%h0, %i0, %c0] : !ncd.tensor<h=1, i=16, d=64 : bf16>, !hbm.global<h=2, i=50, d=64 : bf16>
  hbm.return
}
