// lowering/shared_layout: the napkin model counts a block's shared memory as reg-to-ptx
// lays it out, so the two figures agree. Panel buffers the TMA and wgmma reach sit
// 1024-aligned, the mbarrier rings come after the buffers, and 1024 more bytes round up
// the array's start. Padded cp.async buffers sit 128-aligned, with no rings and no
// rounding.
// RUN: napkin-opt %s -p 'ncd-relabel{grid="m:128,n:256" stream="k:64"},ncd-to-hbm,hbm-to-smem{copy=tma stages=3},smem-to-reg{mma=wgmma warps="m:2"}' | napkin-model --hw h200 - | filecheck %s --check-prefix=PANELS
// RUN: napkin-opt %s -p 'ncd-relabel{grid="m:128,n:256" stream="k:64"},ncd-to-hbm,hbm-to-smem{copy=tma stages=3},smem-to-reg{mma=wgmma warps="m:2"},reg-to-ptx' | filecheck %s --check-prefix=PANELS-PTX
// RUN: napkin-opt %s -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8},smem-to-reg{warps="m:2,n:2"}' | napkin-model --hw h200 - | filecheck %s --check-prefix=PADDED
// RUN: napkin-opt %s -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8},smem-to-reg{warps="m:2,n:2"},reg-to-ptx' | filecheck %s --check-prefix=PADDED-PTX

// 3 x (16 KB of A + 32 KB of B) = 147456, 1024 for the start's alignment, then 2 rings of 3
// stages (48 bytes)
// PANELS: shared memory: 148528 bytes per block
// PANELS-PTX: napkin.smem_bytes = 148528 : i32

// 3 stages of A's 128 rows of (32 + 8) x 2 bytes and B's 32 rows of (128 + 8) x 2 bytes
// PADDED: shared memory: 56832 bytes per block
// PADDED-PTX: napkin.smem_bytes = 56832 : i32

func.func @matmul(%a: !ncd.tensor<m=512, k=256 : bf16>, %b: !ncd.tensor<k=256, n=384 : bf16>) -> !ncd.tensor<m=512, n=384 : bf16> {
  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=512, k=256 : bf16>, !ncd.tensor<k=256, n=384 : bf16> -> !ncd.tensor<m=512, n=384 : bf16>
  func.return %c : !ncd.tensor<m=512, n=384 : bf16>
}
