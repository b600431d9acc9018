// One warpgroup (sm_90a): D[64x8] = A[64x16] . B[16x8], bf16 in, f32 out. TMA loads A
// and Bt (B transposed, 8x16) into shared memory as 8x8 core matrices (boxes 8 wide in K),
// completing on an mbarrier with an expected transaction count; wgmma m64n8k16 reads
// both from shared-memory descriptors (no swizzle: LBO = stride between core matrices
// along K, SBO = along M/N).
func.func @tma_wgmma(%out: i64, %tmap_a: i64, %tmap_b: i64) attributes {ptx.kernel, ptx.reqntid = [128 : i32], ptx.tensormap_args = [1 : i32, 2 : i32], ptx.shared = ["sa:2048:1024", "sb:256:256", "bar:8:8"]} {
  %tid_r = ptx.sreg {reg = "tid.x"} : () -> !ptx.reg<b32>
  %tid = builtin.unrealized_conversion_cast %tid_r : !ptx.reg<b32> to i32
  %sa_r = ptx.addr_of {sym = "sa"} : () -> !ptx.reg<b32>
  %sb_r = ptx.addr_of {sym = "sb"} : () -> !ptx.reg<b32>
  %bar_r = ptx.addr_of {sym = "bar"} : () -> !ptx.reg<b32>
  %sa = builtin.unrealized_conversion_cast %sa_r : !ptx.reg<b32> to i32
  %sb = builtin.unrealized_conversion_cast %sb_r : !ptx.reg<b32> to i32
  %ta = builtin.unrealized_conversion_cast %tmap_a : i64 to !ptx.reg<b64>
  %tb = builtin.unrealized_conversion_cast %tmap_b : i64 to !ptx.reg<b64>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c8 = arith.constant 8 : i32
  %c128 = arith.constant 128 : i32
  %c1024 = arith.constant 1024 : i32
  %tx = arith.constant 2304 : i32
  %is0 = arith.cmpi eq, %tid, %c0 : i32
  cf.cond_br %is0, ^init, ^synced
^init:
  %one_r = builtin.unrealized_conversion_cast %c1 : i32 to !ptx.reg<b32>
  ptx.mbarrier_init %bar_r, %one_r : (!ptx.reg<b32>, !ptx.reg<b32>) -> ()
  ptx.fence {kind = "mbarrier_init.release.cluster"} : () -> ()
  cf.br ^synced
^synced:
  ptx.bar_sync {id = 0 : i32} : () -> ()
  cf.cond_br %is0, ^issue, ^wait
^issue:
  %tx_r = builtin.unrealized_conversion_cast %tx : i32 to !ptx.reg<b32>
  %st = ptx.mbarrier_arrive %bar_r, %tx_r : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<b64>
  %z_r = builtin.unrealized_conversion_cast %c0 : i32 to !ptx.reg<b32>
  %k8_r = builtin.unrealized_conversion_cast %c8 : i32 to !ptx.reg<b32>
  %sa1 = arith.addi %sa, %c1024 : i32
  %sb1 = arith.addi %sb, %c128 : i32
  %sa1_r = builtin.unrealized_conversion_cast %sa1 : i32 to !ptx.reg<b32>
  %sb1_r = builtin.unrealized_conversion_cast %sb1 : i32 to !ptx.reg<b32>
  ptx.cp_async_bulk_tensor_load [%sa_r], [%ta, (%z_r, %z_r)], [%bar_r] : !ptx.reg<b32>, !ptx.reg<b64>, (!ptx.reg<b32>, !ptx.reg<b32>), !ptx.reg<b32>
  ptx.cp_async_bulk_tensor_load [%sa1_r], [%ta, (%k8_r, %z_r)], [%bar_r] : !ptx.reg<b32>, !ptx.reg<b64>, (!ptx.reg<b32>, !ptx.reg<b32>), !ptx.reg<b32>
  ptx.cp_async_bulk_tensor_load [%sb_r], [%tb, (%z_r, %z_r)], [%bar_r] : !ptx.reg<b32>, !ptx.reg<b64>, (!ptx.reg<b32>, !ptx.reg<b32>), !ptx.reg<b32>
  ptx.cp_async_bulk_tensor_load [%sb1_r], [%tb, (%k8_r, %z_r)], [%bar_r] : !ptx.reg<b32>, !ptx.reg<b64>, (!ptx.reg<b32>, !ptx.reg<b32>), !ptx.reg<b32>
  cf.br ^wait
^wait:
  %zero_r = builtin.unrealized_conversion_cast %c0 : i32 to !ptx.reg<b32>
  %done_r = ptx.mbarrier_try_wait_parity %bar_r, %zero_r : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<pred>
  %done = builtin.unrealized_conversion_cast %done_r : !ptx.reg<pred> to i1
  cf.cond_br %done, ^compute, ^wait
^compute:
  // no swizzle: LBO = 1024 (A's two K halves), 128 (Bt's); SBO = 128 between 8-row core matrices
  %adesc_r = ptx.wgmma_desc %sa_r {lbo = 1024 : i32, sbo = 128 : i32, swizzle = "none"} : (!ptx.reg<b32>) -> !ptx.reg<b64>
  %bdesc_r = ptx.wgmma_desc %sb_r {lbo = 128 : i32, sbo = 256 : i32, swizzle = "none"} : (!ptx.reg<b32>) -> !ptx.reg<b64>
  %zf = arith.constant 0.0 : f32
  %z = builtin.unrealized_conversion_cast %zf : f32 to !ptx.reg<f32>
  %false = arith.constant false
  %scale_d = builtin.unrealized_conversion_cast %false : i1 to !ptx.reg<pred>
  ptx.wgmma_fence : () -> ()
  %d0, %d1, %d2, %d3 = ptx.wgmma_mma_async acc(%z, %z, %z, %z) a(%adesc_r) b(%bdesc_r) scale_d(%scale_d) {n = 8 : i32, atype = "bf16"} : (!ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>) (!ptx.reg<b64>) !ptx.reg<b64> !ptx.reg<pred> -> (!ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>)
  ptx.wgmma_commit_group : () -> ()
  ptx.wgmma_wait_group {n = 0 : i32} : () -> ()
  // thread t of warp w holds rows 16 w + (t % 32) / 4 (and + 8), columns 2 (t % 4) + {0, 1}
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %c4 = arith.constant 4 : i32
  %c5 = arith.constant 5 : i32
  %c31 = arith.constant 31 : i32
  %c16 = arith.constant 16 : i32
  %w = arith.shrui %tid, %c5 : i32
  %lane = arith.andi %tid, %c31 : i32
  %r0 = arith.shrui %lane, %c2 : i32
  %w16 = arith.muli %w, %c16 : i32
  %row = arith.addi %w16, %r0 : i32
  %q = arith.andi %lane, %c3 : i32
  %col = arith.muli %q, %c2 : i32
  %row8 = arith.muli %row, %c8 : i32
  %idx = arith.addi %row8, %col : i32
  %idx4 = arith.muli %idx, %c4 : i32
  %idxw = arith.extui %idx4 : i32 to i64
  %o = arith.addi %out, %idxw : i64
  %o_r = builtin.unrealized_conversion_cast %o : i64 to !ptx.reg<b64>
  ptx.st [%o_r], (%d0, %d1) {space = "global", ty = "f32"} : !ptx.reg<b64>, (!ptx.reg<f32>, !ptx.reg<f32>)
  ptx.st [%o_r], (%d2, %d3) {space = "global", ty = "f32", offset = 256 : i32} : !ptx.reg<b64>, (!ptx.reg<f32>, !ptx.reg<f32>)
  func.return
}
