// A GEMM with an epilogue: exp(0.5 A B), rounded to bf16 (exp lowers to ex2 of x log2 e).
func.func @gemm_exp(%a: !ncd.tensor<m=256, k=128 : bf16>, %b: !ncd.tensor<k=128, n=192 : bf16>) -> !ncd.tensor<m=256, n=192 : bf16> {
  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=256, k=128 : bf16>, !ncd.tensor<k=128, n=192 : bf16> -> !ncd.tensor<m=256, n=192 : f32>
  %s = ncd.map scale %c by 0.5 : !ncd.tensor<m=256, n=192 : f32> -> !ncd.tensor<m=256, n=192 : f32>
  %e = ncd.map exp %s : !ncd.tensor<m=256, n=192 : f32> -> !ncd.tensor<m=256, n=192 : f32>
  %o = ncd.map cast %e : !ncd.tensor<m=256, n=192 : f32> -> !ncd.tensor<m=256, n=192 : bf16>
  func.return %o : !ncd.tensor<m=256, n=192 : bf16>
}
