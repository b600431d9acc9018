// napkin-sm80 compiles more than the plain GEMM: two products of one A, a GEMM with an exp
// epilogue (ex2 of x log2 e), the fused MLP (its hidden axis streamed), a batched GEMM
// (the batch on the grid), B stored [n, k], an f32 output, a GEMM with a bias per column
// (and one per row, bf16, with relu); each assembles without spills.
// RUN: napkin-opt %examples/two_products.mlir -p napkin-sm80 -t ptx -o %t.two.ptx
// RUN: %ptxas -v -arch=sm_80 %t.two.ptx -o %t.two.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=TWO < %t.two.ptx
// RUN: napkin-opt %examples/gemm_exp.mlir -p napkin-sm80 -t ptx -o %t.exp.ptx
// RUN: %ptxas -v -arch=sm_80 %t.exp.ptx -o %t.exp.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=EXP < %t.exp.ptx
// RUN: napkin-opt %examples/mlp.mlir -p napkin-sm80 -t ptx -o %t.mlp.ptx
// RUN: %ptxas -v -arch=sm_80 %t.mlp.ptx -o %t.mlp.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: sed -e 's/m=512/b=4, m=512/g; s/k=256, n=384/b=4, k=256, n=384/g' %examples/matmul.mlir | napkin-opt -p napkin-sm80 -t ptx -o %t.bmm.ptx
// RUN: %ptxas -v -arch=sm_80 %t.bmm.ptx -o %t.bmm.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=BMM < %t.bmm.ptx
// RUN: sed -e 's/k=256, n=384/n=384, k=256/g' %examples/matmul.mlir | napkin-opt -p napkin-sm80 -t ptx -o %t.bt.ptx
// RUN: %ptxas -v -arch=sm_80 %t.bt.ptx -o %t.bt.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: sed -e 's/n=384 : bf16>$/n=384 : f32>/; s/-> !ncd.tensor<m=512, n=384 : bf16>/-> !ncd.tensor<m=512, n=384 : f32>/g; s/return %c : !ncd.tensor<m=512, n=384 : bf16>/return %c : !ncd.tensor<m=512, n=384 : f32>/' %examples/matmul.mlir | napkin-opt -p napkin-sm80 -t ptx -o %t.f32.ptx
// RUN: %ptxas -v -arch=sm_80 %t.f32.ptx -o %t.f32.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=F32 < %t.f32.ptx
// RUN: napkin-opt %examples/gemm_bias.mlir -p napkin-sm80 -t ptx -o %t.bias.ptx
// RUN: %ptxas -v -arch=sm_80 %t.bias.ptx -o %t.bias.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=BIAS < %t.bias.ptx
// RUN: %python -c "from napkin_ir.diagrams import gemm; print(gemm(200, 136, 104, name='gemm_bias', bias='m', bias_dtype='bf16', relu=True))" | napkin-opt -p napkin-sm80 -t ptx -o %t.rowbias.ptx
// RUN: %ptxas -v -arch=sm_80 %t.rowbias.ptx -o %t.rowbias.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=ROWBIAS < %t.rowbias.ptx
// RUN: not napkin-opt %examples/mlp.mlir -p 'napkin-sm80{group=2}' 2>&1 | filecheck %s --check-prefix=REFUSED

// REPORT: 0 bytes spill stores, 0 bytes spill loads

// TWO: .entry two(
// TWO: .reqntid 256
// TWO: ld.param.u64 %rd{{[0-9]+}}, [two_out0];
// TWO: ld.param.u64 %rd{{[0-9]+}}, [two_out1];
// EXP: ex2.approx.ftz.f32
// BMM: mov.u32 %r{{[0-9]+}}, %ctaid.z;
// F32: st.global.v2.f32
// BIAS: .param .u64 gemm_bias_bias
// BIAS: ld.global.v2.f32
// BIAS: add.f32
// ROWBIAS: ld.global.b16
// ROWBIAS: cvt.f32.bf16
// ROWBIAS: max.f32
// REFUSED: napkin-opt: error: napkin-sm80: group=2 cannot be honoured for attention on sm_80
