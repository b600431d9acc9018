// RUN: napkin-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {
  %z = ptx.const {ty = "f32", value = 0.0 : f64} : () -> !ptx.reg<f32>
  %a = ptx.const {ty = "u32", value = 0 : i64} : () -> !ptx.reg<b32>
  %d0, %d1, %d2, %d3 = ptx.mma_sync a(%a, %a, %a) b(%a, %a) c(%z, %z, %z, %z) {shape = "m16n8k16", atype = "bf16"} : (!ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>) (!ptx.reg<b32>, !ptx.reg<b32>) (!ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>) -> (!ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>)
  ptx.ret
}
// CHECK: ptx.mma_sync: m16n8k16 takes 4 A registers per thread, got 3

// -----
ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {
  %z = ptx.const {ty = "f32", value = 0.0 : f64} : () -> !ptx.reg<f32>
  %w = ptx.const {ty = "u64", value = 0 : i64} : () -> !ptx.reg<b64>
  %p = ptx.setp %z, %z {cmp = "eq", ty = "f32"} : (!ptx.reg<f32>, !ptx.reg<f32>) -> !ptx.reg<pred>
  %r0, %r1, %r2, %r3, %r4, %r5 = ptx.wgmma_mma_async acc(%z, %z, %z, %z, %z, %z) a(%w) b(%w) scale_d(%p) {n = 12 : i32, atype = "bf16"} : (!ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>) (!ptx.reg<b64>) !ptx.reg<b64> !ptx.reg<pred> -> (!ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>)
  ptx.ret
}
// CHECK: ptx.wgmma_mma_async: N must be a multiple of 8 from 8 to 256, got 12

// -----
ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {
  %z = ptx.const {ty = "f32", value = 0.0 : f64} : () -> !ptx.reg<f32>
  %w = ptx.const {ty = "u64", value = 0 : i64} : () -> !ptx.reg<b64>
  %p = ptx.setp %z, %z {cmp = "eq", ty = "f32"} : (!ptx.reg<f32>, !ptx.reg<f32>) -> !ptx.reg<pred>
  %r0, %r1 = ptx.wgmma_mma_async acc(%z, %z) a(%w) b(%w) scale_d(%p) {n = 8 : i32, atype = "bf16"} : (!ptx.reg<f32>, !ptx.reg<f32>) (!ptx.reg<b64>) !ptx.reg<b64> !ptx.reg<pred> -> (!ptx.reg<f32>, !ptx.reg<f32>)
  ptx.ret
}
// CHECK: ptx.wgmma_mma_async: m64n8k16 keeps 4 f32 accumulators per thread, got 2 operands and 2 results

// -----
ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {
  %a = ptx.const {ty = "f32", value = 1.0 : f64} : () -> !ptx.reg<f32>
  %s = ptx.add %a, %a {ty = "s32"} : (!ptx.reg<f32>, !ptx.reg<f32>) -> !ptx.reg<b32>
  ptx.ret
}
// CHECK: ptx.add: operand #0 of type !ptx.reg<f32> cannot carry .s32

// -----
ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {
  %a = ptx.const {ty = "u32", value = 1 : i64} : () -> !ptx.reg<b32>
  %s = ptx.add %a {ty = "s32"} : (!ptx.reg<b32>) -> !ptx.reg<b32>
  ptx.ret
}
// CHECK: ptx.add: takes 2 source operand(s), got 1

// -----
ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {
  %a = ptx.const {ty = "u32", value = 4294967296 : i64} : () -> !ptx.reg<b32>
  ptx.ret
}
// CHECK: ptx.const: 4294967296 does not fit in .u32

// -----
ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {
  %s = ptx.const {ty = "u32", value = 0 : i64} : () -> !ptx.reg<b32>
  %g = ptx.const {ty = "u64", value = 0 : i64} : () -> !ptx.reg<b64>
  ptx.cp_async %s, %g {cache = "cg", size = 8 : i32} : (!ptx.reg<b32>, !ptx.reg<b64>) -> ()
  ptx.ret
}
// CHECK: ptx.cp_async: cp.async.cg copies 16 bytes only

// -----
ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {
  %s = ptx.const {ty = "u32", value = 0 : i64} : () -> !ptx.reg<b32>
  %g = ptx.const {ty = "u64", value = 0 : i64} : () -> !ptx.reg<b64>
  ptx.cp_async %s, %g {cache = "cg", size = 16 : i32, dst_offset = 8 : i32} : (!ptx.reg<b32>, !ptx.reg<b64>) -> ()
  ptx.ret
}
// CHECK: ptx.cp_async: the offsets must keep the 16-byte alignment, got 8 and 0

// -----
ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {
  %s = ptx.const {ty = "u32", value = 0 : i64} : () -> !ptx.reg<b32>
  %g = ptx.const {ty = "u64", value = 0 : i64} : () -> !ptx.reg<b64>
  ptx.cp_async %s, %g, %s, %s {cache = "cg", size = 16 : i32} : (!ptx.reg<b32>, !ptx.reg<b64>, !ptx.reg<b32>, !ptx.reg<b32>) -> ()
  ptx.ret
}
// CHECK: ptx.cp_async: takes a shared address, a global address, an optional source size and an optional guard predicate

// -----
ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {
  %s = ptx.const {ty = "u32", value = 0 : i64} : () -> !ptx.reg<b32>
  %m0, %m1 = ptx.ldmatrix %s {num = 2 : i32, offset = 24 : i32} : (!ptx.reg<b32>) -> (!ptx.reg<b32>, !ptx.reg<b32>)
  ptx.ret
}
// CHECK: ptx.ldmatrix: the offset must keep the rows' 16-byte alignment, got 24

// -----
ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {
  %s = ptx.const {ty = "u32", value = 0 : i64} : () -> !ptx.reg<b32>
  %m0, %m1, %m2 = ptx.ldmatrix %s {num = 3 : i32} : (!ptx.reg<b32>) -> (!ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>)
  ptx.ret
}
// CHECK: ptx.ldmatrix: loads 1, 2 or 4 matrices (x1, x2, x4), got 3

// -----
ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {
  ptx.setmaxnreg {action = "inc", count = 250 : i32} : () -> ()
  ptx.ret
}
// CHECK: ptx.setmaxnreg: register count must be a multiple of 8 in 24..256, got 250

// -----
ptx.kernel attributes {sym_name = "k", params = ["x"], param_types = ["u64"]} {
  %x = ptx.ld_param {param = "y", ty = "u64"} : () -> !ptx.reg<b64>
  ptx.ret
}
// CHECK: ptx.ld_param: kernel @k has no parameter 'y'; it has x

// -----
ptx.kernel attributes {sym_name = "k", params = ["x"], param_types = ["ptr"]} {
  ptx.ret
}
// CHECK: ptx.kernel: parameter 'x' has unknown type 'ptr'

// -----
ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {
  %f = ptx.const {ty = "f32", value = 1.0 : f64} : () -> !ptx.reg<f32>
  %h = ptx.cvt %f {dty = "bf16", sty = "f32"} : (!ptx.reg<f32>) -> !ptx.reg<bf16>
  ptx.ret
}
// CHECK: ptx.cvt: cvt .bf16.f32 needs a rounding mode (e.g. mods = "rn")

// -----
ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {
  %g = ptx.const {ty = "u64", value = 0 : i64} : () -> !ptx.reg<b64>
  %v0, %v1, %v2 = ptx.ld [%g] {space = "global", ty = "f32"} : !ptx.reg<b64> -> (!ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>)
  ptx.ret
}
// CHECK: ptx.ld: moves 1, 2 or 4 values (v2, v4), got 3

// -----
ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {
  %g = ptx.const {ty = "u64", value = 0 : i64} : () -> !ptx.reg<b64>
  %v = ptx.ld [%g] {space = "global", ty = "f32", zero} : !ptx.reg<b64> -> (!ptx.reg<f32>)
  ptx.ret
}
// CHECK: ptx.ld: zero (the results where the guard fails) needs a guard

// -----
ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {
  %s = ptx.const {ty = "u32", value = 0 : i64} : () -> !ptx.reg<b32>
  %d = ptx.wgmma_desc %s {lbo = 24 : i32, sbo = 1024 : i32, swizzle = "128B"} : (!ptx.reg<b32>) -> !ptx.reg<b64>
  ptx.ret
}
// CHECK: ptx.wgmma_desc: LBO must be a multiple of 16 below 262144 bytes, got 24

// -----
ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {
  %s = ptx.const {ty = "u32", value = 0 : i64} : () -> !ptx.reg<b32>
  %d = ptx.wgmma_desc %s {lbo = 16 : i32, sbo = 1024 : i32, swizzle = "256B"} : (!ptx.reg<b32>) -> !ptx.reg<b64>
  ptx.ret
}
// CHECK: ptx.wgmma_desc: swizzle must be one of none, 128B, 64B, 32B, got '256B'

// -----
ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {
  ptx.wgmma_wait_group {n = 9 : i32} : () -> ()
  ptx.ret
}
// CHECK: ptx.wgmma_wait_group: n must be in 0..7, got 9

// -----
func.func @k(%a: !ptx.reg<b33>) {
  func.return
}
// CHECK: unknown PTX register class 'b33'

// -----
// Shared arrays and TMA boxes are typed attributes, checked as they are parsed.
ptx.kernel attributes {sym_name = "k", params = [], param_types = [], shared = [#ptx.shared<"smem", bytes = 4096, align = 96>]} {
  ptx.ret
}
// CHECK: #ptx.shared: 'smem' is aligned to 96; the alignment is a power of two

// -----
ptx.kernel attributes {sym_name = "k", params = [], param_types = [], shared = [#ptx.shared<"smem", bytes = 0, align = 128>]} {
  ptx.ret
}
// CHECK: #ptx.shared: 'smem' has 0 bytes; a shared array has at least 1

// -----
ptx.kernel attributes {sym_name = "k", params = [], param_types = [], shared = ["smem:4096:128"]} {
  ptx.ret
}
// CHECK: ptx.kernel: property 'shared': "smem:4096:128" should be of base attribute ptx.shared

// -----
ptx.kernel attributes {sym_name = "k", params = ["k_a"], param_types = ["tensormap"], napkin.tma = [#ptx.tma_box<"a", box = 128x64, swizzle = "96B">]} {
  ptx.ret
}
// CHECK: #ptx.tma_box: 'a' has swizzle "96B"; expected one of none, 32B, 64B, 128B

// -----
ptx.kernel attributes {sym_name = "k", params = ["k_a"], param_types = ["tensormap"], napkin.tma = [#ptx.tma_box<"a", box = 128x0, swizzle = "128B">]} {
  ptx.ret
}
// CHECK: #ptx.tma_box: the box of 'a' is 128x0; a box has 1 to 5 positive dimensions

// -----
ptx.kernel attributes {sym_name = "k", params = ["k_a"], param_types = ["tensormap"], napkin.tma = ["a:128x64:128B"]} {
  ptx.ret
}
// CHECK: ptx.kernel: property 'napkin.tma': "a:128x64:128B" should be of base attribute ptx.tma_box

// -----
// The launch facts the pipelines write are typed properties too.
ptx.kernel attributes {sym_name = "k", params = [], param_types = [], napkin.grid = [4 : i32, 0 : i32]} {
  ptx.ret
}
// CHECK: ptx.kernel: napkin.grid takes 1 to 3 positive sizes, got [4, 0]

// -----
ptx.kernel attributes {sym_name = "k", params = [], param_types = [], napkin.smem_bytes = "49152"} {
  ptx.ret
}
// CHECK: ptx.kernel: property 'napkin.smem_bytes': "49152" should be of base attribute integer

// -----
ptx.kernel attributes {sym_name = "k", params = ["k_out"], param_types = ["u64"], napkin.zeroed = ["k_in"]} {
  ptx.ret
}
// CHECK: ptx.kernel: napkin.zeroed names 'k_in', which is not a parameter

// -----
ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {
  %g = ptx.const {ty = "u64", value = 0 : i64} : () -> !ptx.reg<b64>
  %h = ptx.const {ty = "u32", value = 0 : i64} : () -> !ptx.reg<b32>
  ptx.red [%g], (%h) {space = "global", ty = "b32"} : !ptx.reg<b64>, (!ptx.reg<b32>)
  ptx.ret
}
// CHECK: ptx.red: adds .f32, .f64, .u32, .s32 or .u64, not .b32

// -----
ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {
  %g = ptx.const {ty = "u64", value = 0 : i64} : () -> !ptx.reg<b64>
  %a = ptx.const {ty = "u32", value = 1 : i64} : () -> !ptx.reg<b32>
  ptx.red [%g], (%a, %a) {space = "global", ty = "u32"} : !ptx.reg<b64>, (!ptx.reg<b32>, !ptx.reg<b32>)
  ptx.ret
}
// CHECK: ptx.red: adds several values at once as .f32 into global memory only, not .u32 into .global

// -----
ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {
  %g = ptx.const {ty = "u64", value = 0 : i64} : () -> !ptx.reg<b64>
  %f = ptx.const {ty = "f32", value = 1.0 : f64} : () -> !ptx.reg<f32>
  ptx.red [%g], (%f, %f, %f) {space = "global", ty = "f32"} : !ptx.reg<b64>, (!ptx.reg<f32>, !ptx.reg<f32>, !ptx.reg<f32>)
  ptx.ret
}
// CHECK: ptx.red: moves 1, 2 or 4 values (v2, v4), got 3

// -----
ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {
  %g = ptx.const {ty = "u64", value = 0 : i64} : () -> !ptx.reg<b64>
  %h = ptx.const {ty = "f32", value = 1.0 : f64} : () -> !ptx.reg<f32>
  %o = ptx.atom [%g], (%h) {space = "global", ty = "f32", sem = "acq_rel.gpu"} : !ptx.reg<b64>, (!ptx.reg<f32>) -> (!ptx.reg<f32>)
  ptx.ret
}
// CHECK: ptx.atom: counts in .u32, .s32 or .u64, not .f32

// -----
ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {
  %g = ptx.const {ty = "u64", value = 0 : i64} : () -> !ptx.reg<b64>
  %t = ptx.ld [%g] {space = "global", ty = "u32", sem = "acq_rel.gpu"} : !ptx.reg<b64> -> (!ptx.reg<b32>)
  ptx.ret
}
// CHECK: ptx.ld: unknown memory semantics 'acq_rel.gpu' for ptx.ld

// -----
ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {
  %g = ptx.const {ty = "u64", value = 0 : i64} : () -> !ptx.reg<b64>
  %t = ptx.ld [%g] {space = "global", ty = "u32", sem = "acquire.sys", cache = "cg"} : !ptx.reg<b64> -> (!ptx.reg<b32>)
  ptx.ret
}
// CHECK: ptx.ld: unknown memory semantics 'acquire.sys'
