// napkin-sm90 compiles the GEMM diagram to sm_90a PTX (TMA, mbarriers, wgmma); the default
// and four other configurations assemble without spills, and GEMMs with a bias (per column,
// 256 columns a warpgroup with relu, per row in bf16); f16 and bad options.
// RUN: napkin-opt %examples/matmul.mlir -p 'napkin-sm90{block="128,256,64"}' -t ptx -o %t.default.ptx
// RUN: %ptxas -v -arch=sm_90a %t.default.ptx -o %t.default.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: napkin-opt %examples/matmul.mlir -p 'napkin-sm90{block="128,128,64" stages=5}' -t ptx -o %t.n128.ptx
// RUN: %ptxas -v -arch=sm_90a %t.n128.ptx -o %t.n128.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: napkin-opt %examples/matmul.mlir -p 'napkin-sm90{block="256,128,64" stages=4}' -t ptx -o %t.m256.ptx
// RUN: %ptxas -v -arch=sm_90a %t.m256.ptx -o %t.m256.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: napkin-opt %examples/matmul.mlir -p 'napkin-sm90{block="64,256,64" stages=4}' -t ptx -o %t.m64.ptx
// RUN: %ptxas -v -arch=sm_90a %t.m64.ptx -o %t.m64.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: napkin-opt %examples/matmul.mlir -p 'napkin-sm90{block="128,256,128" stages=2}' -t ptx -o %t.k128.ptx
// RUN: %ptxas -v -arch=sm_90a %t.k128.ptx -o %t.k128.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: sed -e 's/bf16/f16/g' %examples/matmul.mlir | napkin-opt -p 'napkin-sm90{block="128,256,64"}' -t ptx -o %t.f16.ptx
// RUN: %ptxas -arch=sm_90a %t.f16.ptx -o %t.f16.cubin
// RUN: filecheck %s --check-prefix=F16 < %t.f16.ptx
// RUN: filecheck %s --check-prefix=DEFAULT < %t.default.ptx
// RUN: filecheck %s --check-prefix=DEFAULT < %t.n128.ptx
// RUN: filecheck %s --check-prefix=DIRECT < %t.m256.ptx
// RUN: napkin-opt %examples/matmul.mlir -p 'napkin-sm90{block="128,256,64" persistent=false store=direct}' -t ptx -o %t.direct.ptx
// RUN: %ptxas -v -arch=sm_90a %t.direct.ptx -o %t.direct.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=DIRECT < %t.direct.ptx
// RUN: filecheck %s --check-prefix=PLAIN < %t.direct.ptx
// RUN: filecheck %s --check-prefix=PERSISTENT < %t.m256.ptx
// RUN: napkin-opt %examples/matmul.mlir -p 'napkin-sm90{block="128,256,64" cluster=2}' -t ptx -o %t.cluster.ptx
// RUN: %ptxas -v -arch=sm_90a %t.cluster.ptx -o %t.cluster.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: napkin-opt %examples/gemm_bias.mlir -p 'napkin-sm90{block="128,128,64"}' -t ptx -o %t.bias.ptx
// RUN: %ptxas -v -arch=sm_90a %t.bias.ptx -o %t.bias.cubin 2>&1 | filecheck %s --check-prefix=BIAS-REPORT
// RUN: filecheck %s --check-prefix=BIAS < %t.bias.ptx
// RUN: %python -c "from napkin_ir.diagrams import gemm; print(gemm(4096, 4096, 4096, name='gemm_bias', bias='n', relu=True))" | napkin-opt -p 'napkin-sm90{block="128,256,64"}' -t ptx -o %t.bias256.ptx
// RUN: %ptxas -v -arch=sm_90a %t.bias256.ptx -o %t.bias256.cubin 2>&1 | filecheck %s --check-prefix=BIAS-REPORT
// RUN: %python -c "from napkin_ir.diagrams import gemm; print(gemm(200, 136, 104, name='gemm_bias', bias='m', bias_dtype='bf16'))" | napkin-opt -p 'napkin-sm90{block="128,128,64" store=direct}' -t ptx -o %t.rowbias.ptx
// RUN: %ptxas -v -arch=sm_90a %t.rowbias.ptx -o %t.rowbias.cubin 2>&1 | filecheck %s --check-prefix=BIAS-REPORT
// RUN: not napkin-opt %examples/matmul.mlir -p 'napkin-sm90{block="128,256,64" store=global}' 2>&1 | filecheck %s --check-prefix=STORE
// RUN: not napkin-opt %examples/matmul.mlir -p 'napkin-sm90{block="128,256"}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not napkin-opt %examples/matmul.mlir -p 'napkin-sm90{block="128,256,64" stages=1}' 2>&1 | filecheck %s --check-prefix=STAGES

// REPORT: Compiling entry function 'matmul' for 'sm_90a'
// REPORT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// BIAS-REPORT: Compiling entry function 'gemm_bias' for 'sm_90a'
// BIAS-REPORT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// A bias per column read by the consumers: a pointer beside the tensor maps, each warp's
// column pairs by ld.global before the TMA stores (persistent: once per tile).
// BIAS: .param .u64 gemm_bias_bias
// BIAS: nctaid.x
// BIAS: wgmma.mma_async
// BIAS: ld.global.v2.f32
// BIAS: add.f32
// BIAS: stmatrix.sync.aligned.m8n8.x4.shared.b16
// BIAS: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
// F16: wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16
// F16: cvt.rn.f16x2.f32
// OPTION: napkin-opt: error: napkin-sm90: block="128,256" should be 3 positive integers separated by commas
// STAGES: napkin-opt: error: hbm-to-smem: stages must be at least 2 (one buffer cannot overlap copy and compute), got 1
// The default: persistent blocks, the output out through shared memory by TMA stores
// (where the panel buffer fits beside the stages; 256x128 with 4 stages leaves no room).
// DEFAULT: nctaid.x
// DEFAULT: stmatrix.sync.aligned.m8n8.x4.shared.b16
// DEFAULT: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
// DEFAULT-NOT: st.global
// DIRECT-NOT: stmatrix
// DIRECT: st.global.{{b32|v4.b32}}
// Store=direct in a block of one tile: out through the consumers' shared memory once they
// are past their reads (whole lines); a persistent block's producer is loading its next
// tiles' stages by then, so it stores from registers.
// PLAIN: bar.sync 1, 256;
// PLAIN: st.shared.b32
// PLAIN: bar.warp.sync 0xffffffff;
// PLAIN: ld.shared.v4.b32
// PLAIN: st.global.v4.b32
// PERSISTENT-NOT: st.shared.b32
// PERSISTENT: st.global.b32
// STORE: napkin-opt: error: napkin-sm90: store must be auto, tma or direct, got 'global'
