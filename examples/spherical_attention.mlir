// Spherical attention: the scores are divided by their L2 norm along the key axis in
// place of the softmax (no max, no exp), then weight the values as usual.
func.func @spherical_attention(%q: !ncd.tensor<b=2, h=4, i=256, d=64 : bf16>, %k: !ncd.tensor<b=2, h=4, j=256, d=64 : bf16>, %v: !ncd.tensor<b=2, h=4, j=256, d=64 : bf16>) -> !ncd.tensor<b=2, h=4, i=256, d=64 : bf16> {
  %s = ncd.contract %q, %k over [d] : !ncd.tensor<b=2, h=4, i=256, d=64 : bf16>, !ncd.tensor<b=2, h=4, j=256, d=64 : bf16> -> !ncd.tensor<b=2, h=4, i=256, j=256 : f32>
  %p = ncd.l2norm %s along j : !ncd.tensor<b=2, h=4, i=256, j=256 : f32> -> !ncd.tensor<b=2, h=4, i=256, j=256 : f32>
  %p16 = ncd.map cast %p : !ncd.tensor<b=2, h=4, i=256, j=256 : f32> -> !ncd.tensor<b=2, h=4, i=256, j=256 : bf16>
  %o = ncd.contract %p16, %v over [j] : !ncd.tensor<b=2, h=4, i=256, j=256 : bf16>, !ncd.tensor<b=2, h=4, j=256, d=64 : bf16> -> !ncd.tensor<b=2, h=4, i=256, d=64 : bf16>
  func.return %o : !ncd.tensor<b=2, h=4, i=256, d=64 : bf16>
}
