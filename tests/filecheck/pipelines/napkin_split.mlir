// split=S: S blocks share each output tile's contraction, each streaming its part of k
// and adding its sum into the f32 output (red.global.add.f32; on sm_90 a lane's pair at once,
// red.global.add.v2.f32, which PTX ISA 8.1 has); the launch contract names
// the output `accumulate`, to be zeroed before each launch. Both pipelines assemble.
// A bf16 output (HALF): each part writes its f32 sums to its slice of the kernel's scratch
// (mm_out_parts), each warp counts its arrival (mm_out_arrivals, atom), and the warp that
// arrives last reads the parts back, adds them in order, rounds the sum into the output and
// sets its counter back to zero: nothing to zero, no red, no waiting; store=tma is refused
// (the last part stores from registers).
// RUN: napkin-opt %s -p 'napkin-sm80{split=4}' -t ptx -o %t.80.ptx --launch-json %t.80.json
// RUN: %ptxas -arch=sm_80 %t.80.ptx -o %t.80.cubin
// RUN: filecheck %s --check-prefix=PTX < %t.80.ptx
// RUN: filecheck %s --check-prefix=JSON < %t.80.json
// RUN: napkin-opt %s -p 'napkin-sm90{block="128,128,64" split=4}' -t ptx -o %t.90.ptx --launch-json %t.90.json
// RUN: %ptxas -arch=sm_90a %t.90.ptx -o %t.90.cubin 2>&1 | filecheck %s --check-prefix=QUIET --allow-empty
// RUN: filecheck %s --check-prefix=PTX90 < %t.90.ptx
// RUN: filecheck %s --check-prefix=JSON90 < %t.90.json
// RUN: not napkin-opt %s -p 'napkin-sm90{block="128,128,64" split=40}' 2>&1 | filecheck %s --check-prefix=MANY
// RUN: not napkin-opt %s -p 'napkin-sm90{block="128,128,64" split=4 cluster=2}' 2>&1 | filecheck %s --check-prefix=CLUSTER
// RUN: sed 's/: f32>/: bf16>/g' %s > %t.half.mlir
// RUN: napkin-opt %t.half.mlir -p 'napkin-sm80{split=2}' -t ptx -o %t.h80.ptx --launch-json %t.h80.json
// RUN: %ptxas -arch=sm_80 %t.h80.ptx -o %t.h80.cubin
// RUN: filecheck %s --check-prefix=HALF < %t.h80.ptx
// RUN: filecheck %s --check-prefix=HALFJSON < %t.h80.json
// RUN: napkin-opt %t.half.mlir -p 'napkin-sm90{block="128,128,64" split=4}' -t ptx -o %t.h90.ptx
// RUN: %ptxas -arch=sm_90a %t.h90.ptx -o %t.h90.cubin
// RUN: filecheck %s --check-prefix=HALF < %t.h90.ptx
// RUN: not napkin-opt %t.half.mlir -p 'napkin-sm90{block="128,128,64" split=4 store=tma}' 2>&1 | filecheck %s --check-prefix=HALFTMA
// RUN: sed 's/m=256/m=65536/g; s/n=128/n=8192/g' %t.half.mlir | not napkin-opt -p 'napkin-sm90{split=2}' 2>&1 | filecheck %s --check-prefix=SCRATCH
// RUN: not napkin-opt %examples/attention.mlir -p 'napkin-sm90{split=2}' 2>&1 | filecheck %s --check-prefix=ATTN

// PTX: mov.u32 {{%r[0-9]+}}, %ctaid.z;
// PTX: red.global.add.f32 [{{%rd[0-9]+}}], {{%f[0-9]+}};
// PTX-NOT: st.global
// PTX90: .version 8.1
// PTX90: mov.u32 {{%r[0-9]+}}, %ctaid.z;
// PTX90: red.global.add.v2.f32 [{{%rd[0-9]+}}], {{{%f[0-9]+}}, {{%f[0-9]+}}};
// PTX90-NOT: red.global.add.f32
// PTX90-NOT: st.global
// JSON: "name": "mm_out",
// JSON: "role": "accumulate",
// JSON: "grid": [2, 1, 4],
// JSON90: "role": "accumulate",
// JSON90: "grid": [2, 1, 4],
// JSON90: "persistent_blocks_per_sm": 0,
// QUIET-NOT: serialized
// MANY: napkin-opt: error: napkin-sm90: split=40 is more parts than axis 'k' has stream tiles (16 of 64)
// CLUSTER: napkin-opt: error: napkin-sm90: split=4 with cluster=2 adds the parts' sums in shared memory and rounds them into one 16-bit output; this diagram's sums are f32 or several: leave cluster=1
// HALF: .global .align 16 .b8 mm_out_parts[{{262144|524288}}];
// HALF: .global .align 4 .b8 mm_out_arrivals[{{[0-9]+}}];
// HALF: st.global.v2.f32
// HALF: fence.acq_rel.gpu;
// HALF: bar.warp.sync 0xffffffff;
// HALF: atom.acq_rel.gpu.global.add.u32
// HALF: shfl.sync.idx.b32
// HALF: setp.eq.u32
// HALF-NEXT: bar.warp.sync 0xffffffff;
// HALF-NEXT: fence.acq_rel.gpu;
// HALF: ld.global.cg.v2.f32
// HALF: add.f32
// HALF: cvt.rn.bf16x2.f32
// HALF: st.global.b32
// HALF: st.global.u32 [{{%rd[0-9]+}}], {{%r[0-9]+}};
// HALF-NOT: red.global
// HALF-NOT: ld.acquire
// HALFJSON: "name": "mm_out",
// HALFJSON-NEXT: "arg": "out",
// HALFJSON-NEXT: "kind": "pointer",
// HALFJSON-NEXT: "role": "out",
// SCRATCH: napkin-opt: error: napkin-sm90: split=2 of a 16-bit output keeps every part's f32 sums in a scratch of the module: 4.0 GiB here, over 1 GiB
// HALFTMA: napkin-opt: error: napkin-sm90: split=4 rounds each output tile's sum in the part that finishes last, which stores it directly: use store=direct or auto
// ATTN: napkin-opt: error: napkin-sm90: split=2 cannot be honoured for attention on sm_90a

func.func @mm(%a: !ncd.tensor<m=256, k=1000 : bf16>, %b: !ncd.tensor<k=1000, n=128 : bf16>) -> !ncd.tensor<m=256, n=128 : f32> {
  %c = ncd.contract %a, %b over [k] : !ncd.tensor<m=256, k=1000 : bf16>, !ncd.tensor<k=1000, n=128 : bf16> -> !ncd.tensor<m=256, n=128 : f32>
  func.return %c : !ncd.tensor<m=256, n=128 : f32>
}
// RUN: not napkin-opt %examples/row_softmax.mlir -p 'napkin-sm80{split=2}' 2>&1 | filecheck %s --check-prefix=ROWS
// ROWS: napkin-opt: error: napkin-sm80: split=2 cannot be honoured for a row reduction
