// reg-early-waits: in a loop pipelined by reg-wgmma-overlap, the trip's wait for tile j's V
// (a loop of mbarrier.try_wait, which ptxas schedules nothing across) moves from between
// the softmax and P V's wait to just after the scores' wait, ahead of K's release: the
// softmax, P V's retiring and P's packing become one block. Tile 0's part before the loop
// keeps its order; so does a loop reg-wgmma-overlap did not pipeline (the GEMM's). With
// at="max" the wait goes after the trip's row max (and its fold into the running max). With
// at="products" (FA4's order) it goes the other way, into the next trip just before the
// products that read V (with the next tile's scores, inside the turn): tile 0's wait moves
// into the first trip, the parity travels with the stage the loops carry, and after the
// last loop one wait comes before the products that end the chain.
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-overlap,reg-early-waits' | filecheck %s
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-overlap,reg-early-waits' | filecheck %s --check-prefix=CAUSAL
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-overlap,reg-early-waits{at="max"}' | filecheck %s --check-prefix=MAX
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-overlap,reg-pingpong,reg-early-waits{at="max"}' | napkin-run --random-inputs --check | filecheck %s --check-prefix=NUMBERS
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-overlap,reg-pingpong,reg-early-waits{at="products"}' | filecheck %s --check-prefix=PRODUCTS
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-overlap,reg-pingpong,reg-early-waits{at="products"}' | napkin-run --random-inputs --check | filecheck %s --check-prefix=NUMBERS
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-overlap,reg-pingpong,reg-early-waits{at="products"}' | napkin-run --random-inputs --check | filecheck %s --check-prefix=NUMBERS
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-overlap,reg-pingpong,reg-early-waits{at="products"},reg-to-ptx' -t ptx -o %t.products.ptx
// RUN: %ptxas -v -arch=sm_90a %t.products.ptx -o %t.products.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: not napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-overlap,reg-early-waits{at="nowhere"}' 2>&1 | filecheck %s --check-prefix=BAD
// the numbers survive on the interpreter (which checks the mbarrier protocol), masked or not
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-overlap,reg-early-waits' | napkin-run --random-inputs --check | filecheck %s --check-prefix=NUMBERS
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-overlap,reg-pingpong,reg-early-waits' | napkin-run --random-inputs --check | filecheck %s --check-prefix=NUMBERS
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-overlap,reg-pingpong,reg-early-waits,reg-to-ptx' -t ptx -o %t.ptx
// RUN: %ptxas -v -arch=sm_90a %t.ptx -o %t.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// the GEMM's loop is left as it is
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:256" stream="k:64"},ncd-to-hbm,hbm-to-smem{stages=4 copy=tma},smem-to-reg{mma=wgmma},reg-wgmma-overlap' -o %t.gemm.mlir
// RUN: napkin-opt %t.gemm.mlir -p reg-early-waits -o %t.gemm.after.mlir
// RUN: napkin-opt %t.gemm.mlir -o %t.gemm.before.mlir
// RUN: diff %t.gemm.before.mlir %t.gemm.after.mlir
// napkin-sm90 asks for it over 1024 keys (more than two tiles of 128), not at 256 (a loop of
// one trip): after the scores' wait at d=64 and in a persistent block, after the max at
// d=128 and d=256 on a plain grid (8k keys); under a causal mask at d=128 on a plain grid
// (16k keys), before the products
// RUN: sed -e 's/i=256/i=1024/g; s/j=256/j=1024/g' %examples/attention.mlir | napkin-opt -p napkin-sm90 --print-between-passes -o /dev/null 2>&1 | filecheck %s --check-prefix=ON
// RUN: sed -e 's/i=256/i=1024/g; s/j=256/j=1024/g; s/d=64/d=128/g' %examples/attention.mlir | napkin-opt -p napkin-sm90 --print-between-passes -o /dev/null 2>&1 | filecheck %s --check-prefix=ON
// RUN: sed -e 's/i=256/i=8192/g; s/j=256/j=8192/g; s/d=64/d=128/g' %examples/attention.mlir | napkin-opt -p napkin-sm90 --print-between-passes -o /dev/null 2>&1 | filecheck %s --check-prefix=ONPRODUCTS
// RUN: sed -e 's/i=256/i=8192/g; s/j=256/j=8192/g; s/d=64/d=128/g' %examples/attention.mlir | napkin-opt -p 'napkin-sm90{partial_sums=false}' --print-between-passes -o /dev/null 2>&1 | filecheck %s --check-prefix=ON128
// RUN: sed -e 's/i=256/i=8192/g; s/j=256/j=8192/g; s/d=64/d=256/g' %examples/attention.mlir | napkin-opt -p napkin-sm90 --print-between-passes -o /dev/null 2>&1 | filecheck %s --check-prefix=ON128
// RUN: sed -e 's/i=256/i=16384/g; s/j=256/j=16384/g; s/d=64/d=128/g' %examples/causal_attention.mlir | napkin-opt -p napkin-sm90 --print-between-passes -o /dev/null 2>&1 | filecheck %s --check-prefix=ONPRODUCTS
// RUN: napkin-opt %examples/attention.mlir -p napkin-sm90 --print-between-passes -o /dev/null 2>&1 | filecheck %s --check-prefix=OFF
// the pipeline's option: none, or a place the recipe would not choose; a bad value and a kernel
// with no overlapped loop are refused
// RUN: sed -e 's/i=256/i=1024/g; s/j=256/j=1024/g' %examples/attention.mlir | napkin-opt -p 'napkin-sm90{early_waits="none"}' --print-between-passes -o /dev/null 2>&1 | filecheck %s --check-prefix=OFF
// RUN: napkin-opt %examples/attention.mlir -p 'napkin-sm90{early_waits="max"}' --print-between-passes -o /dev/null 2>&1 | filecheck %s --check-prefix=ON128
// RUN: not napkin-opt %examples/attention.mlir -p 'napkin-sm90{early_waits="soon"}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not napkin-opt %examples/matmul.mlir -p 'napkin-sm90{early_waits="max"}' 2>&1 | filecheck %s --check-prefix=GEMMOPT

// CHECK:      smem.tma_copy %v[{{.*}}] -> %{{[0-9]+}}[%{{[0-9]+}}], %[[VFULL:[0-9]+]][
// tile 0, before the loop: V's wait stays after the softmax
// CHECK:      reg.wgmma_wait {pending = 0 : i32}
// CHECK:      reg.row_reduce sum
// CHECK:      smem.mbarrier_wait %[[VFULL]]
// CHECK:      scf.for
// CHECK:      reg.wgmma_wait {pending = 1 : i32}
// CHECK-NEXT: smem.mbarrier_wait %[[VFULL]][%[[S:[0-9]+]]]
// CHECK-NEXT: smem.arrive %{{[0-9]+}}[%[[S]]]
// CHECK:      reg.row_reduce max
// CHECK-NOT:  smem.mbarrier_wait
// CHECK:      reg.wgmma_wait {pending = 0 : i32}
// CHECK:      reg.overlapped

// both loops of the chain, the unmasked tiles' and the masked ones'
// CAUSAL:      smem.tma_copy %v[{{.*}}] -> %{{[0-9]+}}[%{{[0-9]+}}], %[[VFULL:[0-9]+]][
// CAUSAL:      scf.for
// CAUSAL:      reg.wgmma_wait {pending = 1 : i32}
// CAUSAL-NEXT: smem.mbarrier_wait %[[VFULL]]
// CAUSAL-NEXT: smem.arrive
// CAUSAL-NOT:  smem.mbarrier_wait
// CAUSAL:      reg.wgmma_wait {pending = 0 : i32}
// CAUSAL:      reg.overlapped
// CAUSAL:      reg.wgmma_wait {pending = 1 : i32}
// CAUSAL-NEXT: smem.mbarrier_wait %[[VFULL]]
// CAUSAL-NEXT: smem.arrive
// CAUSAL-NEXT: reg.mask causal
// CAUSAL-NOT:  smem.mbarrier_wait
// CAUSAL:      reg.wgmma_wait {pending = 0 : i32}
// CAUSAL:      reg.overlapped

// K's release stays with the scores' wait; V's wait follows the max in both loops
// MAX:      smem.tma_copy %v[{{.*}}] -> %{{[0-9]+}}[%{{[0-9]+}}], %[[VFULL:[0-9]+]][
// MAX:      scf.for
// MAX:      reg.wgmma_wait {pending = 1 : i32}
// MAX-NEXT: smem.arrive
// MAX-NEXT: reg.map scale
// MAX-NEXT: reg.row_reduce max
// MAX-NEXT: reg.map max
// MAX-NEXT: smem.mbarrier_wait %[[VFULL]]
// MAX-NOT:  smem.mbarrier_wait
// MAX:      reg.wgmma_wait {pending = 0 : i32}
// MAX:      reg.overlapped
// MAX:      reg.wgmma_wait {pending = 1 : i32}
// MAX-NEXT: smem.arrive
// MAX-NEXT: reg.mask causal
// MAX-NEXT: reg.map scale
// MAX-NEXT: reg.row_reduce max
// MAX-NEXT: reg.map max
// MAX-NEXT: smem.mbarrier_wait %[[VFULL]]
// MAX-NOT:  smem.mbarrier_wait
// MAX:      reg.wgmma_wait {pending = 0 : i32}
// MAX:      reg.overlapped
// tile 0's wait for V is gone; each trip waits for the stage the trip before carried, with
// its parity, between the scores' products and P V's; after the chain, before the last P V
// PRODUCTS:      smem.tma_copy %v[{{.*}}] -> %{{[0-9]+}}[%{{[0-9]+}}], %[[VFULL:[0-9]+]][
// PRODUCTS:      reg.row_reduce sum
// PRODUCTS-NOT:  smem.mbarrier_wait %[[VFULL]]
// PRODUCTS:      scf.for %{{[0-9]+}} = {{.*}} iter_args({{.*}}, %[[PARITY:[0-9]+]] = %{{[0-9]+}})
// PRODUCTS:      reg.turn_wait
// PRODUCTS:      reg.wgmma_commit
// PRODUCTS-NEXT: smem.mbarrier_wait %[[VFULL]][%[[STAGE:[0-9]+]]] parity %[[PARITY]]
// PRODUCTS-NEXT: reg.wgmma_rs %{{[0-9]+}}, %{{[0-9]+}}[%[[STAGE]]]
// PRODUCTS:      reg.wgmma_wait {pending = 1 : i32}
// PRODUCTS-NOT:  smem.mbarrier_wait %[[VFULL]]
// PRODUCTS:      reg.wgmma_wait {pending = 0 : i32}
// PRODUCTS:      reg.overlapped
// PRODUCTS:      reg.wgmma_commit
// PRODUCTS-NEXT: smem.mbarrier_wait %[[VFULL]]
// PRODUCTS-NEXT: reg.wgmma_rs
// PRODUCTS:      reg.wgmma_wait {pending = 1 : i32}
// PRODUCTS-NOT:  smem.mbarrier_wait %[[VFULL]]
// PRODUCTS:      reg.overlapped
// PRODUCTS:      reg.turn_wait
// PRODUCTS-NEXT: smem.mbarrier_wait %[[VFULL]][%{{[0-9]+}}] parity %{{[0-9]+}}
// PRODUCTS-NEXT: reg.wgmma_rs
// BAD: napkin-opt: error: reg-early-waits: at must be "scores", "max" or "products", not "nowhere"
// OPTION: napkin-opt: error: napkin-sm90: early_waits must be scores, max, products, none, got 'soon'
// GEMMOPT: napkin-opt: error: napkin-sm90: early_waits=max moves a wait in the stream loops that overlap pipelines (an attention forward's); this kernel has none

// NUMBERS: check against float64 reference: {{.*}}: ok
// REPORT-NOT: wgmma.mma_async instructions are serialized
// REPORT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// ON: IR after reg-early-waits:
// ON:      reg.wgmma_wait {pending = 1 : i32}
// ON-NEXT: smem.mbarrier_wait
// ON128: IR after reg-early-waits:
// ON128:      reg.wgmma_wait {pending = 1 : i32}
// ON128-NEXT: smem.arrive
// ON128:      reg.row_reduce max
// ON128-NEXT: reg.map max
// ON128-NEXT: smem.mbarrier_wait
// ONPRODUCTS: IR after reg-early-waits:
// ONPRODUCTS:      iter_args(
// ONPRODUCTS:      reg.wgmma_commit
// ONPRODUCTS-NEXT: smem.mbarrier_wait
// ONPRODUCTS-NEXT: reg.wgmma_rs
// OFF: IR after reg-reload-loads:
// OFF-NOT: IR after reg-early-waits:
