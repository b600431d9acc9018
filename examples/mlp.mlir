// A two-layer MLP, Y = relu(X W1) W2 (relu: max with the constant 0), fused: the hidden axis h is streamed, as attention streams its keys.
func.func @mlp(%x: !ncd.tensor<m=256, k=128 : bf16>, %w1: !ncd.tensor<k=128, h=512 : bf16>, %w2: !ncd.tensor<h=512, n=128 : bf16>) -> !ncd.tensor<m=256, n=128 : bf16> {
  %h = ncd.contract %x, %w1 over [k] : !ncd.tensor<m=256, k=128 : bf16>, !ncd.tensor<k=128, h=512 : bf16> -> !ncd.tensor<m=256, h=512 : f32>
  %r = ncd.map max %h by 0.0 : !ncd.tensor<m=256, h=512 : f32> -> !ncd.tensor<m=256, h=512 : f32>
  %h16 = ncd.map cast %r : !ncd.tensor<m=256, h=512 : f32> -> !ncd.tensor<m=256, h=512 : bf16>
  %y = ncd.contract %h16, %w2 over [h] : !ncd.tensor<m=256, h=512 : bf16>, !ncd.tensor<h=512, n=128 : bf16> -> !ncd.tensor<m=256, n=128 : bf16>
  func.return %y : !ncd.tensor<m=256, n=128 : bf16>
}
