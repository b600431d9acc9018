// The row statistic D of the attention backward: D[b,h,i] = sum_d dO[b,h,i,d] * O[b,h,i,d], in f32.
func.func @attention_delta(%o: !ncd.tensor<b=2, h=4, i=256, d=64 : bf16>, %d_o: !ncd.tensor<b=2, h=4, i=256, d=64 : bf16>) -> !ncd.tensor<b=2, h=4, i=256 : f32> {
  %o32 = ncd.map cast %o : !ncd.tensor<b=2, h=4, i=256, d=64 : bf16> -> !ncd.tensor<b=2, h=4, i=256, d=64 : f32>
  %d_o32 = ncd.map cast %d_o : !ncd.tensor<b=2, h=4, i=256, d=64 : bf16> -> !ncd.tensor<b=2, h=4, i=256, d=64 : f32>
  %p = ncd.map mul %d_o32, %o32 : !ncd.tensor<b=2, h=4, i=256, d=64 : f32>, !ncd.tensor<b=2, h=4, i=256, d=64 : f32> -> !ncd.tensor<b=2, h=4, i=256, d=64 : f32>
  %delta = ncd.reduce sum %p along [d] : !ncd.tensor<b=2, h=4, i=256, d=64 : f32> -> !ncd.tensor<b=2, h=4, i=256 : f32>
  func.return %delta : !ncd.tensor<b=2, h=4, i=256 : f32>
}
