// A streamed axis whose size is not a multiple of its tile: the last tile reads zeros past
// the end (hbm.load), and each reduction that would not ignore them gets them filled with
// what it does ignore, in a last loop of its own; the tiles before it run without masks.
// RUN: napkin-opt %s --split-input-file -p 'ncd-relabel{grid="i:64" stream="j:64"},ncd-to-hbm' | filecheck %s

// Softmax: the scores past the end must be -inf, not 0.
func.func @attention(%q: !ncd.tensor<i=100, d=16 : bf16>, %k: !ncd.tensor<j=100, d=16 : bf16>, %v: !ncd.tensor<j=100, d=16 : bf16>) -> !ncd.tensor<i=100, d=16 : bf16> {
  %s = ncd.contract %q, %k over [d] : !ncd.tensor<i=100, d=16 : bf16>, !ncd.tensor<j=100, d=16 : bf16> -> !ncd.tensor<i=100, j=100 : f32>
  %p = ncd.softmax %s along j scale 0.25 : !ncd.tensor<i=100, j=100 : f32> -> !ncd.tensor<i=100, j=100 : f32>
  %p16 = ncd.map cast %p : !ncd.tensor<i=100, j=100 : f32> -> !ncd.tensor<i=100, j=100 : bf16>
  %o = ncd.contract %p16, %v over [j] : !ncd.tensor<i=100, j=100 : bf16>, !ncd.tensor<j=100, d=16 : bf16> -> !ncd.tensor<i=100, d=16 : bf16>
  func.return %o : !ncd.tensor<i=100, d=16 : bf16>
}
// CHECK-LABEL: sym_name = "attention"
// CHECK:       [[C64:%.+]] = arith.constant 64 : index
// CHECK:       [[M:%.+]], [[L:%.+]], [[A:%.+]] = scf.for %j0 = %c0 to [[C64]] step [[C64]]
// CHECK-NOT:   ncd.mask_bound
// CHECK:       } {hbm.stream = #hbm.stream<j>}
// CHECK-NEXT:  [[C100:%.+]] = arith.constant 100 : index
// CHECK-NEXT:  {{.*}} = scf.for %j0_1 = [[C64]] to [[C100]] step [[C64]] iter_args(%row_max_1 = [[M]], %row_sum_1 = [[L]], %acc_1 = [[A]])
// CHECK:         %s_1 = ncd.contract
// CHECK-NEXT:    %in_bounds = ncd.mask_bound %s_1 keep j < 100 fill -inf at [%j0_1] : !ncd.tensor<i=64, j=64 : f32> -> !ncd.tensor<i=64, j=64 : f32>
// CHECK-NEXT:    %scaled_1 = ncd.map scale %in_bounds
// the values past the end are then exp2(-inf) = 0, and V reads zeros there: no more fills
// CHECK-NOT:     ncd.mask_bound
// CHECK:       } {hbm.stream = #hbm.stream<j>}
// CHECK:       hbm.store

// -----
// L2 norm: zeros past the end add nothing to the sum of squares nor to the product with V.
func.func @spherical(%q: !ncd.tensor<i=100, d=16 : bf16>, %k: !ncd.tensor<j=100, d=16 : bf16>, %v: !ncd.tensor<j=100, d=16 : bf16>) -> !ncd.tensor<i=100, d=16 : bf16> {
  %s = ncd.contract %q, %k over [d] : !ncd.tensor<i=100, d=16 : bf16>, !ncd.tensor<j=100, d=16 : bf16> -> !ncd.tensor<i=100, j=100 : f32>
  %p = ncd.l2norm %s along j : !ncd.tensor<i=100, j=100 : f32> -> !ncd.tensor<i=100, j=100 : f32>
  %p16 = ncd.map cast %p : !ncd.tensor<i=100, j=100 : f32> -> !ncd.tensor<i=100, j=100 : bf16>
  %o = ncd.contract %p16, %v over [j] : !ncd.tensor<i=100, j=100 : bf16>, !ncd.tensor<j=100, d=16 : bf16> -> !ncd.tensor<i=100, d=16 : bf16>
  func.return %o : !ncd.tensor<i=100, d=16 : bf16>
}
// CHECK-LABEL: sym_name = "spherical"
// CHECK:       [[C100:%.+]] = arith.constant 100 : index
// CHECK-NEXT:  scf.for %j0 = %c0 to [[C100]] step
// CHECK-NOT:   ncd.mask_bound
// CHECK:       } {hbm.stream = #hbm.stream<j>}
// CHECK-NOT:   scf.for
// CHECK:       hbm.return

// -----
// Plain reductions along the streamed axis: a max ignores -inf, a sum 0; exp(0) = 1 is
// not 0, so the exponentials are filled before their sum; x itself is 0 past the end,
// which the max does not ignore.
func.func @row_stats(%x: !ncd.tensor<i=100, j=100 : f32>) -> (!ncd.tensor<i=100 : f32>, !ncd.tensor<i=100 : f32>) {
  %m = ncd.reduce max %x along [j] : !ncd.tensor<i=100, j=100 : f32> -> !ncd.tensor<i=100 : f32>
  %e = ncd.map exp %x : !ncd.tensor<i=100, j=100 : f32> -> !ncd.tensor<i=100, j=100 : f32>
  %z = ncd.reduce sum %e along [j] : !ncd.tensor<i=100, j=100 : f32> -> !ncd.tensor<i=100 : f32>
  func.return %m, %z : !ncd.tensor<i=100 : f32>, !ncd.tensor<i=100 : f32>
}
// CHECK-LABEL: sym_name = "row_stats"
// CHECK:       [[MAX0:%.+]] = hbm.fill {value = 0xff800000 : f32} : !ncd.tensor<i=64 : f32>
// CHECK-NEXT:  [[SUM0:%.+]] = hbm.fill {value = 0.000000e+00 : f32} : !ncd.tensor<i=64 : f32>
// CHECK:       scf.for %j0 = %c0 to {{.*}} iter_args(%acc = [[MAX0]], %acc_1 = [[SUM0]])
// CHECK-NOT:   ncd.mask_bound
// CHECK:       } {hbm.stream = #hbm.stream<j>}
// CHECK:       scf.for %j0_1 =
// CHECK-NEXT:    %x_tile_1 = hbm.load %x[%i0, %j0_1]
// CHECK-NEXT:    [[XB:%.+]] = ncd.mask_bound %x_tile_1 keep j < 100 fill -inf at [%j0_1]
// CHECK-NEXT:    [[TMAX:%.+]] = ncd.reduce max [[XB]] along [j]
// CHECK-NEXT:    ncd.map max %acc_2, [[TMAX]]
// CHECK-NEXT:    %e_1 = ncd.map exp %x_tile_1
// CHECK-NEXT:    [[EB:%.+]] = ncd.mask_bound %e_1 keep j < 100 fill 0.0 at [%j0_1]
// CHECK-NEXT:    [[TSUM:%.+]] = ncd.reduce sum [[EB]] along [j]
// CHECK-NEXT:    ncd.map add %acc_3, [[TSUM]]
// CHECK:       hbm.store {{.*}}, %out0[%i0]
// CHECK-NEXT:  hbm.store {{.*}}, %out1[%i0]

// -----
// A contraction of loaded tiles reads zeros past the end on both sides: GEMM stays one loop.
func.func @gemm(%a: !ncd.tensor<i=100, j=100 : bf16>, %b: !ncd.tensor<j=100, n=8 : bf16>) -> !ncd.tensor<i=100, n=8 : bf16> {
  %c = ncd.contract %a, %b over [j] : !ncd.tensor<i=100, j=100 : bf16>, !ncd.tensor<j=100, n=8 : bf16> -> !ncd.tensor<i=100, n=8 : bf16>
  func.return %c : !ncd.tensor<i=100, n=8 : bf16>
}
// CHECK-LABEL: sym_name = "gemm"
// CHECK:       scf.for %j0 = %c0 to
// CHECK-NOT:   ncd.mask_bound
// CHECK:       } {hbm.stream = #hbm.stream<j>}
// CHECK-NOT:   scf.for
// CHECK:       hbm.return
