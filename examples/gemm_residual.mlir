// A GEMM with a residual: A B + r, r a tensor of the output's shape (a residual connection),
// added to the f32 sums before they are rounded to bf16.
func.func @gemm_residual(%a: !ncd.tensor<m=256, k=128 : bf16>, %b: !ncd.tensor<k=128, n=192 : bf16>, %res: !ncd.tensor<m=256, n=192 : bf16>) -> !ncd.tensor<m=256, n=192 : bf16> {
  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=256, k=128 : bf16>, !ncd.tensor<k=128, n=192 : bf16> -> !ncd.tensor<m=256, n=192 : f32>
  %res32 = ncd.map cast %res : !ncd.tensor<m=256, n=192 : bf16> -> !ncd.tensor<m=256, n=192 : f32>
  %z = ncd.map add %c, %res32 : !ncd.tensor<m=256, n=192 : f32>, !ncd.tensor<m=256, n=192 : f32> -> !ncd.tensor<m=256, n=192 : f32>
  %o = ncd.map cast %z : !ncd.tensor<m=256, n=192 : f32> -> !ncd.tensor<m=256, n=192 : bf16>
  func.return %o : !ncd.tensor<m=256, n=192 : bf16>
}
