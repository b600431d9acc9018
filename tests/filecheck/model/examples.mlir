// napkin-model on the examples at the ncd level: every op a kernel of its own, its
// operands read from HBM and its result written back; what fusion would save.
// RUN: napkin-model %examples/matmul.mlir | filecheck %s --check-prefix=MATMUL
// RUN: napkin-model %examples/attention.mlir | filecheck %s --check-prefix=ATTN
// RUN: napkin-model %examples/causal_attention.mlir --hw h200 | filecheck %s --check-prefix=CAUSAL
// RUN: napkin-model %examples/spherical_attention.mlir --hw a100 | filecheck %s --check-prefix=SPHERE
// RUN: cat %examples/attention.mlir | napkin-model --json | filecheck %s --check-prefix=JSON

// A GEMM is one op: nothing to fuse. 2 (512 x 256 + 256 x 384) bytes in, 2 x 512 x 384 out.
// MATMUL: @matmul: ncd level, unfused (each op a kernel of its own), on the H100 SXM5 80GB
// MATMUL-NEXT: op {{ +}}result{{ +}}read{{ +}}written{{ +}}tensor FLOPs{{ +}}f32 ops{{ +}}special{{ +}}time (us){{ +}}bound
// MATMUL-NEXT: ncd.contract  %c  {{ +}}458752{{ +}}393216{{ +}}100663296{{ +}}0{{ +}}0{{ +}}{{[0-9.]+}}  hbm
// MATMUL: HBM bytes: unfused 851968, fused 851968 {{.*}}: fusion saves 0 (0.0%)

// Attention: the f32 scores (2 x 4 x 256 x 256 x 4 bytes) go to HBM and back three times.
// ATTN: @attention: ncd level
// ATTN: ncd.contract  %s     {{ +}}524288{{ +}}2097152{{ +}}67108864{{ +}}0{{ +}}0
// ATTN-NEXT: ncd.softmax   %p     {{ +}}2097152{{ +}}2097152{{ +}}0{{ +}}2097152{{ +}}526336
// ATTN-NEXT: ncd.map       %p16   {{ +}}2097152{{ +}}1048576{{ +}}0{{ +}}524288{{ +}}0
// ATTN-NEXT: ncd.contract  %o     {{ +}}1310720{{ +}}262144{{ +}}67108864{{ +}}0{{ +}}0
// ATTN-NEXT: total {{ +}}6029312{{ +}}5505024{{ +}}134217728{{ +}}2621440{{ +}}526336
// ATTN-NEXT: HBM bytes: unfused 11534336, fused 1048576 (arguments read once, results written once): fusion saves 10485760 (90.9%)
// ATTN-NEXT: predicted: unfused {{[0-9.]+}} us (the ops one after another), fused floor {{[0-9.]+}} us

// The causal mask is one more pass over the scores.
// CAUSAL: @causal_attention: ncd level, unfused (each op a kernel of its own), on the H200 SXM 141GB
// CAUSAL: ncd.mask      %m     {{ +}}2097152{{ +}}2097152{{ +}}0{{ +}}524288{{ +}}0
// CAUSAL: fusion saves 14680064 (93.3%)

// The L2 norm: no exp, one rsqrt per row (2 x 4 x 256 rows).
// SPHERE: on the A100 SXM4 80GB
// SPHERE: ncd.l2norm    %p     {{ +}}2097152{{ +}}2097152{{ +}}0{{ +}}1048576{{ +}}2048

// JSON: "hardware": {
// JSON-NEXT: "key": "h100",
// JSON: "level": "ncd",
// JSON: "unfused_bytes": 11534336,
// JSON-NEXT: "fused_bytes": 1048576,
// JSON-NEXT: "saving_bytes": 10485760,
