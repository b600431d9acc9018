// napkin-model on a causal FlashAttention kernel at the hbm level, written by hand: the
// stream over keys stops after the diagonal tile (its bound depends on the block), so
// query tile t of each head reads key tiles 0..t: 1 + 2 + 3 + 4 = 10 tiles of 64 x 64
// bf16 of K and of V per head, Q and O once.
// RUN: napkin-model %s | filecheck %s
// RUN: napkin-model %s --json | filecheck %s --check-prefix=JSON

// CHECK: @fa: hbm level, on the H100 SXM5 80GB (132 SMs)
// CHECK-NEXT: grid b:1, h:1, i:64: 1 x 2 x 4 = 8 blocks of 4 warps (assumed: decided at the reg level)
// CHECK-NEXT: HBM traffic (bytes) {{ +}}napkin{{ +}}DRAM est.
// 2 heads x 256 x 64 x 2 bytes
// CHECK-NEXT: q read {{ +}}65536
// 2 heads x 10 tiles x 8192 bytes
// CHECK-NEXT: k read {{ +}}163840
// CHECK-NEXT: v read {{ +}}163840
// CHECK-NEXT: out written {{ +}}65536
// CHECK-NEXT: total {{ +}}458752
// 2 heads x 10 tile pairs x 2 products x 2 x 64^3
// CHECK: tensor-core FLOPs (wgmma, assumed) {{ +}}20971520
// per stream step exp2 of 64 x 64 scores and of 64 rescale factors (20 steps), then one
// reciprocal per row (8 blocks x 64 rows)
// CHECK: special functions {{ +}}83712
// CHECK: predicted: {{[0-9.]+}} us, bound by

// JSON: "read": {
// JSON-NEXT: "q": 65536.0,
// JSON-NEXT: "k": 163840.0,
// JSON-NEXT: "v": 163840.0
// JSON: "sfu_ops": 83712.0,
hbm.kernel attributes {sym_name = "fa", grid = #hbm.labels<b=1, h=1, i=64>, num_outputs = 1 : i32} {
^bb0(%q: !hbm.global<b=1, h=2, i=256, d=64 : bf16>, %k: !hbm.global<b=1, h=2, j=256, d=64 : bf16>, %v: !hbm.global<b=1, h=2, j=256, d=64 : bf16>, %out: !hbm.global<b=1, h=2, i=256, d=64 : bf16>, %b0: index, %h0: index, %i0: index):
  %c0 = arith.constant 0 : index
  %step = arith.constant 64 : index
  %n = arith.constant 256 : index
  %br = arith.constant 64 : index
  %iend = arith.addi %i0, %br : index
  %ub = arith.minui %n, %iend : index
  %qt = hbm.load %q[%b0, %h0, %i0, %c0] : !hbm.global<b=1, h=2, i=256, d=64 : bf16> -> !ncd.tensor<b=1, h=1, i=64, d=64 : bf16>
  %m0 = hbm.fill {value = 0xff800000 : f32} : !ncd.tensor<b=1, h=1, i=64 : f32>
  %l0 = hbm.fill {value = 0.0 : f32} : !ncd.tensor<b=1, h=1, i=64 : f32>
  %a0 = hbm.fill {value = 0.0 : f32} : !ncd.tensor<b=1, h=1, i=64, d=64 : f32>
  %mf, %lf, %af = scf.for %j0 = %c0 to %ub step %step iter_args(%m = %m0, %l = %l0, %a = %a0) -> (!ncd.tensor<b=1, h=1, i=64 : f32>, !ncd.tensor<b=1, h=1, i=64 : f32>, !ncd.tensor<b=1, h=1, i=64, d=64 : f32>) {
    %kt = hbm.load %k[%b0, %h0, %j0, %c0] : !hbm.global<b=1, h=2, j=256, d=64 : bf16> -> !ncd.tensor<b=1, h=1, j=64, d=64 : bf16>
    %s = ncd.contract %qt, %kt over [d] : !ncd.tensor<b=1, h=1, i=64, d=64 : bf16>, !ncd.tensor<b=1, h=1, j=64, d=64 : bf16> -> !ncd.tensor<b=1, h=1, i=64, j=64 : f32>
    %tmax = ncd.reduce max %s along [j] : !ncd.tensor<b=1, h=1, i=64, j=64 : f32> -> !ncd.tensor<b=1, h=1, i=64 : f32>
    %mn = ncd.map max %m, %tmax : !ncd.tensor<b=1, h=1, i=64 : f32>, !ncd.tensor<b=1, h=1, i=64 : f32> -> !ncd.tensor<b=1, h=1, i=64 : f32>
    %dm = ncd.map sub %m, %mn : !ncd.tensor<b=1, h=1, i=64 : f32>, !ncd.tensor<b=1, h=1, i=64 : f32> -> !ncd.tensor<b=1, h=1, i=64 : f32>
    %r = ncd.map exp2 %dm : !ncd.tensor<b=1, h=1, i=64 : f32> -> !ncd.tensor<b=1, h=1, i=64 : f32>
    %x = ncd.map sub %s, %mn : !ncd.tensor<b=1, h=1, i=64, j=64 : f32>, !ncd.tensor<b=1, h=1, i=64 : f32> -> !ncd.tensor<b=1, h=1, i=64, j=64 : f32>
    %p = ncd.map exp2 %x : !ncd.tensor<b=1, h=1, i=64, j=64 : f32> -> !ncd.tensor<b=1, h=1, i=64, j=64 : f32>
    %ts = ncd.reduce sum %p along [j] : !ncd.tensor<b=1, h=1, i=64, j=64 : f32> -> !ncd.tensor<b=1, h=1, i=64 : f32>
    %lr = ncd.map mul %l, %r : !ncd.tensor<b=1, h=1, i=64 : f32>, !ncd.tensor<b=1, h=1, i=64 : f32> -> !ncd.tensor<b=1, h=1, i=64 : f32>
    %ln = ncd.map add %lr, %ts : !ncd.tensor<b=1, h=1, i=64 : f32>, !ncd.tensor<b=1, h=1, i=64 : f32> -> !ncd.tensor<b=1, h=1, i=64 : f32>
    %p16 = ncd.map cast %p : !ncd.tensor<b=1, h=1, i=64, j=64 : f32> -> !ncd.tensor<b=1, h=1, i=64, j=64 : bf16>
    %vt = hbm.load %v[%b0, %h0, %j0, %c0] : !hbm.global<b=1, h=2, j=256, d=64 : bf16> -> !ncd.tensor<b=1, h=1, j=64, d=64 : bf16>
    %pv = ncd.contract %p16, %vt over [j] : !ncd.tensor<b=1, h=1, i=64, j=64 : bf16>, !ncd.tensor<b=1, h=1, j=64, d=64 : bf16> -> !ncd.tensor<b=1, h=1, i=64, d=64 : f32>
    %ar = ncd.map mul %a, %r : !ncd.tensor<b=1, h=1, i=64, d=64 : f32>, !ncd.tensor<b=1, h=1, i=64 : f32> -> !ncd.tensor<b=1, h=1, i=64, d=64 : f32>
    %an = ncd.map add %ar, %pv : !ncd.tensor<b=1, h=1, i=64, d=64 : f32>, !ncd.tensor<b=1, h=1, i=64, d=64 : f32> -> !ncd.tensor<b=1, h=1, i=64, d=64 : f32>
    scf.yield %mn, %ln, %an : !ncd.tensor<b=1, h=1, i=64 : f32>, !ncd.tensor<b=1, h=1, i=64 : f32>, !ncd.tensor<b=1, h=1, i=64, d=64 : f32>
  } {hbm.stream = #hbm.stream<j>}
  %o = ncd.map div %af, %lf : !ncd.tensor<b=1, h=1, i=64, d=64 : f32>, !ncd.tensor<b=1, h=1, i=64 : f32> -> !ncd.tensor<b=1, h=1, i=64, d=64 : f32>
  %o16 = ncd.map cast %o : !ncd.tensor<b=1, h=1, i=64, d=64 : f32> -> !ncd.tensor<b=1, h=1, i=64, d=64 : bf16>
  hbm.store %o16, %out[%b0, %h0, %i0, %c0] : !ncd.tensor<b=1, h=1, i=64, d=64 : bf16>, !hbm.global<b=1, h=2, i=256, d=64 : bf16>
  hbm.return
}

