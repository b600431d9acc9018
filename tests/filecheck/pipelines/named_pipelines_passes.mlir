// napkin-sm80 and napkin-sm90 run their passes through the pass manager: every level shows
// with --print-between-passes, for a GEMM and for attention; an option a pipeline cannot
// honour for the diagram is an error naming it.
// RUN: napkin-opt %examples/matmul.mlir -p napkin-sm90 -t ptx --print-between-passes -o %t.ptx | filecheck %s --check-prefix=SM90
// RUN: napkin-opt %examples/attention.mlir -p napkin-sm80 -t ptx --print-between-passes -o %t.a.ptx | filecheck %s --check-prefix=ATTN
// RUN: napkin-opt %examples/matmul.mlir -p 'canonicalize,napkin-sm80' --time-passes -t ptx -o %t.g.ptx | filecheck %s --check-prefix=TIMES
// RUN: not napkin-opt %examples/attention.mlir -p 'napkin-sm80{group=4}' 2>&1 | filecheck %s --check-prefix=GROUP
// RUN: not napkin-opt %examples/attention.mlir -p 'napkin-sm80{autotile=true layout=swizzle}' 2>&1 | filecheck %s --check-prefix=AUTO
// RUN: not napkin-opt %examples/attention.mlir -p 'napkin-sm80{block="128,128,32"}' 2>&1 | filecheck %s --check-prefix=BLOCK
// RUN: not napkin-opt %examples/matmul.mlir -p 'napkin-sm80{autotile=true block="64,64,32"}' 2>&1 | filecheck %s --check-prefix=CHOSEN
// RUN: not napkin-opt %examples/matmul.mlir -p 'napkin-sm90{autotile=true block="64,64,32"}' 2>&1 | filecheck %s --check-prefix=CHOSEN90
// RUN: not napkin-opt %examples/attention.mlir -p 'napkin-sm90{autotile=true block="128,128"}' 2>&1 | filecheck %s --check-prefix=CHOSEN90A

// SM90:      IR after ncd-relabel:
// SM90:      func.func @matmul
// SM90:      IR after ncd-to-hbm:
// SM90:      hbm.kernel
// SM90:      IR after hbm-launch:
// SM90:      IR after hbm-to-smem:
// SM90:      smem.tma_copy
// SM90:      IR after smem-to-reg:
// SM90:      reg.wgmma
// SM90:      IR after reg-hoist-loads:
// SM90:      IR after reg-reload-loads:
// SM90-NOT:  IR after

// ATTN:      IR after ncd-relabel:
// ATTN:      IR after ncd-to-hbm:
// ATTN:      IR after hbm-launch:
// ATTN:      IR after hbm-to-smem:
// ATTN:      IR after smem-to-reg:
// ATTN:      reg.row_reduce max

// TIMES: Pass canonicalize took
// TIMES: Pass ncd-relabel took
// TIMES: Pass ncd-to-hbm took
// TIMES: Pass hbm-to-smem took
// TIMES: Pass smem-to-reg took
// TIMES: Pass reg-to-ptx took

// GROUP: napkin-opt: error: napkin-sm80: group=4 cannot be honoured for attention on sm_80
// AUTO: napkin-opt: error: napkin-sm80: autotile=true, layout=swizzle cannot be honoured for attention on sm_80
// BLOCK: napkin-opt: error: napkin-sm80: block="128,128,32" should be 2 positive integers separated by commas (for attention: query rows, keys)
// CHOSEN: napkin-opt: error: napkin-sm80: block=64,64,32 cannot be honoured for autotile=true (the model chooses them)
// CHOSEN90: napkin-opt: error: napkin-sm90: block=64,64,32 cannot be honoured for autotile=true (the model chooses it)
// CHOSEN90A: napkin-opt: error: napkin-sm90: block=128,128 cannot be honoured for autotile=true (the model chooses it)
