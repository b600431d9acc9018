// RUN: napkin-opt %s | napkin-opt | filecheck %s
// RUN: napkin-opt %s --print-op-generic | napkin-opt | filecheck %s

// CHECK: %buf = smem.alloc : !smem.buffer<m=64, k=16 : f16, stages=2, layout=pad8>
// CHECK-NEXT: smem.copy %a[%m0, %c0] -> %buf[%c0] : !hbm.global<m=100, k=48 : f16>, !smem.buffer<m=64, k=16 : f16, stages=2, layout=pad8>
// CHECK-NEXT: smem.commit
// CHECK-NEXT: smem.wait {pending = 0 : i32}
// CHECK-NEXT: smem.barrier
// CHECK-NEXT: smem.barrier {async_proxy}
// CHECK-NEXT: %t = smem.read %buf[%c0] : !smem.buffer<m=64, k=16 : f16, stages=2, layout=pad8> -> !ncd.tensor<m=64, k=16 : f16>
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=64>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=100, k=48 : f16>, %out: !hbm.global<m=100, k=48 : f16>, %m0: index):
  %c0 = arith.constant 0 : index
  %buf = smem.alloc : !smem.buffer<m=64, k=16 : f16, stages=2, layout=pad8>
  smem.copy %a[%m0, %c0] -> %buf[%c0] : !hbm.global<m=100, k=48 : f16>, !smem.buffer<m=64, k=16 : f16, stages=2, layout=pad8>
  smem.commit
  smem.wait {pending = 0 : i32}
  smem.barrier
  smem.barrier {async_proxy}
  %t = smem.read %buf[%c0] : !smem.buffer<m=64, k=16 : f16, stages=2, layout=pad8> -> !ncd.tensor<m=64, k=16 : f16>
  hbm.return
}

// A pipelined stream loop carries its pipeline: stages, copy engine and, once unrolled, the bodies a trip.
// CHECK-LABEL: sym_name = "pipelined"
// CHECK: smem.read %buf[%k0]
// CHECK: } {hbm.stream = #hbm.stream<k>, smem.pipeline = #smem.pipeline<stages=2, copy=cp_async>}
// CHECK: } {hbm.stream = #hbm.stream<k>, smem.pipeline = #smem.pipeline<stages=2, copy=tma, unrolled=4>, reg.overlapped}
hbm.kernel attributes {sym_name = "pipelined", grid = #hbm.labels<m=64>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=100, k=48 : f16>, %out: !hbm.global<m=100, k=48 : f16>, %m0: index):
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c48 = arith.constant 48 : index
  %buf = smem.alloc : !smem.buffer<m=64, k=16 : f16, stages=2, layout=pad8>
  scf.for %k0 = %c0 to %c48 step %c16 {
    %t = smem.read %buf[%k0] : !smem.buffer<m=64, k=16 : f16, stages=2, layout=pad8> -> !ncd.tensor<m=64, k=16 : f16>
    scf.yield
  } {hbm.stream = #hbm.stream<k>, smem.pipeline = #smem.pipeline<stages = 2, copy = cp_async>}
  scf.for %k1 = %c0 to %c48 step %c16 {
    scf.yield
  } {hbm.stream = #hbm.stream<k>, smem.pipeline = #smem.pipeline<stages=2, copy=tma, unrolled=4>, reg.overlapped}
  hbm.return
}

// The copy engine on its own.
// CHECK: func.func @engines() attributes {sync = #smem<copy cp_async>, bulk = #smem<copy tma>}
func.func @engines() attributes {sync = #smem<copy cp_async>, bulk = #smem<copy tma>} {
  func.return
}
