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
// Attention: the three examples at head dim 64, and 128, assemble without spills.
// RUN: napkin-opt %examples/attention.mlir -p napkin-sm80 -t ptx -o %t.attn.ptx
// RUN: %ptxas -v -arch=sm_80 %t.attn.ptx -o %t.attn.cubin 2>&1 | filecheck %s --check-prefix=NOSPILL
// RUN: filecheck %s --check-prefix=ATTN < %t.attn.ptx
// RUN: napkin-opt %examples/causal_attention.mlir -p napkin-sm80 -t ptx -o %t.causal.ptx
// RUN: %ptxas -v -arch=sm_80 %t.causal.ptx -o %t.causal.cubin 2>&1 | filecheck %s --check-prefix=NOSPILL
// RUN: napkin-opt %examples/spherical_attention.mlir -p napkin-sm80 -t ptx -o %t.sph.ptx
// RUN: %ptxas -v -arch=sm_80 %t.sph.ptx -o %t.sph.cubin 2>&1 | filecheck %s --check-prefix=NOSPILL
// RUN: sed -e 's/d=64/d=128/g; s/0.125/0.08838834764831845/' %examples/attention.mlir | napkin-opt -p napkin-sm80 -t ptx -o %t.d128.ptx
// RUN: %ptxas -v -arch=sm_80 %t.d128.ptx -o %t.d128.cubin 2>&1 | filecheck %s --check-prefix=NOSPILL
// RUN: sed -e 's/d=64/d=128/g' %examples/causal_attention.mlir | napkin-opt -p napkin-sm80 -t ptx -o %t.cd128.ptx
// RUN: %ptxas -v -arch=sm_80 %t.cd128.ptx -o %t.cd128.cubin 2>&1 | filecheck %s --check-prefix=NOSPILL
// RUN: sed -e 's/d=64/d=128/g' %examples/spherical_attention.mlir | napkin-opt -p napkin-sm80 -t ptx -o %t.sd128.ptx
// RUN: %ptxas -v -arch=sm_80 %t.sd128.ptx -o %t.sd128.cubin 2>&1 | filecheck %s --check-prefix=NOSPILL
// RUN: not napkin-opt %examples/matmul.mlir -p 'napkin-sm80{warps="2"}' 2>&1 | filecheck %s --check-prefix=OPTION
// The stages' layout: swizzled where the rows allow (the default), padded on request; a
// 16-deep stream tile (32-byte rows) falls back to padding by itself.
// RUN: napkin-opt %examples/matmul.mlir -p 'napkin-sm80{block="256,128,64" warps="4,2"}' -t mlir | filecheck %s --check-prefix=SWIZZLE
// RUN: napkin-opt %examples/matmul.mlir -p 'napkin-sm80{block="256,128,64" warps="4,2" layout=pad8}' -t ptx -o %t.pad.ptx
// RUN: %ptxas -v -arch=sm_80 %t.pad.ptx -o %t.pad.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=PAD < %t.pad.ptx
// RUN: napkin-opt %examples/matmul.mlir -p 'napkin-sm80{block="64,64,16" warps="2,2"}' -t ptx -o %t.k16.ptx
// RUN: %ptxas -arch=sm_80 %t.k16.ptx -o %t.k16.cubin
// RUN: not napkin-opt %examples/matmul.mlir -p 'napkin-sm80{layout=tiled}' 2>&1 | filecheck %s --check-prefix=LAYOUT
// The launch order: the plain grid by default (4 x 3 blocks), bands of block rows on one
// grid axis with group=G.
// RUN: napkin-opt %examples/matmul.mlir -p napkin-sm80 -t mlir | filecheck %s --check-prefix=PLAIN
// RUN: napkin-opt %examples/matmul.mlir -p 'napkin-sm80{group=16}' -t mlir | filecheck %s --check-prefix=GROUPED
// RUN: not napkin-opt %examples/matmul.mlir -p 'napkin-sm80{group=-2}' 2>&1 | filecheck %s --check-prefix=NEGATIVE

// REPORT: Compiling entry function 'matmul' for 'sm_80'
// REPORT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// F16: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// F16: cvt.rn.f16x2.f32
// NOSPILL: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// ATTN: shfl.sync.bfly
// ATTN: ex2.approx
// ATTN: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// OPTION: napkin-opt: error: napkin-sm80: warps="2" should be 2 positive integers separated by commas
// SWIZZLE: ptx.kernel
// SWIZZLE: ptx.xor
// SWIZZLE: ptx.ld {{.*}}space = "shared"
// PAD-NOT: xor.b32
// PAD: cp.async.cg.shared.global
// LAYOUT: napkin-opt: error: napkin-sm80: layout must be auto, swizzle, pad8 or row, got 'tiled'
// GROUPED: napkin.grid = [12 : i32]
// PLAIN: napkin.grid = [4 : i32, 3 : i32]
// NEGATIVE: napkin-opt: error: napkin-sm80: group must be 0 (plain launch order) or a positive band height, got -2
