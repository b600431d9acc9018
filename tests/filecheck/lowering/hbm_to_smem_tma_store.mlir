// hbm-to-smem{copy=tma store=tma}: the tile stored after the stream leaves through a
// two-stage panel buffer, one 64-column panel at a time, each a TMA store.
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:256" stream="k:64"},ncd-to-hbm,hbm-to-smem{stages=4 copy=tma store=tma}' | filecheck %s
// An odd count of panels (3 of 192 columns): the first panel's stage is the one the last
// panel's store reads, so its wait retires every store, a persistent block's last tile's too.
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:192" stream="k:64"},ncd-to-hbm,hbm-launch{persistent=true},hbm-to-smem{stages=4 copy=tma store=tma}' | filecheck %s --check-prefix=ODD
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:192" stream="k:64"},ncd-to-hbm,hbm-launch{persistent=true},hbm-to-smem{stages=4 copy=tma store=tma}' | napkin-run --random-inputs --check | filecheck %s --check-prefix=NUMBERS
// Where two panel stages do not fit beside the stream's buffers but one does, one stage:
// each panel waits for every store before it.
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:256" stream="k:64"},ncd-to-hbm,hbm-to-smem{copy=tma store=tma stages=4 smem_bytes=215000}' | filecheck %s --check-prefix=ONE
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:256" stream="k:64"},ncd-to-hbm,hbm-to-smem{copy=tma store=tma stages=4 smem_bytes=215000}' | napkin-run --random-inputs --check | filecheck %s --check-prefix=NUMBERS
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:256" stream="k:64"},ncd-to-hbm,hbm-to-smem{store=tma}' 2>&1 | filecheck %s --check-prefix=NOTMA
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:256" stream="k:64"},ncd-to-hbm,hbm-to-smem{copy=tma store=global}' 2>&1 | filecheck %s --check-prefix=STORE
// RUN: sed -e 's/bf16/f32/g' %examples/matmul.mlir | not napkin-opt -p 'ncd-relabel{grid="m:128,n:256" stream="k:64"},ncd-to-hbm,hbm-to-smem{copy=tma store=tma}' 2>&1 | filecheck %s --check-prefix=F32
// RUN: sed -e 's/n=384/n=260/g' %examples/matmul.mlir | not napkin-opt -p 'ncd-relabel{grid="m:128,n:256" stream="k:64"},ncd-to-hbm,hbm-to-smem{copy=tma store=tma}' 2>&1 | filecheck %s --check-prefix=STRIDE
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:256" stream="k:64"},ncd-to-hbm,hbm-to-smem{copy=tma store=tma stages=4 smem_bytes=200000}' 2>&1 | filecheck %s --check-prefix=BUDGET

// CHECK: ^bb0(%a: {{.*}}, %out: {{.*}}, %m0: index, %n0: index):
// CHECK-NEXT: %[[C:.*]] = smem.alloc : !smem.buffer<m=128, n=64 : bf16, stages=2, layout=swizzle>
// CHECK: smem.producer
// CHECK: %[[ACC:.*]] = scf.for
// CHECK: %[[T:.*]] = ncd.map cast %[[ACC]] : !ncd.tensor<m=128, n=256 : f32> -> !ncd.tensor<m=128, n=256 : bf16>
// CHECK-NEXT: %[[S0:.*]] = arith.constant 0 : index
// CHECK-NEXT: smem.tma_store_wait {pending = 1 : i32}
// CHECK-NEXT: smem.write %[[T]] -> %[[C]][%[[S0]]] {at = #hbm.labels<n=0>}
// CHECK-NEXT: smem.tma_store %[[C]][%[[S0]]] -> %out[%m0, %n0]
// CHECK-NEXT: %[[S1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[D1:.*]] = arith.constant 64 : index
// CHECK-NEXT: %[[N1:.*]] = arith.addi %n0, %[[D1]] : index
// CHECK-NEXT: smem.tma_store_wait {pending = 1 : i32}
// CHECK-NEXT: smem.write %[[T]] -> %[[C]][%[[S1]]] {at = #hbm.labels<n=64>}
// CHECK-NEXT: smem.tma_store %[[C]][%[[S1]]] -> %out[%m0, %[[N1]]]
// CHECK: smem.write %[[T]] -> %[[C]][%{{.*}}] {at = #hbm.labels<n=128>}
// CHECK: smem.write %[[T]] -> %[[C]][%{{.*}}] {at = #hbm.labels<n=192>}
// CHECK-NEXT: smem.tma_store %[[C]]
// CHECK-NEXT: hbm.return
// CHECK-NOT: hbm.store

// NOTMA: hbm-to-smem: store=tma writes tiles out with the TMA of sm_90a; it needs copy=tma
// STORE: hbm-to-smem: store must be direct or tma, got 'global'
// F32: hbm-to-smem: @matmul: store=tma writes bf16 or f16 tiles of rows and columns (stmatrix moves 16-bit elements), the columns last; got !ncd.tensor<m=128, n=256 : f32>
// STRIDE: hbm-to-smem: copy=tma needs each global's rows to be a multiple of 16 bytes (the TMA's stride); 'n' of b has 260 elements
// ONE: %[[C:.*]] = smem.alloc : !smem.buffer<m=128, n=64 : bf16, stages=1, layout=swizzle>
// ONE-COUNT-4: smem.tma_store_wait {pending = 0 : i32}
// ONE-NOT: smem.tma_store_wait
// BUDGET: hbm-to-smem: @matmul needs 212992 bytes of shared memory ({{.*}}!smem.buffer<m=128, n=64 : bf16, stages=1, layout=swizzle>: 16384), over the budget of 200000

// ODD: smem.tma_store_wait {pending = 0 : i32}
// ODD-NEXT: smem.write %{{.*}} {at = #hbm.labels<n=0>}
// ODD: smem.tma_store_wait {pending = 1 : i32}
// ODD-NEXT: smem.write %{{.*}} {at = #hbm.labels<n=64>}
// ODD: smem.tma_store_wait {pending = 1 : i32}
// ODD-NEXT: smem.write %{{.*}} {at = #hbm.labels<n=128>}
// NUMBERS: check against float64 reference: {{.*}}: ok

// A tile whose other axes hold one place (attention's output <b=1, h=1, i=128, d=64>)
// leaves the same way, through panels with those axes; stmatrix writes them.
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma store=tma}' | filecheck %s --check-prefix=UNIT
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma store=tma},smem-to-reg{mma=wgmma}' | napkin-run --random-inputs --check | filecheck %s --check-prefix=NUMBERS
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 copy=tma store=tma},smem-to-reg{mma=wgmma}' | filecheck %s --check-prefix=UNIT-REG
// UNIT: %[[O:.*]] = smem.alloc : !smem.buffer<b=1, h=1, i=128, d=64 : bf16, stages=2, layout=swizzle>
// UNIT: smem.tma_store_wait {pending = 0 : i32}
// UNIT-NEXT: smem.write %{{.*}} -> %[[O]][%{{.*}}] {at = #hbm.labels<d=0>}
// UNIT-NEXT: smem.tma_store %[[O]][%{{.*}}] -> %out[%b0, %h0, %i0, %c0]
// UNIT-REG: reg.stmatrix %{{.*}} -> %{{.*}}[%{{.*}}] {at = #hbm.labels<d=0>} : !reg.frag<c, i=16, d=64 : f32>, !smem.buffer<b=1, h=1, i=128, d=64 : bf16, stages=2, layout=swizzle>
