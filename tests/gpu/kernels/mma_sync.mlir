// One warp: D[16x8] = A[16x16] . B[16x8] in bf16 with f32 accumulation, through
// cp.async (global -> shared), ldmatrix (shared -> fragments) and mma.sync m16n8k16.
// A is row-major 16x16; B is given transposed (Bt, row-major 8x16) and padded to 512 bytes.
func.func @mma_m16n8k16(%out: i64, %a: i64, %bt: i64) attributes {ptx.kernel, ptx.reqntid = [32 : i32], ptx.shared = [#ptx.shared<"sa", bytes = 512, align = 128>, #ptx.shared<"sb", bytes = 512, align = 128>]} {
  %tid_r = ptx.sreg {reg = "tid.x"} : () -> !ptx.reg<b32>
  %tid = builtin.unrealized_conversion_cast %tid_r : !ptx.reg<b32> to i32
  %sa_r = ptx.addr_of {sym = "sa"} : () -> !ptx.reg<b32>
  %sb_r = ptx.addr_of {sym = "sb"} : () -> !ptx.reg<b32>
  %sa = builtin.unrealized_conversion_cast %sa_r : !ptx.reg<b32> to i32
  %sb = builtin.unrealized_conversion_cast %sb_r : !ptx.reg<b32> to i32
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %c4 = arith.constant 4 : i32
  %c7 = arith.constant 7 : i32
  %c8 = arith.constant 8 : i32
  %c15 = arith.constant 15 : i32
  %c16 = arith.constant 16 : i32
  %c32 = arith.constant 32 : i32
  // every thread copies 16 bytes of A and of Bt
  %t16 = arith.muli %tid, %c16 : i32
  %t16w = arith.extui %t16 : i32 to i64
  %ga = arith.addi %a, %t16w : i64
  %gb = arith.addi %bt, %t16w : i64
  %da = arith.addi %sa, %t16 : i32
  %db = arith.addi %sb, %t16 : i32
  %ga_r = builtin.unrealized_conversion_cast %ga : i64 to !ptx.reg<b64>
  %gb_r = builtin.unrealized_conversion_cast %gb : i64 to !ptx.reg<b64>
  %da_r = builtin.unrealized_conversion_cast %da : i32 to !ptx.reg<b32>
  %db_r = builtin.unrealized_conversion_cast %db : i32 to !ptx.reg<b32>
  ptx.cp_async %da_r, %ga_r {cache = "cg", size = 16 : i32} : (!ptx.reg<b32>, !ptx.reg<b64>) -> ()
  ptx.cp_async %db_r, %gb_r {cache = "cg", size = 16 : i32} : (!ptx.reg<b32>, !ptx.reg<b64>) -> ()
  ptx.cp_async_commit_group : () -> ()
  ptx.cp_async_wait_group {n = 0 : i32} : () -> ()
  ptx.bar_sync {id = 0 : i32} : () -> ()
  // A: lane l points at row l % 16, column 8 * (l / 16)
  %arow = arith.andi %tid, %c15 : i32
  %ahalf = arith.shrui %tid, %c4 : i32
  %arow_b = arith.muli %arow, %c32 : i32
  %acol_b = arith.muli %ahalf, %c16 : i32
  %aoff = arith.addi %arow_b, %acol_b : i32
  %aaddr = arith.addi %sa, %aoff : i32
  %aaddr_r = builtin.unrealized_conversion_cast %aaddr : i32 to !ptx.reg<b32>
  %a0, %a1, %a2, %a3 = ptx.ldmatrix %aaddr_r {num = 4 : i32} : (!ptx.reg<b32>) -> (!ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>)
  // Bt: lane l points at row l % 8, column 8 * ((l / 8) % 2)
  %brow = arith.andi %tid, %c7 : i32
  %bq = arith.shrui %tid, %c3 : i32
  %one = arith.constant 1 : i32
  %bsel = arith.andi %bq, %one : i32
  %brow_b = arith.muli %brow, %c32 : i32
  %bcol_b = arith.muli %bsel, %c16 : i32
  %boff = arith.addi %brow_b, %bcol_b : i32
  %baddr = arith.addi %sb, %boff : i32
  %baddr_r = builtin.unrealized_conversion_cast %baddr : i32 to !ptx.reg<b32>
  %b0, %b1 = ptx.ldmatrix %baddr_r {num = 2 : i32} : (!ptx.reg<b32>) -> (!ptx.reg<b32>, !ptx.reg<b32>)
  %zf = arith.constant 0.0 : f32
  %z = builtin.unrealized_conversion_cast %zf : f32 to !ptx.reg<f32>
  %d0, %d1, %d2, %d3 = ptx.mma_sync a(%a0, %a1, %a2, %a3) b(%b0, %b1) c(%z, %z, %z, %z) {shape = "m16n8k16", atype = "bf16"} : (!ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>) (!ptx.reg<b32>, !ptx.reg<b32>) (!ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>) -> (!ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>)
  // D: lane l holds row l / 4 (and l / 4 + 8), columns 2 * (l % 4) and the next
  %row = arith.shrui %tid, %c2 : i32
  %q = arith.andi %tid, %c3 : i32
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
