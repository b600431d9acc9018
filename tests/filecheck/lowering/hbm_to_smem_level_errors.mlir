// hbm-to-smem refuses, with one line and the reason, what it cannot stage; napkin-opt
// exits non-zero without a traceback.
// With copy=tma: a stream loop that does not start at 0, 64-byte tile rows (the TMA's
// 128-byte swizzle needs whole panels), global rows of 132 bf16 (not a multiple of 16 bytes).
// RUN: napkin-opt %s --split-input-file --verify-diagnostics -p 'hbm-to-smem{stages=2 copy=tma}' | filecheck %s
// Options it does not take, or that do not go together:
// RUN: not napkin-opt %s --split-input-file -p 'hbm-to-smem{stages=1}' 2>&1 | filecheck %s --check-prefix=ONE
// RUN: not napkin-opt %s --split-input-file -p 'hbm-to-smem{stages=9}' 2>&1 | filecheck %s --check-prefix=NINE
// RUN: not napkin-opt %s --split-input-file -p 'hbm-to-smem{stages=17 copy=tma}' 2>&1 | filecheck %s --check-prefix=SEVENTEEN
// RUN: not napkin-opt %s --split-input-file -p 'hbm-to-smem{copy=foo}' 2>&1 | filecheck %s --check-prefix=COPY
// RUN: not napkin-opt %s --split-input-file -p 'hbm-to-smem{layout=foo}' 2>&1 | filecheck %s --check-prefix=LAYOUT
// RUN: not napkin-opt %s --split-input-file -p 'hbm-to-smem{stages=2 store=tma}' 2>&1 | filecheck %s --check-prefix=STORE
// RUN: not napkin-opt %s --split-input-file -p 'hbm-to-smem{stages=2 copy=tma layout=pad8}' 2>&1 | filecheck %s --check-prefix=PAD
// and (the first kernel's loop made to start at 0) a budget its stages do not fit:
// RUN: sed -e 's/step %k_step/step %c64/; s/"odd_step"/"mm"/' %s | not napkin-opt --split-input-file -p 'hbm-to-smem{stages=2 copy=tma smem_bytes=20000}' 2>&1 | filecheck %s --check-prefix=BUDGET

// ONE: napkin-opt: error: hbm-to-smem: stages must be at least 2 (one buffer cannot overlap copy and compute), got 1
// ONE-NOT: Traceback
// NINE: napkin-opt: error: hbm-to-smem: at most 8 stages (cp.async waits count up to 7 pending groups), got 9
// SEVENTEEN: napkin-opt: error: hbm-to-smem: at most 16 stages (the mbarrier rings hold at most 16), got 17
// COPY: napkin-opt: error: hbm-to-smem: copy must be cp.async or tma, got 'foo'
// LAYOUT: napkin-opt: error: hbm-to-smem: unknown layout 'foo'; expected one of row, pad8, swizzle
// STORE: napkin-opt: error: hbm-to-smem: store=tma writes tiles out with the TMA of sm_90a; it needs copy=tma
// PAD: napkin-opt: error: hbm-to-smem: TMA copies fill 128-byte swizzled buffers; layout=pad8 cannot be used with copy=tma
// BUDGET: napkin-opt: error: hbm-to-smem: @mm needs 32768 bytes of shared memory (!smem.buffer<m=64, k=64 : bf16, stages=2, layout=swizzle>: 16384, !smem.buffer<k=64, n=64 : bf16, stages=2, layout=swizzle>: 16384), over the budget of 20000; use fewer stages or smaller tiles
// BUDGET-NOT: Traceback

// CHECK: hbm-to-smem: the stream loop's step must be a constant
builtin.module {
  hbm.kernel attributes {sym_name = "odd_step", grid = #hbm.labels<m=64, n=64>, num_outputs = 1 : i32} {
  ^bb0(%a: !hbm.global<m=128, k=128 : bf16>, %b: !hbm.global<k=128, n=64 : bf16>, %out: !hbm.global<m=128, n=64 : bf16>, %m0: index, %n0: index):
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %zero = hbm.fill {value = 0.000000e+00 : f32} : !ncd.tensor<m=64, n=64 : f32>
    %k_step = arith.addi %c64, %c0 : index
    %c = scf.for %k0 = %c0 to %c128 step %k_step iter_args(%acc = %zero) -> (!ncd.tensor<m=64, n=64 : f32>) {
      %a_tile = hbm.load %a[%m0, %k0] : !hbm.global<m=128, k=128 : bf16> -> !ncd.tensor<m=64, k=64 : bf16>
      %b_tile = hbm.load %b[%k0, %n0] : !hbm.global<k=128, n=64 : bf16> -> !ncd.tensor<k=64, n=64 : bf16>
      %p = ncd.contract %a_tile, %b_tile over [k] : !ncd.tensor<m=64, k=64 : bf16>, !ncd.tensor<k=64, n=64 : bf16> -> !ncd.tensor<m=64, n=64 : f32>
      %acc_new = ncd.map add %acc, %p : !ncd.tensor<m=64, n=64 : f32>, !ncd.tensor<m=64, n=64 : f32> -> !ncd.tensor<m=64, n=64 : f32>
      scf.yield %acc_new : !ncd.tensor<m=64, n=64 : f32>
    } {hbm.stream = #hbm.stream<k>}
    %c_bf16 = ncd.map cast %c : !ncd.tensor<m=64, n=64 : f32> -> !ncd.tensor<m=64, n=64 : bf16>
    hbm.store %c_bf16, %out[%m0, %n0] : !ncd.tensor<m=64, n=64 : bf16>, !hbm.global<m=128, n=64 : bf16>
    hbm.return
  }
}

// -----

// CHECK: hbm-to-smem: a TMA tile with 128-byte swizzle needs rows of whole 128-byte panels; !ncd.tensor<m=64, k=32 : bf16> has 64-byte rows along 'k'
builtin.module {
  hbm.kernel attributes {sym_name = "narrow_rows", grid = #hbm.labels<m=64, n=64>, num_outputs = 1 : i32} {
  ^bb0(%a: !hbm.global<m=128, k=128 : bf16>, %b: !hbm.global<k=128, n=64 : bf16>, %out: !hbm.global<m=128, n=64 : bf16>, %m0: index, %n0: index):
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %c32 = arith.constant 32 : index
    %c128 = arith.constant 128 : index
    %zero = hbm.fill {value = 0.000000e+00 : f32} : !ncd.tensor<m=64, n=64 : f32>
    %c = scf.for %k0 = %c0 to %c128 step %c32 iter_args(%acc = %zero) -> (!ncd.tensor<m=64, n=64 : f32>) {
      %a_tile = hbm.load %a[%m0, %k0] : !hbm.global<m=128, k=128 : bf16> -> !ncd.tensor<m=64, k=32 : bf16>
      %b_tile = hbm.load %b[%k0, %n0] : !hbm.global<k=128, n=64 : bf16> -> !ncd.tensor<k=32, n=64 : bf16>
      %p = ncd.contract %a_tile, %b_tile over [k] : !ncd.tensor<m=64, k=32 : bf16>, !ncd.tensor<k=32, n=64 : bf16> -> !ncd.tensor<m=64, n=64 : f32>
      %acc_new = ncd.map add %acc, %p : !ncd.tensor<m=64, n=64 : f32>, !ncd.tensor<m=64, n=64 : f32> -> !ncd.tensor<m=64, n=64 : f32>
      scf.yield %acc_new : !ncd.tensor<m=64, n=64 : f32>
    } {hbm.stream = #hbm.stream<k>}
    %c_bf16 = ncd.map cast %c : !ncd.tensor<m=64, n=64 : f32> -> !ncd.tensor<m=64, n=64 : bf16>
    hbm.store %c_bf16, %out[%m0, %n0] : !ncd.tensor<m=64, n=64 : bf16>, !hbm.global<m=128, n=64 : bf16>
    hbm.return
  }
}

// -----

// CHECK: hbm-to-smem: copy=tma needs each global's rows to be a multiple of 16 bytes (the TMA's stride); 'k' of a has 132 elements
builtin.module {
  hbm.kernel attributes {sym_name = "odd_stride", grid = #hbm.labels<m=64, n=64>, num_outputs = 1 : i32} {
  ^bb0(%a: !hbm.global<m=128, k=132 : bf16>, %b: !hbm.global<k=132, n=64 : bf16>, %out: !hbm.global<m=128, n=64 : bf16>, %m0: index, %n0: index):
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 132 : index
    %zero = hbm.fill {value = 0.000000e+00 : f32} : !ncd.tensor<m=64, n=64 : f32>
    %c = scf.for %k0 = %c0 to %c128 step %c64 iter_args(%acc = %zero) -> (!ncd.tensor<m=64, n=64 : f32>) {
      %a_tile = hbm.load %a[%m0, %k0] : !hbm.global<m=128, k=132 : bf16> -> !ncd.tensor<m=64, k=64 : bf16>
      %b_tile = hbm.load %b[%k0, %n0] : !hbm.global<k=132, n=64 : bf16> -> !ncd.tensor<k=64, n=64 : bf16>
      %p = ncd.contract %a_tile, %b_tile over [k] : !ncd.tensor<m=64, k=64 : bf16>, !ncd.tensor<k=64, n=64 : bf16> -> !ncd.tensor<m=64, n=64 : f32>
      %acc_new = ncd.map add %acc, %p : !ncd.tensor<m=64, n=64 : f32>, !ncd.tensor<m=64, n=64 : f32> -> !ncd.tensor<m=64, n=64 : f32>
      scf.yield %acc_new : !ncd.tensor<m=64, n=64 : f32>
    } {hbm.stream = #hbm.stream<k>}
    %c_bf16 = ncd.map cast %c : !ncd.tensor<m=64, n=64 : f32> -> !ncd.tensor<m=64, n=64 : bf16>
    hbm.store %c_bf16, %out[%m0, %n0] : !ncd.tensor<m=64, n=64 : bf16>, !hbm.global<m=128, n=64 : bf16>
    hbm.return
  }
}
