// smem-to-reg on attention: Q loaded into `a` fragments once, S = Q K^T with mma.sync into
// a `c` fragment, the online softmax on fragments (`row` fragments carry the running max and
// sum), P reused as the `a` operand of P V (reg.to_a, no shared memory), the rescaled
// accumulator taking the products, the division by the row sum and the store.
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8},smem-to-reg{warps="i:8"}' | filecheck %s
// RUN: napkin-opt %examples/spherical_attention.mlir -p 'ncd-relabel{grid="b,h,i:64" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=2 layout=pad8},smem-to-reg{warps="i:4"}' | filecheck %s --check-prefix=SPH
// RUN: sed -e 's/j=256/j=200/g' %examples/attention.mlir | napkin-opt -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8},smem-to-reg{warps="i:4"}' | filecheck %s --check-prefix=RAGGED
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8},smem-to-reg{warps="i:4" hoist=false}' | filecheck %s --check-prefix=QSMEM
// RUN: not napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8},smem-to-reg{warps="i:16"}' 2>&1 | filecheck %s --check-prefix=ROWS
// RUN: not napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8},smem-to-reg{warps="i:4,j:2"}' 2>&1 | filecheck %s --check-prefix=SPLITJ

// CHECK:      hbm.kernel attributes {sym_name = "causal_attention", grid = #hbm.labels<b=1, h=1, i=128>, num_outputs = 1 : i32, reg.warps = #hbm.labels<i=8>}
// CHECK:      [[M0:%.+]] = reg.fill {value = 0xff800000 : f32} : !reg.frag<row, i=16 : f32>
// CHECK-NEXT: [[L0:%.+]] = reg.fill {value = 0.000000e+00 : f32} : !reg.frag<row, i=16 : f32>
// CHECK-NEXT: [[O0:%.+]] = reg.zeros : !reg.frag<c, i=16, d=64 : f32>
// Q: after its wait and barrier, four 16-wide slices of d, once.
// CHECK:      smem.wait {pending = 2 : i32}
// CHECK-NEXT: smem.barrier
// CHECK-NEXT: [[Q0:%.+]] = reg.ldmatrix [[QB:%.+]][{{.+}}] {at = #hbm.labels<d=0>} : !smem.buffer<b=1, h=1, i=128, d=64 : bf16, stages=1, layout=pad8> -> !reg.frag<a, i=16, d=16 : bf16>
// CHECK-NEXT: [[Q1:%.+]] = reg.ldmatrix [[QB]][{{.+}}] {at = #hbm.labels<d=16>}
// CHECK-NEXT: [[Q2:%.+]] = reg.ldmatrix [[QB]][{{.+}}] {at = #hbm.labels<d=32>}
// CHECK-NEXT: [[Q3:%.+]] = reg.ldmatrix [[QB]][{{.+}}] {at = #hbm.labels<d=48>}
// CHECK-NEXT: scf.for %j0 = %c0 to %j_masked {{.*}} iter_args(%row_max = [[M0]], %row_sum = [[L0]], %acc = [[O0]]) -> (!reg.frag<row, i=16 : f32>, !reg.frag<row, i=16 : f32>, !reg.frag<c, i=16, d=64 : f32>)
// CHECK:      smem.commit
// CHECK-NEXT: [[Z:%.+]] = reg.zeros : !reg.frag<c, i=16, j=64 : f32>
// K as the b operand: its rows are the columns of S (ldmatrix without .trans in the PTX).
// CHECK-NEXT: [[K0:%.+]] = reg.ldmatrix [[KB:%.+]][[[S:%.+]]] {at = #hbm.labels<d=0>} : !smem.buffer<b=1, h=1, j=64, d=64 : bf16, stages=3, layout=pad8> -> !reg.frag<b, d=16, j=64 : bf16>
// CHECK-NEXT: [[S0:%.+]] = reg.mma [[Q0]], [[K0]], [[Z]]
// CHECK:      [[S3:%.+]] = reg.mma [[Q3]], {{%.+}}, {{%.+}} : {{.*}} -> !reg.frag<c, i=16, j=64 : f32>
// CHECK-NEXT: [[T:%.+]] = reg.map scale [[S3]] by 0.1803368777036667
// CHECK-NEXT: [[TM:%.+]] = reg.row_reduce max [[T]] : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<row, i=16 : f32>
// CHECK-NEXT: [[M1:%.+]] = reg.map max %row_max, [[TM]]
// CHECK-NEXT: [[D:%.+]] = reg.map sub %row_max, [[M1]]
// CHECK-NEXT: [[R:%.+]] = reg.map exp2 [[D]] : !reg.frag<row, i=16 : f32>
// CHECK-NEXT: [[X:%.+]] = reg.map sub [[T]], [[M1]] : !reg.frag<c, i=16, j=64 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<c, i=16, j=64 : f32>
// CHECK-NEXT: [[P:%.+]] = reg.map exp2 [[X]]
// CHECK-NEXT: [[LS:%.+]] = reg.map mul %row_sum, [[R]]
// CHECK-NEXT: [[TS:%.+]] = reg.row_reduce sum [[P]]
// CHECK-NEXT: [[L1:%.+]] = reg.map add [[LS]], [[TS]]
// CHECK-NEXT: [[OS:%.+]] = reg.map mul %acc, [[R]] : !reg.frag<c, i=16, d=64 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<c, i=16, d=64 : f32>
// P V onto the rescaled accumulator, 16 keys at a time, P straight from its fragment.
// CHECK-NEXT: [[PA:%.+]] = reg.to_a [[P]] {at = #hbm.labels<j=0>} : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<a, i=16, j=16 : bf16>
// CHECK-NEXT: [[V0:%.+]] = reg.ldmatrix [[VB:%.+]][[[S]]] {at = #hbm.labels<j=0>} : !smem.buffer<b=1, h=1, j=64, d=64 : bf16, stages=3, layout=pad8> -> !reg.frag<b, j=16, d=64 : bf16>
// CHECK-NEXT: [[O1:%.+]] = reg.mma [[PA]], [[V0]], [[OS]]
// CHECK:      reg.to_a [[P]] {at = #hbm.labels<j=48>}
// CHECK:      [[O4:%.+]] = reg.mma
// CHECK-NEXT: scf.yield [[M1]], [[L1]], [[O4]]
// The masked loop: the causal mask on the fragment, at the tile's place.
// CHECK:      scf.for %j0_1 = %j_masked to %j_end
// CHECK:      reg.mask causal {{%.+}} keep i >= j fill -inf at [%i0, %j0_1] : !reg.frag<c, i=16, j=64 : f32>
// CHECK:      smem.wait {pending = 0 : i32}
// CHECK-NEXT: [[N:%.+]] = reg.map div {{%.+}}, {{%.+}} : !reg.frag<c, i=16, d=64 : f32>, !reg.frag<row, i=16 : f32> -> !reg.frag<c, i=16, d=64 : f32>
// CHECK-NEXT: reg.store [[N]], %out[%b0, %h0, %i0, %c0] : !reg.frag<c, i=16, d=64 : f32>, !hbm.global<b=2, h=4, i=256, d=64 : bf16>
// CHECK-NOT:  ncd.
// CHECK-NOT:  smem.read

// Spherical: the running sum of squares, the scores themselves as P, sqrt at the end.
// SPH:      scf.for {{.*}} iter_args(%sum_sq = {{%.+}}, %acc = {{%.+}})
// SPH:      [[SQ:%.+]] = reg.map mul [[S:%.+]], [[S]]
// SPH-NEXT: [[T:%.+]] = reg.row_reduce sum [[SQ]]
// SPH-NEXT: reg.map add %sum_sq, [[T]]
// SPH-NEXT: reg.to_a [[S]] {at = #hbm.labels<j=0>}
// SPH-NOT:  exp2
// SPH:      [[NORM:%.+]] = reg.map sqrt {{%.+}} : !reg.frag<row, i=16 : f32>
// SPH-NEXT: reg.map div {{%.+}}, [[NORM]]

// A ragged key axis: the last tile masks the keys past the end before the softmax.
// RAGGED:      reg.warps = #hbm.labels<i=4>
// RAGGED:      scf.for %j0_1 =
// RAGGED:      reg.mask_bound {{%.+}} keep j < 200 fill -inf at [%j0_1] : !reg.frag<c, i=32, j=64 : f32>

// With hoist=false Q stays in shared memory: its fragments are loaded at each product.
// QSMEM:      smem.barrier
// QSMEM-NEXT: scf.for
// QSMEM:      [[Z:%.+]] = reg.zeros : !reg.frag<c, i=32, j=64 : f32>
// QSMEM-NEXT: [[QA:%.+]] = reg.ldmatrix {{%.+}} {at = #hbm.labels<d=0>} : !smem.buffer<b=1, h=1, i=128, d=64 : bf16, stages=1, layout=pad8> -> !reg.frag<a, i=32, d=16 : bf16>
// QSMEM-NEXT: [[KB:%.+]] = reg.ldmatrix {{%.+}} {at = #hbm.labels<d=0>} : !smem.buffer<b=1, h=1, j=64, d=64 : bf16, stages=3, layout=pad8> -> !reg.frag<b, d=16, j=64 : bf16>
// QSMEM-NEXT: reg.mma [[QA]], [[KB]], [[Z]]

// ROWS: napkin-opt: error: smem-to-reg: @attention: a 128-row tile over 16 warps leaves each warp 8 rows; mma.sync m16n8k16 needs a multiple of 16
// SPLITJ: napkin-opt: error: smem-to-reg: @attention: warps share 'j': a reduction along it would cross warps (through shared memory)
