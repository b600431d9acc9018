// hbm-to-smem{copy=tma}: A of 3 rows in 64-row tiles (a decode): the copy brings 8 rows (`rows`), and
// only their bytes count at the stage's barrier; B's tiles, whose rows are the contraction's, stay whole.
// Through napkin-sm90 to the ptx dialect, A's tensor map takes a box of 8 rows:
// RUN: napkin-opt %s -p 'ncd-relabel{grid="m:64,n:128" stream="k:64"},ncd-to-hbm,hbm-to-smem{stages=4 copy=tma}' | filecheck %s
// RUN: napkin-opt %s -p 'napkin-sm90{block="64,128,64"}' | filecheck %s --check-prefix=PTX

// CHECK: smem.arrive_expect %{{.*}} {bytes = 17408 : i32}
// CHECK-NEXT: smem.tma_copy %a[%{{.*}}] -> %{{.*}} {rows = 8 : i32} : !hbm.global<m=3, k=128 : bf16>, !smem.buffer<m=64, k=64 : bf16, stages=4, layout=swizzle>
// CHECK-NEXT: smem.tma_copy %b[%{{.*}}] -> %{{.*}} : !hbm.global<k=128, n=256 : bf16>, !smem.buffer<k=64, n=128 : bf16, stages=4, layout=swizzle>

// PTX: napkin.tma = [#ptx.tma_box<"a", box = 8x64, swizzle = "128B">, #ptx.tma_box<"b", box = 64x64, swizzle = "128B">
func.func @matmul(%a: !ncd.tensor<m=3, k=128 : bf16>, %b: !ncd.tensor<k=128, n=256 : bf16>) -> !ncd.tensor<m=3, n=256 : bf16> {
  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=3, k=128 : bf16>, !ncd.tensor<k=128, n=256 : bf16> -> !ncd.tensor<m=3, n=256 : bf16>
  func.return %c : !ncd.tensor<m=3, n=256 : bf16>
}
