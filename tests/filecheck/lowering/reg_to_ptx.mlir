// reg-to-ptx: a register-level GEMM kernel, its stream loop as hbm-to-smem built it (not
// unrolled), becomes sm_80 PTX op by op, and ptxas accepts it. The loop's stage is the
// counter's tile mod 3, so stage offsets are computed, not immediates (smem-unroll-stages
// makes them constants: tests/filecheck/passes/unroll_stages.mlir); the copy of the tile
// three ahead is guarded by the loop's own bound.
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8},smem-to-reg{warps="m:2,n:2"},reg-to-ptx' -t ptx -o %t.ptx
// RUN: filecheck %s < %t.ptx
// RUN: %ptxas -arch=sm_80 %t.ptx -o %t.cubin
// Ragged: 500 rows and k = 200; chunks past an edge read nothing (source size 0), rows past it are not stored.
// RUN: sed -e 's/512/500/g' -e 's/k=256/k=200/g' %examples/matmul.mlir | napkin-opt -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8},smem-to-reg{warps="m:2,n:2"},reg-to-ptx' -t ptx -o %t.ragged.ptx
// RUN: filecheck %s --check-prefix=RAGGED < %t.ragged.ptx
// RUN: %ptxas -arch=sm_80 %t.ragged.ptx -o %t.ragged.cubin
// Swizzled stages: each thread's first chunk XOR its line's row; the rest at immediates.
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=swizzle},smem-to-reg{warps="m:2,n:2"},reg-to-ptx' -t ptx -o %t.swizzle.ptx
// RUN: filecheck %s --check-prefix=SWIZZLE < %t.swizzle.ptx
// RUN: %ptxas -arch=sm_80 %t.swizzle.ptx -o %t.swizzle.cubin
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:16"},ncd-to-hbm,hbm-to-smem{stages=3 layout=swizzle},smem-to-reg,reg-to-ptx' 2>&1 | filecheck %s --check-prefix=SWIZZLE-ROWS
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,reg-to-ptx' 2>&1 | filecheck %s --check-prefix=NOREG
// Grouped launch (hbm-launch{group=2}): one grid axis, block p's tile found from bands of
// two block rows swept column by column (4 x 3 blocks: bands of 6).
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-launch{group=2},hbm-to-smem{stages=3 layout=swizzle},smem-to-reg{warps="m:2,n:2"},reg-to-ptx' -t ptx -o %t.group.ptx
// RUN: filecheck %s --check-prefix=GROUP < %t.group.ptx
// RUN: %ptxas -arch=sm_80 %t.group.ptx -o %t.group.cubin
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-launch{persistent=true},hbm-to-smem{stages=3},smem-to-reg{warps="m:2,n:2"},reg-to-ptx' 2>&1 | filecheck %s --check-prefix=PERSISTENT

// CHECK:      .target sm_80
// CHECK:      .extern .shared .align 128 .b8 napkin_smem[];
// CHECK:      .visible .entry matmul(
// CHECK-NEXT: .param .u64 matmul_a,
// CHECK-NEXT: .param .u64 matmul_b,
// CHECK-NEXT: .param .u64 matmul_out
// CHECK-NEXT: )
// CHECK-NEXT: .reqntid 128
// CHECK:      mov.u32 %r{{[0-9]+}}, %ctaid.x;
// CHECK:      mov.u32 %r{{[0-9]+}}, %ctaid.y;
// The prologue: tiles 0 and 1 into stages 0 and 1. A's 64-byte rows are copied by 4
// threads each, a thread's 4 rows 32 apart (2560 bytes in the padded buffer, 16384 in A);
// B's 256-byte rows by 8 threads, two chunks 128 bytes apart.
// CHECK:      cp.async.cg.shared.global [%r[[A:[0-9]+]]], [%rd[[AROW:[0-9]+]]], 16;
// CHECK-NEXT: cp.async.cg.shared.global [%r[[A]]+2560], [%rd[[AROW]]+16384], 16;
// CHECK:      cp.async.cg.shared.global [%r[[B:[0-9]+]]], [%rd[[BROW:[0-9]+]]], 16;
// CHECK-NEXT: cp.async.cg.shared.global [%r[[B]]+128], [%rd[[BROW]]+128], 16;
// CHECK:      cp.async.commit_group;
// CHECK:      cp.async.cg.shared.global [%r{{[0-9]+}}+10240], [%rd[[AROW]]+64], 16;
// CHECK:      cp.async.commit_group;
// The loop: its bound, then the tile's stage (tile mod 3), its wait and barrier, and the
// copy of the tile two ahead under the loop's own bound.
// CHECK:      $L__BB0_1:
// CHECK-NEXT: setp.lt.s32 %p[[MORE:[0-9]+]], %r[[K:[0-9]+]], %r{{[0-9]+}};
// CHECK-NEXT: @%p[[MORE]] bra $L__BB0_2;
// CHECK-NEXT: bra.uni $L__BB0_3;
// CHECK-NEXT: $L__BB0_2:
// The tile k / 32 is a shift; its stage, tile mod 3, the high word of a multiply by
// ceil(2**33 / 3), a shift, and a multiply-subtract.
// CHECK:      mov.u32 %r[[FIVE:[0-9]+]], 5;
// CHECK-NEXT: shr.u32 %r[[TILE:[0-9]+]], %r[[K]], %r[[FIVE]];
// CHECK-NEXT: mov.u32 %r[[MAGIC:[0-9]+]], 2863311531;
// CHECK-NEXT: mul.hi.u32 %r[[HI:[0-9]+]], %r[[TILE]], %r[[MAGIC]];
// CHECK-NEXT: mov.u32 %r[[ONE:[0-9]+]], 1;
// CHECK-NEXT: shr.u32 %r[[THIRD:[0-9]+]], %r[[HI]], %r[[ONE]];
// CHECK-NEXT: mov.u32 %r[[THREE:[0-9]+]], 3;
// CHECK-NEXT: mul.lo.u32 %r[[BACK:[0-9]+]], %r[[THIRD]], %r[[THREE]];
// CHECK-NEXT: sub.u32 %r{{[0-9]+}}, %r[[TILE]], %r[[BACK]];
// CHECK-NEXT: cp.async.wait_group 1;
// CHECK-NEXT: bar.sync 0;
// CHECK:      setp.lt.s32 %p[[AHEAD:[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}};
// CHECK-NEXT: @%p[[AHEAD]] cp.async.cg.shared.global [%r{{[0-9]+}}], [%rd{{[0-9]+}}+128], 16;
// CHECK:      cp.async.commit_group;
// The fragments and products of the tile's two 16-deep steps.
// CHECK:      ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK:      ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK-COUNT-32: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK:      ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK-COUNT-32: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK:      bra.uni $L__BB0_1;
// The epilogue through shared memory once every copy has landed: 16 bytes a lane, whole rows, no predicates.
// CHECK:      $L__BB0_3:
// CHECK:      cp.async.wait_group 0;
// CHECK:      bar.sync 0;
// CHECK:      cvt.rn.bf16x2.f32 %bhh{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}};
// CHECK-NEXT: st.shared.b32
// CHECK:      ld.shared.v4.b32 {%r[[V:[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [%r{{[0-9]+}}];
// CHECK-NEXT: st.global.v4.b32 [%rd[[OUT:[0-9]+]]], {%r[[V]], %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}};
// CHECK-NOT:  @%p
// CHECK:      ret;

// Chunks that may lie past an edge: 16 bytes or none (selp), from the tensor's start where none.
// RAGGED:      selp.b32 %r[[SIZE:[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}}, %p[[IN:[0-9]+]];
// RAGGED:      selp.b64 %rd[[SRC:[0-9]+]], %rd{{[0-9]+}}, %rd{{[0-9]+}}, %p[[IN]];
// RAGGED-NEXT: cp.async.cg.shared.global [%r{{[0-9]+}}], [%rd[[SRC]]], 16, %r[[SIZE]];
// RAGGED:      cp.async.wait_group 0;
// RAGGED:      @%p{{[0-9]+}} st.global.v4.b32 [%rd{{[0-9]+}}], {{{.*}}};

// A's 64-byte rows: the key is the row pair mod 8, shifted to the chunk bits.
// SWIZZLE:      xor.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}};
// SWIZZLE:      cp.async.cg.shared.global [%r[[A:[0-9]+]]], [%rd{{[0-9]+}}], 16;
// SWIZZLE-NEXT: cp.async.cg.shared.global [%r[[A]]+2048], [%rd{{[0-9]+}}+16384], 16;
// SWIZZLE:      mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// SWIZZLE:      ret;
// SWIZZLE-ROWS: napkin-opt: error: reg-to-ptx: @matmul: layout=swizzle permutes 16-byte chunks within 128-byte lines: a buffer's rows must be 64 bytes or a multiple of 128 bytes, got 32
// NOREG: napkin-opt: error: reg-to-ptx: @matmul has no reg.warps; run smem-to-reg first

// GROUP:      mov.u32 %r[[P:[0-9]+]], %ctaid.x;
// the band p / 6: a shift by 1, then the high word of a multiply by ceil(2**32 / 3)
// GROUP-NEXT: mov.u32 %r[[ONE:[0-9]+]], 1;
// GROUP-NEXT: shr.u32 %r[[HALF:[0-9]+]], %r[[P]], %r[[ONE]];
// GROUP-NEXT: mov.u32 %r[[MAGIC:[0-9]+]], 1431655766;
// GROUP-NEXT: mul.hi.u32 %r[[BAND:[0-9]+]], %r[[HALF]], %r[[MAGIC]];
// GROUP:      mul.lo.u32 %r[[FIRST:[0-9]+]], %r[[BAND]], %r{{[0-9]+}};
// GROUP:      sub.u32 %r[[LEFT:[0-9]+]], %r{{[0-9]+}}, %r[[FIRST]];
// GROUP-NEXT: min.u32 %r[[HEIGHT:[0-9]+]], %r{{[0-9]+}}, %r[[LEFT]];
// the block within its band, p mod 6 (p less six times the band); the height is not a
// constant, so it divides
// GROUP:      mul.hi.u32
// GROUP:      sub.u32 %r[[WITHIN:[0-9]+]], %r[[P]], %r{{[0-9]+}};
// GROUP-NEXT: rem.u32 %r[[R:[0-9]+]], %r[[WITHIN]], %r[[HEIGHT]];
// GROUP-NEXT: add.u32 %r{{[0-9]+}}, %r[[FIRST]], %r[[R]];
// GROUP-NEXT: div.u32 %r{{[0-9]+}}, %r[[WITHIN]], %r[[HEIGHT]];
// GROUP-NOT:  %ctaid.y
// PERSISTENT: napkin-opt: error: reg-to-ptx: @matmul: a persistent launch loops over tiles in a warp-specialised kernel (smem.producer); this one has none
