// Two products of one A in one kernel: C1 = A B1, C2 = A B2 (A's tiles loaded once for both).
func.func @two(%a: !ncd.tensor<m=256, k=128 : bf16>, %b1: !ncd.tensor<k=128, n=192 : bf16>, %b2: !ncd.tensor<k=128, n=192 : bf16>) -> (!ncd.tensor<m=256, n=192 : bf16>, !ncd.tensor<m=256, n=192 : bf16>) {
  %c1 = ncd.contract %a, %b1 over [k] : !ncd.tensor<m=256, k=128 : bf16>, !ncd.tensor<k=128, n=192 : bf16> -> !ncd.tensor<m=256, n=192 : bf16>
  %c2 = ncd.contract %a, %b2 over [k] : !ncd.tensor<m=256, k=128 : bf16>, !ncd.tensor<k=128, n=192 : bf16> -> !ncd.tensor<m=256, n=192 : bf16>
  func.return %c1, %c2 : !ncd.tensor<m=256, n=192 : bf16>, !ncd.tensor<m=256, n=192 : bf16>
}
