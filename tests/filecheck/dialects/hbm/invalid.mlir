// RUN: napkin-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=8>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=16, k=4 : f32>, %out: !hbm.global<m=16 : f32>, %m0: index):
  %t = hbm.load %a[%m0, %m0] : !hbm.global<m=16, k=4 : f32> -> !ncd.tensor<k=4, m=8 : f32>
  hbm.return
}
// CHECK: hbm.load: the tile's axes ['k', 'm'] must be the global's ['m', 'k'], in order

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=8>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=16, k=4 : f32>, %out: !hbm.global<m=16 : f32>, %m0: index):
  %t = hbm.load %a[%m0] : !hbm.global<m=16, k=4 : f32> -> !ncd.tensor<m=8, k=4 : f32>
  hbm.return
}
// CHECK: hbm.load: takes one offset per axis of the global (2), got 1

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=8>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=16 : f32>, %out: !hbm.global<m=16 : bf16>, %m0: index):
  %t = hbm.load %a[%m0] : !hbm.global<m=16 : f32> -> !ncd.tensor<m=8 : f32>
  hbm.store %t, %out[%m0] : !ncd.tensor<m=8 : f32>, !hbm.global<m=16 : bf16>
  hbm.return
}
// CHECK: hbm.store: the tile's element type f32 differs from the global's bf16

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=8, n=8>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=16, n=16 : f32>, %out: !hbm.global<m=16, n=16 : f32>, %m0: index):
  hbm.return
}
// CHECK: hbm.kernel: has 2 grid axes, so the block takes 2 index arguments after the globals, got 1

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<q=8>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=16 : f32>, %out: !hbm.global<m=16 : f32>, %q0: index):
  hbm.return
}
// CHECK: hbm.kernel: grid axis 'q' is not an axis of any global tensor

// -----
func.func @f(%a: !hbm.global<m=16, m=4 : f32>) {
  func.return
}
// CHECK: !hbm.global: duplicate axis name 'm'

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=8>, num_outputs = 1 : i32, hbm.group = 4 : i32} {
^bb0(%a: !hbm.global<m=16 : f32>, %out: !hbm.global<m=16 : f32>, %m0: index):
  hbm.return
}
// CHECK: hbm.kernel: hbm.group orders a two-axis grid; this one has 1 axes

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=8>, num_outputs = 1 : i32, hbm.blocks_per_sm = 0 : i32} {
^bb0(%a: !hbm.global<m=16 : f32>, %out: !hbm.global<m=16 : f32>, %m0: index):
  hbm.return
}
// CHECK: hbm.kernel: hbm.blocks_per_sm must be 1 to 32, got 0

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=8>, num_outputs = 1 : i32, hbm.order = "middle"} {
^bb0(%a: !hbm.global<m=16 : f32>, %out: !hbm.global<m=16 : f32>, %m0: index):
  hbm.return
}
// CHECK: hbm.kernel: hbm.order must be "first", "last" or "last_from_start", got "middle"

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=8>, num_outputs = 1 : i32, reg.warps = #hbm.labels<q=2>} {
^bb0(%a: !hbm.global<m=16 : f32>, %out: !hbm.global<m=16 : f32>, %m0: index):
  hbm.return
}
// CHECK: hbm.kernel: reg.warps: 'q=2' must name an axis of the kernel and at least one warp

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=8>, num_outputs = 1 : i32, hbm.cluster = 3 : i32} {
^bb0(%a: !hbm.global<m=16 : f32>, %out: !hbm.global<m=16 : f32>, %m0: index):
  hbm.return
}
// CHECK: hbm.kernel: hbm.cluster 3: a cluster of a grid without split sums pairs 2 blocks

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=8>, num_outputs = 1 : i32, hbm.cluster = 9 : i32} {
^bb0(%a: !hbm.global<m=16 : f32>, %out: !hbm.global<m=16 : f32>, %m0: index):
  hbm.return
}
// CHECK: hbm.kernel: hbm.cluster must be 1 to 8, got 9

// -----
// A cluster of a grid whose sums are split over it (k: an axis no output has) takes each tile's parts, all of them.
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=8, k=16>, num_outputs = 1 : i32, hbm.cluster = 2 : i32} {
^bb0(%a: !hbm.global<m=16, k=64 : bf16>, %out: !hbm.global<m=16 : bf16>, %m0: index, %k0: index):
  hbm.return
}
// CHECK: hbm.kernel: hbm.cluster 2: a cluster spans the 4 parts of the sums split over the grid (k)

// -----
// Labels are typed: #hbm.labels<axis=number, ...>, each axis once, each number an integer of at least 0.
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=8, m=8>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=16 : f32>, %out: !hbm.global<m=16 : f32>, %m0: index):
  hbm.return
}
// CHECK: #hbm.labels: duplicate axis name 'm'

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=eight>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=16 : f32>, %out: !hbm.global<m=16 : f32>, %m0: index):
  hbm.return
}
// CHECK: Expected integer literal (the number for axis 'm')

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=-8>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=16 : f32>, %out: !hbm.global<m=16 : f32>, %m0: index):
  hbm.return
}
// CHECK: #hbm.labels: axis 'm' has -8; sizes and offsets are at least 0

// -----
// A grid tile is a size: 0 is refused by the kernel, though the labels allow it (offsets may be 0).
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=0>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=16 : f32>, %out: !hbm.global<m=16 : f32>, %m0: index):
  hbm.return
}
// CHECK: hbm.kernel: grid axis 'm' has tile size 0

// -----
// The string arrays labels once were are no longer read.
hbm.kernel attributes {sym_name = "k", grid = ["m:8"], num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=16 : f32>, %out: !hbm.global<m=16 : f32>, %m0: index):
  hbm.return
}
// CHECK: hbm.kernel: property 'grid': ["m:8"] should be of base attribute hbm.labels

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=8>, num_outputs = 1 : i32, reg.warps = #hbm.labels<m=0>} {
^bb0(%a: !hbm.global<m=16 : f32>, %out: !hbm.global<m=16 : f32>, %m0: index):
  hbm.return
}
// CHECK: hbm.kernel: reg.warps: 'm=0' must name an axis of the kernel and at least one warp

// -----
// The launch facts are properties with declared types: one of another type is refused by name.
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=8>, num_outputs = 1 : i32, hbm.group = "8"} {
^bb0(%a: !hbm.global<m=16 : f32>, %out: !hbm.global<m=16 : f32>, %m0: index):
  hbm.return
}
// CHECK: hbm.kernel: property 'hbm.group': "8" should be of base attribute integer

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=8>, num_outputs = 1 : i32, hbm.persistent = true} {
^bb0(%a: !hbm.global<m=16 : f32>, %out: !hbm.global<m=16 : f32>, %m0: index):
  hbm.return
}
// CHECK: hbm.kernel: property 'hbm.persistent': true should be of base attribute unit

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=8>, num_outputs = 1 : i32, reg.warps = ["m:2"]} {
^bb0(%a: !hbm.global<m=16 : f32>, %out: !hbm.global<m=16 : f32>, %m0: index):
  hbm.return
}
// CHECK: hbm.kernel: property 'reg.warps': ["m:2"] should be of base attribute hbm.labels

// -----
// What the passes write on the loops of the body is checked by the kernel (napkin_ir/dialects/loop_facts.py).
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=8>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=16, k=32 : f32>, %out: !hbm.global<m=16 : f32>, %m0: index):
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  scf.for %k0 = %c0 to %c32 step %c8 {
    scf.yield
  } {hbm.stream = #hbm.stream<j>}
  hbm.return
}
// CHECK: hbm.kernel: the scf.for %k0 streaming 'j': hbm.stream names the streamed axis, one of the kernel's (m, k), got 'j'

// -----
// A fact of the wrong type: the untyped string of old.
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=8>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=16, k=32 : f32>, %out: !hbm.global<m=16 : f32>, %m0: index):
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  scf.for %k0 = %c0 to %c32 step %c8 {
    scf.yield
  } {hbm.stream = "k"}
  hbm.return
}
// CHECK: hbm.kernel: the scf.for %k0: hbm.stream must be #hbm.stream<axis>, got "k"

// -----
// The untyped facts smem.pipeline replaced are refused, not ignored.
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=8>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=16, k=32 : f32>, %out: !hbm.global<m=16 : f32>, %m0: index):
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  scf.for %k0 = %c0 to %c32 step %c8 {
    scf.yield
  } {hbm.stream = #hbm.stream<k>, smem.stages = 2 : i32}
  hbm.return
}
// CHECK: hbm.kernel: the scf.for %k0 streaming 'k': smem.stages = 2 : i32 is no longer a loop fact; a pipelined loop carries smem.pipeline = #smem.pipeline<stages=N, copy=cp_async|tma>

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=8>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=16, k=32 : f32>, %out: !hbm.global<m=16 : f32>, %m0: index):
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  scf.for %k0 = %c0 to %c32 step %c8 {
    scf.yield
  } {hbm.stream = #hbm.stream<k>, smem.pipeline = 3 : i32}
  hbm.return
}
// CHECK: hbm.kernel: the scf.for %k0 streaming 'k': smem.pipeline must be #smem.pipeline<stages=N, copy=cp_async|tma>, got 3 : i32

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=8>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=16, k=32 : f32>, %out: !hbm.global<m=16 : f32>, %m0: index):
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  scf.for %k0 = %c0 to %c32 step %c8 {
    scf.yield
  } {smem.pipeline = #smem.pipeline<stages=2, copy=cp_async>}
  hbm.return
}
// CHECK: hbm.kernel: the scf.for %k0: smem.pipeline is a fact of a stream loop, and this one has no hbm.stream

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=8>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=16, k=32 : f32>, %out: !hbm.global<m=16 : f32>, %m0: index):
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  scf.for %k0 = %c0 to %c32 step %c8 {
    scf.yield
  } {hbm.stream = #hbm.stream<k>, reg.overlapped = true}
  hbm.return
}
// CHECK: hbm.kernel: the scf.for %k0 streaming 'k': reg.overlapped must be a unit attribute (no value), got true

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=8>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=16, k=32 : f32>, %out: !hbm.global<m=16 : f32>, %m0: index):
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  scf.for %k0 = %c0 to %c32 step %c8 {
    scf.yield
  } {hbm.stream = #hbm.stream<k>, reg.overlapped}
  hbm.return
}
// CHECK: hbm.kernel: the scf.for %k0 streaming 'k': reg.overlapped rotates the products of a pipelined loop, and this one has no smem.pipeline

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=8>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=16 : bf16>, %out: !hbm.global<m=16 : bf16>, %m0: index):
  %t = hbm.load %a[%m0] : !hbm.global<m=16 : bf16> -> !ncd.tensor<m=8 : bf16>
  hbm.store %t, %out[%m0] {accumulate} : !ncd.tensor<m=8 : bf16>, !hbm.global<m=16 : bf16>
  hbm.return
}
// CHECK: hbm.store: accumulate adds f32 parts of a sum (parts rounded to bf16 would not add up)

// -----
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=8>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=16, k=4 : f32>, %out: !hbm.global<m=16, n=4 : f32>, %m0: index):
  %c0 = arith.constant 0 : index
  %t = hbm.load %a[%m0, %c0] : !hbm.global<m=16, k=4 : f32> -> !ncd.tensor<m=8, k=4 : f32>
  hbm.store %t, %out[%m0, %c0] : !ncd.tensor<m=8, k=4 : f32>, !hbm.global<m=16, n=4 : f32>
  hbm.return
}
// CHECK: hbm.store: the tile's axes ['m', 'k'] must be the global's ['m', 'n'], in some order

// -----
// a value read before the op that makes it (a lowering that inserted a read above its buffer)
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=8>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=16 : f32>, %out: !hbm.global<m=16 : f32>, %m0: index):
  hbm.store %t, %out[%m0] : !ncd.tensor<m=8 : f32>, !hbm.global<m=16 : f32>
  %t = hbm.load %a[%m0] : !hbm.global<m=16 : f32> -> !ncd.tensor<m=8 : f32>
  hbm.return
}
// CHECK: hbm.kernel: hbm.store reads %t (!ncd.tensor<m=8 : f32>) before hbm.load makes it
