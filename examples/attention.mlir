// O[b, h, i, d] = softmax_j(Q[b, h, i, d] . K[b, h, j, d] / sqrt(d)) . V[b, h, j, d]
// Scores stay in f32 (the accumulator); the probabilities enter the second product as
// bf16, as FlashAttention feeds them to the tensor cores.
func.func @attention(%q: !ncd.tensor<b=2, h=4, i=256, d=64 : bf16>, %k: !ncd.tensor<b=2, h=4, j=256, d=64 : bf16>, %v: !ncd.tensor<b=2, h=4, j=256, d=64 : bf16>) -> !ncd.tensor<b=2, h=4, i=256, d=64 : bf16> {
  %s = ncd.contract %q, %k over [d] : !ncd.tensor<b=2, h=4, i=256, d=64 : bf16>, !ncd.tensor<b=2, h=4, j=256, d=64 : bf16> -> !ncd.tensor<b=2, h=4, i=256, j=256 : f32>
  %p = ncd.softmax %s along j scale 0.125 : !ncd.tensor<b=2, h=4, i=256, j=256 : f32> -> !ncd.tensor<b=2, h=4, i=256, j=256 : f32>
  %p16 = ncd.map cast %p : !ncd.tensor<b=2, h=4, i=256, j=256 : f32> -> !ncd.tensor<b=2, h=4, i=256, j=256 : bf16>
  %o = ncd.contract %p16, %v over [j] : !ncd.tensor<b=2, h=4, i=256, j=256 : bf16>, !ncd.tensor<b=2, h=4, j=256, d=64 : bf16> -> !ncd.tensor<b=2, h=4, i=256, d=64 : bf16>
  func.return %o : !ncd.tensor<b=2, h=4, i=256, d=64 : bf16>
}
