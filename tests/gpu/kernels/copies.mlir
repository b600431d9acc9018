// Copies that prove the memory instructions: 16-byte vector loads and stores, and
// cp.async global -> shared (commit, wait) -> global through another thread's chunk.

// dst[i] = src[i] for 16-byte chunks i < n16, one chunk a thread (ld/st.global.v4.b32)
func.func @copy_v4(%dst: i64, %src: i64, %n16: i32) attributes {ptx.kernel, ptx.maxntid = [256 : i32]} {
  %tid_r = ptx.sreg {reg = "tid.x"} : () -> !ptx.reg<b32>
  %cta_r = ptx.sreg {reg = "ctaid.x"} : () -> !ptx.reg<b32>
  %ntid_r = ptx.sreg {reg = "ntid.x"} : () -> !ptx.reg<b32>
  %tid = builtin.unrealized_conversion_cast %tid_r : !ptx.reg<b32> to i32
  %cta = builtin.unrealized_conversion_cast %cta_r : !ptx.reg<b32> to i32
  %ntid = builtin.unrealized_conversion_cast %ntid_r : !ptx.reg<b32> to i32
  %base = arith.muli %cta, %ntid : i32
  %i = arith.addi %base, %tid : i32
  %inside = arith.cmpi ult, %i, %n16 : i32
  cf.cond_br %inside, ^copy, ^done
^copy:
  %c16 = arith.constant 16 : i64
  %iw = arith.extui %i : i32 to i64
  %off = arith.muli %iw, %c16 : i64
  %s = arith.addi %src, %off : i64
  %d = arith.addi %dst, %off : i64
  %s_r = builtin.unrealized_conversion_cast %s : i64 to !ptx.reg<b64>
  %d_r = builtin.unrealized_conversion_cast %d : i64 to !ptx.reg<b64>
  %v0, %v1, %v2, %v3 = ptx.ld [%s_r] {space = "global", ty = "b32", cache = "nc"} : !ptx.reg<b64> -> (!ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>)
  ptx.st [%d_r], (%v0, %v1, %v2, %v3) {space = "global", ty = "b32"} : !ptx.reg<b64>, (!ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>)
  cf.br ^done
^done:
  func.return
}

// Each block of 128 threads moves 4096 bytes: thread t copies chunks t and t + 128 into
// shared memory with cp.async, waits, and writes out chunks 255 - t and 127 - t, which
// other threads loaded.
func.func @cp_async_roundtrip(%dst: i64, %src: i64) attributes {ptx.kernel, ptx.reqntid = [128 : i32], ptx.shared = [#ptx.shared<"buf", bytes = 4096, align = 128>]} {
  %tid_r = ptx.sreg {reg = "tid.x"} : () -> !ptx.reg<b32>
  %cta_r = ptx.sreg {reg = "ctaid.x"} : () -> !ptx.reg<b32>
  %buf_r = ptx.addr_of {sym = "buf"} : () -> !ptx.reg<b32>
  %tid = builtin.unrealized_conversion_cast %tid_r : !ptx.reg<b32> to i32
  %cta = builtin.unrealized_conversion_cast %cta_r : !ptx.reg<b32> to i32
  %buf = builtin.unrealized_conversion_cast %buf_r : !ptx.reg<b32> to i32
  %c16 = arith.constant 16 : i32
  %c2048 = arith.constant 2048 : i32
  %c4096 = arith.constant 4096 : i32
  %c4080 = arith.constant 4080 : i32
  %blk = arith.muli %cta, %c4096 : i32
  %blkw = arith.extui %blk : i32 to i64
  %gsrc = arith.addi %src, %blkw : i64
  %gdst = arith.addi %dst, %blkw : i64
  %t16 = arith.muli %tid, %c16 : i32
  %t16w = arith.extui %t16 : i32 to i64
  %c2048w = arith.constant 2048 : i64
  %g0 = arith.addi %gsrc, %t16w : i64
  %g1 = arith.addi %g0, %c2048w : i64
  %s0 = arith.addi %buf, %t16 : i32
  %s1 = arith.addi %s0, %c2048 : i32
  %g0_r = builtin.unrealized_conversion_cast %g0 : i64 to !ptx.reg<b64>
  %g1_r = builtin.unrealized_conversion_cast %g1 : i64 to !ptx.reg<b64>
  %s0_r = builtin.unrealized_conversion_cast %s0 : i32 to !ptx.reg<b32>
  %s1_r = builtin.unrealized_conversion_cast %s1 : i32 to !ptx.reg<b32>
  ptx.cp_async %s0_r, %g0_r {cache = "cg", size = 16 : i32} : (!ptx.reg<b32>, !ptx.reg<b64>) -> ()
  ptx.cp_async_commit_group : () -> ()
  ptx.cp_async %s1_r, %g1_r {cache = "ca", size = 16 : i32} : (!ptx.reg<b32>, !ptx.reg<b64>) -> ()
  ptx.cp_async_commit_group : () -> ()
  ptx.cp_async_wait_group {n = 0 : i32} : () -> ()
  ptx.bar_sync {id = 0 : i32} : () -> ()
  // chunk 255 - t sits at byte 4080 - 16 t; chunk 127 - t 2048 bytes below it
  %r1 = arith.subi %c4080, %t16 : i32
  %r0 = arith.subi %r1, %c2048 : i32
  %l1 = arith.addi %buf, %r1 : i32
  %l0 = arith.addi %buf, %r0 : i32
  %l0_r = builtin.unrealized_conversion_cast %l0 : i32 to !ptx.reg<b32>
  %l1_r = builtin.unrealized_conversion_cast %l1 : i32 to !ptx.reg<b32>
  %a0, %a1, %a2, %a3 = ptx.ld [%l0_r] {space = "shared", ty = "b32"} : !ptx.reg<b32> -> (!ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>)
  %b0, %b1, %b2, %b3 = ptx.ld [%l1_r] {space = "shared", ty = "b32"} : !ptx.reg<b32> -> (!ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>)
  %r0w = arith.extui %r0 : i32 to i64
  %r1w = arith.extui %r1 : i32 to i64
  %o0 = arith.addi %gdst, %r0w : i64
  %o1 = arith.addi %gdst, %r1w : i64
  %o0_r = builtin.unrealized_conversion_cast %o0 : i64 to !ptx.reg<b64>
  %o1_r = builtin.unrealized_conversion_cast %o1 : i64 to !ptx.reg<b64>
  ptx.st [%o0_r], (%a0, %a1, %a2, %a3) {space = "global", ty = "b32"} : !ptx.reg<b64>, (!ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>)
  ptx.st [%o1_r], (%b0, %b1, %b2, %b3) {space = "global", ty = "b32", cache = "cs"} : !ptx.reg<b64>, (!ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>)
  func.return
}
