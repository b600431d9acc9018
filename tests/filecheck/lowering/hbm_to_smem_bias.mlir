// hbm-to-smem with a bias: the vector loaded once per tile for the epilogue stays an
// hbm.load (smem-to-reg reads it straight into registers), with cp.async and with the
// TMA, a persistent grid too.
// RUN: napkin-opt %examples/gemm_bias.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3}' | filecheck %s
// RUN: napkin-opt %examples/gemm_bias.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:64"},ncd-to-hbm,hbm-launch{persistent=true},hbm-to-smem{stages=3 copy=tma store=tma}' | filecheck %s --check-prefix=TMA

// CHECK:     scf.for %k0 =
// CHECK:     } {hbm.stream = #hbm.stream<k>, smem.pipeline = #smem.pipeline<stages=3, copy=cp_async>}
// CHECK-NEXT: smem.wait {pending = 0 : i32}
// CHECK-NEXT: %bias_tile = hbm.load %bias[%n0] : !hbm.global<n=192 : f32> -> !ncd.tensor<n=128 : f32>
// CHECK-NEXT: %y = ncd.map add %{{.+}}, %bias_tile
// CHECK-NOT: smem.alloc : !smem.buffer<n=128

// TMA:      hbm.persistent
// TMA-NOT:  smem.alloc : !smem.buffer<n=128
// TMA:      smem.producer
// TMA-NOT:  %bias
// TMA:      } {hbm.stream = #hbm.stream<k>, smem.pipeline = #smem.pipeline<stages=3, copy=tma>}
// TMA-NEXT: %bias_tile = hbm.load %bias[%n0] : !hbm.global<n=192 : f32> -> !ncd.tensor<n=128 : f32>
// TMA-NEXT: %y = ncd.map add %{{.+}}, %bias_tile
// TMA:      smem.tma_store
