// reg-to-ptx: accumulators whose rows are the output's last axis (the MLP's dW1 [k, h], computed
// as h x k) leave value by value: each rounded to bf16 and stored with st.global.b16, rows h an
// element apart (8 lanes, 16 contiguous bytes), columns k a row of the output (1024 bytes) apart.
// On sm_90a too the accumulators leave from registers (TMA stores write rows of the output's panels).
// RUN: napkin-opt %examples/mlp.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="mlp_grad" result=1},napkin-sm80' -t ptx -o %t.sm80.ptx
// RUN: %ptxas -arch=sm_80 %t.sm80.ptx -o %t.sm80.cubin
// RUN: filecheck %s < %t.sm80.ptx
// RUN: napkin-opt %examples/mlp.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="mlp_grad" result=1},napkin-sm90' -t ptx -o %t.sm90.ptx
// RUN: %ptxas -arch=sm_90a %t.sm90.ptx -o %t.sm90.cubin
// RUN: filecheck %s < %t.sm90.ptx

// CHECK: .entry mlp_grad_w1(
// CHECK: cvt.rn.bf16.f32 [[V:%.+]], %f{{[0-9]+}};
// CHECK-NEXT: st.global.b16 [[[BASE:%rd[0-9]+]]], [[V]];
// CHECK: st.global.b16 [[[BASE]]+1024], %{{.+}};
// CHECK-NOT: stmatrix
