// Grouped-query attention: g key/value heads, each shared by a group of r query heads.
// O[b, g, r, i, d] = softmax_j(Q[b, g, r, i, d] . K[b, g, j, d] / sqrt(d)) . V[b, g, j, d]:
// K and V have no axis r, so the contraction broadcasts them over it by name. Q's axes in
// this order are the memory of a [b, g * r, i, d] tensor (query head g r + r').
func.func @gqa_attention(%q: !ncd.tensor<b=1, g=2, r=4, i=256, d=64 : bf16>, %k: !ncd.tensor<b=1, g=2, j=256, d=64 : bf16>, %v: !ncd.tensor<b=1, g=2, j=256, d=64 : bf16>) -> !ncd.tensor<b=1, g=2, r=4, i=256, d=64 : bf16> {
  %s = ncd.contract %q, %k over [d] : !ncd.tensor<b=1, g=2, r=4, i=256, d=64 : bf16>, !ncd.tensor<b=1, g=2, j=256, d=64 : bf16> -> !ncd.tensor<b=1, g=2, r=4, i=256, j=256 : f32>
  %p = ncd.softmax %s along j scale 0.125 : !ncd.tensor<b=1, g=2, r=4, i=256, j=256 : f32> -> !ncd.tensor<b=1, g=2, r=4, i=256, j=256 : f32>
  %p16 = ncd.map cast %p : !ncd.tensor<b=1, g=2, r=4, i=256, j=256 : f32> -> !ncd.tensor<b=1, g=2, r=4, i=256, j=256 : bf16>
  %o = ncd.contract %p16, %v over [j] : !ncd.tensor<b=1, g=2, r=4, i=256, j=256 : bf16>, !ncd.tensor<b=1, g=2, j=256, d=64 : bf16> -> !ncd.tensor<b=1, g=2, r=4, i=256, d=64 : bf16>
  func.return %o : !ncd.tensor<b=1, g=2, r=4, i=256, d=64 : bf16>
}
