// Blocks become labels; branch arguments become parallel copies through temporaries,
// so swapping the carried values in a loop is safe. ptxas assembles it for sm_80.
// RUN: napkin-opt %s -t ptx | filecheck %s
// RUN: napkin-opt %s -t ptx -o %t.ptx
// RUN: %ptxas -arch=sm_80 %t.ptx -o %t.cubin

ptx.kernel attributes {sym_name = "swap_loop", params = ["out", "n"], param_types = ["u64", "u32"]} {
  %out = ptx.ld_param {param = "out", ty = "u64"} : () -> !ptx.reg<b64>
  %n = ptx.ld_param {param = "n", ty = "u32"} : () -> !ptx.reg<b32>
  %zero = ptx.const {ty = "u32", value = 0 : i64} : () -> !ptx.reg<b32>
  %one = ptx.const {ty = "u32", value = 1 : i64} : () -> !ptx.reg<b32>
  %fa = ptx.const {ty = "f32", value = 1.5 : f64} : () -> !ptx.reg<f32>
  %fb = ptx.const {ty = "f32", value = -2.0 : f64} : () -> !ptx.reg<f32>
  ptx.bra ^loop(%zero, %fa, %fb : !ptx.reg<b32>, !ptx.reg<f32>, !ptx.reg<f32>)
^loop(%i: !ptx.reg<b32>, %a: !ptx.reg<f32>, %b: !ptx.reg<f32>):
  %i1 = ptx.add %i, %one {ty = "u32"} : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<b32>
  %more = ptx.setp %i1, %n {cmp = "lt", ty = "u32"} : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<pred>
  ptx.cond_bra %more, ^loop(%i1, %b, %a : !ptx.reg<b32>, !ptx.reg<f32>, !ptx.reg<f32>), ^exit(%a : !ptx.reg<f32>) : !ptx.reg<pred>
^exit(%r: !ptx.reg<f32>):
  ptx.st [%out], (%r) {space = "global", ty = "f32"} : !ptx.reg<b64>, (!ptx.reg<f32>)
  ptx.ret
}

// CHECK:      .target sm_80
// CHECK:      mov.f32 %f1, 0f3FC00000;
// CHECK-NEXT: mov.f32 %f2, 0fC0000000;
// Entering the loop: %i, %a, %b take 0, 1.5, -2.0 (%r4, %f3, %f4) through temporaries.
// CHECK-NEXT: mov.b32 [[T0:%r[0-9]+]], %r2;
// CHECK-NEXT: mov.f32 [[T1:%f[0-9]+]], %f1;
// CHECK-NEXT: mov.f32 [[T2:%f[0-9]+]], %f2;
// CHECK-NEXT: mov.b32 %r4, [[T0]];
// CHECK-NEXT: mov.f32 %f3, [[T1]];
// CHECK-NEXT: mov.f32 %f4, [[T2]];
// CHECK-NEXT: bra.uni $L__BB0_1;
// CHECK-NEXT: $L__BB0_1:
// CHECK-NEXT: add.u32 %r5, %r4, %r3;
// CHECK-NEXT: setp.lt.u32 %p1, %r5, %r1;
// The swap: both sources are read into temporaries before either register is written.
// CHECK-NEXT: @%p1 mov.b32 [[I:%r[0-9]+]], %r5;
// CHECK-NEXT: @%p1 mov.f32 [[TA:%f[0-9]+]], %f4;
// CHECK-NEXT: @%p1 mov.f32 [[TB:%f[0-9]+]], %f3;
// CHECK-NEXT: @%p1 mov.b32 %r4, [[I]];
// CHECK-NEXT: @%p1 mov.f32 %f3, [[TA]];
// CHECK-NEXT: @%p1 mov.f32 %f4, [[TB]];
// CHECK-NEXT: @!%p1 mov.f32 [[TR:%f[0-9]+]], %f3;
// CHECK-NEXT: @!%p1 mov.f32 %f5, [[TR]];
// CHECK-NEXT: @%p1 bra $L__BB0_1;
// CHECK-NEXT: bra.uni $L__BB0_2;
// CHECK-NEXT: $L__BB0_2:
// CHECK-NEXT: st.global.f32 [%rd1], %f5;
