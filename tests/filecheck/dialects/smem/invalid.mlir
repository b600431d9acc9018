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
