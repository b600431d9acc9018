// The MLP's gradients (Y = relu(X W1) W2), kernel by kernel, through both named pipelines:
// `ncd-grad{residuals=true}`, `ncd-fold-casts`, `ncd-extract`. The attention recipe plans them (the
// hidden axis h, or the rows m, streamed as keys). Every kernel assembles.
// dW2 = relu(X W1)^T dY: its blocks hold W1 [k, h] for their rows h, an M-major A, which stays in
// shared memory for wgmma's transpose bit (imm-trans-a = 1) rather than going into registers.
// RUN: napkin-opt %examples/mlp.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="mlp_grad" result=2},napkin-sm90' -t ptx --dump-pass-pipeline -o %t.w2_90.ptx 2>&1 | filecheck %s --check-prefix=W2-90
// RUN: %ptxas -arch=sm_90a %t.w2_90.ptx -o %t.w2_90.cubin
// RUN: filecheck %s --check-prefix=W2-90-PTX < %t.w2_90.ptx
// RUN: napkin-opt %examples/mlp.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="mlp_grad" result=2},napkin-sm80' -t ptx -o %t.w2_80.ptx
// RUN: %ptxas -arch=sm_80 %t.w2_80.ptx -o %t.w2_80.cubin
// RUN: not napkin-opt %examples/mlp.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="mlp_grad" result=2},napkin-sm90{q_registers=true}' -t ptx 2>&1 | filecheck %s --check-prefix=W2-REGS

// W2-90: ncd-relabel{grid="h:128" stream="m:128"}
// W2-90-SAME: smem-to-reg{{{.*}}mma="wgmma" hoist=true a_registers=false rows=""}
// W2-90-PTX-NOT: ldmatrix
// W2-90-PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, 1, 1, 1, 0;
// W2-REGS: napkin-sm90: q_registers=true {{.*}} holds its rows ('h') innermost (M-major): wgmma reads it from shared memory (q_registers=false)

// dW1 = X^T dH: dH, computed in registers, is the product's A (the product computed h x k); the
// output leaves from registers on sm_90a.
// RUN: napkin-opt %examples/mlp.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="mlp_grad" result=1},napkin-sm90' -t ptx --dump-pass-pipeline -o %t.w1_90.ptx 2>&1 | filecheck %s --check-prefix=W1-90
// RUN: %ptxas -arch=sm_90a %t.w1_90.ptx -o %t.w1_90.cubin
// RUN: napkin-opt %examples/mlp.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="mlp_grad" result=1},napkin-sm80' -t ptx -o %t.w1_80.ptx
// RUN: %ptxas -arch=sm_80 %t.w1_80.ptx -o %t.w1_80.cubin
// RUN: not napkin-opt %examples/mlp.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="mlp_grad" result=1},napkin-sm90{store=tma}' -t ptx 2>&1 | filecheck %s --check-prefix=W1-TMA

// W1-90: ncd-relabel{grid="h:128" stream="m:64"}
// W1-90-SAME: store="direct"
// W1-TMA: napkin-sm90: store=tma writes the accumulators' rows ('h') as rows of the output's panels; this output holds them innermost
