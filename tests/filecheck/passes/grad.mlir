// ncd-grad: the rules of contract and map. Each function @f gets @f_grad beside it:
// @f's arguments, one cotangent per result; one cotangent per argument.
// RUN: napkin-opt %s --split-input-file -p ncd-grad | filecheck %s

// Contract: each operand's cotangent contracts the result's with the other operand over
// the axes the other has and it lacks; 16-bit operands are read in f32, the gradients cast back.
// CHECK-LABEL: func.func @contract_grad(%a: !ncd.tensor<m=4, k=8 : bf16>, %b: !ncd.tensor<k=8, n=2 : bf16>, %d_c: !ncd.tensor<m=4, n=2 : f32>) -> (!ncd.tensor<m=4, k=8 : bf16>, !ncd.tensor<k=8, n=2 : bf16>)
// CHECK-NEXT:    [[B:%.+]] = ncd.map cast %b : !ncd.tensor<k=8, n=2 : bf16> -> !ncd.tensor<k=8, n=2 : f32>
// CHECK-NEXT:    %d_a = ncd.contract %d_c, [[B]] over [n] : !ncd.tensor<m=4, n=2 : f32>, !ncd.tensor<k=8, n=2 : f32> -> !ncd.tensor<m=4, k=8 : f32>
// CHECK-NEXT:    [[A:%.+]] = ncd.map cast %a : !ncd.tensor<m=4, k=8 : bf16> -> !ncd.tensor<m=4, k=8 : f32>
// CHECK-NEXT:    %d_b = ncd.contract %d_c, [[A]] over [m] : !ncd.tensor<m=4, n=2 : f32>, !ncd.tensor<m=4, k=8 : f32> -> !ncd.tensor<k=8, n=2 : f32>
// CHECK-NEXT:    [[DA:%.+]] = ncd.map cast %d_a : !ncd.tensor<m=4, k=8 : f32> -> !ncd.tensor<m=4, k=8 : bf16>
// CHECK-NEXT:    [[DB:%.+]] = ncd.map cast %d_b : !ncd.tensor<k=8, n=2 : f32> -> !ncd.tensor<k=8, n=2 : bf16>
// CHECK-NEXT:    func.return [[DA]], [[DB]]
func.func @contract(%a: !ncd.tensor<m=4, k=8 : bf16>, %b: !ncd.tensor<k=8, n=2 : bf16>) -> !ncd.tensor<m=4, n=2 : f32> {
  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=4, k=8 : bf16>, !ncd.tensor<k=8, n=2 : bf16> -> !ncd.tensor<m=4, n=2 : f32>
  func.return %c : !ncd.tensor<m=4, n=2 : f32>
}

// -----
// Grouped-query scores: K lacks the query heads' axis r, so dK sums over r with i, by name.
// CHECK-LABEL: func.func @contract_gqa_grad(
// CHECK-NEXT:    %d_q = ncd.contract %d_s, %k over [j] : {{.*}} -> !ncd.tensor<g=2, r=4, i=8, d=16 : f32>
// CHECK-NEXT:    %d_k = ncd.contract %d_s, %q over [r, i] : {{.*}} -> !ncd.tensor<g=2, j=8, d=16 : f32>
// CHECK-NEXT:    func.return %d_q, %d_k
func.func @contract_gqa(%q: !ncd.tensor<g=2, r=4, i=8, d=16 : f32>, %k: !ncd.tensor<g=2, j=8, d=16 : f32>) -> !ncd.tensor<g=2, r=4, i=8, j=8 : f32> {
  %s = ncd.contract %q, %k over [d] : !ncd.tensor<g=2, r=4, i=8, d=16 : f32>, !ncd.tensor<g=2, j=8, d=16 : f32> -> !ncd.tensor<g=2, r=4, i=8, j=8 : f32>
  func.return %s : !ncd.tensor<g=2, r=4, i=8, j=8 : f32>
}

// -----
// exp and exp2 multiply by their result (exp2 by ln 2 too), neg negates, sqrt divides half
// the cotangent by its result, scale scales; the forward is recomputed where needed.
// CHECK-LABEL: func.func @unary_grad(
// CHECK-NEXT:    %e = ncd.map exp %x
// CHECK-NEXT:    %e2 = ncd.map exp2 %e
// CHECK-NEXT:    %n = ncd.map neg %e2
// CHECK-NEXT:    %r = ncd.map sqrt %n
// CHECK-NEXT:    %d_r = ncd.map scale %d_s by 0.5
// CHECK-NEXT:    [[H:%.+]] = ncd.map scale %d_r by 0.5
// CHECK-NEXT:    %d_n = ncd.map div [[H]], %r
// CHECK-NEXT:    %d_e2 = ncd.map neg %d_n
// CHECK-NEXT:    [[T:%.+]] = ncd.map mul %d_e2, %e2
// CHECK-NEXT:    %d_e = ncd.map scale [[T]] by 0.6931471824645996
// CHECK-NEXT:    %d_x = ncd.map mul %d_e, %e
// CHECK-NEXT:    func.return %d_x
func.func @unary(%x: !ncd.tensor<i=4, j=8 : f32>) -> !ncd.tensor<i=4, j=8 : f32> {
  %e = ncd.map exp %x : !ncd.tensor<i=4, j=8 : f32> -> !ncd.tensor<i=4, j=8 : f32>
  %e2 = ncd.map exp2 %e : !ncd.tensor<i=4, j=8 : f32> -> !ncd.tensor<i=4, j=8 : f32>
  %n = ncd.map neg %e2 : !ncd.tensor<i=4, j=8 : f32> -> !ncd.tensor<i=4, j=8 : f32>
  %r = ncd.map sqrt %n : !ncd.tensor<i=4, j=8 : f32> -> !ncd.tensor<i=4, j=8 : f32>
  %s = ncd.map scale %r by 0.5 : !ncd.tensor<i=4, j=8 : f32> -> !ncd.tensor<i=4, j=8 : f32>
  func.return %s : !ncd.tensor<i=4, j=8 : f32>
}

// -----
// A cast passes its cotangent through in f32 (here transposed back to the argument's
// axis order); the incoming bf16 cotangent is read in f32, the argument's cast back at the end.
// CHECK-LABEL: func.func @cast_grad(%x: !ncd.tensor<i=4, j=8 : bf16>, %d_z: !ncd.tensor<j=8, i=4 : bf16>) -> !ncd.tensor<i=4, j=8 : bf16>
// CHECK-NEXT:    [[DZ:%.+]] = ncd.map cast %d_z : !ncd.tensor<j=8, i=4 : bf16> -> !ncd.tensor<j=8, i=4 : f32>
// CHECK-NEXT:    %d_x = ncd.map cast [[DZ]] : !ncd.tensor<j=8, i=4 : f32> -> !ncd.tensor<i=4, j=8 : f32>
// CHECK-NEXT:    [[R:%.+]] = ncd.map cast %d_x : !ncd.tensor<i=4, j=8 : f32> -> !ncd.tensor<i=4, j=8 : bf16>
// CHECK-NEXT:    func.return [[R]]
func.func @cast(%x: !ncd.tensor<i=4, j=8 : bf16>) -> !ncd.tensor<j=8, i=4 : bf16> {
  %y = ncd.map cast %x : !ncd.tensor<i=4, j=8 : bf16> -> !ncd.tensor<j=8, i=4 : f32>
  %z = ncd.map cast %y : !ncd.tensor<j=8, i=4 : f32> -> !ncd.tensor<j=8, i=4 : bf16>
  func.return %z : !ncd.tensor<j=8, i=4 : bf16>
}

// -----
// add and sub pass the cotangent (sub negates its second); the bias lacks i, so its
// cotangent sums over i; its two uses add up.
// CHECK-LABEL: func.func @add_sub_grad(
// CHECK-NEXT:    [[N:%.+]] = ncd.map neg %d_z
// CHECK-NEXT:    [[B1:%.+]] = ncd.reduce sum [[N]] along [i] : !ncd.tensor<i=4, j=8 : f32> -> !ncd.tensor<j=8 : f32>
// CHECK-NEXT:    [[B2:%.+]] = ncd.reduce sum %d_z along [i] : !ncd.tensor<i=4, j=8 : f32> -> !ncd.tensor<j=8 : f32>
// CHECK-NEXT:    [[B:%.+]] = ncd.map add [[B1]], [[B2]] : !ncd.tensor<j=8 : f32>, !ncd.tensor<j=8 : f32> -> !ncd.tensor<j=8 : f32>
// CHECK-NEXT:    func.return %d_z, [[B]]
func.func @add_sub(%x: !ncd.tensor<i=4, j=8 : f32>, %b: !ncd.tensor<j=8 : f32>) -> !ncd.tensor<i=4, j=8 : f32> {
  %y = ncd.map add %x, %b : !ncd.tensor<i=4, j=8 : f32>, !ncd.tensor<j=8 : f32> -> !ncd.tensor<i=4, j=8 : f32>
  %z = ncd.map sub %y, %b : !ncd.tensor<i=4, j=8 : f32>, !ncd.tensor<j=8 : f32> -> !ncd.tensor<i=4, j=8 : f32>
  func.return %z : !ncd.tensor<i=4, j=8 : f32>
}

// -----
// mul: each side times the other; div: dz / y for x, -(dz / y) (x / y) for y.
// CHECK-LABEL: func.func @mul_div_grad(
// CHECK-NEXT:    %m = ncd.map mul %x, %y
// CHECK-NEXT:    %d = ncd.map div %m, %y
// CHECK-NEXT:    %d_m = ncd.map div %d_d, %y
// CHECK-NEXT:    [[Q:%.+]] = ncd.map mul %d_m, %d
// CHECK-NEXT:    [[NQ:%.+]] = ncd.map neg [[Q]]
// CHECK-NEXT:    [[Y1:%.+]] = ncd.reduce sum [[NQ]] along [j]
// CHECK-NEXT:    %d_x = ncd.map mul %d_m, %y
// CHECK-NEXT:    [[P:%.+]] = ncd.map mul %d_m, %x
// CHECK-NEXT:    [[Y2:%.+]] = ncd.reduce sum [[P]] along [j]
// CHECK-NEXT:    [[Y:%.+]] = ncd.map add [[Y1]], [[Y2]]
// CHECK-NEXT:    func.return %d_x, [[Y]]
func.func @mul_div(%x: !ncd.tensor<i=4, j=8 : f32>, %y: !ncd.tensor<i=4 : f32>) -> !ncd.tensor<i=4, j=8 : f32> {
  %m = ncd.map mul %x, %y : !ncd.tensor<i=4, j=8 : f32>, !ncd.tensor<i=4 : f32> -> !ncd.tensor<i=4, j=8 : f32>
  %d = ncd.map div %m, %y : !ncd.tensor<i=4, j=8 : f32>, !ncd.tensor<i=4 : f32> -> !ncd.tensor<i=4, j=8 : f32>
  func.return %d : !ncd.tensor<i=4, j=8 : f32>
}

// -----
// max: x's share of the cotangent is (1 + [x >= y] - [y >= x]) / 2 (ties split in
// halves, as torch.maximum), y's the rest, summed over the axis y lacks.
// CHECK-LABEL: func.func @max_grad(
// CHECK-NEXT:    [[XY:%.+]] = ncd.map ge %x, %y : !ncd.tensor<i=4, j=8 : f32>, !ncd.tensor<i=4 : f32> -> !ncd.tensor<i=4, j=8 : f32>
// CHECK-NEXT:    [[YX:%.+]] = ncd.map ge %y, %x
// CHECK-NEXT:    [[D:%.+]] = ncd.map sub [[XY]], [[YX]]
// CHECK-NEXT:    [[D1:%.+]] = ncd.map add [[D]] by 1.0
// CHECK-NEXT:    [[W:%.+]] = ncd.map scale [[D1]] by 0.5
// CHECK-NEXT:    %d_x = ncd.map mul %d_m, [[W]]
// CHECK-NEXT:    [[R:%.+]] = ncd.map sub %d_m, %d_x
// CHECK-NEXT:    %d_y = ncd.reduce sum [[R]] along [j]
// CHECK-NEXT:    func.return %d_x, %d_y
func.func @max(%x: !ncd.tensor<i=4, j=8 : f32>, %y: !ncd.tensor<i=4 : f32>) -> !ncd.tensor<i=4, j=8 : f32> {
  %m = ncd.map max %x, %y : !ncd.tensor<i=4, j=8 : f32>, !ncd.tensor<i=4 : f32> -> !ncd.tensor<i=4, j=8 : f32>
  func.return %m : !ncd.tensor<i=4, j=8 : f32>
}

// -----
// max with a constant (relu): the constant takes the other share.
// CHECK-LABEL: func.func @relu_grad(
// CHECK-NEXT:    [[A:%.+]] = ncd.map ge %h by 0.0
// CHECK-NEXT:    [[N:%.+]] = ncd.map neg %h
// CHECK-NEXT:    [[B:%.+]] = ncd.map ge [[N]] by 0.0
// CHECK-NEXT:    [[D:%.+]] = ncd.map sub [[A]], [[B]]
// CHECK-NEXT:    [[D1:%.+]] = ncd.map add [[D]] by 1.0
// CHECK-NEXT:    [[W:%.+]] = ncd.map scale [[D1]] by 0.5
// CHECK-NEXT:    %d_h = ncd.map mul %d_r, [[W]]
// CHECK-NEXT:    func.return %d_h
func.func @relu(%h: !ncd.tensor<m=4, n=8 : f32>) -> !ncd.tensor<m=4, n=8 : f32> {
  %r = ncd.map max %h by 0.0 : !ncd.tensor<m=4, n=8 : f32> -> !ncd.tensor<m=4, n=8 : f32>
  func.return %r : !ncd.tensor<m=4, n=8 : f32>
}

// -----
// The one-operand forms with a constant: add and sub pass, mul scales, div divides;
// ge passes nothing back (x * [x >= 0] differentiates as relu).
// CHECK-LABEL: func.func @constants_grad(
// CHECK:         %g = ncd.map ge %d by 0.0
// CHECK-NEXT:    %d_d = ncd.map mul %d_y, %g
// CHECK-NEXT:    %d_m = ncd.map div %d_d by 4.0
// CHECK-NEXT:    %d_s = ncd.map scale %d_m by 3.0
// CHECK-NEXT:    func.return %d_s
func.func @constants(%x: !ncd.tensor<i=4 : f32>) -> !ncd.tensor<i=4 : f32> {
  %a = ncd.map add %x by 1.0 : !ncd.tensor<i=4 : f32> -> !ncd.tensor<i=4 : f32>
  %s = ncd.map sub %a by 2.0 : !ncd.tensor<i=4 : f32> -> !ncd.tensor<i=4 : f32>
  %m = ncd.map mul %s by 3.0 : !ncd.tensor<i=4 : f32> -> !ncd.tensor<i=4 : f32>
  %d = ncd.map div %m by 4.0 : !ncd.tensor<i=4 : f32> -> !ncd.tensor<i=4 : f32>
  %g = ncd.map ge %d by 0.0 : !ncd.tensor<i=4 : f32> -> !ncd.tensor<i=4 : f32>
  %y = ncd.map mul %d, %g : !ncd.tensor<i=4 : f32>, !ncd.tensor<i=4 : f32> -> !ncd.tensor<i=4 : f32>
  func.return %y : !ncd.tensor<i=4 : f32>
}

// -----
// A result returned twice adds its cotangents; an argument no result reads gets zeros
// (ncd.constant), cast to its element type.
// CHECK-LABEL: func.func @unused_grad(%x: !ncd.tensor<i=4 : f32>, %w: !ncd.tensor<k=2 : bf16>, %d_x: !ncd.tensor<i=4 : f32>, %d_x_1: !ncd.tensor<i=4 : f32>) -> (!ncd.tensor<i=4 : f32>, !ncd.tensor<k=2 : bf16>)
// CHECK-NEXT:    [[X:%.+]] = ncd.map add %d_x, %d_x_1
// CHECK-NEXT:    [[Z:%.+]] = ncd.constant 0.0 : !ncd.tensor<k=2 : f32>
// CHECK-NEXT:    [[W:%.+]] = ncd.map cast [[Z]] : !ncd.tensor<k=2 : f32> -> !ncd.tensor<k=2 : bf16>
// CHECK-NEXT:    func.return [[X]], [[W]]
func.func @unused(%x: !ncd.tensor<i=4 : f32>, %w: !ncd.tensor<k=2 : bf16>) -> (!ncd.tensor<i=4 : f32>, !ncd.tensor<i=4 : f32>) {
  func.return %x, %x : !ncd.tensor<i=4 : f32>, !ncd.tensor<i=4 : f32>
}
