// gemm_stream_sm80: the plain sm_80 GEMM whose stream loop hbm-to-smem built is emitted
// whole: the loop unrolled by its 3 stages in PTX, every copy a pointer moved by an add and
// immediates, no bounds checks inside. The same GEMM after smem-unroll-stages, and a GEMM
// with B stored [n, k], go to the op rules instead (reg-to-ptx's choice reads the IR).
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=swizzle},smem-to-reg{warps="m:2,n:2"},reg-to-ptx' -t ptx | filecheck %s
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=swizzle},smem-to-reg{warps="m:2,n:2"},smem-unroll-stages,reg-to-ptx' -t ptx | filecheck %s --check-prefix=RULES

// the emitter: three tiles a trip, each waiting for its stage; copies from moved pointers
// CHECK: bra.uni
// CHECK-COUNT-3: cp.async.wait_group 1;
// CHECK: add.s64 %rd{{[0-9]+}}, %rd{{[0-9]+}}, %rd{{[0-9]+}};
// CHECK-NOT: selp.b32
// CHECK: bra.uni

// the rules: the copies' source is one mul.wide from the tile's place
// RULES: mul.wide.u32
// RULES: cp.async.cg.shared.global
// RULES-NOT: add.s64
