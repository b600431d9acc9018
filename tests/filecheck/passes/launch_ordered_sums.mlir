// hbm-launch{ordered=true} orders the parts of a split sum (hbm.ordered_sums): reg-to-ptx
// then waits for each tile's turn on a zero-initialised module-scope counter, writes the
// first part, adds the rest (no red, no zeroing: the output's role stays "out"), and
// passes the turn on. Both pipelines assemble; a split not launched last is refused.
// RUN: napkin-opt %s -p 'ncd-relabel{grid="m:128,n:128,k:256" stream="k:32"},ncd-to-hbm,hbm-launch{ordered=true}' | filecheck %s
// RUN: napkin-opt %s -p 'napkin-sm80{split=4 deterministic=true}' -t ptx -o %t.80.ptx --launch-json %t.80.json
// RUN: %ptxas -arch=sm_80 %t.80.ptx -o %t.80.cubin
// RUN: filecheck %s --check-prefix=PTX < %t.80.ptx
// RUN: filecheck %s --check-prefix=JSON < %t.80.json
// RUN: napkin-opt %s -p 'napkin-sm90{block="128,128,64" split=4 deterministic=true}' -t ptx -o %t.90.ptx
// RUN: %ptxas -arch=sm_90a %t.90.ptx -o %t.90.cubin
// RUN: filecheck %s --check-prefix=PTX < %t.90.ptx
// RUN: not napkin-opt %s -p 'ncd-relabel{grid="k:256,m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-launch{ordered=true}' 2>&1 | filecheck %s --check-prefix=LAST
// RUN: not napkin-opt %examples/attention.mlir -p 'napkin-sm80{deterministic=true}' 2>&1 | filecheck %s --check-prefix=ATTN

// CHECK: hbm.kernel attributes {sym_name = "mm", grid = #hbm.labels<m=128, n=128, k=256>, num_outputs = 1 : i32, {{.*}}hbm.ordered_sums}
// PTX: .global .align 4 .b8 mm_turns[8];
// PTX: mov.u64 [[BASE:%rd[0-9]+]], mm_turns;
// PTX: ld.acquire.gpu.global.u32
// PTX: fence.acq_rel.gpu;
// PTX: ld.global.cg.v2.f32
// PTX: selp.f32
// PTX: st.global.v2.f32
// PTX: fence.acq_rel.gpu;
// PTX: st.release.gpu.global.u32
// PTX-NOT: red.global
// JSON: "name": "mm_out",
// JSON-NEXT: "arg": "out",
// JSON-NEXT: "kind": "pointer",
// JSON-NEXT: "role": "out",
// LAST: napkin-opt: error: hbm-launch: @mm: ordered=true waits for the earlier parts of a sum, so its split axes ['k'] must be the grid's last (launched slowest); the grid is ['k', 'm', 'n']
// ATTN: napkin-opt: error: napkin-sm80: deterministic=true cannot be honoured for attention on sm_80

func.func @mm(%a: !ncd.tensor<m=256, k=1000 : bf16>, %b: !ncd.tensor<k=1000, n=128 : bf16>) -> !ncd.tensor<m=256, n=128 : f32> {
  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=256, k=1000 : bf16>, !ncd.tensor<k=1000, n=128 : bf16> -> !ncd.tensor<m=256, n=128 : f32>
  func.return %c : !ncd.tensor<m=256, n=128 : f32>
}
