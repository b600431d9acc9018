// napkin-model answers bad input with one diagnostic and a non-zero exit, never a traceback.
// RUN: not napkin-model %t.missing.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: echo 'func.func @f(%%a: !ncd.tensor<m=4' | not napkin-model 2>&1 | filecheck %s --check-prefix=PARSE
// RUN: not napkin-model %examples/matmul.mlir --hw b200 2>&1 | filecheck %s --check-prefix=HW
// RUN: echo 'builtin.module {}' | not napkin-model - 2>&1 | filecheck %s --check-prefix=EMPTY
// RUN: not napkin-model %examples/matmul.mlir --hw a100 --mma wgmma 2>&1 | filecheck %s --check-prefix=WGMMA
// RUN: not napkin-model %examples/matmul.mlir --ptxas 2>&1 | filecheck %s --check-prefix=PTXAS
// RUN: napkin-opt %examples/matmul.mlir -p napkin-sm80 | not napkin-model - 2>&1 | filecheck %s --check-prefix=PTX
// RUN: not napkin-model %s 2>&1 | filecheck %s --check-prefix=SMEM

// MISSING: napkin-model: error: no such file: {{.*}}missing.mlir
// MISSING-NOT: Traceback
// PARSE: napkin-model: error: cannot parse the input:
// PARSE-NOT: Traceback
// HW: napkin-model: error: argument --hw: invalid choice: 'b200' (choose from {{.*}}a100{{.*}}h100{{.*}}h200{{.*}}) (see napkin-model --help)
// EMPTY: napkin-model: error: nothing to model: the module has no function with a body and no hbm.kernel
// WGMMA: napkin-model: error: the A100 SXM4 80GB has no wgmma; --mma wgmma needs an H100 or H200
// PTXAS: napkin-model: error: --ptxas needs a module at the reg level; this one is at the ncd level
// PTX: napkin-model: error: the module is at the ptx level, below what the model reads
// SMEM: napkin-model: error: @big: a block needs 245760 bytes of shared memory; the H100 SXM5 80GB gives one block at most 232448

// A kernel whose buffers (4 stages of 2 x 256 x 120 bf16) do not fit one block's shared memory.
hbm.kernel attributes {sym_name = "big", grid = #hbm.labels<m=256>, num_outputs = 1 : i32} {
^bb0(%a: !hbm.global<m=512, k=120 : bf16>, %out: !hbm.global<m=512, k=120 : bf16>, %m0: index):
  %c0 = arith.constant 0 : index
  %buf = smem.alloc : !smem.buffer<m=256, k=120 : bf16, stages=4, layout=row>
  smem.copy %a[%m0, %c0] -> %buf[%c0] : !hbm.global<m=512, k=120 : bf16>, !smem.buffer<m=256, k=120 : bf16, stages=4, layout=row>
  smem.commit
  smem.wait {pending = 0 : i32}
  smem.barrier
  %t = smem.read %buf[%c0] : !smem.buffer<m=256, k=120 : bf16, stages=4, layout=row> -> !ncd.tensor<m=256, k=120 : bf16>
  hbm.store %t, %out[%m0, %c0] : !ncd.tensor<m=256, k=120 : bf16>, !hbm.global<m=512, k=120 : bf16>
  hbm.return
}
