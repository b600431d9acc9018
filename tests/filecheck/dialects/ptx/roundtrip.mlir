// RUN: napkin-opt %s | napkin-opt | filecheck %s
// RUN: napkin-opt %s --print-op-generic | napkin-opt | filecheck %s

// CHECK-LABEL: ptx.kernel attributes {sym_name = "all_ops"
ptx.kernel attributes {sym_name = "all_ops", params = ["g", "tmap"], param_types = ["u64", "tensormap"], shared = [#ptx.shared<"smem", bytes = 4096, align = 128>], dynamic_shared = "dsmem", reqntid = [384 : i32, 1 : i32, 1 : i32]} {
  // CHECK: %g = ptx.ld_param {param = "g", ty = "u64"} : () -> !ptx.reg<b64>
  %g = ptx.ld_param {param = "g", ty = "u64"} : () -> !ptx.reg<b64>
  // CHECK-NEXT: %t = ptx.addr_of {sym = "tmap"} : () -> !ptx.reg<b64>
  %t = ptx.addr_of {sym = "tmap"} : () -> !ptx.reg<b64>
  // CHECK-NEXT: %s = ptx.addr_of {sym = "smem"} : () -> !ptx.reg<b32>
  %s = ptx.addr_of {sym = "smem"} : () -> !ptx.reg<b32>
  // CHECK-NEXT: %tid = ptx.sreg {reg = "tid.x"} : () -> !ptx.reg<b32>
  %tid = ptx.sreg {reg = "tid.x"} : () -> !ptx.reg<b32>
  // CHECK-NEXT: %c = ptx.const {ty = "u32", value = 8 : i64} : () -> !ptx.reg<b32>
  %c = ptx.const {ty = "u32", value = 8 : i64} : () -> !ptx.reg<b32>
  // CHECK-NEXT: %one = ptx.const {ty = "f32", value = 1.000000e+00 : f64} : () -> !ptx.reg<f32>
  %one = ptx.const {ty = "f32", value = 1.0 : f64} : () -> !ptx.reg<f32>
  // CHECK-NEXT: %a = ptx.add %tid, %c {ty = "s32"} : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<b32>
  %a = ptx.add %tid, %c {ty = "s32"} : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<b32>
  // CHECK-NEXT: %w = ptx.mul %a, %c {ty = "s32", mods = "wide"} : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<b64>
  %w = ptx.mul %a, %c {ty = "s32", mods = "wide"} : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<b64>
  // CHECK-NEXT: %sh = ptx.shl %a, %c {ty = "b32"}
  %sh = ptx.shl %a, %c {ty = "b32"} : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<b32>
  // CHECK-NEXT: %e = ptx.ex2 %one {ty = "f32", mods = "approx.ftz"}
  %e = ptx.ex2 %one {ty = "f32", mods = "approx.ftz"} : (!ptx.reg<f32>) -> !ptx.reg<f32>
  // CHECK-NEXT: %bp = ptx.cvt %e, %one {dty = "bf16x2", sty = "f32", mods = "rn"} : (!ptx.reg<f32>, !ptx.reg<f32>) -> !ptx.reg<bf16x2>
  %bp = ptx.cvt %e, %one {dty = "bf16x2", sty = "f32", mods = "rn"} : (!ptx.reg<f32>, !ptx.reg<f32>) -> !ptx.reg<bf16x2>
  // CHECK-NEXT: %p = ptx.setp %a, %c {cmp = "lt", ty = "s32"} : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<pred>
  %p = ptx.setp %a, %c {cmp = "lt", ty = "s32"} : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<pred>
  // CHECK-NEXT: %sel = ptx.selp %a, %c, %p {ty = "b32"}
  %sel = ptx.selp %a, %c, %p {ty = "b32"} : (!ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<pred>) -> !ptx.reg<b32>
  // CHECK-NEXT: %v0, %v1 = ptx.ld [%g] if %p {space = "global", ty = "f32", offset = 16 : i32} : !ptx.reg<b64> if !ptx.reg<pred> -> (!ptx.reg<f32>, !ptx.reg<f32>)
  %v0, %v1 = ptx.ld [%g] if %p {space = "global", ty = "f32", offset = 16 : i32} : !ptx.reg<b64> if !ptx.reg<pred> -> (!ptx.reg<f32>, !ptx.reg<f32>)
  // CHECK-NEXT: ptx.st [%s], (%v0, %v1) {space = "shared", ty = "f32"} : !ptx.reg<b32>, (!ptx.reg<f32>, !ptx.reg<f32>)
  ptx.st [%s], (%v0, %v1) {space = "shared", ty = "f32"} : !ptx.reg<b32>, (!ptx.reg<f32>, !ptx.reg<f32>)
  // CHECK-NEXT: ptx.red [%g] if %p, (%v0) {space = "global", ty = "f32", offset = 4 : i32} : !ptx.reg<b64> if !ptx.reg<pred>, (!ptx.reg<f32>)
  ptx.red [%g] if %p, (%v0) {space = "global", ty = "f32", offset = 4 : i32} : !ptx.reg<b64> if !ptx.reg<pred>, (!ptx.reg<f32>)
  // CHECK-NEXT: ptx.red [%g] if %p, (%v0, %v1) {space = "global", ty = "f32", offset = 8 : i32} : !ptx.reg<b64> if !ptx.reg<pred>, (!ptx.reg<f32>, !ptx.reg<f32>)
  ptx.red [%g] if %p, (%v0, %v1) {space = "global", ty = "f32", offset = 8 : i32} : !ptx.reg<b64> if !ptx.reg<pred>, (!ptx.reg<f32>, !ptx.reg<f32>)
  // CHECK-NEXT: ptx.bar_sync {id = 0 : i32}
  ptx.bar_sync {id = 0 : i32} : () -> ()
  // CHECK-NEXT: ptx.bar_named %a {mode = "arrive", threads = 256 : i64} : (!ptx.reg<b32>) -> ()
  ptx.bar_named %a {mode = "arrive", threads = 256 : i64} : (!ptx.reg<b32>) -> ()
  // CHECK-NEXT: %x = ptx.shfl_sync %a {mode = "bfly", b = 1 : i32, c = 31 : i32, mask = 4294967295 : i64}
  %x = ptx.shfl_sync %a {mode = "bfly", b = 1 : i32, c = 31 : i32, mask = 4294967295 : i64} : (!ptx.reg<b32>) -> !ptx.reg<b32>
  // CHECK-NEXT: %bal = ptx.vote %p {mode = "ballot"} : (!ptx.reg<pred>) -> !ptx.reg<b32>
  %bal = ptx.vote %p {mode = "ballot"} : (!ptx.reg<pred>) -> !ptx.reg<b32>
  // CHECK-NEXT: %lane, %leader = ptx.elect_sync : () -> (!ptx.reg<b32>, !ptx.reg<pred>)
  %lane, %leader = ptx.elect_sync : () -> (!ptx.reg<b32>, !ptx.reg<pred>)
  // CHECK-NEXT: ptx.cp_async %s, %g, %c {cache = "cg", size = 16 : i32}
  ptx.cp_async %s, %g, %c {cache = "cg", size = 16 : i32} : (!ptx.reg<b32>, !ptx.reg<b64>, !ptx.reg<b32>) -> ()
  // CHECK-NEXT: ptx.cp_async_commit_group
  ptx.cp_async_commit_group : () -> ()
  // CHECK-NEXT: ptx.cp_async_wait_group {n = 0 : i32}
  ptx.cp_async_wait_group {n = 0 : i32} : () -> ()
  // CHECK-NEXT: %m0, %m1, %m2, %m3 = ptx.ldmatrix %s {num = 4 : i32, trans = 1 : i32}
  %m0, %m1, %m2, %m3 = ptx.ldmatrix %s {num = 4 : i32, trans = 1 : i32} : (!ptx.reg<b32>) -> (!ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>)
  // CHECK-NEXT: %d0, %d1, %d2, %d3 = ptx.mma_sync a(%m0, %m1, %m2, %m3) b(%m0, %m1) c(%one, %one, %one, %one) {shape = "m16n8k16", atype = "bf16"}
  %d0, %d1, %d2, %d3 = ptx.mma_sync a(%m0, %m1, %m2, %m3) b(%m0, %m1) c(%one, %one, %one, %one) {shape = "m16n8k16", atype = "bf16"} : (!ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>) (!ptx.reg<b32>, !ptx.reg<b32>) (!ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>) -> (!ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>)
  // CHECK-NEXT: ptx.stmatrix %s, %m0, %m1
  ptx.stmatrix %s, %m0, %m1 : (!ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>) -> ()
  // CHECK-NEXT: ptx.mbarrier_init %s, %c
  ptx.mbarrier_init %s, %c : (!ptx.reg<b32>, !ptx.reg<b32>) -> ()
  // CHECK-NEXT: ptx.fence {kind = "mbarrier_init.release.cluster"}
  ptx.fence {kind = "mbarrier_init.release.cluster"} : () -> ()
  // CHECK-NEXT: %st = ptx.mbarrier_arrive %s, %c : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<b64>
  %st = ptx.mbarrier_arrive %s, %c : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<b64>
  // CHECK-NEXT: ptx.cp_async_bulk_tensor_load [%s], [%t, (%a, %c)], [%s] : !ptx.reg<b32>, !ptx.reg<b64>, (!ptx.reg<b32>, !ptx.reg<b32>), !ptx.reg<b32>
  ptx.cp_async_bulk_tensor_load [%s], [%t, (%a, %c)], [%s] : !ptx.reg<b32>, !ptx.reg<b64>, (!ptx.reg<b32>, !ptx.reg<b32>), !ptx.reg<b32>
  // CHECK-NEXT: %ok = ptx.mbarrier_try_wait_parity %s, %c
  %ok = ptx.mbarrier_try_wait_parity %s, %c : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<pred>
  // CHECK-NEXT: ptx.fence {kind = "proxy.async.shared::cta"}
  ptx.fence {kind = "proxy.async.shared::cta"} : () -> ()
  // CHECK-NEXT: ptx.cp_async_bulk_tensor_store [%t, (%a, %c)], [%s]
  ptx.cp_async_bulk_tensor_store [%t, (%a, %c)], [%s] : !ptx.reg<b64>, (!ptx.reg<b32>, !ptx.reg<b32>), !ptx.reg<b32>
  // CHECK-NEXT: ptx.cp_async_bulk_tensor_store [%t, (%a, %c)], [%s] {add}
  ptx.cp_async_bulk_tensor_store [%t, (%a, %c)], [%s] {add} : !ptx.reg<b64>, (!ptx.reg<b32>, !ptx.reg<b32>), !ptx.reg<b32>
  // CHECK-NEXT: ptx.cp_async_bulk_commit_group
  ptx.cp_async_bulk_commit_group : () -> ()
  // CHECK-NEXT: ptx.cp_async_bulk_wait_group {n = 0 : i32, read = 1 : i32}
  ptx.cp_async_bulk_wait_group {n = 0 : i32, read = 1 : i32} : () -> ()
  // CHECK-NEXT: ptx.wgmma_fence
  ptx.wgmma_fence : () -> ()
  // CHECK-NEXT: %r0, %r1, %r2, %r3 = ptx.wgmma_mma_async acc(%d0, %d1, %d2, %d3) a(%w) b(%w) scale_d(%p) {n = 8 : i32, atype = "bf16"}
  %r0, %r1, %r2, %r3 = ptx.wgmma_mma_async acc(%d0, %d1, %d2, %d3) a(%w) b(%w) scale_d(%p) {n = 8 : i32, atype = "bf16"} : (!ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>) (!ptx.reg<b64>) !ptx.reg<b64> !ptx.reg<pred> -> (!ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>)
  // CHECK-NEXT: ptx.wgmma_commit_group
  ptx.wgmma_commit_group : () -> ()
  // CHECK-NEXT: ptx.wgmma_wait_group {n = 0 : i32}
  ptx.wgmma_wait_group {n = 0 : i32} : () -> ()
  // CHECK-NEXT: ptx.setmaxnreg {action = "inc", count = 240 : i32}
  ptx.setmaxnreg {action = "inc", count = 240 : i32} : () -> ()
  // CHECK-NEXT: %desc = ptx.wgmma_desc %s {lbo = 16 : i32, sbo = 1024 : i32, swizzle = "128B"} : (!ptx.reg<b32>) -> !ptx.reg<b64>
  %desc = ptx.wgmma_desc %s {lbo = 16 : i32, sbo = 1024 : i32, swizzle = "128B"} : (!ptx.reg<b32>) -> !ptx.reg<b64>
  // CHECK-NEXT: ptx.mbarrier_inval %s
  ptx.mbarrier_inval %s : (!ptx.reg<b32>) -> ()
  // A guarded copy and a load at immediate offsets from their base registers.
  // CHECK-NEXT: ptx.cp_async %s, %g, %c, %p {cache = "cg", size = 16 : i32, dst_offset = 1280 : i32, src_offset = -32 : i32}
  ptx.cp_async %s, %g, %c, %p {cache = "cg", size = 16 : i32, dst_offset = 1280 : i32, src_offset = -32 : i32} : (!ptx.reg<b32>, !ptx.reg<b64>, !ptx.reg<b32>, !ptx.reg<pred>) -> ()
  // CHECK-NEXT: ptx.cp_async %s, %g, %p {cache = "cg", size = 16 : i32, src_offset = 4096 : i32}
  ptx.cp_async %s, %g, %p {cache = "cg", size = 16 : i32, src_offset = 4096 : i32} : (!ptx.reg<b32>, !ptx.reg<b64>, !ptx.reg<pred>) -> ()
  // CHECK-NEXT: %n0, %n1, %n2, %n3 = ptx.ldmatrix %s {num = 4 : i32, offset = 640 : i32}
  %n0, %n1, %n2, %n3 = ptx.ldmatrix %s {num = 4 : i32, offset = 640 : i32} : (!ptx.reg<b32>) -> (!ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>)
  // CHECK-NEXT: %turn = ptx.ld [%g] {space = "global", ty = "u32", sem = "acquire.gpu"} : !ptx.reg<b64> -> (!ptx.reg<b32>)
  %turn = ptx.ld [%g] {space = "global", ty = "u32", sem = "acquire.gpu"} : !ptx.reg<b64> -> (!ptx.reg<b32>)
  // CHECK-NEXT: ptx.st [%g], (%turn) {space = "global", ty = "u32", sem = "release.gpu"} : !ptx.reg<b64>, (!ptx.reg<b32>)
  ptx.st [%g], (%turn) {space = "global", ty = "u32", sem = "release.gpu"} : !ptx.reg<b64>, (!ptx.reg<b32>)
  // CHECK-NEXT: %old = ptx.atom [%g] if %p, (%a) {space = "global", ty = "u32", offset = 8 : i32, sem = "acq_rel.gpu"} : !ptx.reg<b64> if !ptx.reg<pred>, (!ptx.reg<b32>) -> (!ptx.reg<b32>)
  %old = ptx.atom [%g] if %p, (%a) {space = "global", ty = "u32", offset = 8 : i32, sem = "acq_rel.gpu"} : !ptx.reg<b64> if !ptx.reg<pred>, (!ptx.reg<b32>) -> (!ptx.reg<b32>)
  // CHECK-NEXT: ptx.bar_warp_sync {mask = 4294967295 : i64}
  ptx.bar_warp_sync {mask = 4294967295 : i64} : () -> ()
  // CHECK-NEXT: %z0, %z1 = ptx.ld [%g] if %p {space = "global", ty = "f32", zero} : !ptx.reg<b64> if !ptx.reg<pred> -> (!ptx.reg<f32>, !ptx.reg<f32>)
  %z0, %z1 = ptx.ld [%g] if %p {space = "global", ty = "f32", zero} : !ptx.reg<b64> if !ptx.reg<pred> -> (!ptx.reg<f32>, !ptx.reg<f32>)
  // CHECK-NEXT: ptx.ret
  ptx.ret
}
