// split=S: S blocks share each output tile's contraction, each streaming its part of k
// and adding its sum into the f32 output (red.global.add.f32); the launch contract names
// the output `accumulate`, to be zeroed before each launch. Both pipelines assemble.
// RUN: napkin-opt %s -p 'napkin-sm80{split=4}' -t ptx -o %t.80.ptx --launch-json %t.80.json
// RUN: %ptxas -arch=sm_80 %t.80.ptx -o %t.80.cubin
// RUN: filecheck %s --check-prefix=PTX < %t.80.ptx
// RUN: filecheck %s --check-prefix=JSON < %t.80.json
// RUN: napkin-opt %s -p 'napkin-sm90{block="128,128,64" split=4}' -t ptx -o %t.90.ptx --launch-json %t.90.json
// RUN: %ptxas -arch=sm_90a %t.90.ptx -o %t.90.cubin 2>&1 | filecheck %s --check-prefix=QUIET --allow-empty
// RUN: filecheck %s --check-prefix=PTX < %t.90.ptx
// RUN: filecheck %s --check-prefix=JSON90 < %t.90.json
// RUN: not napkin-opt %s -p 'napkin-sm90{block="128,128,64" split=40}' 2>&1 | filecheck %s --check-prefix=MANY
// RUN: not napkin-opt %s -p 'napkin-sm90{block="128,128,64" split=4 cluster=2}' 2>&1 | filecheck %s --check-prefix=CLUSTER
// RUN: sed 's/: f32>/: bf16>/g' %s | not napkin-opt -p 'napkin-sm80{split=2}' 2>&1 | filecheck %s --check-prefix=HALF
// RUN: not napkin-opt %examples/attention.mlir -p 'napkin-sm90{split=2}' 2>&1 | filecheck %s --check-prefix=ATTN

// PTX: mov.u32 {{%r[0-9]+}}, %ctaid.z;
// PTX: red.global.add.f32 [{{%rd[0-9]+}}], {{%f[0-9]+}};
// PTX-NOT: st.global
// JSON: "name": "mm_out",
// JSON: "role": "accumulate",
// JSON: "grid": [2, 1, 4],
// JSON90: "role": "accumulate",
// JSON90: "grid": [2, 1, 4],
// JSON90: "persistent_blocks_per_sm": 0,
// QUIET-NOT: serialized
// MANY: napkin-opt: error: napkin-sm90: split=40 is more parts than axis 'k' has stream tiles (16 of 64)
// CLUSTER: napkin-opt: error: napkin-sm90: split=4 launches a plain grid: cluster and persistent cannot be honoured with it
// HALF: napkin-opt: error: napkin-sm80: split=2 adds each block's part of the sum into the output, which must be f32
// ATTN: napkin-opt: error: napkin-sm90: split=2 cannot be honoured for attention on sm_90a

func.func @mm(%a: !ncd.tensor<m=256, k=1000 : bf16>, %b: !ncd.tensor<k=1000, n=128 : bf16>) -> !ncd.tensor<m=256, n=128 : f32> {
  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=256, k=1000 : bf16>, !ncd.tensor<k=1000, n=128 : bf16> -> !ncd.tensor<m=256, n=128 : f32>
  func.return %c : !ncd.tensor<m=256, n=128 : f32>
}
// RUN: not napkin-opt %examples/row_softmax.mlir -p 'napkin-sm80{split=2}' 2>&1 | filecheck %s --check-prefix=ROWS
// ROWS: napkin-opt: error: napkin-sm80: split=2 cannot be honoured for a row reduction
