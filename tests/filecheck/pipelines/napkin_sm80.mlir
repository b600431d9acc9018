// napkin-sm80 compiles the GEMM diagram to sm_80 PTX; the default and three other
// configurations assemble, and the default and the two larger ones spill no registers.
// RUN: napkin-opt %examples/matmul.mlir -p napkin-sm80 -t ptx -o %t.default.ptx
// RUN: %ptxas -v -arch=sm_80 %t.default.ptx -o %t.default.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: napkin-opt %examples/matmul.mlir -p 'napkin-sm80{block="128,128,64"}' -t ptx -o %t.k64.ptx
// RUN: %ptxas -v -arch=sm_80 %t.k64.ptx -o %t.k64.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: napkin-opt %examples/matmul.mlir -p 'napkin-sm80{block="128,256,32" warps="2,4"}' -t ptx -o %t.wide.ptx
// RUN: %ptxas -v -arch=sm_80 %t.wide.ptx -o %t.wide.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: napkin-opt %examples/matmul.mlir -p 'napkin-sm80{block="64,64,32" warps="2,2" stages=4}' -t ptx -o %t.small.ptx
// RUN: %ptxas -arch=sm_80 %t.small.ptx -o %t.small.cubin
// RUN: sed -e 's/bf16/f16/g' %examples/matmul.mlir | napkin-opt -p napkin-sm80 -t ptx -o %t.f16.ptx
// RUN: %ptxas -arch=sm_80 %t.f16.ptx -o %t.f16.cubin
// RUN: filecheck %s --check-prefix=F16 < %t.f16.ptx
// RUN: not napkin-opt %examples/attention.mlir -p napkin-sm80 -t ptx 2>&1 | filecheck %s --check-prefix=ATTN
// RUN: not napkin-opt %examples/matmul.mlir -p 'napkin-sm80{warps="2"}' 2>&1 | filecheck %s --check-prefix=OPTION

// REPORT: Compiling entry function 'matmul' for 'sm_80'
// REPORT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// F16: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// F16: cvt.rn.f16x2.f32
// ATTN: napkin-opt: error: napkin-sm80: compiles a diagram of one function with one contraction over one axis (a GEMM) for now
// OPTION: napkin-opt: error: napkin-sm80: warps="2" should be 2 positive integers separated by commas
