func.func @row_softmax(%x: !ncd.tensor<i=4096, j=1024 : bf16>) -> !ncd.tensor<i=4096, j=1024 : bf16> {
  %x32 = ncd.map cast %x : !ncd.tensor<i=4096, j=1024 : bf16> -> !ncd.tensor<i=4096, j=1024 : f32>
  %p = ncd.softmax %x32 along j scale 1.0 : !ncd.tensor<i=4096, j=1024 : f32> -> !ncd.tensor<i=4096, j=1024 : f32>
  %o = ncd.map cast %p : !ncd.tensor<i=4096, j=1024 : f32> -> !ncd.tensor<i=4096, j=1024 : bf16>
  func.return %o : !ncd.tensor<i=4096, j=1024 : bf16>
}
