// reg-to-ptx on tiles wider than one 128-byte panel (the attention gradient's dS at 128
// queries a tile): stmatrix writes a warp's 16 rows into each panel in turn, the second
// panel `rows` x 128 bytes past the first, its 16-byte chunks counted from 0 again
// (XOR-ed with the row's key).
// RUN: napkin-opt %s -p reg-to-ptx -t ptx | filecheck %s

// CHECK-LABEL: .entry two_panels(
// CHECK:       mov.u32 {{%r[0-9]+}}, 128;
// CHECK-NEXT:  mul.lo.u32 {{%r[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}};
// CHECK-NEXT:  mov.u32 [[SEVEN:%r[0-9]+]], 7;
// CHECK-NEXT:  and.b32 [[KEY:%r[0-9]+]], %r{{[0-9]+}}, [[SEVEN]];
// CHECK-NEXT:  mov.u32 [[FOUR:%r[0-9]+]], 4;
// CHECK-NEXT:  shr.u32 [[HALF:%r[0-9]+]], %r{{[0-9]+}}, [[FOUR]];
// CHECK-NEXT:  add.u32 [[ROW:%r[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}};
// CHECK-NEXT:  xor.b32 [[C0:%r[0-9]+]], [[HALF]], [[KEY]];
// CHECK-NEXT:  mov.u32 {{%r[0-9]+}}, 4;
// CHECK-NEXT:  shl.b32 [[B0:%r[0-9]+]], [[C0]], %r{{[0-9]+}};
// CHECK-NEXT:  add.u32 [[A0:%r[0-9]+]], [[ROW]], [[B0]];
// CHECK:       stmatrix.sync.aligned.m8n8.x4.shared.b16 [[[A0]]],
// CHECK-COUNT-3: stmatrix.sync.aligned.m8n8.x4.shared.b16
// the second panel: chunk 0 again, 64 rows x 128 bytes on
// CHECK-NEXT:  xor.b32 [[C1:%r[0-9]+]], [[HALF]], [[KEY]];
// CHECK-NEXT:  mov.u32 [[P:%r[0-9]+]], 8192;
// CHECK-NEXT:  add.u32 [[ROW1:%r[0-9]+]], [[ROW]], [[P]];
// CHECK-NEXT:  mov.u32 {{%r[0-9]+}}, 4;
// CHECK-NEXT:  shl.b32 [[B1:%r[0-9]+]], [[C1]], %r{{[0-9]+}};
// CHECK-NEXT:  add.u32 [[A1:%r[0-9]+]], [[ROW1]], [[B1]];
// CHECK:       stmatrix.sync.aligned.m8n8.x4.shared.b16 [[[A1]]],
// CHECK-COUNT-3: stmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK-NOT:   stmatrix
// CHECK:       cp.async.bulk.tensor.2d.global.shared::cta.bulk_group

builtin.module {
  hbm.kernel attributes {sym_name = "two_panels", grid = #hbm.labels<m=64>, num_outputs = 1 : i32, reg.warps = #hbm.labels<m=4>} {
  ^bb0(%out: !hbm.global<m=64, n=128 : bf16>, %m0: index):
    %c0 = arith.constant 0 : index
    %so = smem.alloc : !smem.buffer<m=64, n=128 : bf16, stages=1, layout=swizzle>
    %z = reg.zeros : !reg.frag<c, m=16, n=128 : f32>
    reg.stmatrix %z -> %so[%c0] {at = #hbm.labels<n=0>} : !reg.frag<c, m=16, n=128 : f32>, !smem.buffer<m=64, n=128 : bf16, stages=1, layout=swizzle>
    smem.tma_store %so[%c0] -> %out[%m0, %c0] : !smem.buffer<m=64, n=128 : bf16, stages=1, layout=swizzle>, !hbm.global<m=64, n=128 : bf16>
    smem.tma_store_wait {pending = 0 : i32}
    hbm.return
  }
}
