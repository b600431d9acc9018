// A GEMM with a bias: A B + bias, the vector bias[n] added to every row, rounded to bf16.
func.func @gemm_bias(%a: !ncd.tensor<m=256, k=128 : bf16>, %b: !ncd.tensor<k=128, n=192 : bf16>, %bias: !ncd.tensor<n=192 : f32>) -> !ncd.tensor<m=256, n=192 : bf16> {
  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=256, k=128 : bf16>, !ncd.tensor<k=128, n=192 : bf16> -> !ncd.tensor<m=256, n=192 : f32>
  %y = ncd.map add %c, %bias : !ncd.tensor<m=256, n=192 : f32>, !ncd.tensor<n=192 : f32> -> !ncd.tensor<m=256, n=192 : f32>
  %o = ncd.map cast %y : !ncd.tensor<m=256, n=192 : f32> -> !ncd.tensor<m=256, n=192 : bf16>
  func.return %o : !ncd.tensor<m=256, n=192 : bf16>
}
