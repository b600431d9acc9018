// split=2 cluster=2 on napkin-sm90: the two parts of each output tile's sums form a cluster
// along %ctaid.z (the launch contract's cluster [1, 1, 2]). The cluster meets once at the
// start (no block writes into another's shared memory before it runs). Each part sends the
// pairs of f32 sums the other adds up into that part's shared memory (mapa,
// st.shared::cluster, guarded by the rank), the cluster meets again (release, acquire), and
// each part adds its own pairs in the parts' order, from registers and its shared memory,
// rounds them and stores them: no scratch of the module, no counter, no fence of the GPU.
// The producers meet the cluster at their exit. Four parts in a cluster of four assemble too.
// RUN: napkin-opt %s -p 'napkin-sm90{block="128,128,64" split=2 cluster=2}' -t ptx -o %t.ptx --launch-json %t.json
// RUN: %ptxas -v -arch=sm_90a %t.ptx -o %t.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s < %t.ptx
// RUN: filecheck %s --check-prefix=JSON < %t.json
// RUN: napkin-opt %s -p 'napkin-sm90{block="64,128,64" split=4 cluster=4}' -t ptx -o %t.four.ptx --launch-json %t.four.json
// RUN: %ptxas -v -arch=sm_90a %t.four.ptx -o %t.four.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=FOUR < %t.four.json
// RUN: not napkin-opt %s -p 'napkin-sm90{block="128,128,64" split=2 cluster=4}' 2>&1 | filecheck %s --check-prefix=PARTS
// RUN: not napkin-opt %s -p 'napkin-sm90{block="128,128,64" split=2 cluster=2 persistent=true}' 2>&1 | filecheck %s --check-prefix=PERSISTENT
// RUN: not napkin-opt %s -p 'ncd-relabel{grid="m:128,n:128,k:512" stream="k:64"},ncd-to-hbm,hbm-launch{cluster=3}' 2>&1 | filecheck %s --check-prefix=LAUNCH
// RUN: not napkin-opt %s -p 'ncd-relabel{grid="m:128,n:128,k:512" stream="k:64"},ncd-to-hbm,hbm-launch{cluster=2 persistent=true}' 2>&1 | filecheck %s --check-prefix=GROUP

// CHECK: barrier.cluster.arrive.release;
// CHECK-NEXT: barrier.cluster.wait.acquire;
// CHECK-NEXT: mov.u32 [[RANK:%r[0-9]+]], %cluster_ctarank;
// CHECK: mapa.shared::cluster.u32
// CHECK: st.shared::cluster.v2.f32
// CHECK: barrier.cluster.arrive.release;
// CHECK-NEXT: barrier.cluster.wait.acquire;
// CHECK: ld.shared.v2.f32
// CHECK: add.f32
// CHECK: cvt.rn.bf16x2.f32
// CHECK: st.global.b32
// CHECK: ret;
// CHECK: barrier.cluster.arrive.release;
// CHECK-NEXT: barrier.cluster.wait.acquire;
// CHECK-NEXT: ret;
// CHECK-NOT: mm_out_parts
// CHECK-NOT: atom.
// CHECK-NOT: fence.acq_rel.gpu
// JSON: "role": "out",
// JSON: "grid": [2, 1, 2],
// JSON: "cluster": [1, 1, 2],
// FOUR: "grid": [4, 1, 4],
// FOUR: "cluster": [1, 1, 4],
// REPORT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PARTS: napkin-opt: error: napkin-sm90: split=2 makes 2 parts of 512 along 'k', and a cluster takes the parts of one tile: give cluster=2
// PERSISTENT: napkin-opt: error: napkin-sm90: split=2 launches a plain grid: persistent cannot be honoured with it
// LAUNCH: napkin-opt: error: hbm-launch: @mm: cluster=3: the sums are split in 2 parts over the grid (k), and a cluster takes the parts of one output tile: give cluster=2
// GROUP: napkin-opt: error: hbm-launch: @mm: cluster=2 clusters the parts of split sums on a plain grid: persistent, group and order=last cannot be honoured with it

func.func @mm(%a: !ncd.tensor<m=256, k=1024 : bf16>, %b: !ncd.tensor<k=1024, n=128 : bf16>) -> !ncd.tensor<m=256, n=128 : bf16> {
  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=256, k=1024 : bf16>, !ncd.tensor<k=1024, n=128 : bf16> -> !ncd.tensor<m=256, n=128 : f32>
  %r = ncd.map cast %c : !ncd.tensor<m=256, n=128 : f32> -> !ncd.tensor<m=256, n=128 : bf16>
  func.return %r : !ncd.tensor<m=256, n=128 : bf16>
}
