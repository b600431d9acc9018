// RUN: napkin-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

func.func @f(%b: !smem.buffer<m=64, k=16 : f16, stages=2, layout=zigzag>) {
  func.return
}
// CHECK: unknown layout 'zigzag'; expected one of row, pad8, swizzle

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=64>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=100, k=48 : f16>, %out: !hbm.global<m=100, k=48 : f16>, %m0: index):
  %buf = smem.alloc : !smem.buffer<k=16, m=64 : f16, stages=2, layout=row>
  smem.copy %a[%m0, %m0] -> %buf[%m0] : !hbm.global<m=100, k=48 : f16>, !smem.buffer<k=16, m=64 : f16, stages=2, layout=row>
  hbm.return
}
// CHECK: smem.copy: the buffer's axes ['k', 'm'] must be the global's ['m', 'k'], in order

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=64>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=100, k=48 : f16>, %out: !hbm.global<m=100, k=48 : f16>, %m0: index):
  smem.wait {pending = 9 : i32}
  hbm.return
}
// CHECK: smem.wait: pending must be in 0..7, got 9

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=64>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=100, k=48 : f16>, %out: !hbm.global<m=100, k=48 : f16>, %m0: index):
  %buf = smem.alloc : !smem.buffer<m=64, k=16 : f16, stages=2, layout=row>
  %t = smem.read %buf[%m0] : !smem.buffer<m=64, k=16 : f16, stages=2, layout=row> -> !ncd.tensor<m=64, k=8 : f16>
  hbm.return
}
// CHECK: smem.read: reads a tile of the buffer's shape

// -----
func.func @f(%b: !smem.buffer<m=64, k=16 : f16, stages=0, layout=row>) {
  func.return
}
// CHECK: stages must be at least 1, got 0

// -----
// The loop facts of this level (napkin_ir/dialects/loop_facts.py): a pipeline's own ranges ...
func.func @f() attributes {p = #smem.pipeline<stages=0, copy=cp_async>} {
  func.return
}
// CHECK: #smem.pipeline: stages must be 1 to 16, got 0

// -----
func.func @f() attributes {p = #smem.pipeline<stages=3, copy=tma, unrolled=4>} {
  func.return
}
// CHECK: #smem.pipeline: unrolled counts the bodies a trip, a positive multiple of the 3 stages, got 4

// -----
func.func @f() attributes {p = #smem.pipeline<stages=3, copy=cp.async>} {
  func.return
}
// CHECK: Expected `cp_async`, or `tma`.

// -----
func.func @f() attributes {p = #smem<copy bulk>} {
  func.return
}
// CHECK: Expected `cp_async`, or `tma`.

// -----
// ... and, checked by the kernel, a stream loop that reads a staged buffer keeps its pipeline.
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=64>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=100, k=48 : f16>, %out: !hbm.global<m=100, k=48 : f16>, %m0: index):
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c48 = arith.constant 48 : index
  %buf = smem.alloc : !smem.buffer<m=64, k=16 : f16, stages=2, layout=pad8>
  scf.for %k0 = %c0 to %c48 step %c16 {
    %t = smem.read %buf[%k0] : !smem.buffer<m=64, k=16 : f16, stages=2, layout=pad8> -> !ncd.tensor<m=64, k=16 : f16>
    scf.yield
  } {hbm.stream = #hbm.stream<k>}
  hbm.return
}
// CHECK: hbm.kernel: the scf.for %k0 streaming 'k' reads a 2-stage shared-memory buffer (smem.read) but has no smem.pipeline: its stage count and copy engine were lost (a rewrite that rebuilt the loop must keep its attributes)

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=64>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=100, k=48 : f16>, %out: !hbm.global<m=100, k=48 : f16>, %m0: index):
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c48 = arith.constant 48 : index
  %buf = smem.alloc : !smem.buffer<m=64, k=16 : f16, stages=2, layout=pad8>
  scf.for %k0 = %c0 to %c48 step %c16 {
    %t = smem.read %buf[%k0] : !smem.buffer<m=64, k=16 : f16, stages=2, layout=pad8> -> !ncd.tensor<m=64, k=16 : f16>
    scf.yield
  } {hbm.stream = #hbm.stream<k>, smem.pipeline = #smem.pipeline<stages=3, copy=cp_async>}
  hbm.return
}
// CHECK: hbm.kernel: the scf.for %k0 streaming 'k' is pipelined through 3 stages (smem.pipeline) but reads a 2-stage buffer (smem.read)
