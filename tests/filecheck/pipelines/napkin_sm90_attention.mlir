// napkin-sm90 compiles the three attention diagrams to sm_90a PTX: Q, K and V by TMA
// (4-D boxes: one batch entry and head), a producer warpgroup and register-rebalanced
// consumers, S = Q K^T by wgmma from shared memory, the online softmax on the
// accumulators (ex2, quad shuffles), P V by wgmma with P from registers. Each assembles
// without spills; f16, head dims 128 and 256, a persistent grid, and options attention
// cannot take. In blocks of up to 128 rows at head dims 64 to 128 Q is held in registers
// (ldmatrix from its panels, wgmma with A from registers) and keys stream 128 a tile;
// with q_registers=false unmasked keys stream 176 a tile, masked ones 128; the output
// leaves by TMA stores where their panels fit.
// RUN: napkin-opt %examples/attention.mlir -p napkin-sm90 -t ptx -o %t.softmax.ptx
// RUN: %ptxas -v -arch=sm_90a %t.softmax.ptx -o %t.softmax.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s < %t.softmax.ptx
// RUN: napkin-opt %examples/causal_attention.mlir -p napkin-sm90 -t ptx -o %t.causal.ptx
// RUN: %ptxas -v -arch=sm_90a %t.causal.ptx -o %t.causal.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=CAUSAL < %t.causal.ptx
// RUN: napkin-opt %examples/spherical_attention.mlir -p napkin-sm90 -t ptx -o %t.spherical.ptx
// RUN: %ptxas -v -arch=sm_90a %t.spherical.ptx -o %t.spherical.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=SPHERICAL < %t.spherical.ptx
// RUN: napkin-opt %examples/attention.mlir -p 'napkin-sm90{q_registers=false}' -t ptx -o %t.wide64.ptx
// RUN: %ptxas -v -arch=sm_90a %t.wide64.ptx -o %t.wide64.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=WIDE64 < %t.wide64.ptx
// RUN: sed -e 's/bf16/f16/g; s/d=64/d=128/g; s/0.125/0.08838834764831845/' %examples/attention.mlir | napkin-opt -p napkin-sm90 -t ptx -o %t.d128.ptx
// RUN: %ptxas -v -arch=sm_90a %t.d128.ptx -o %t.d128.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=D128 < %t.d128.ptx
// RUN: sed -e 's/bf16/f16/g; s/d=64/d=128/g; s/0.125/0.08838834764831845/' %examples/attention.mlir | napkin-opt -p 'napkin-sm90{q_registers=false}' -t ptx -o %t.wide.ptx
// RUN: %ptxas -v -arch=sm_90a %t.wide.ptx -o %t.wide.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=WIDE < %t.wide.ptx
// RUN: sed -e 's/d=64/d=256/g; s/0.125/0.0625/' %examples/causal_attention.mlir | napkin-opt -p napkin-sm90 -t ptx -o %t.d256.ptx
// RUN: %ptxas -v -arch=sm_90a %t.d256.ptx -o %t.d256.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: napkin-opt %examples/attention.mlir -p 'napkin-sm90{block="64,128" stages=3}' -t ptx -o %t.b64.ptx
// RUN: %ptxas -v -arch=sm_90a %t.b64.ptx -o %t.b64.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// two blocks of one consumer warpgroup a multiprocessor: half the shared memory each
// RUN: napkin-opt %examples/attention.mlir -p 'napkin-sm90{block="64,128" blocks_per_sm=2}' -t ptx -o %t.x2.ptx
// RUN: %ptxas -v -arch=sm_90a %t.x2.ptx -o %t.x2.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=TWO < %t.x2.ptx
// RUN: sed -e 's/d=64/d=128/g' %examples/attention.mlir | not napkin-opt -p 'napkin-sm90{block="64,64" stages=3 blocks_per_sm=2}' 2>&1 | filecheck %s --check-prefix=TWOFULL
// one query and one key: a tile of 64 query rows and one of 16 keys over them
// RUN: sed -e 's/i=256/i=1/g; s/j=256/j=1/g' %examples/causal_attention.mlir | napkin-opt -p napkin-sm90 -t ptx -o %t.one.ptx
// RUN: %ptxas -v -arch=sm_90a %t.one.ptx -o %t.one.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=ONE < %t.one.ptx
// RUN: not napkin-opt %examples/attention.mlir -p 'napkin-sm90{cluster=2}' 2>&1 | filecheck %s --check-prefix=CLUSTER
// a persistent grid: each role loops over the block's tiles, the producer waiting for Q's
// release before each copy; the consumers' turns start once, before their loop over tiles
// RUN: napkin-opt %examples/causal_attention.mlir -p 'napkin-sm90{persistent=true}' -t ptx -o %t.persistent.ptx --launch-json %t.persistent.json
// RUN: %ptxas -v -arch=sm_90a %t.persistent.ptx -o %t.persistent.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=PERSISTENT < %t.persistent.ptx
// RUN: filecheck %s --check-prefix=PLAUNCH < %t.persistent.json
// by default, persistent where a block streams keys x head dim of 2048 x 256 or less on
// average (half the keys under a causal mask): 4096 causal keys at d=64 do, 4096
// unmasked ones at d=256 do not
// RUN: sed -e 's/=256/=4096/g' %examples/causal_attention.mlir | napkin-opt -p napkin-sm90 -t ptx -o %t.c4k.ptx --launch-json %t.c4k.json
// RUN: filecheck %s --check-prefix=PLAUNCH < %t.c4k.json
// RUN: sed -e 's/=256/=4096/g; s/d=64/d=256/g; s/0.125/0.0625/' %examples/attention.mlir | napkin-opt -p napkin-sm90 -t ptx -o %t.s4k.ptx --launch-json %t.s4k.json
// RUN: filecheck %s --check-prefix=PLAIN < %t.s4k.json
// three consumer warpgroups at d=256: P V's accumulators do not fit the registers at entry
// RUN: sed -e 's/d=64/d=256/g; s/0.125/0.0625/' %examples/attention.mlir | not napkin-opt -p 'napkin-sm90{block="192,64"}' 2>&1 | filecheck %s --check-prefix=ENTRY
// RUN: not napkin-opt %examples/attention.mlir -p 'napkin-sm90{block="96,128"}' 2>&1 | filecheck %s --check-prefix=BLOCK
// RUN: not napkin-opt %examples/attention.mlir -p 'napkin-sm90{block="128,72"}' 2>&1 | filecheck %s --check-prefix=KEYS
// RUN: sed -e 's/=256/=4096/g' %examples/attention.mlir | napkin-opt -p napkin-sm90 -t ptx -o %t.three.ptx --launch-json %t.three.json
// RUN: %ptxas -v -arch=sm_90a %t.three.ptx -o %t.three.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=THREE < %t.three.ptx
// RUN: filecheck %s --check-prefix=THREE-LAUNCH < %t.three.json
// RUN: sed -e 's/=256/=4096/g; s/d=64/d=256/g; s/0.125/0.0625/' %examples/attention.mlir | napkin-opt -p napkin-sm90 -t ptx -o %t.deep.ptx
// RUN: %ptxas -v -arch=sm_90a %t.deep.ptx -o %t.deep.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=DEEP < %t.deep.ptx
// RUN: sed -e 's/=256/=4096/g; s/d=64/d=256/g; s/0.125/0.0625/' %examples/causal_attention.mlir | napkin-opt -p napkin-sm90 -t ptx -o %t.room.ptx --launch-json %t.room.json
// RUN: %ptxas -v -arch=sm_90a %t.room.ptx -o %t.room.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=ROOM < %t.room.ptx
// RUN: filecheck %s --check-prefix=PLAUNCH < %t.room.json
// RUN: sed -e 's/h=512/h=4096/g' %examples/mlp.mlir | napkin-opt -p napkin-sm90 -t ptx -o %t.mlp.ptx
// RUN: %ptxas -v -arch=sm_90a %t.mlp.ptx -o %t.mlp.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=MLP < %t.mlp.ptx

// REPORT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// CHECK: .maxntid 384
// CHECK-DAG: setmaxnreg.dec.sync.aligned.u32
// CHECK-DAG: setmaxnreg.inc.sync.aligned.u32
// CHECK-DAG: cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes
// Q's 64 columns into registers once a tile (four ldmatrix.x4), then S = Q K^T with A
// from them, 128 keys a tile
// CHECK-COUNT-4: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK-NOT: ldmatrix
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{{.*}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, %p{{[0-9]+}}, 1, 1, 0;
// CHECK: wgmma.commit_group.sync.aligned;
// CHECK: wgmma.wait_group.sync.aligned 0;
// CHECK: shfl.sync.bfly.b32
// CHECK: ex2.approx.ftz.f32
// the probabilities packed for the product, then the product with A from registers and B (V) N-major
// CHECK: cvt.rn.bf16x2.f32
// CHECK: wgmma.fence.sync.aligned;
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{{.*}}}, {%{{[a-z]+}}{{[0-9]+}}, %{{[a-z]+}}{{[0-9]+}}, %{{[a-z]+}}{{[0-9]+}}, %{{[a-z]+}}{{[0-9]+}}}, %rd{{[0-9]+}}, %p{{[0-9]+}}, 1, 1, 1;
// the output's panels fit beside two stages at d=64: stmatrix, then a TMA store
// CHECK: stmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: cp.async.bulk.tensor.4d.global.shared::cta.bulk_group

// CAUSAL: wgmma.mma_async.sync.aligned.m64n128k16
// CAUSAL: wgmma.mma_async.sync.aligned.m64n64k16
// the diagonal tiles, masked, in a loop of their own
// CAUSAL: setp.{{.*}}
// CAUSAL: wgmma.mma_async.sync.aligned.m64n128k16

// SPHERICAL-NOT: ex2.approx
// SPHERICAL-DAG: sqrt
// SPHERICAL-DAG: wgmma.mma_async.sync.aligned.m64n64k16

// D128-COUNT-8: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// D128-NOT: ldmatrix
// D128: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{.*}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, %p{{[0-9]+}}, 1, 1, 0;
// D128: cvt.rn.f16x2.f32
// D128: stmatrix.sync.aligned.m8n8.x4.shared.b16

// with Q in shared memory, unmasked keys 176 a tile (the last one partial), both operands
// of S = Q K^T from shared memory
// WIDE64-NOT: ldmatrix
// WIDE64: wgmma.mma_async.sync.aligned.m64n176k16.f32.bf16.bf16 {{{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, %p{{[0-9]+}}, 1, 1, 0, 0;
// WIDE64: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{{.*}}}, {%{{[a-z]+}}{{[0-9]+}}, %{{[a-z]+}}{{[0-9]+}}, %{{[a-z]+}}{{[0-9]+}}, %{{[a-z]+}}{{[0-9]+}}}, %rd{{[0-9]+}}, %p{{[0-9]+}}, 1, 1, 1;

// WIDE-NOT: ldmatrix
// WIDE: wgmma.mma_async.sync.aligned.m64n176k16.f32.f16.f16
// WIDE: cvt.rn.f16x2.f32
// at d=128 one panel stage fits beside two stages of 176 keys: each panel waits for the
// store before it
// WIDE: stmatrix.sync.aligned.m8n8.x4.shared.b16
// WIDE: cp.async.bulk.wait_group.read 0;
// WIDE: stmatrix.sync.aligned.m8n8.x4.shared.b16

// CLUSTER: napkin-opt: error: napkin-sm90: cluster=2 cannot be honoured for attention on sm_90a
// PERSISTENT: setmaxnreg.dec.sync.aligned.u32 24;
// PERSISTENT: setmaxnreg.inc.sync.aligned.u32
// PERSISTENT: mov.u32 %r{{[0-9]+}}, %nctaid.x;
// PERSISTENT: mbarrier.try_wait.parity.shared::cta.b64
// PERSISTENT: mbarrier.arrive.expect_tx.shared::cta.b64
// PERSISTENT: cp.async.bulk.tensor.4d
// PERSISTENT: bar.arrive
// PERSISTENT-NOT: wgmma.mma_async
// PERSISTENT: mov.u32 %r{{[0-9]+}}, %nctaid.x;
// PERSISTENT: wgmma.mma_async
// PERSISTENT: mbarrier.arrive.shared::cta.b64
// PLAUNCH: "persistent_blocks_per_sm": 1,
// PLAIN: "grid": [32, 4, 2],
// PLAIN-NEXT: "persistent_blocks_per_sm": 0,
// BLOCK: napkin-opt: error: napkin-sm90: attention's block is warpgroups of 64 query rows (64 to 256), got 96
// KEYS: napkin-opt: error: napkin-sm90: attention streams keys in steps of 16 (P V's wgmma contracts 16 keys a step), at most 256 a tile (S = Q K^T's wgmma is at most 256 wide), got 72
// ENTRY: napkin-opt: error: reg-to-ptx: @attention: 1 blocks of 512 threads per multiprocessor leave 128 registers per thread at entry, but the wgmma accumulators need about 152

// ONE: .maxntid 256
// ONE: wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16

// TWO: .maxntid 256
// TWO-NEXT: .minnctapersm 2
// TWO: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// TWOFULL: hbm-to-smem: @attention needs 114688 bytes of shared memory {{.*}} over the budget of 114624

// the fused MLP streams its hidden axis, the innermost of its first weight [k, h]: a TMA
// tile along it is whole 128-byte panels, so 128 of it a tile, not 176
// MLP-NOT: m64n176k16
// MLP: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// MLP-NOT: m64n176k16

// d=64 over 4096 keys: three consumer warpgroups (192 query rows, 128 keys a tile; the
// producer's registers moved to them), a block a tile: 22 tiles of 192 of the 4096 queries,
// 4 heads, 2 batch entries
// THREE: .maxntid 512
// THREE: setmaxnreg.dec.sync.aligned.u32 24;
// THREE: setmaxnreg.inc.sync.aligned.u32 160;
// THREE: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// THREE-NOT: m64n176k16
// THREE-LAUNCH: "grid": [22, 4, 2],
// THREE-LAUNCH: "block": [512, 1, 1],

// d=256 over 4096 causal keys: persistent blocks of 80 keys a tile; no panel stage fits
// beside Q and two stages of them, so the output is written into Q's room (stmatrix) and
// stored from there, 4 panels by TMA, and Q released to the producer only once the
// stores have read it
// ROOM: wgmma.mma_async.sync.aligned.m64n80k16.f32.bf16.bf16
// ROOM-COUNT-16: stmatrix.sync.aligned.m8n8.x4.shared.b16
// ROOM-COUNT-4: cp.async.bulk.tensor.4d.global.shared::cta.bulk_group
// ROOM: cp.async.bulk.commit_group;
// ROOM: cp.async.bulk.wait_group.read 0;
// ROOM: mbarrier.arrive.shared::cta.b64

// d=256 over 4096 keys: 80 keys a tile (Q K^T is m64n80), the output stored from registers
// DEEP: wgmma.mma_async.sync.aligned.m64n80k16.f32.bf16.bf16
// DEEP-NOT: cp.async.bulk.tensor.{{[0-9]}}d.global.shared
// DEEP: st.global
