// C[m, n] = sum_k A[m, k] * B[k, n], bf16 in and out, f32 accumulation.
func.func @matmul(%a: !ncd.tensor<m=512, k=256 : bf16>, %b: !ncd.tensor<k=256, n=384 : bf16>) -> !ncd.tensor<m=512, n=384 : bf16> {
  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=512, k=256 : bf16>, !ncd.tensor<k=256, n=384 : bf16> -> !ncd.tensor<m=512, n=384 : bf16>
  func.return %c : !ncd.tensor<m=512, n=384 : bf16>
}
