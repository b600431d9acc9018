// Causal grouped-query attention: query i of every head of a group sees keys j <= i of
// the key/value head the group shares (K and V lack the axis r; they broadcast over it).
func.func @gqa_causal_attention(%q: !ncd.tensor<b=1, g=2, r=4, i=256, d=64 : bf16>, %k: !ncd.tensor<b=1, g=2, j=256, d=64 : bf16>, %v: !ncd.tensor<b=1, g=2, j=256, d=64 : bf16>) -> !ncd.tensor<b=1, g=2, r=4, i=256, d=64 : bf16> {
  %s = ncd.contract %q, %k over [d] : !ncd.tensor<b=1, g=2, r=4, i=256, d=64 : bf16>, !ncd.tensor<b=1, g=2, j=256, d=64 : bf16> -> !ncd.tensor<b=1, g=2, r=4, i=256, j=256 : f32>
  %m = ncd.mask causal %s keep i >= j fill -inf : !ncd.tensor<b=1, g=2, r=4, i=256, j=256 : f32> -> !ncd.tensor<b=1, g=2, r=4, i=256, j=256 : f32>
  %p = ncd.softmax %m along j scale 0.125 : !ncd.tensor<b=1, g=2, r=4, i=256, j=256 : f32> -> !ncd.tensor<b=1, g=2, r=4, i=256, j=256 : f32>
  %p16 = ncd.map cast %p : !ncd.tensor<b=1, g=2, r=4, i=256, j=256 : f32> -> !ncd.tensor<b=1, g=2, r=4, i=256, j=256 : bf16>
  %o = ncd.contract %p16, %v over [j] : !ncd.tensor<b=1, g=2, r=4, i=256, j=256 : bf16>, !ncd.tensor<b=1, g=2, j=256, d=64 : bf16> -> !ncd.tensor<b=1, g=2, r=4, i=256, d=64 : bf16>
  func.return %o : !ncd.tensor<b=1, g=2, r=4, i=256, d=64 : bf16>
}
