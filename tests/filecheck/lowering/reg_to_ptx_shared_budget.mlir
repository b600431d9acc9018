// reg-to-ptx refuses a kernel whose shared memory (its buffers, each 1024-aligned, and its
// mbarriers) is over what a block may take on the GPUs napkin targets (227 KB), by name
// and with a non-zero exit: hbm-to-smem, given a larger budget, let six stages of
// 128 x 64 and 64 x 256 tiles through. Four stages fit (the launch's figure below), and
// the mbarriers come after the buffers.
// RUN: not napkin-opt %s -p 'ncd-relabel{grid="m:128,n:256" stream="k:64"},ncd-to-hbm,hbm-to-smem{copy=tma stages=6 smem_bytes=300000},smem-to-reg{mma=wgmma warps="m:2"},reg-to-ptx' -t ptx 2>&1 | filecheck %s
// RUN: napkin-opt %s -p 'ncd-relabel{grid="m:128,n:256" stream="k:64"},ncd-to-hbm,hbm-to-smem{copy=tma stages=4},smem-to-reg{mma=wgmma warps="m:2"},reg-to-ptx' | filecheck %s --check-prefix=BYTES

// CHECK: napkin-opt: error: reg-to-ptx: @matmul: needs 296032 bytes of shared memory (its buffers, aligned, and its mbarriers), over the 232448 a block may take; use fewer stages or smaller tiles
// CHECK-NOT: Traceback

// 4 x (16 KB of A + 32 KB of B), 1024 for the start's alignment, then 2 rings of 4 mbarriers
// BYTES: napkin.smem_bytes = 197696 : i32

func.func @matmul(%a: !ncd.tensor<m=512, k=256 : bf16>, %b: !ncd.tensor<k=256, n=384 : bf16>) -> !ncd.tensor<m=512, n=384 : bf16> {
  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=512, k=256 : bf16>, !ncd.tensor<k=256, n=384 : bf16> -> !ncd.tensor<m=512, n=384 : bf16>
  func.return %c : !ncd.tensor<m=512, n=384 : bf16>
}
