// The rows recipe on rows shorter than 256 columns: the attention backward's row statistic
// D = rowsum(dO * O) (examples/attention_delta.mlir, d=64; d=128 and 256 by substitution)
// and a row softmax over 64 columns (below; 128 by substitution) take napkin-sm80 and
// napkin-sm90 alike: a block of 16 rows, 4 warps of 4 rows, each row across d / 8 lanes;
// the row reductions shuffle within a row's lanes only, and the PTX assembles for each
// target without spills. A head dim no lanes hold evenly (72) is refused with the lengths
// that work.
// RUN: napkin-opt %examples/attention_delta.mlir -p napkin-sm80 -t ptx --dump-pass-pipeline -o %t.d64.sm80.ptx 2>&1 | filecheck %s --check-prefix=PLAN
// RUN: %ptxas -v -arch=sm_80 %t.d64.sm80.ptx -o %t.d64.sm80.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=D64 < %t.d64.sm80.ptx
// RUN: napkin-opt %examples/attention_delta.mlir -p napkin-sm90 -t ptx -o %t.d64.sm90.ptx
// RUN: %ptxas -v -arch=sm_90a %t.d64.sm90.ptx -o %t.d64.sm90.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=D64 < %t.d64.sm90.ptx
// RUN: sed -e 's/d=64/d=128/g' %examples/attention_delta.mlir | napkin-opt -p napkin-sm80 -t ptx -o %t.d128.sm80.ptx
// RUN: %ptxas -v -arch=sm_80 %t.d128.sm80.ptx -o %t.d128.sm80.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=D128 < %t.d128.sm80.ptx
// RUN: sed -e 's/d=64/d=128/g' %examples/attention_delta.mlir | napkin-opt -p napkin-sm90 -t ptx -o %t.d128.sm90.ptx
// RUN: %ptxas -v -arch=sm_90a %t.d128.sm90.ptx -o %t.d128.sm90.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: sed -e 's/d=64/d=256/g' %examples/attention_delta.mlir | napkin-opt -p napkin-sm90 -t ptx -o %t.d256.sm90.ptx
// RUN: %ptxas -v -arch=sm_90a %t.d256.sm90.ptx -o %t.d256.sm90.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=D256 < %t.d256.sm90.ptx
// RUN: napkin-opt %s -p napkin-sm80 -t ptx -o %t.sm64.sm80.ptx
// RUN: %ptxas -v -arch=sm_80 %t.sm64.sm80.ptx -o %t.sm64.sm80.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=SOFTMAX < %t.sm64.sm80.ptx
// RUN: napkin-opt %s -p napkin-sm90 -t ptx -o %t.sm64.sm90.ptx
// RUN: %ptxas -v -arch=sm_90a %t.sm64.sm90.ptx -o %t.sm64.sm90.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: sed -e 's/j=64/j=128/g' %s | napkin-opt -p napkin-sm90 -t ptx -o %t.sm128.sm90.ptx
// RUN: %ptxas -v -arch=sm_90a %t.sm128.sm90.ptx -o %t.sm128.sm90.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: sed -e 's/d=64/d=72/g' %examples/attention_delta.mlir | not napkin-opt -p napkin-sm90 2>&1 | filecheck %s --check-prefix=D72

// PLAN: ncd-relabel{grid="b,h,i:16" stream=""},ncd-to-hbm,{{.*}}hbm-to-smem{{.*}}copy="cp.async"{{.*}},smem-to-reg{warps="i:4"{{.*}},reg-to-ptx{arch="sm_80"}
// REPORT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// D64:      ld.shared.v4.b32
// D64-NOT:  shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, {{16|8}},
// D64:      shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 4, 31, 0xffffffff;
// D64:      shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 1, 31, 0xffffffff;
// D64:      st.global.f32
// D128-NOT: shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 16,
// D128:     shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 8, 31, 0xffffffff;
// D256:     shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 16, 31, 0xffffffff;
// SOFTMAX:  .target sm_80
// SOFTMAX:  shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 4, 31, 0xffffffff;
// SOFTMAX:  ex2.approx.ftz.f32
// SOFTMAX:  st.global.v4.b32
// D72: napkin-opt: error: smem-to-reg: @attention_delta: the rows along 'd' are 72 columns long, which a warp cannot hold{{.*}}; pad the rows to 128

func.func @row_softmax(%x: !ncd.tensor<b=2, i=200, j=64 : bf16>) -> !ncd.tensor<b=2, i=200, j=64 : bf16> {
  %a = ncd.map cast %x : !ncd.tensor<b=2, i=200, j=64 : bf16> -> !ncd.tensor<b=2, i=200, j=64 : f32>
  %p = ncd.softmax %a along j scale 0.125 : !ncd.tensor<b=2, i=200, j=64 : f32> -> !ncd.tensor<b=2, i=200, j=64 : f32>
  %o = ncd.map cast %p : !ncd.tensor<b=2, i=200, j=64 : f32> -> !ncd.tensor<b=2, i=200, j=64 : bf16>
  func.return %o : !ncd.tensor<b=2, i=200, j=64 : bf16>
}
