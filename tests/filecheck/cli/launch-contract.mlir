// The launch contract beside the PTX file: `-t launch` prints it, `--launch-json FILE` writes it
// next to what `-t` prints; the parameters carry the diagram's types, read before lowering.
// RUN: napkin-opt %s -p napkin-sm90 -t launch | filecheck %s
// RUN: napkin-opt %s -p 'napkin-sm90{block="128,256,64" cluster=2 persistent=false}' -t ptx -o %t.ptx --launch-json %t.json
// RUN: filecheck %s --check-prefix=CLUSTER < %t.json
// RUN: napkin-opt %s -p 'napkin-sm90{block="128,256,64" cluster=2}' -t launch | filecheck %s --check-prefix=PCLUSTER
// RUN: filecheck %s --check-prefix=PTX < %t.ptx
// RUN: napkin-opt %examples/causal_attention.mlir -p napkin-sm80 -t launch | filecheck %s --check-prefix=ATTN
// RUN: napkin-opt %examples/gemm_bias.mlir -p napkin-sm90 -t launch | filecheck %s --check-prefix=BIAS
// RUN: not napkin-opt %s -t launch 2>&1 | filecheck %s --check-prefix=NOKERNEL
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-sink-scales,ncd-extract{function="attention_grad" results="0,1,2" cut="delta"},ncd-widen-results{result=0},napkin-sm90' -t launch | filecheck %s --check-prefix=GRAD
// RUN: not napkin-opt %S/../../gpu/kernels/mma_sync.mlir -p convert-arith-to-ptx -t launch 2>&1 | filecheck %s --check-prefix=NOCONFIG

// CHECK:      "format": "napkin-launch/1",
// CHECK:      "kernel": "matmul",
// CHECK-NEXT: "target": "sm_90a",
// CHECK:        "name": "matmul_a",
// CHECK-NEXT:   "arg": "a",
// CHECK-NEXT:   "kind": "tensormap",
// CHECK-NEXT:   "role": "in",
// CHECK-NEXT:   "dtype": "bf16",
// CHECK-NEXT:   "axes": ["m", "k"],
// CHECK-NEXT:   "shape": [512, 256],
// CHECK-NEXT:   "tma": {
// CHECK-NEXT:     "box": [64, 64],
// CHECK-NEXT:     "swizzle": "128B",
// CHECK-NEXT:     "data_type": "BFLOAT16",
// CHECK:        "arg": "out",
// CHECK-NEXT:   "kind": "tensormap",
// CHECK-NEXT:   "role": "out",
// CHECK:      "grid": [48, 1, 1],
// CHECK-NEXT: "persistent_blocks_per_sm": 1,
// CHECK-NEXT: "grid_rule": "persistent: grid.x = min(48, 1 x the device's multiprocessor count); each block loops over the tiles",
// CHECK-NEXT: "block": [256, 1, 1],
// CHECK-NEXT: "dynamic_smem_bytes": {{[0-9]+}},
// CHECK-NEXT: "cluster": null,
// CHECK-NEXT: "pipeline": "napkin-sm90"

// CLUSTER: "grid": [4, 2, 1],
// CLUSTER: "persistent_blocks_per_sm": 0,
// CLUSTER: "cluster": [2, 1, 1],

// PCLUSTER: "grid": [8, 1, 1],
// PCLUSTER-NEXT: "persistent_blocks_per_sm": 1,
// PCLUSTER-NEXT: "grid_rule": "persistent: grid.x = min(8, 1 x the device's multiprocessor count), rounded down to a whole number of clusters of 2; each block loops over the tiles",
// PCLUSTER: "cluster": [2, 1, 1],

// PTX: .target sm_90a
// PTX: .entry matmul(

// ATTN:      "kernel": "causal_attention",
// ATTN-NEXT: "target": "sm_80",
// ATTN:        "arg": "q",
// ATTN-NEXT:   "kind": "pointer",
// ATTN-NEXT:   "role": "in",
// ATTN-NEXT:   "dtype": "bf16",
// ATTN-NEXT:   "axes": ["b", "h", "i", "d"],
// ATTN-NEXT:   "shape": [2, 4, 256, 64]
// ATTN:      "block": [256, 1, 1],

// NOKERNEL: napkin-opt: error: a launch contract describes one kernel; the module has 0 ptx.kernel ops: lower it to ptx first
// NOCONFIG: napkin-opt: error: @mma_m16n8k16 carries no launch configuration

func.func @matmul(%a: !ncd.tensor<m=512, k=256 : bf16>, %b: !ncd.tensor<k=256, n=384 : bf16>) -> !ncd.tensor<m=512, n=384 : bf16> {
  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=512, k=256 : bf16>, !ncd.tensor<k=256, n=384 : bf16> -> !ncd.tensor<m=512, n=384 : bf16>
  func.return %c : !ncd.tensor<m=512, n=384 : bf16>
}

// A GEMM's bias is a pointer among the tensor maps, an input of its own type and axes.
// BIAS:      "kernel": "gemm_bias",
// BIAS:        "name": "gemm_bias_b",
// BIAS:        "name": "gemm_bias_bias",
// BIAS-NEXT:   "arg": "bias",
// BIAS-NEXT:   "kind": "pointer",
// BIAS-NEXT:   "role": "in",
// BIAS-NEXT:   "dtype": "f32",
// BIAS-NEXT:   "axes": ["n"],
// BIAS-NEXT:   "shape": [192]
// BIAS-NEXT: },
// BIAS-NEXT: {
// BIAS-NEXT:   "name": "gemm_bias_out",
// BIAS-NEXT:   "arg": "out",
// BIAS-NEXT:   "kind": "tensormap",

// a pipeline that derives the kernel's function (the gradient's, not the forward's the
// input holds) types the parameters as that function's; dQ's sum carries its factor
// GRAD:      "kernel": "attention_grad_q_k_v",
// GRAD:        "arg": "d_o",
// GRAD-NEXT:   "kind": "tensormap",
// GRAD-NEXT:   "role": "in",
// GRAD-NEXT:   "dtype": "bf16",
// GRAD:        "arg": "lse",
// GRAD-NEXT:   "kind": "tensormap",
// GRAD-NEXT:   "role": "in",
// GRAD-NEXT:   "dtype": "f32",
// GRAD-NEXT:   "axes": ["b", "h", "i"],
// GRAD:        "arg": "out0",
// GRAD-NEXT:   "kind": "tensormap",
// GRAD-NEXT:   "role": "accumulate",
// GRAD-NEXT:   "dtype": "f32",
// GRAD-NEXT:   "axes": ["b", "h", "i", "d"],
// GRAD-NEXT:   "shape": [2, 4, 256, 64],
// GRAD:        "scale": 0.125
// GRAD:        "arg": "out1",
// GRAD-NEXT:   "kind": "pointer",
// GRAD-NEXT:   "role": "out",
// GRAD-NEXT:   "dtype": "bf16",
// GRAD-NOT:    "scale"
// GRAD:      "grid":
