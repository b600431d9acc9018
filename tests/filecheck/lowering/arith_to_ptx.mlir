// arith, scf and cf inside a kernel function lower to ptx; the printed PTX assembles.
// RUN: napkin-opt %s -p convert-arith-to-ptx | filecheck %s
// RUN: napkin-opt %s -p convert-arith-to-ptx -t ptx | filecheck %s --check-prefix=PTX
// RUN: napkin-opt %s -p convert-arith-to-ptx -t ptx -o %t.ptx
// RUN: %ptxas -arch=sm_80 %t.ptx -o %t.cubin

// out[tid] = sum_{k < n} (k * scale) if tid is even, else -1.0
func.func @sum_kernel(%out: i64, %n: i32, %scale: f32) attributes {ptx.kernel, ptx.maxntid = [128 : i32]} {
  %tid = ptx.sreg {reg = "tid.x"} : () -> !ptx.reg<b32>
  %t = builtin.unrealized_conversion_cast %tid : !ptx.reg<b32> to index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %nn = arith.index_cast %n : i32 to index
  %sum = scf.for %k = %c0 to %nn step %c1 iter_args(%acc = %zero) -> (f32) {
    %ki = arith.index_cast %k : index to i32
    %kf = arith.sitofp %ki : i32 to f32
    %term = arith.mulf %kf, %scale : f32
    %next = arith.addf %acc, %term : f32
    scf.yield %next : f32
  }
  %rem = arith.remui %t, %c2 : index
  %even = arith.cmpi eq, %rem, %c0 : index
  %neg = arith.constant -1.0 : f32
  %v = arith.select %even, %sum, %neg : f32
  %t64 = arith.index_cast %t : index to i64
  %c4 = arith.constant 4 : i64
  %off = arith.muli %t64, %c4 : i64
  %addr = arith.addi %out, %off : i64
  %a = builtin.unrealized_conversion_cast %addr : i64 to !ptx.reg<b64>
  %vr = builtin.unrealized_conversion_cast %v : f32 to !ptx.reg<f32>
  ptx.st [%a], (%vr) {space = "global", ty = "f32"} : !ptx.reg<b64>, (!ptx.reg<f32>)
  func.return
}

// CHECK:      ptx.kernel attributes {sym_name = "sum_kernel", params = ["sum_kernel_param_0", "sum_kernel_param_1", "sum_kernel_param_2"], param_types = ["u64", "u32", "f32"], maxntid = [128 : i32]}
// CHECK:      ptx.ld_param {param = "sum_kernel_param_0", ty = "u64"} : () -> !ptx.reg<b64>
// CHECK:      ptx.cond_bra
// CHECK:      ptx.cvt {{.*}} {dty = "f32", sty = "s32", mods = "rn"}
// CHECK:      ptx.mul {{.*}} {ty = "f32", mods = "rn"}
// CHECK:      ptx.add {{.*}} {ty = "f32", mods = "rn"}
// CHECK:      ptx.and {{.*}} {ty = "b32"}
// CHECK:      ptx.setp {{.*}} {cmp = "eq", ty = "s32"}
// CHECK:      ptx.selp {{.*}} {ty = "f32"}
// CHECK:      ptx.st
// CHECK:      ptx.ret
// CHECK-NOT:  arith.
// CHECK-NOT:  scf.

// PTX:        .visible .entry sum_kernel(
// PTX:        .maxntid 128
// PTX:        ld.param.f32 %f{{[0-9]+}}, [sum_kernel_param_2];
// PTX:        setp.lt.s32 %p{{[0-9]+}}
// PTX:        cvt.rn.f32.s32
// PTX:        and.b32
// PTX:        selp.f32
// PTX:        mul.lo.s64
// PTX:        st.global.f32

// Unsigned division and remainder by a constant become shifts, masks and a high multiply
// (ptxas would expand div.u32 into a floating-point reciprocal and corrections):
// 176 = 16 x 11 shifts by 4 and keeps the high word of a multiply by ceil(2**32 / 11) (the
// shifted dividend has 28 bits); 7 needs a 33-bit multiplier, kept as its low 32 bits with
// the top bit added back.
func.func @stage_kernel(%out: i64, %n: i32) attributes {ptx.kernel, ptx.maxntid = [32 : i32]} {
  %x = arith.index_cast %n : i32 to index
  %c176 = arith.constant 176 : index
  %c7 = arith.constant 7 : index
  %c2 = arith.constant 2 : index
  %q = arith.divui %x, %c176 : index
  %s = arith.remui %q, %c2 : index
  %p = arith.divui %q, %c2 : index
  %r = arith.remui %x, %c7 : index
  %a = arith.addi %s, %p : index
  %b = arith.addi %a, %r : index
  %b32 = arith.index_cast %b : index to i32
  %o = builtin.unrealized_conversion_cast %out : i64 to !ptx.reg<b64>
  %v = builtin.unrealized_conversion_cast %b32 : i32 to !ptx.reg<b32>
  ptx.st [%o], (%v) {space = "global", ty = "u32"} : !ptx.reg<b64>, (!ptx.reg<b32>)
  func.return
}

// CHECK-LABEL: sym_name = "stage_kernel"
// CHECK-NOT:   ptx.div
// CHECK-NOT:   ptx.rem
// CHECK:       ptx.const {ty = "u32", value = 4 : i64}
// CHECK:       ptx.shr {{.*}} {ty = "u32"}
// CHECK:       ptx.const {ty = "u32", value = 390451573 : i64}
// CHECK:       ptx.mul {{.*}} {ty = "u32", mods = "hi"}
// CHECK:       ptx.and {{.*}} {ty = "b32"}
// CHECK:       ptx.shr {{.*}} {ty = "u32"}
// CHECK:       ptx.const {ty = "u32", value = 613566757 : i64}
// CHECK:       ptx.mul {{.*}} {ty = "u32", mods = "hi"}
// CHECK:       ptx.sub
// CHECK:       ptx.shr
// CHECK:       ptx.add
// CHECK:       ptx.shr
// CHECK:       ptx.mul {{.*}} {ty = "u32", mods = "lo"}
// CHECK:       ptx.sub
// CHECK:       ptx.st

// PTX-LABEL:  .visible .entry stage_kernel(
// PTX-NOT:    div.u32
// PTX-NOT:    rem.u32
// PTX:        mul.hi.u32
// PTX:        mul.hi.u32
// PTX:        ret;
