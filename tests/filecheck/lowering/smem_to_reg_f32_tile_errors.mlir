// smem-to-reg refuses a tile staged in shared memory that a map reads as it is (an f32
// residual added to the sums): a tile read into registers beside the accumulators is
// widened from bf16 or f16 by a cast. One line naming the kernel and the reason, on both
// pipelines; no traceback.
// RUN: not napkin-opt %s -p napkin-sm90 -t ptx 2>&1 | filecheck %s --check-prefix=SM90
// RUN: not napkin-opt %s -p napkin-sm80 -t ptx 2>&1 | filecheck %s --check-prefix=SM80

func.func @residual_f32(%a: !ncd.tensor<m=200, k=104 : bf16>, %b: !ncd.tensor<k=104, n=136 : bf16>, %r: !ncd.tensor<m=200, n=136 : f32>) -> !ncd.tensor<m=200, n=136 : f32> {
  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=200, k=104 : bf16>, !ncd.tensor<k=104, n=136 : bf16> -> !ncd.tensor<m=200, n=136 : f32>
  %y = ncd.map add %c, %r : !ncd.tensor<m=200, n=136 : f32>, !ncd.tensor<m=200, n=136 : f32> -> !ncd.tensor<m=200, n=136 : f32>
  func.return %y : !ncd.tensor<m=200, n=136 : f32>
}

// SM90: napkin-opt: error: smem-to-reg: @residual_f32: ncd.map add reads a tile staged in shared memory as it is (!ncd.tensor<m={{[0-9]+}}, n={{[0-9]+}} : f32>); a tile read into registers beside the accumulators is bf16 or f16, cast to f32 in the diagram (`ncd.map cast`): give the tensor in 16 bits
// SM90-NOT: Traceback
// SM80: napkin-opt: error: smem-to-reg: @residual_f32: ncd.map add reads a tile staged in shared memory as it is
// SM80-NOT: Traceback
