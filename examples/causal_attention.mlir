// Causal attention: query i sees keys j <= i. The mask fills the scores above the
// diagonal with -inf before the softmax, so their probabilities are exactly zero.
func.func @causal_attention(%q: !ncd.tensor<b=2, h=4, i=256, d=64 : bf16>, %k: !ncd.tensor<b=2, h=4, j=256, d=64 : bf16>, %v: !ncd.tensor<b=2, h=4, j=256, d=64 : bf16>) -> !ncd.tensor<b=2, h=4, i=256, d=64 : bf16> {
  %s = ncd.contract %q, %k over [d] : !ncd.tensor<b=2, h=4, i=256, d=64 : bf16>, !ncd.tensor<b=2, h=4, j=256, d=64 : bf16> -> !ncd.tensor<b=2, h=4, i=256, j=256 : f32>
  %m = ncd.mask causal %s keep i >= j fill -inf : !ncd.tensor<b=2, h=4, i=256, j=256 : f32> -> !ncd.tensor<b=2, h=4, i=256, j=256 : f32>
  %p = ncd.softmax %m along j scale 0.125 : !ncd.tensor<b=2, h=4, i=256, j=256 : f32> -> !ncd.tensor<b=2, h=4, i=256, j=256 : f32>
  %p16 = ncd.map cast %p : !ncd.tensor<b=2, h=4, i=256, j=256 : f32> -> !ncd.tensor<b=2, h=4, i=256, j=256 : bf16>
  %o = ncd.contract %p16, %v over [j] : !ncd.tensor<b=2, h=4, i=256, j=256 : bf16>, !ncd.tensor<b=2, h=4, j=256, d=64 : bf16> -> !ncd.tensor<b=2, h=4, i=256, d=64 : bf16>
  func.return %o : !ncd.tensor<b=2, h=4, i=256, d=64 : bf16>
}
