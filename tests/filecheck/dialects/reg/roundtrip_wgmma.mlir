// RUN: napkin-opt %s | napkin-opt | filecheck %s
// RUN: napkin-opt %s --print-op-generic | napkin-opt | filecheck %s

// CHECK: %d = reg.wgmma %a[%c0], %b[%c0], %c {at = #hbm.labels<k=16>} : !smem.buffer<m=128, k=64 : bf16, stages=2, layout=swizzle>, !smem.buffer<k=64, n=256 : bf16, stages=2, layout=swizzle>, !reg.frag<c, m=16, n=256 : f32> -> !reg.frag<c, m=16, n=256 : f32>
// CHECK-NEXT: reg.wgmma_commit
// CHECK-NEXT: reg.wgmma_wait {pending = 1 : i32}
hbm.kernel attributes {sym_name = "k", grid = #hbm.labels<m=128>, num_outputs = 1 : i32, reg.warps = #hbm.labels<m=8>} {
^bb0(%g: !hbm.global<m=100, n=256 : bf16>, %m0: index):
  %c0 = arith.constant 0 : index
  %a = smem.alloc : !smem.buffer<m=128, k=64 : bf16, stages=2, layout=swizzle>
  %b = smem.alloc : !smem.buffer<k=64, n=256 : bf16, stages=2, layout=swizzle>
  %c = reg.zeros : !reg.frag<c, m=16, n=256 : f32>
  %d = reg.wgmma %a[%c0], %b[%c0], %c {at = #hbm.labels<k=16>} : !smem.buffer<m=128, k=64 : bf16, stages=2, layout=swizzle>, !smem.buffer<k=64, n=256 : bf16, stages=2, layout=swizzle>, !reg.frag<c, m=16, n=256 : f32> -> !reg.frag<c, m=16, n=256 : f32>
  reg.wgmma_commit
  reg.wgmma_wait {pending = 1 : i32}
  hbm.return
}

// A from registers (attention's P), B from a stage whose outer axes have one place each
// CHECK: %o = reg.wgmma_rs %p, %v[%c0], %acc {at = #hbm.labels<j=48>} : !reg.frag<a, i=16, j=16 : bf16>, !smem.buffer<b=1, h=1, j=64, d=128 : bf16, stages=2, layout=swizzle>, !reg.frag<c, i=16, d=128 : f32> -> !reg.frag<c, i=16, d=128 : f32>
hbm.kernel attributes {sym_name = "rs", grid = #hbm.labels<i=128>, num_outputs = 1 : i32, reg.warps = #hbm.labels<i=8>} {
^bb0(%g: !hbm.global<i=100, d=128 : bf16>, %i0: index):
  %c0 = arith.constant 0 : index
  %v = smem.alloc : !smem.buffer<b=1, h=1, j=64, d=128 : bf16, stages=2, layout=swizzle>
  %s = reg.zeros : !reg.frag<c, i=16, j=64 : f32>
  %p = reg.to_a %s {at = #hbm.labels<j=48>} : !reg.frag<c, i=16, j=64 : f32> -> !reg.frag<a, i=16, j=16 : bf16>
  %acc = reg.zeros : !reg.frag<c, i=16, d=128 : f32>
  %o = reg.wgmma_rs %p, %v[%c0], %acc {at = #hbm.labels<j=48>} : !reg.frag<a, i=16, j=16 : bf16>, !smem.buffer<b=1, h=1, j=64, d=128 : bf16, stages=2, layout=swizzle>, !reg.frag<c, i=16, d=128 : f32> -> !reg.frag<c, i=16, d=128 : f32>
  hbm.return
}
