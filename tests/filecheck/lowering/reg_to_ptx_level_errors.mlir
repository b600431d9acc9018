// reg-to-ptx refuses, with one line naming the kernel and the reason, hand-written
// register-level input it has no lowering for; napkin-opt exits non-zero without a
// traceback.
// RUN: napkin-opt %s --split-input-file --verify-diagnostics -p reg-to-ptx | filecheck %s
// RUN: not napkin-opt %s --split-input-file -p reg-to-ptx 2>&1 | filecheck %s --check-prefix=EXIT
// RUN: echo 'func.func @f() { func.return }' | not napkin-opt -p reg-to-ptx 2>&1 | filecheck %s --check-prefix=NONE

// EXIT: napkin-opt: error: reg-to-ptx: @no_warps has no reg.warps; run smem-to-reg first
// EXIT-NOT: Traceback
// NONE: napkin-opt: error: reg-to-ptx: the module has no hbm.kernel at the register level
// NONE-NOT: Traceback

// A kernel smem-to-reg has not split over warps (no reg.warps).
// CHECK: reg-to-ptx: @no_warps has no reg.warps; run smem-to-reg first
builtin.module {
  hbm.kernel attributes {sym_name = "no_warps", grid = #hbm.labels<m=16, n=16>, num_outputs = 1 : i32} {
  ^bb0(%out: !hbm.global<m=32, n=32 : f32>, %m0: index, %n0: index):
    %0 = reg.zeros : !reg.frag<c, m=16, n=16 : f32>
    reg.store %0, %out[%m0, %n0] : !reg.frag<c, m=16, n=16 : f32>, !hbm.global<m=32, n=32 : f32>
    hbm.return
  }
}

// -----

// An op of the HBM level left in a register-level kernel.
// CHECK: reg-to-ptx: @unlowered: hbm.fill has no lowering to PTX; lower it first (smem-to-reg)
builtin.module {
  hbm.kernel attributes {sym_name = "unlowered", grid = #hbm.labels<m=16, n=16>, num_outputs = 1 : i32, reg.warps = #hbm.labels<m=1, n=1>} {
  ^bb0(%out: !hbm.global<m=32, n=32 : f32>, %m0: index, %n0: index):
    %0 = hbm.fill {value = 0.000000e+00 : f32} : !ncd.tensor<m=16, n=16 : f32>
    hbm.store %0, %out[%m0, %n0] : !ncd.tensor<m=16, n=16 : f32>, !hbm.global<m=32, n=32 : f32>
    hbm.return
  }
}

// -----

// An output whose rows (33) cannot take the lanes' column pairs.
// CHECK: reg-to-ptx: @odd_rows: the output's rows must have an even length, got 33
builtin.module {
  hbm.kernel attributes {sym_name = "odd_rows", grid = #hbm.labels<m=16, n=16>, num_outputs = 1 : i32, reg.warps = #hbm.labels<m=1, n=1>} {
  ^bb0(%out: !hbm.global<m=32, n=33 : f32>, %m0: index, %n0: index):
    %0 = reg.zeros : !reg.frag<c, m=16, n=16 : f32>
    reg.store %0, %out[%m0, %n0] : !reg.frag<c, m=16, n=16 : f32>, !hbm.global<m=32, n=33 : f32>
    hbm.return
  }
}

// -----

// A persistent launch without a producer warpgroup to loop over tiles.
// CHECK: reg-to-ptx: @persistent_alone: a persistent launch loops over tiles in a warp-specialised kernel (smem.producer); this one has none
builtin.module {
  hbm.kernel attributes {sym_name = "persistent_alone", grid = #hbm.labels<m=16, n=16>, num_outputs = 1 : i32, hbm.blocks_per_sm = 1 : i32, hbm.persistent, reg.warps = #hbm.labels<m=1, n=1>} {
  ^bb0(%out: !hbm.global<m=32, n=32 : f32>, %m0: index, %n0: index):
    %0 = reg.zeros : !reg.frag<c, m=16, n=16 : f32>
    reg.store %0, %out[%m0, %n0] : !reg.frag<c, m=16, n=16 : f32>, !hbm.global<m=32, n=32 : f32>
    hbm.return
  }
}
