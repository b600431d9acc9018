// The sm_80 attention kernels: softmax, causal and spherical attention at head dims 64 and
// 128, bf16 and f16, assembled by ptxas; the default configuration (128 query rows over 8
// warps, 64 keys a tile, 3 stages) spills no registers.
// RUN: %python %S/../../../tools/attention_ptx.py %examples/attention.mlir -o %t.a64.ptx
// RUN: %ptxas -v -arch=sm_80 %t.a64.ptx -o %t.a64.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s < %t.a64.ptx
// RUN: sed -e 's/d=64/d=128/g' %examples/attention.mlir | %python %S/../../../tools/attention_ptx.py -o %t.a128.ptx
// RUN: %ptxas -v -arch=sm_80 %t.a128.ptx -o %t.a128.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: %python %S/../../../tools/attention_ptx.py %examples/causal_attention.mlir -o %t.c64.ptx
// RUN: %ptxas -v -arch=sm_80 %t.c64.ptx -o %t.c64.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=CAUSAL < %t.c64.ptx
// RUN: sed -e 's/d=64/d=128/g' %examples/causal_attention.mlir | %python %S/../../../tools/attention_ptx.py -o %t.c128.ptx
// RUN: %ptxas -v -arch=sm_80 %t.c128.ptx -o %t.c128.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: %python %S/../../../tools/attention_ptx.py %examples/spherical_attention.mlir -o %t.s64.ptx
// RUN: %ptxas -v -arch=sm_80 %t.s64.ptx -o %t.s64.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=SPH < %t.s64.ptx
// RUN: sed -e 's/d=64/d=128/g' %examples/spherical_attention.mlir | %python %S/../../../tools/attention_ptx.py -o %t.s128.ptx
// RUN: %ptxas -v -arch=sm_80 %t.s128.ptx -o %t.s128.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// f16, a ragged sequence, and other configurations assemble too
// RUN: sed -e 's/bf16/f16/g' -e 's/i=256/i=1000/g' -e 's/j=256/j=1000/g' %examples/causal_attention.mlir | %python %S/../../../tools/attention_ptx.py -o %t.f16.ptx
// RUN: %ptxas -arch=sm_80 %t.f16.ptx -o %t.f16.cubin
// RUN: filecheck %s --check-prefix=F16 < %t.f16.ptx
// RUN: sed -e 's/d=64/d=128/g' %examples/attention.mlir | %python %S/../../../tools/attention_ptx.py --block 64 --stream 32 --stages 4 -o %t.small.ptx
// RUN: %ptxas -arch=sm_80 %t.small.ptx -o %t.small.cubin
// RUN: sed -e 's/d=64/d=128/g' %examples/attention.mlir | %python %S/../../../tools/attention_ptx.py --block 128 --warps 4 --stages 2 -o %t.w4.ptx
// RUN: %ptxas -arch=sm_80 %t.w4.ptx -o %t.w4.cubin
// RUN: sed -e 's/d=64/d=128/g' %examples/causal_attention.mlir | %python %S/../../../tools/attention_ptx.py --block 128 --warps 4 --stages 2 --q-in-shared -o %t.qs.ptx
// RUN: %ptxas -arch=sm_90 %t.qs.ptx -o %t.qs.cubin
// RUN: %python %S/../../../tools/attention_ptx.py %examples/attention.mlir --blocks-per-sm 2 -o %t.two.ptx
// RUN: %ptxas -v -arch=sm_80 %t.two.ptx -o %t.two.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=TWO < %t.two.ptx
// RUN: not %python %S/../../../tools/attention_ptx.py %examples/attention.mlir --block 128 --warps 16 2>&1 | filecheck %s --check-prefix=ROWS

// REPORT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// CHECK-LABEL: .visible .entry attention(
// CHECK: .reqntid 256
// Q: one copy, then its ldmatrix once, before the loop
// CHECK: cp.async.cg.shared.global
// CHECK: cp.async.commit_group;
// CHECK: cp.async.wait_group 2;
// CHECK-NEXT: bar.sync 0;
// CHECK-COUNT-4: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// The loop: wait for the tile, meet, start the next copies
// CHECK: cp.async.wait_group 1;
// CHECK-NEXT: bar.sync 0;
// CHECK: cp.async.cg.shared.global
// CHECK: cp.async.commit_group;
// S = Q K^T: K's rows are the columns of S (no .trans)
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// The online softmax in registers: row max across the quad, ex2
// CHECK: max.f32
// CHECK: shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 1, 31, 0xffffffff;
// CHECK: shfl.sync.bfly.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 2, 31, 0xffffffff;
// CHECK: ex2.approx.ftz.f32
// P to bf16 pairs, straight into P V (V k-major: .trans)
// CHECK: cvt.rn.bf16x2.f32
// CHECK: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK-NOT: st.shared
// CHECK-NOT: ld.shared
// After the loop: 1 / row sum, the store through shared memory in whole lines
// CHECK: rcp.approx.ftz.f32
// CHECK: st.shared.b32
// CHECK: bar.sync 0;
// CHECK: ld.shared.v4.b32
// CHECK: st.global.v4.b32
// CHECK: ret;

// The causal mask in the masked loop: compare and select against -inf
// CAUSAL: setp.ge.s32
// CAUSAL: selp.f32 {{%f[0-9]+}}, {{%f[0-9]+}}, {{%f[0-9]+}}, {{%p[0-9]+}};

// SPH-NOT: ex2.approx
// SPH: sqrt.rn.f32

// F16: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// F16: cvt.rn.f16x2.f32

// TWO: .reqntid 256
// TWO-NEXT: .minnctapersm 2

// ROWS: attention_ptx: error: smem-to-reg: @attention: a 128-row tile over 16 warps leaves each warp 8 rows; mma.sync m16n8k16 needs a multiple of 16
