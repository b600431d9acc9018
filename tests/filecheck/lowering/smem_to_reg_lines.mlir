// smem-to-reg on kernels with no product, from hand-written shared-memory-level tiles: each
// of 4 warps holds 2 of the block's 8 rows whole in `line` fragments; the staged tile's cast
// to f32 is its reg.read; a softmax is a scaled row max, exp2 of the difference, a row sum
// and a division; an L2 norm a row sum of squares, sqrt and a division; a row max one
// reg.row_reduce whose `line` vector is stored. Columns other than whole 256-spans, warps
// across the columns and rows that do not split over the warps are refused.
// RUN: napkin-opt %s --split-input-file -p 'smem-to-reg{warps="i:4"}' | filecheck %s
// RUN: not napkin-opt %s --split-input-file -p 'smem-to-reg{warps="i:3"}' 2>&1 | filecheck %s --check-prefix=SPLIT
// RUN: not napkin-opt %s --split-input-file -p 'smem-to-reg{warps="i:2,j:2"}' 2>&1 | filecheck %s --check-prefix=COLS

// CHECK-LABEL: sym_name = "row_softmax"
// CHECK-SAME:  reg.warps = #hbm.labels<i=4>
// CHECK:       smem.barrier
// CHECK-NEXT:  [[X:%.+]] = reg.read %0[%1] : !smem.buffer<i=8, j=512 : bf16, stages=1, layout=row> -> !reg.frag<line, i=2, j=512 : f32>
// CHECK-NEXT:  [[Y:%.+]] = reg.map scale [[X]] by 0.7213475108146667 : !reg.frag<line, i=2, j=512 : f32> -> !reg.frag<line, i=2, j=512 : f32>
// CHECK-NEXT:  [[M:%.+]] = reg.row_reduce max [[Y]] : !reg.frag<line, i=2, j=512 : f32> -> !reg.frag<line, i=2 : f32>
// CHECK-NEXT:  [[D:%.+]] = reg.map sub [[Y]], [[M]] : !reg.frag<line, i=2, j=512 : f32>, !reg.frag<line, i=2 : f32> -> !reg.frag<line, i=2, j=512 : f32>
// CHECK-NEXT:  [[E:%.+]] = reg.map exp2 [[D]]
// CHECK-NEXT:  [[S:%.+]] = reg.row_reduce sum [[E]] : !reg.frag<line, i=2, j=512 : f32> -> !reg.frag<line, i=2 : f32>
// CHECK-NEXT:  [[P:%.+]] = reg.map div [[E]], [[S]]
// CHECK-NEXT:  reg.store [[P]], %out[%i0, %c0] : !reg.frag<line, i=2, j=512 : f32>, !hbm.global<i=40, j=512 : bf16>
// CHECK-NOT:   ncd.
// SPLIT: smem-to-reg: @row_softmax: the block's 8 rows ('i') do not split over 3 warps; expected a multiple of 3
// COLS:  smem-to-reg: @row_softmax: warps may share only the rows ('i') of a kernel with no product
hbm.kernel attributes {sym_name = "row_softmax", grid = #hbm.labels<i=8>, num_outputs = 1 : i32} {
^bb0(%x: !hbm.global<i=40, j=512 : bf16>, %out: !hbm.global<i=40, j=512 : bf16>, %i0: index):
  %c0 = arith.constant 0 : index
  %0 = smem.alloc : !smem.buffer<i=8, j=512 : bf16, stages=1, layout=row>
  %1 = arith.constant 0 : index
  smem.copy %x[%i0, %c0] -> %0[%1] : !hbm.global<i=40, j=512 : bf16>, !smem.buffer<i=8, j=512 : bf16, stages=1, layout=row>
  smem.commit
  smem.wait {pending = 0 : i32}
  smem.barrier
  %x_tile = smem.read %0[%1] : !smem.buffer<i=8, j=512 : bf16, stages=1, layout=row> -> !ncd.tensor<i=8, j=512 : bf16>
  %a = ncd.map cast %x_tile : !ncd.tensor<i=8, j=512 : bf16> -> !ncd.tensor<i=8, j=512 : f32>
  %p = ncd.softmax %a along j scale 0.5 : !ncd.tensor<i=8, j=512 : f32> -> !ncd.tensor<i=8, j=512 : f32>
  %o = ncd.map cast %p : !ncd.tensor<i=8, j=512 : f32> -> !ncd.tensor<i=8, j=512 : bf16>
  hbm.store %o, %out[%i0, %c0] : !ncd.tensor<i=8, j=512 : bf16>, !hbm.global<i=40, j=512 : bf16>
  hbm.return
}

// -----
// CHECK-LABEL: sym_name = "row_l2norm"
// CHECK:       [[X:%.+]] = reg.read
// CHECK-NEXT:  [[Q:%.+]] = reg.map mul [[X]], [[X]] : !reg.frag<line, i=2, j=512 : f32>, !reg.frag<line, i=2, j=512 : f32> -> !reg.frag<line, i=2, j=512 : f32>
// CHECK-NEXT:  [[S:%.+]] = reg.row_reduce sum [[Q]] : !reg.frag<line, i=2, j=512 : f32> -> !reg.frag<line, i=2 : f32>
// CHECK-NEXT:  [[N:%.+]] = reg.map sqrt [[S]] : !reg.frag<line, i=2 : f32> -> !reg.frag<line, i=2 : f32>
// CHECK-NEXT:  [[Y:%.+]] = reg.map div [[X]], [[N]]
// CHECK-NEXT:  reg.store [[Y]], %out[%i0, %c0] : !reg.frag<line, i=2, j=512 : f32>, !hbm.global<i=40, j=512 : bf16>
hbm.kernel attributes {sym_name = "row_l2norm", grid = #hbm.labels<i=8>, num_outputs = 1 : i32} {
^bb0(%x: !hbm.global<i=40, j=512 : bf16>, %out: !hbm.global<i=40, j=512 : bf16>, %i0: index):
  %c0 = arith.constant 0 : index
  %0 = smem.alloc : !smem.buffer<i=8, j=512 : bf16, stages=1, layout=row>
  %1 = arith.constant 0 : index
  smem.copy %x[%i0, %c0] -> %0[%1] : !hbm.global<i=40, j=512 : bf16>, !smem.buffer<i=8, j=512 : bf16, stages=1, layout=row>
  smem.commit
  smem.wait {pending = 0 : i32}
  smem.barrier
  %x_tile = smem.read %0[%1] : !smem.buffer<i=8, j=512 : bf16, stages=1, layout=row> -> !ncd.tensor<i=8, j=512 : bf16>
  %a = ncd.map cast %x_tile : !ncd.tensor<i=8, j=512 : bf16> -> !ncd.tensor<i=8, j=512 : f32>
  %p = ncd.l2norm %a along j : !ncd.tensor<i=8, j=512 : f32> -> !ncd.tensor<i=8, j=512 : f32>
  %o = ncd.map cast %p : !ncd.tensor<i=8, j=512 : f32> -> !ncd.tensor<i=8, j=512 : bf16>
  hbm.store %o, %out[%i0, %c0] : !ncd.tensor<i=8, j=512 : bf16>, !hbm.global<i=40, j=512 : bf16>
  hbm.return
}

// -----
// CHECK-LABEL: sym_name = "row_max"
// CHECK:       [[X:%.+]] = reg.read
// CHECK-NEXT:  [[M:%.+]] = reg.row_reduce max [[X]] : !reg.frag<line, i=2, j=512 : f32> -> !reg.frag<line, i=2 : f32>
// CHECK-NEXT:  reg.store [[M]], %out[%i0] : !reg.frag<line, i=2 : f32>, !hbm.global<i=40 : f32>
hbm.kernel attributes {sym_name = "row_max", grid = #hbm.labels<i=8>, num_outputs = 1 : i32} {
^bb0(%x: !hbm.global<i=40, j=512 : bf16>, %out: !hbm.global<i=40 : f32>, %i0: index):
  %c0 = arith.constant 0 : index
  %0 = smem.alloc : !smem.buffer<i=8, j=512 : bf16, stages=1, layout=row>
  %1 = arith.constant 0 : index
  smem.copy %x[%i0, %c0] -> %0[%1] : !hbm.global<i=40, j=512 : bf16>, !smem.buffer<i=8, j=512 : bf16, stages=1, layout=row>
  smem.commit
  smem.wait {pending = 0 : i32}
  smem.barrier
  %x_tile = smem.read %0[%1] : !smem.buffer<i=8, j=512 : bf16, stages=1, layout=row> -> !ncd.tensor<i=8, j=512 : bf16>
  %a = ncd.map cast %x_tile : !ncd.tensor<i=8, j=512 : bf16> -> !ncd.tensor<i=8, j=512 : f32>
  %o = ncd.reduce max %a along [j] : !ncd.tensor<i=8, j=512 : f32> -> !ncd.tensor<i=8 : f32>
  hbm.store %o, %out[%i0] : !ncd.tensor<i=8 : f32>, !hbm.global<i=40 : f32>
  hbm.return
}
