// One warp: out[lane] = sum over the warp of x (shfl.sync bfly, down, then idx from lane
// 0), out[32] = the ballot of x > 0, out[33] = whether all lanes voted x > -1e30, and
// out[34] = the row max (a full butterfly of max, so every lane holds it).
func.func @warp_reduce(%out: i64, %x: i64) attributes {ptx.kernel, ptx.reqntid = [32 : i32]} {
  %tid_r = ptx.sreg {reg = "tid.x"} : () -> !ptx.reg<b32>
  %tid = builtin.unrealized_conversion_cast %tid_r : !ptx.reg<b32> to i32
  %c4 = arith.constant 4 : i32
  %t4 = arith.muli %tid, %c4 : i32
  %t4w = arith.extui %t4 : i32 to i64
  %xa = arith.addi %x, %t4w : i64
  %xa_r = builtin.unrealized_conversion_cast %xa : i64 to !ptx.reg<b64>
  %v = ptx.ld [%xa_r] {space = "global", ty = "f32"} : !ptx.reg<b64> -> (!ptx.reg<f32>)
  %vb = ptx.mov %v {ty = "b32"} : (!ptx.reg<f32>) -> !ptx.reg<b32>
  %s1b = ptx.shfl_sync %vb {mode = "bfly", b = 16 : i32, c = 31 : i32, mask = 4294967295 : i64} : (!ptx.reg<b32>) -> !ptx.reg<b32>
  %s1f = ptx.mov %s1b {ty = "b32"} : (!ptx.reg<b32>) -> !ptx.reg<f32>
  %s1 = ptx.add %v, %s1f {ty = "f32"} : (!ptx.reg<f32>, !ptx.reg<f32>) -> !ptx.reg<f32>
  %s1x = ptx.mov %s1 {ty = "b32"} : (!ptx.reg<f32>) -> !ptx.reg<b32>
  %s2b = ptx.shfl_sync %s1x {mode = "bfly", b = 8 : i32, c = 31 : i32, mask = 4294967295 : i64} : (!ptx.reg<b32>) -> !ptx.reg<b32>
  %s2f = ptx.mov %s2b {ty = "b32"} : (!ptx.reg<b32>) -> !ptx.reg<f32>
  %s2 = ptx.add %s1, %s2f {ty = "f32"} : (!ptx.reg<f32>, !ptx.reg<f32>) -> !ptx.reg<f32>
  %s2x = ptx.mov %s2 {ty = "b32"} : (!ptx.reg<f32>) -> !ptx.reg<b32>
  %s3b = ptx.shfl_sync %s2x {mode = "bfly", b = 4 : i32, c = 31 : i32, mask = 4294967295 : i64} : (!ptx.reg<b32>) -> !ptx.reg<b32>
  %s3f = ptx.mov %s3b {ty = "b32"} : (!ptx.reg<b32>) -> !ptx.reg<f32>
  %s3 = ptx.add %s2, %s3f {ty = "f32"} : (!ptx.reg<f32>, !ptx.reg<f32>) -> !ptx.reg<f32>
  %s3x = ptx.mov %s3 {ty = "b32"} : (!ptx.reg<f32>) -> !ptx.reg<b32>
  %s4b = ptx.shfl_sync %s3x {mode = "down", b = 2 : i32, c = 31 : i32, mask = 4294967295 : i64} : (!ptx.reg<b32>) -> !ptx.reg<b32>
  %s4f = ptx.mov %s4b {ty = "b32"} : (!ptx.reg<b32>) -> !ptx.reg<f32>
  %s4 = ptx.add %s3, %s4f {ty = "f32"} : (!ptx.reg<f32>, !ptx.reg<f32>) -> !ptx.reg<f32>
  %s4x = ptx.mov %s4 {ty = "b32"} : (!ptx.reg<f32>) -> !ptx.reg<b32>
  %s5b = ptx.shfl_sync %s4x {mode = "down", b = 1 : i32, c = 31 : i32, mask = 4294967295 : i64} : (!ptx.reg<b32>) -> !ptx.reg<b32>
  %s5f = ptx.mov %s5b {ty = "b32"} : (!ptx.reg<b32>) -> !ptx.reg<f32>
  %s5 = ptx.add %s4, %s5f {ty = "f32"} : (!ptx.reg<f32>, !ptx.reg<f32>) -> !ptx.reg<f32>
  // lane 0 now holds the total; hand it to every lane with an idx shuffle
  %s5x = ptx.mov %s5 {ty = "b32"} : (!ptx.reg<f32>) -> !ptx.reg<b32>
  %zero = ptx.const {ty = "u32", value = 0 : i64} : () -> !ptx.reg<b32>
  %allb = ptx.shfl_sync %s5x, %zero {mode = "idx", c = 31 : i32, mask = 4294967295 : i64} : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<b32>
  %oa = arith.addi %out, %t4w : i64
  %oa_r = builtin.unrealized_conversion_cast %oa : i64 to !ptx.reg<b64>
  ptx.st [%oa_r], (%allb) {space = "global", ty = "b32"} : !ptx.reg<b64>, (!ptx.reg<b32>)
  %fz = ptx.const {ty = "f32", value = 0.0 : f64} : () -> !ptx.reg<f32>
  %pos = ptx.setp %v, %fz {cmp = "gt", ty = "f32"} : (!ptx.reg<f32>, !ptx.reg<f32>) -> !ptx.reg<pred>
  %ballot = ptx.vote %pos {mode = "ballot"} : (!ptx.reg<pred>) -> !ptx.reg<b32>
  %lo = ptx.const {ty = "f32", value = -1.0e30 : f64} : () -> !ptx.reg<f32>
  %big = ptx.setp %v, %lo {cmp = "gt", ty = "f32"} : (!ptx.reg<f32>, !ptx.reg<f32>) -> !ptx.reg<pred>
  %all = ptx.vote %big {mode = "all"} : (!ptx.reg<pred>) -> !ptx.reg<pred>
  %one = ptx.const {ty = "u32", value = 1 : i64} : () -> !ptx.reg<b32>
  %allv = ptx.selp %one, %zero, %all {ty = "b32"} : (!ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<pred>) -> !ptx.reg<b32>
  %m1b = ptx.shfl_sync %vb {mode = "bfly", b = 16 : i32, c = 31 : i32, mask = 4294967295 : i64} : (!ptx.reg<b32>) -> !ptx.reg<b32>
  %m1f = ptx.mov %m1b {ty = "b32"} : (!ptx.reg<b32>) -> !ptx.reg<f32>
  %m1 = ptx.max %v, %m1f {ty = "f32"} : (!ptx.reg<f32>, !ptx.reg<f32>) -> !ptx.reg<f32>
  %m1x = ptx.mov %m1 {ty = "b32"} : (!ptx.reg<f32>) -> !ptx.reg<b32>
  %m2b = ptx.shfl_sync %m1x {mode = "bfly", b = 8 : i32, c = 31 : i32, mask = 4294967295 : i64} : (!ptx.reg<b32>) -> !ptx.reg<b32>
  %m2f = ptx.mov %m2b {ty = "b32"} : (!ptx.reg<b32>) -> !ptx.reg<f32>
  %m2 = ptx.max %m1, %m2f {ty = "f32"} : (!ptx.reg<f32>, !ptx.reg<f32>) -> !ptx.reg<f32>
  %m2x = ptx.mov %m2 {ty = "b32"} : (!ptx.reg<f32>) -> !ptx.reg<b32>
  %m3b = ptx.shfl_sync %m2x {mode = "bfly", b = 4 : i32, c = 31 : i32, mask = 4294967295 : i64} : (!ptx.reg<b32>) -> !ptx.reg<b32>
  %m3f = ptx.mov %m3b {ty = "b32"} : (!ptx.reg<b32>) -> !ptx.reg<f32>
  %m3 = ptx.max %m2, %m3f {ty = "f32"} : (!ptx.reg<f32>, !ptx.reg<f32>) -> !ptx.reg<f32>
  %m3x = ptx.mov %m3 {ty = "b32"} : (!ptx.reg<f32>) -> !ptx.reg<b32>
  %m4b = ptx.shfl_sync %m3x {mode = "bfly", b = 2 : i32, c = 31 : i32, mask = 4294967295 : i64} : (!ptx.reg<b32>) -> !ptx.reg<b32>
  %m4f = ptx.mov %m4b {ty = "b32"} : (!ptx.reg<b32>) -> !ptx.reg<f32>
  %m4 = ptx.max %m3, %m4f {ty = "f32"} : (!ptx.reg<f32>, !ptx.reg<f32>) -> !ptx.reg<f32>
  %m4x = ptx.mov %m4 {ty = "b32"} : (!ptx.reg<f32>) -> !ptx.reg<b32>
  %m5b = ptx.shfl_sync %m4x {mode = "bfly", b = 1 : i32, c = 31 : i32, mask = 4294967295 : i64} : (!ptx.reg<b32>) -> !ptx.reg<b32>
  %m5f = ptx.mov %m5b {ty = "b32"} : (!ptx.reg<b32>) -> !ptx.reg<f32>
  %m5 = ptx.max %m4, %m5f {ty = "f32"} : (!ptx.reg<f32>, !ptx.reg<f32>) -> !ptx.reg<f32>
  %o0 = builtin.unrealized_conversion_cast %out : i64 to !ptx.reg<b64>
  ptx.st [%o0], (%m5) {space = "global", ty = "f32", offset = 136 : i32} : !ptx.reg<b64>, (!ptx.reg<f32>)
  ptx.st [%o0], (%ballot, %allv) {space = "global", ty = "b32", offset = 128 : i32} : !ptx.reg<b64>, (!ptx.reg<b32>, !ptx.reg<b32>)
  func.return
}
