// smem-to-reg refuses, with one line naming the kernel and the reason, what it cannot
// compute in registers; napkin-opt exits non-zero without a traceback.
// With mma=wgmma: stages filled by cp.async (not TMA), an accumulator that starts at 1.0,
// a 32-row tile (wgmma takes 64-row warpgroups), a kernel still at the HBM level.
// RUN: napkin-opt %s --split-input-file --verify-diagnostics -p 'smem-to-reg{mma=wgmma}' | filecheck %s
// Options the pass does not take, and warps that do not split the tile into m16n8 parts:
// RUN: not napkin-opt %s --split-input-file -p 'smem-to-reg{mma=foo}' 2>&1 | filecheck %s --check-prefix=MMA
// RUN: not napkin-opt %s --split-input-file -p 'smem-to-reg{a_registers=true}' 2>&1 | filecheck %s --check-prefix=AREG
// RUN: not napkin-opt %s --split-input-file -p 'smem-to-reg{warps="m:2,n:1"}' 2>&1 | filecheck %s --check-prefix=WARPS

// MMA: napkin-opt: error: smem-to-reg: mma must be mma.sync or wgmma, got 'foo'
// MMA-NOT: Traceback
// AREG: napkin-opt: error: smem-to-reg: a_registers=true chooses where wgmma reads A; mma.sync always reads its operands from registers
// AREG-NOT: Traceback
// WARPS: napkin-opt: error: smem-to-reg: @cp_async: a 16 x 16 tile over 2 x 1 warps leaves each warp 8 x 16; each warp's part must be a multiple of 16 x 8 (mma.sync m16n8k16)
// WARPS-NOT: Traceback

// CHECK: smem-to-reg: @cp_async: mma=wgmma reads TMA-filled swizzled stages; run hbm-to-smem{copy=tma} first
builtin.module {
  hbm.kernel attributes {sym_name = "cp_async", grid = #hbm.labels<m=16, n=16>, num_outputs = 1 : i32} {
  ^bb0(%a: !hbm.global<m=32, k=32 : bf16>, %b: !hbm.global<k=32, n=32 : bf16>, %out: !hbm.global<m=32, n=32 : bf16>, %m0: index, %n0: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %zero = hbm.fill {value = 0.000000e+00 : f32} : !ncd.tensor<m=16, n=16 : f32>
    %sa = smem.alloc : !smem.buffer<m=16, k=16 : bf16, stages=2, layout=row>
    %sb = smem.alloc : !smem.buffer<k=16, n=16 : bf16, stages=2, layout=row>
    smem.copy %a[%m0, %c0] -> %sa[%c0] : !hbm.global<m=32, k=32 : bf16>, !smem.buffer<m=16, k=16 : bf16, stages=2, layout=row>
    smem.copy %b[%c0, %n0] -> %sb[%c0] : !hbm.global<k=32, n=32 : bf16>, !smem.buffer<k=16, n=16 : bf16, stages=2, layout=row>
    smem.commit
    %c = scf.for %k0 = %c0 to %c32 step %c16 iter_args(%acc = %zero) -> (!ncd.tensor<m=16, n=16 : f32>) {
      %t = arith.divui %k0, %c16 : index
      %s = arith.remui %t, %c2 : index
      smem.wait {pending = 0 : i32}
      smem.barrier
      %a_tile = smem.read %sa[%s] : !smem.buffer<m=16, k=16 : bf16, stages=2, layout=row> -> !ncd.tensor<m=16, k=16 : bf16>
      %b_tile = smem.read %sb[%s] : !smem.buffer<k=16, n=16 : bf16, stages=2, layout=row> -> !ncd.tensor<k=16, n=16 : bf16>
      %next = arith.addi %k0, %c16 : index
      %t1 = arith.addi %t, %c1 : index
      %s1 = arith.remui %t1, %c2 : index
      smem.copy %a[%m0, %next] -> %sa[%s1] : !hbm.global<m=32, k=32 : bf16>, !smem.buffer<m=16, k=16 : bf16, stages=2, layout=row>
      smem.copy %b[%next, %n0] -> %sb[%s1] : !hbm.global<k=32, n=32 : bf16>, !smem.buffer<k=16, n=16 : bf16, stages=2, layout=row>
      smem.commit
      %p = ncd.contract %a_tile, %b_tile over [k] : !ncd.tensor<m=16, k=16 : bf16>, !ncd.tensor<k=16, n=16 : bf16> -> !ncd.tensor<m=16, n=16 : f32>
      %acc_new = ncd.map add %acc, %p : !ncd.tensor<m=16, n=16 : f32>, !ncd.tensor<m=16, n=16 : f32> -> !ncd.tensor<m=16, n=16 : f32>
      scf.yield %acc_new : !ncd.tensor<m=16, n=16 : f32>
    } {hbm.stream = #hbm.stream<k>, smem.pipeline = #smem.pipeline<stages=2, copy=cp_async>}
    smem.wait {pending = 0 : i32}
    %c_bf16 = ncd.map cast %c : !ncd.tensor<m=16, n=16 : f32> -> !ncd.tensor<m=16, n=16 : bf16>
    hbm.store %c_bf16, %out[%m0, %n0] : !ncd.tensor<m=16, n=16 : bf16>, !hbm.global<m=32, n=32 : bf16>
    hbm.return
  }
}

// -----

// CHECK: smem-to-reg: @acc_not_zero: the accumulator must start at zero (hbm.fill 0.0)
builtin.module {
  hbm.kernel attributes {sym_name = "acc_not_zero", grid = #hbm.labels<m=64, n=64>, num_outputs = 1 : i32} {
  ^bb0(%a: !hbm.global<m=128, k=128 : bf16>, %b: !hbm.global<k=128, n=64 : bf16>, %out: !hbm.global<m=128, n=64 : bf16>, %m0: index, %n0: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %zero = hbm.fill {value = 1.000000e+00 : f32} : !ncd.tensor<m=64, n=64 : f32>
    %sa = smem.alloc : !smem.buffer<m=64, k=64 : bf16, stages=2, layout=swizzle>
    %sb = smem.alloc : !smem.buffer<k=64, n=64 : bf16, stages=2, layout=swizzle>
    %full = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
    %empty = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
    %pos = smem.ring_position : index
    smem.producer attributes {warps = 4 : i32} {
      scf.for %k = %c0 to %c128 step %c64 {
        %t = arith.divui %k, %c64 : index
        %u = arith.addi %t, %pos : index
        %s = arith.remui %u, %c2 : index
        %lap = arith.divui %u, %c2 : index
        %ph = arith.remui %lap, %c2 : index
        %free = arith.subi %c1, %ph : index
        smem.mbarrier_wait %empty[%s] parity %free : !smem.mbarrier<stages=2, arrivals=1>
        smem.arrive_expect %full[%s] {bytes = 16384 : i32} : !smem.mbarrier<stages=2, arrivals=1>
        smem.tma_copy %a[%m0, %k] -> %sa[%s], %full[%s] : !hbm.global<m=128, k=128 : bf16>, !smem.buffer<m=64, k=64 : bf16, stages=2, layout=swizzle>, !smem.mbarrier<stages=2, arrivals=1>
        smem.tma_copy %b[%k, %n0] -> %sb[%s], %full[%s] : !hbm.global<k=128, n=64 : bf16>, !smem.buffer<k=64, n=64 : bf16, stages=2, layout=swizzle>, !smem.mbarrier<stages=2, arrivals=1>
      } {hbm.stream = #hbm.stream<k>}
    }
    %c = scf.for %k0 = %c0 to %c128 step %c64 iter_args(%acc = %zero) -> (!ncd.tensor<m=64, n=64 : f32>) {
      %t = arith.divui %k0, %c64 : index
      %u = arith.addi %t, %pos : index
      %s = arith.remui %u, %c2 : index
      %lap = arith.divui %u, %c2 : index
      %ph = arith.remui %lap, %c2 : index
      smem.mbarrier_wait %full[%s] parity %ph : !smem.mbarrier<stages=2, arrivals=1>
      %a_tile = smem.read %sa[%s] : !smem.buffer<m=64, k=64 : bf16, stages=2, layout=swizzle> -> !ncd.tensor<m=64, k=64 : bf16>
      %b_tile = smem.read %sb[%s] : !smem.buffer<k=64, n=64 : bf16, stages=2, layout=swizzle> -> !ncd.tensor<k=64, n=64 : bf16>
      %p = ncd.contract %a_tile, %b_tile over [k] : !ncd.tensor<m=64, k=64 : bf16>, !ncd.tensor<k=64, n=64 : bf16> -> !ncd.tensor<m=64, n=64 : f32>
      %acc_new = ncd.map add %acc, %p : !ncd.tensor<m=64, n=64 : f32>, !ncd.tensor<m=64, n=64 : f32> -> !ncd.tensor<m=64, n=64 : f32>
      smem.arrive %empty[%s] : !smem.mbarrier<stages=2, arrivals=1>
      scf.yield %acc_new : !ncd.tensor<m=64, n=64 : f32>
    } {hbm.stream = #hbm.stream<k>, smem.pipeline = #smem.pipeline<stages=2, copy=tma>}
    %c_bf16 = ncd.map cast %c : !ncd.tensor<m=64, n=64 : f32> -> !ncd.tensor<m=64, n=64 : bf16>
    hbm.store %c_bf16, %out[%m0, %n0] : !ncd.tensor<m=64, n=64 : bf16>, !hbm.global<m=128, n=64 : bf16>
    hbm.return
  }
}

// -----

// CHECK: smem-to-reg: @rows32: wgmma splits the tile's 32 rows over warpgroups of 64; the rows must be 64, 128, 192 or 256
builtin.module {
  hbm.kernel attributes {sym_name = "rows32", grid = #hbm.labels<m=32, n=64>, num_outputs = 1 : i32} {
  ^bb0(%a: !hbm.global<m=128, k=128 : bf16>, %b: !hbm.global<k=128, n=64 : bf16>, %out: !hbm.global<m=128, n=64 : bf16>, %m0: index, %n0: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %zero = hbm.fill {value = 0.000000e+00 : f32} : !ncd.tensor<m=32, n=64 : f32>
    %sa = smem.alloc : !smem.buffer<m=32, k=64 : bf16, stages=2, layout=swizzle>
    %sb = smem.alloc : !smem.buffer<k=64, n=64 : bf16, stages=2, layout=swizzle>
    %full = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
    %empty = smem.mbarrier_alloc : !smem.mbarrier<stages=2, arrivals=1>
    %pos = smem.ring_position : index
    smem.producer attributes {warps = 4 : i32} {
      scf.for %k = %c0 to %c128 step %c64 {
        %t = arith.divui %k, %c64 : index
        %u = arith.addi %t, %pos : index
        %s = arith.remui %u, %c2 : index
        %lap = arith.divui %u, %c2 : index
        %ph = arith.remui %lap, %c2 : index
        %free = arith.subi %c1, %ph : index
        smem.mbarrier_wait %empty[%s] parity %free : !smem.mbarrier<stages=2, arrivals=1>
        smem.arrive_expect %full[%s] {bytes = 12288 : i32} : !smem.mbarrier<stages=2, arrivals=1>
        smem.tma_copy %a[%m0, %k] -> %sa[%s], %full[%s] : !hbm.global<m=128, k=128 : bf16>, !smem.buffer<m=32, k=64 : bf16, stages=2, layout=swizzle>, !smem.mbarrier<stages=2, arrivals=1>
        smem.tma_copy %b[%k, %n0] -> %sb[%s], %full[%s] : !hbm.global<k=128, n=64 : bf16>, !smem.buffer<k=64, n=64 : bf16, stages=2, layout=swizzle>, !smem.mbarrier<stages=2, arrivals=1>
      } {hbm.stream = #hbm.stream<k>}
    }
    %c = scf.for %k0 = %c0 to %c128 step %c64 iter_args(%acc = %zero) -> (!ncd.tensor<m=32, n=64 : f32>) {
      %t = arith.divui %k0, %c64 : index
      %u = arith.addi %t, %pos : index
      %s = arith.remui %u, %c2 : index
      %lap = arith.divui %u, %c2 : index
      %ph = arith.remui %lap, %c2 : index
      smem.mbarrier_wait %full[%s] parity %ph : !smem.mbarrier<stages=2, arrivals=1>
      %a_tile = smem.read %sa[%s] : !smem.buffer<m=32, k=64 : bf16, stages=2, layout=swizzle> -> !ncd.tensor<m=32, k=64 : bf16>
      %b_tile = smem.read %sb[%s] : !smem.buffer<k=64, n=64 : bf16, stages=2, layout=swizzle> -> !ncd.tensor<k=64, n=64 : bf16>
      %p = ncd.contract %a_tile, %b_tile over [k] : !ncd.tensor<m=32, k=64 : bf16>, !ncd.tensor<k=64, n=64 : bf16> -> !ncd.tensor<m=32, n=64 : f32>
      %acc_new = ncd.map add %acc, %p : !ncd.tensor<m=32, n=64 : f32>, !ncd.tensor<m=32, n=64 : f32> -> !ncd.tensor<m=32, n=64 : f32>
      smem.arrive %empty[%s] : !smem.mbarrier<stages=2, arrivals=1>
      scf.yield %acc_new : !ncd.tensor<m=32, n=64 : f32>
    } {hbm.stream = #hbm.stream<k>, smem.pipeline = #smem.pipeline<stages=2, copy=tma>}
    %c_bf16 = ncd.map cast %c : !ncd.tensor<m=32, n=64 : f32> -> !ncd.tensor<m=32, n=64 : bf16>
    hbm.store %c_bf16, %out[%m0, %n0] : !ncd.tensor<m=32, n=64 : bf16>, !hbm.global<m=128, n=64 : bf16>
    hbm.return
  }
}

// -----

// CHECK: smem-to-reg: @hbm_level: expects a pipelined stream loop (from hbm-to-smem), found none
builtin.module {
  hbm.kernel attributes {sym_name = "hbm_level", grid = #hbm.labels<m=64, n=64>, num_outputs = 1 : i32} {
  ^bb0(%a: !hbm.global<m=128, k=128 : bf16>, %b: !hbm.global<k=128, n=64 : bf16>, %out: !hbm.global<m=128, n=64 : bf16>, %m0: index, %n0: index):
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %zero = hbm.fill {value = 0.000000e+00 : f32} : !ncd.tensor<m=64, n=64 : f32>
    %c = scf.for %k0 = %c0 to %c128 step %c64 iter_args(%acc = %zero) -> (!ncd.tensor<m=64, n=64 : f32>) {
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
