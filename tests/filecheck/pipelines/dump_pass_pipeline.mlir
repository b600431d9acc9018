// --dump-pass-pipeline prints on stderr the passes a named pipeline chose, every option
// written out (tests/unit/cli/test_dump_pass_pipeline.py reruns them and compares the PTX).
// RUN: napkin-opt %examples/matmul.mlir -p napkin-sm80 -t ptx --dump-pass-pipeline -o %t.sm80.ptx 2>&1 | filecheck %s --check-prefix=SM80
// RUN: napkin-opt %examples/matmul.mlir -p 'napkin-sm90{block="128,128,64"}' -t ptx --dump-pass-pipeline -o %t.sm90.ptx 2>&1 | filecheck %s --check-prefix=SM90
// RUN: napkin-opt %examples/causal_attention.mlir -p napkin-sm90 -t ptx --dump-pass-pipeline -o %t.attn.ptx 2>&1 | filecheck %s --check-prefix=ATTN
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm' --dump-pass-pipeline -o %t.mlir 2>&1 | filecheck %s --check-prefix=PLAIN

// SM80: ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-launch{group=0 blocks_per_sm=1 persistent=false cluster=1 order="first" ordered=false},hbm-to-smem{stages=3 layout="swizzle" smem_bytes={{[0-9]+}} copy="cp.async" store="direct"},smem-to-reg{warps="m:2,n:2" mma="mma.sync" hoist=true a_registers=false rows=""},smem-unroll-stages{trips=2},reg-carry-fragments,reg-prefetch{spread=true},reg-to-ptx{arch="sm_80"}
// SM90: ncd-relabel{grid="m:128,n:128" stream="k:64"},ncd-to-hbm,hbm-launch{group=8 blocks_per_sm=1 persistent=true cluster=1 order="first" ordered=false},hbm-to-smem{stages={{[0-9]}} layout="" smem_bytes={{[0-9]+}} copy="tma" store="tma"},smem-to-reg{{.*}}mma="wgmma"{{.*}},reg-to-ptx{arch="sm_90a"}
// ATTN: ncd-relabel{grid="b,h,i:128" stream="j:{{[0-9]+}}"},ncd-to-hbm,hbm-launch{{.*}}order="last" ordered=false},hbm-to-smem{{.*}}copy="tma"{{.*}},smem-to-reg{{.*}}mma="wgmma"{{.*}},reg-wgmma-overlap,reg-pingpong,reg-reload-loads,reg-to-ptx{arch="sm_90a"}
// PLAIN: ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm
// PLAIN-NOT: hbm-launch
