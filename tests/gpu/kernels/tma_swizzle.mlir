// TMA round trip with the 128-byte swizzle (sm_90). Block (x, y) loads the 32 x 64 bf16
// box at column 64 x, row 32 y into shared memory (1024-byte aligned, as the swizzle
// needs), completing on an mbarrier; copies the swizzled shared image byte for byte to
// raw[block] so the host can check it against the swizzle formula; then stores the box
// back with a TMA store through the output tensor map (bulk group, waited on).
func.func @tma_swizzle(%raw: i64, %in_map: i64, %out_map: i64) attributes {ptx.kernel, ptx.reqntid = [128 : i32], ptx.tensormap_args = [1 : i32, 2 : i32], ptx.shared = [#ptx.shared<"tile", bytes = 4096, align = 1024>, #ptx.shared<"bar", bytes = 8, align = 8>]} {
  %tid_r = ptx.sreg {reg = "tid.x"} : () -> !ptx.reg<b32>
  %bx_r = ptx.sreg {reg = "ctaid.x"} : () -> !ptx.reg<b32>
  %by_r = ptx.sreg {reg = "ctaid.y"} : () -> !ptx.reg<b32>
  %nx_r = ptx.sreg {reg = "nctaid.x"} : () -> !ptx.reg<b32>
  %tile_r = ptx.addr_of {sym = "tile"} : () -> !ptx.reg<b32>
  %bar_r = ptx.addr_of {sym = "bar"} : () -> !ptx.reg<b32>
  %tid = builtin.unrealized_conversion_cast %tid_r : !ptx.reg<b32> to i32
  %bx = builtin.unrealized_conversion_cast %bx_r : !ptx.reg<b32> to i32
  %by = builtin.unrealized_conversion_cast %by_r : !ptx.reg<b32> to i32
  %nx = builtin.unrealized_conversion_cast %nx_r : !ptx.reg<b32> to i32
  %tile = builtin.unrealized_conversion_cast %tile_r : !ptx.reg<b32> to i32
  %in_r = builtin.unrealized_conversion_cast %in_map : i64 to !ptx.reg<b64>
  %out_r = builtin.unrealized_conversion_cast %out_map : i64 to !ptx.reg<b64>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %c64 = arith.constant 64 : i32
  %tx = arith.constant 4096 : i32
  %x = arith.muli %bx, %c64 : i32
  %y = arith.muli %by, %c32 : i32
  %x_r = builtin.unrealized_conversion_cast %x : i32 to !ptx.reg<b32>
  %y_r = builtin.unrealized_conversion_cast %y : i32 to !ptx.reg<b32>
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
  ptx.cp_async_bulk_tensor_load [%tile_r], [%in_r, (%x_r, %y_r)], [%bar_r] : !ptx.reg<b32>, !ptx.reg<b64>, (!ptx.reg<b32>, !ptx.reg<b32>), !ptx.reg<b32>
  cf.br ^wait
^wait:
  %zero_r = builtin.unrealized_conversion_cast %c0 : i32 to !ptx.reg<b32>
  %done_r = ptx.mbarrier_try_wait_parity %bar_r, %zero_r : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<pred>
  %done = builtin.unrealized_conversion_cast %done_r : !ptx.reg<pred> to i1
  cf.cond_br %done, ^loaded, ^wait
^loaded:
  // the raw shared image: thread t copies 16-byte chunks t and t + 128
  %c16 = arith.constant 16 : i32
  %c2048 = arith.constant 2048 : i32
  %c2048w = arith.constant 2048 : i64
  %row = arith.muli %by, %nx : i32
  %blk = arith.addi %row, %bx : i32
  %blkb = arith.muli %blk, %tx : i32
  %blkw = arith.extui %blkb : i32 to i64
  %t16 = arith.muli %tid, %c16 : i32
  %t16w = arith.extui %t16 : i32 to i64
  %s0 = arith.addi %tile, %t16 : i32
  %s1 = arith.addi %s0, %c2048 : i32
  %s0_r = builtin.unrealized_conversion_cast %s0 : i32 to !ptx.reg<b32>
  %s1_r = builtin.unrealized_conversion_cast %s1 : i32 to !ptx.reg<b32>
  %a0, %a1, %a2, %a3 = ptx.ld [%s0_r] {space = "shared", ty = "b32"} : !ptx.reg<b32> -> (!ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>)
  %b0, %b1, %b2, %b3 = ptx.ld [%s1_r] {space = "shared", ty = "b32"} : !ptx.reg<b32> -> (!ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>)
  %rb = arith.addi %raw, %blkw : i64
  %g0 = arith.addi %rb, %t16w : i64
  %g1 = arith.addi %g0, %c2048w : i64
  %g0_r = builtin.unrealized_conversion_cast %g0 : i64 to !ptx.reg<b64>
  %g1_r = builtin.unrealized_conversion_cast %g1 : i64 to !ptx.reg<b64>
  ptx.st [%g0_r], (%a0, %a1, %a2, %a3) {space = "global", ty = "b32"} : !ptx.reg<b64>, (!ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>)
  ptx.st [%g1_r], (%b0, %b1, %b2, %b3) {space = "global", ty = "b32"} : !ptx.reg<b64>, (!ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>)
  cf.cond_br %is0, ^store, ^done
^store:
  ptx.fence {kind = "proxy.async.shared::cta"} : () -> ()
  ptx.cp_async_bulk_tensor_store [%out_r, (%x_r, %y_r)], [%tile_r] : !ptx.reg<b64>, (!ptx.reg<b32>, !ptx.reg<b32>), !ptx.reg<b32>
  ptx.cp_async_bulk_commit_group : () -> ()
  ptx.cp_async_bulk_wait_group {n = 0 : i32} : () -> ()
  cf.br ^done
^done:
  func.return
}
