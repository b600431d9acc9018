// The rows recipe: a diagram with no product (a row softmax, a row L2 norm, a row sum) takes
// napkin-sm80 and napkin-sm90 alike: rows a block spread over the grid, staged whole by
// cp.async, a row a warp in registers; its PTX assembles for each target without spills.
// RUN: napkin-opt %examples/row_softmax.mlir -p napkin-sm80 -t ptx --dump-pass-pipeline -o %t.sm80.ptx 2>&1 | filecheck %s --check-prefix=PLAN80
// RUN: %ptxas -v -arch=sm_80 %t.sm80.ptx -o %t.sm80.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=PTX80 < %t.sm80.ptx
// RUN: napkin-opt %examples/row_softmax.mlir -p napkin-sm90 -t ptx -o %t.sm90.ptx
// RUN: %ptxas -v -arch=sm_90a %t.sm90.ptx -o %t.sm90.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=PTX90 < %t.sm90.ptx
// RUN: napkin-opt %s -p 'napkin-sm90{block="16" warps="8"}' -t ptx --dump-pass-pipeline -o %t.norm.ptx 2>&1 | filecheck %s --check-prefix=NORM
// RUN: %ptxas -v -arch=sm_90a %t.norm.ptx -o %t.norm.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: not napkin-opt %s -p 'napkin-sm80{autotile=true}' 2>&1 | filecheck %s --check-prefix=AUTO
// RUN: not napkin-opt %s -p 'napkin-sm80{block="16,16"}' 2>&1 | filecheck %s --check-prefix=BLOCK
// RUN: sed -e 's/j=2048/j=8192/g' %s | not napkin-opt -p napkin-sm90 2>&1 | filecheck %s --check-prefix=LONG
// RUN: sed -e 's/j=2048/j=4096/g' %s | not napkin-opt -p 'napkin-sm90{block="64" warps="4"}' 2>&1 | filecheck %s --check-prefix=SMEM

// PLAN80: ncd-relabel{grid="i:4" stream=""},ncd-to-hbm,{{.*}}hbm-to-smem{{.*}}copy="cp.async"{{.*}},smem-to-reg{warps="i:4"{{.*}},reg-to-ptx{arch="sm_80"}
// REPORT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTX80: .target sm_80
// PTX80: cp.async.cg.shared.global
// PTX80: ld.shared.v4
// PTX80: shfl.sync.bfly
// PTX80: st.global.v4
// PTX90: .target sm_90a
// PTX90: shfl.sync.bfly
// NORM: ncd-relabel{grid="b,i:16" stream=""}{{.*}}smem-to-reg{warps="i:8"{{.*}},reg-to-ptx{arch="sm_90a"}
// AUTO: napkin-opt: error: napkin-sm80: autotile=true cannot be honoured for a row reduction
// BLOCK: napkin-opt: error: napkin-sm80: block="16,16" should be 1 positive integers separated by commas (for a row reduction: rows a block)
// LONG: napkin-opt: error: smem-to-reg: @row_l2norm: each warp holds 1 row(s) of 8192: 256 values a lane, over the 128 that fit in registers
// SMEM: napkin-opt: error: napkin-sm90: a block of 64 rows of 4096 stages 524288 bytes, over the 232448 of shared memory a block has on sm_90a

func.func @row_l2norm(%x: !ncd.tensor<b=2, i=100, j=2048 : f16>) -> !ncd.tensor<b=2, i=100, j=2048 : f16> {
  %a = ncd.map cast %x : !ncd.tensor<b=2, i=100, j=2048 : f16> -> !ncd.tensor<b=2, i=100, j=2048 : f32>
  %n = ncd.l2norm %a along j : !ncd.tensor<b=2, i=100, j=2048 : f32> -> !ncd.tensor<b=2, i=100, j=2048 : f32>
  %o = ncd.map cast %n : !ncd.tensor<b=2, i=100, j=2048 : f32> -> !ncd.tensor<b=2, i=100, j=2048 : f16>
  func.return %o : !ncd.tensor<b=2, i=100, j=2048 : f16>
}
