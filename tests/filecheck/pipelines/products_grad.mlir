// Gradients of products, kernel by kernel, through both named pipelines: `ncd-grad{residuals=true}`
// derives them, `ncd-fold-casts` rounds the cotangents for the tensor cores, `ncd-extract` makes one
// kernel a result. Every kernel assembles.
// dA of two products (dC1 B1^T + dC2 B2^T) streams four operands' tiles a stage: napkin-sm90 takes
// three stages of them, not a GEMM's four, and its output's TMA panels fit beside them.
// RUN: napkin-opt %examples/two_products.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="two_grad" result=0},napkin-sm90' -t ptx --dump-pass-pipeline -o %t.two90.ptx 2>&1 | filecheck %s --check-prefix=TWO90
// RUN: %ptxas -arch=sm_90a %t.two90.ptx -o %t.two90.cubin
// RUN: napkin-opt %examples/two_products.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="two_grad" result=0},napkin-sm80' -t ptx -o %t.two80.ptx
// RUN: %ptxas -arch=sm_80 %t.two80.ptx -o %t.two80.cubin

// TWO90: ncd-relabel{grid="m:128,k:128" stream="n:64"},ncd-to-hbm
// TWO90-SAME: hbm-to-smem{stages=3 layout="" smem_bytes={{[0-9]+}} copy="tma" store="tma"}

// A contraction that fits in fewer stages keeps its output's TMA panels in their place:
// spherical attention's dK at d=64 (the program's kernel of K dG^T + K dG + V dA^T, one
// stream tile of the head dim) takes three stages and TMA stores, not four stages storing
// from registers (products._stages_beside_panels).
// RUN: %python -c "from napkin_ir.attention_diagrams import attention_diagram as a; from napkin_ir.plan.program import reassociated_program as r; p = r(a('spherical', b=1, h=2, n=1024, d=64), True, always=True); print(next(x for x in p.parts if x.output == p.memory(p.results[1])).text)" > %t.dk.mlir
// RUN: napkin-opt %t.dk.mlir -p napkin-sm90 -t ptx --dump-pass-pipeline -o %t.dk.ptx 2>&1 | filecheck %s --check-prefix=DK
// RUN: %ptxas -arch=sm_90a %t.dk.ptx -o %t.dk.cubin
// DK: hbm-to-smem{stages=3 layout="" smem_bytes={{[0-9]+}} copy="tma" store="tma"}
