// reg-to-ptx: the register-level GEMM kernel becomes sm_80 PTX that ptxas accepts.
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8},smem-to-reg{warps="m:2,n:2"},reg-to-ptx' -t ptx -o %t.ptx
// RUN: filecheck %s < %t.ptx
// RUN: %ptxas -arch=sm_80 %t.ptx -o %t.cubin
// Ragged: 500 rows (the last block moves in), k = 200 (the first tile starts 24 before 0).
// RUN: sed -e 's/512/500/g' -e 's/k=256/k=200/g' %examples/matmul.mlir | napkin-opt -p 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8},smem-to-reg{warps="m:2,n:2"},reg-to-ptx' -t ptx -o %t.ragged.ptx
// RUN: filecheck %s --check-prefix=RAGGED < %t.ragged.ptx
// RUN: %ptxas -arch=sm_80 %t.ragged.ptx -o %t.ragged.cubin
// Swizzled stages: the same kernel with 16-byte chunks XOR-permuted within 128-byte lines.
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
// CHECK-NOT:  min.u32
// The prologue: tiles 0 and 1, each thread's chunks at immediates from one shared and
// one global address per row it copies. 8 tiles over 3 stages: tile 0 goes to stage 1.
// A's 64-byte rows are copied by 4 threads each (a warp reads 8 whole rows), so a thread
// takes one chunk in 4 rows 32 apart (2560 bytes in the padded buffer); B's 256-byte rows
// by 8 threads (a warp reads whole 128-byte lines), two chunks 128 bytes apart.
// CHECK:      cp.async.cg.shared.global [%r[[A:[0-9]+]]+10240], [%rd[[ROW:[0-9]+]]], 16;
// CHECK-NEXT: cp.async.cg.shared.global [%r[[A]]+12800], [%rd{{[0-9]+}}], 16;
// CHECK:      cp.async.cg.shared.global [%r[[B:[0-9]+]]+8704], [%rd[[BROW:[0-9]+]]], 16;
// CHECK-NEXT: cp.async.cg.shared.global [%r[[B]]+8832], [%rd[[BROW]]+128], 16;
// CHECK:      cp.async.commit_group;
// CHECK:      cp.async.commit_group;
// CHECK-NEXT: cp.async.wait_group 1;
// CHECK-NEXT: bar.sync 0;
// The first step's fragments, then into the loop where tile 0 falls (its second sub-iteration).
// CHECK:      ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{{.*}}}, [%r[[LA:[0-9]+]]+10240];
// CHECK:      ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {{{.*}}}, [%r[[LB:[0-9]+]]+8704];
// CHECK:      bra.uni $L__BB0_2;
// The loop, unrolled by the 3 stages: addresses are immediates; the one compare is the
// trip's exit test.
// CHECK-NEXT: $L__BB0_1:
// CHECK-NOT:  {{(mul|div|rem|selp|cvt|min|setp)\.}}
// CHECK:      ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{{.*}}}, [%r[[LA]]+32];
// CHECK:      cp.async.cg.shared.global [%r[[A]]+20480], [%rd{{[0-9]+}}+64], 16;
// CHECK-NOT:  {{(mul|div|rem|selp|cvt|min|setp)\.}}
// CHECK:      mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK-NOT:  {{(mul|div|rem|selp|cvt|min|setp)\.}}
// CHECK:      cp.async.commit_group;
// CHECK-NEXT: cp.async.wait_group 1;
// CHECK-NEXT: bar.sync 0;
// CHECK-NOT:  {{(mul|div|rem|selp|cvt|min|setp)\.}}
// CHECK:      $L__BB0_2:
// CHECK-NOT:  {{(mul|div|rem|selp|cvt|min|setp)\.}}
// CHECK:      cp.async.cg.shared.global [%r[[A]]], [%rd{{[0-9]+}}+128], 16;
// CHECK-NOT:  {{(mul|div|rem|selp|cvt|min)\.}}
// CHECK:      setp.lt.s32 %p[[MORE:[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}};
// CHECK-NEXT: @%p[[MORE]] bra $L__BB0_3;
// CHECK-NEXT: bra.uni $L__BB0_4;
// CHECK-NEXT: $L__BB0_3:
// CHECK-NOT:  {{(mul|div|rem|selp|cvt|min|setp)\.}}
// CHECK:      bra.uni $L__BB0_1;
// The last trip follows: its first tile copies the last tile, its last waits for nothing.
// CHECK-NEXT: $L__BB0_4:
// CHECK:      cp.async.cg.shared.global [%r[[A]]+20480], [%rd{{[0-9]+}}+64], 16;
// CHECK:      bar.sync 0;
// CHECK-NOT:  cp.async.cg
// CHECK:      bar.sync 0;
// CHECK-NOT:  {{cp.async.cg|bar.sync}}
// The epilogue through shared memory: once every warp is past its last ldmatrix, each
// writes its pairs, rounded to bf16, into its own 64 x 128-byte region (swizzled: chunk tn
// of row r at tn XOR r mod 8; rows 8 apart at immediates), then reads 16 bytes a lane back,
// 4 rows of 8 lanes at a time, and stores them whole. No edge, no predicates.
// CHECK:      cp.async.wait_group 0;
// CHECK:      bar.sync 0;
// CHECK:      cvt.rn.bf16x2.f32 %bhh{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}};
// CHECK-NEXT: st.shared.b32 [%r[[T0:[0-9]+]]], %bhh{{[0-9]+}};
// CHECK-NEXT: cvt.rn.bf16x2.f32
// CHECK-NEXT: st.shared.b32 [%r[[T0]]+1024], %bhh{{[0-9]+}};
// CHECK:      bar.sync 0;
// CHECK:      ld.shared.v4.b32 {%r[[V:[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [%r[[R0:[0-9]+]]];
// CHECK-NEXT: st.global.v4.b32 [%rd[[OUT:[0-9]+]]], {%r[[V]], %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}};
// CHECK-NEXT: ld.shared.v4.b32 {{{.*}}}, [%r[[R1:[0-9]+]]];
// CHECK-NEXT: st.global.v4.b32 [%rd[[OUT]]+3072], {{{.*}}};
// CHECK-NEXT: ld.shared.v4.b32 {{{.*}}}, [%r[[R0]]+1024];
// CHECK-NEXT: st.global.v4.b32 [%rd[[OUT]]+6144], {{{.*}}};
// CHECK-NOT:  @%p
// CHECK:      ret;

// The last block along m starts at 500 - 128 and stores only the rows past 384.
// RAGGED:      mul.lo.u32 %r[[START:[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}};
// RAGGED:      min.u32 %r{{[0-9]+}}, %r[[START]], %r{{[0-9]+}};
// Tile 0 starts at k = -24: chunks before 0 read nothing (source size 0) from the tensor's start.
// RAGGED:      setp.ge.u32 %p[[IN:[0-9]+]],
// RAGGED-NEXT: mov.u32 %r[[SIXTEEN:[0-9]+]], 16;
// RAGGED-NEXT: mov.u32 %r[[ZERO:[0-9]+]], 0;
// RAGGED-NEXT: selp.b32 %r[[SIZE:[0-9]+]], %r[[SIXTEEN]], %r[[ZERO]], %p[[IN]];
// RAGGED:      selp.b64 %rd[[SRC:[0-9]+]], %rd{{[0-9]+}}, %rd{{[0-9]+}}, %p[[IN]];
// RAGGED-NEXT: cp.async.cg.shared.global [%r{{[0-9]+}}+{{[0-9]+}}], [%rd[[SRC]]], 16, %r[[SIZE]];
// RAGGED:      cp.async.commit_group;
// RAGGED:      bar.sync 0;
// RAGGED:      cp.async.wait_group 0;
// RAGGED:      setp.ge.s32 %p[[ROW:[0-9]+]],
// RAGGED:      @%p[[ROW]] st.global.v4.b32 [%rd{{[0-9]+}}], {{{.*}}};

// Each thread's first chunk: its row times the row's bytes plus its chunk, XOR its line's
// row mod 8 (shifted to the chunk bits); the other chunks at immediates, as unswizzled. A's
// rows are 64 bytes (two a line, so the key is the row pair), stages 8192 bytes: tile 0 goes
// to stage 1; a thread's 4 rows are 32 apart (2048 bytes, whole swizzle periods).
// SWIZZLE:      mov.u32 %r{{[0-9]+}}, 1;
// SWIZZLE-NEXT: shr.u32 %r[[PAIR:[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}};
// SWIZZLE-NEXT: mov.u32 %r[[SEVEN:[0-9]+]], 7;
// SWIZZLE-NEXT: and.b32 %r[[LINE:[0-9]+]], %r[[PAIR]], %r[[SEVEN]];
// SWIZZLE-NEXT: mov.u32 %r[[FOUR:[0-9]+]], 4;
// SWIZZLE-NEXT: shl.b32 %r[[KEY:[0-9]+]], %r[[LINE]], %r[[FOUR]];
// SWIZZLE-NEXT: xor.b32 %r[[PLACE:[0-9]+]], %r{{[0-9]+}}, %r[[KEY]];
// SWIZZLE-NEXT: add.u32 %r{{[0-9]+}}, %r{{[0-9]+}}, %r[[PLACE]];
// SWIZZLE:      cp.async.cg.shared.global [%r[[A:[0-9]+]]+8192], [%rd{{[0-9]+}}], 16;
// SWIZZLE-NEXT: cp.async.cg.shared.global [%r[[A]]+10240], [%rd{{[0-9]+}}], 16;
// B's 256-byte rows (key: the row mod 8): two chunks a row, 128 bytes apart.
// SWIZZLE:      cp.async.cg.shared.global [%r[[B:[0-9]+]]+8192], [%rd[[BROW:[0-9]+]]], 16;
// SWIZZLE-NEXT: cp.async.cg.shared.global [%r[[B]]+8320], [%rd[[BROW]]+128], 16;
// The fragments: a chunk's place within a line is in the base register, so each 16-deep
// step of A and each 16 columns of B has its own; rows 16 apart stay immediates.
// SWIZZLE:      ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{{.*}}}, [%r[[LA0:[0-9]+]]+8192];
// SWIZZLE-NEXT: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{{.*}}}, [%r[[LA0]]+9216];
// SWIZZLE:      ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {{{.*}}}, [%r[[LB0:[0-9]+]]+8192];
// SWIZZLE-NEXT: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {{{.*}}}, [%r[[LB1:[0-9]+]]+8192];
// SWIZZLE:      ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{{.*}}}, [%r[[LA1:[0-9]+]]+8192];
// SWIZZLE:      mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// SWIZZLE:      ret;
// SWIZZLE-ROWS: napkin-opt: error: reg-to-ptx: @matmul: layout=swizzle permutes 16-byte chunks within 128-byte lines: a buffer's rows must be 64 bytes or a multiple of 128 bytes, got 32
// NOREG: napkin-opt: error: reg-to-ptx: @matmul has no reg.warps; run smem-to-reg first

// GROUP:      mov.u32 %r[[P:[0-9]+]], %ctaid.x;
// GROUP-NEXT: mov.u32 %r[[SIX:[0-9]+]], 6;
// GROUP-NEXT: div.u32 %r[[BAND:[0-9]+]], %r[[P]], %r[[SIX]];
// GROUP:      mul.lo.u32 %r[[FIRST:[0-9]+]], %r[[BAND]], %r{{[0-9]+}};
// GROUP:      sub.u32 %r[[LEFT:[0-9]+]], %r{{[0-9]+}}, %r[[FIRST]];
// GROUP-NEXT: min.u32 %r[[HEIGHT:[0-9]+]], %r{{[0-9]+}}, %r[[LEFT]];
// GROUP:      rem.u32 %r[[WITHIN:[0-9]+]], %r[[P]], %r{{[0-9]+}};
// GROUP-NEXT: rem.u32 %r[[R:[0-9]+]], %r[[WITHIN]], %r[[HEIGHT]];
// GROUP-NEXT: add.u32 %r{{[0-9]+}}, %r[[FIRST]], %r[[R]];
// GROUP-NEXT: div.u32 %r{{[0-9]+}}, %r[[WITHIN]], %r[[HEIGHT]];
// GROUP-NOT:  %ctaid.y
// PERSISTENT: napkin-opt: error: reg-to-ptx: @matmul: this lowering launches a plain or grouped grid (hbm-launch{group=G}); 'persistent' launches are not taken here
