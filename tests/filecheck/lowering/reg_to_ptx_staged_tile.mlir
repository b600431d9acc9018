// reg-to-ptx: `reg.read` of a `c` fragment (a staged tile in the accumulators' lanes) is one
// ldmatrix.x4 per 16 x 16 of the warp's part, from one base register with the slices in
// immediates, plain where the buffer's rows are the fragment's rows (dA: dC<m, n>) and
// `.trans` where they are its columns (dB: dC<m, n> read as <n, m>), each register's pair
// widened to f32; dB's product, computed transposed, is the first operand (`reg.to_a`).
// RUN: napkin-opt %examples/gemm_exp.mlir -p 'ncd-grad,ncd-fold-casts,ncd-extract{function="gemm_exp_grad" result=0},ncd-relabel{grid="m:128" stream="n:64"},ncd-to-hbm,hbm-to-smem{layout=pad8},smem-to-reg{warps="m:8"},reg-to-ptx' -t ptx | filecheck %s --check-prefix=DA
// RUN: napkin-opt %examples/gemm_exp.mlir -p 'ncd-grad,ncd-fold-casts,ncd-extract{function="gemm_exp_grad" result=1},ncd-relabel{grid="n:128" stream="m:64"},ncd-to-hbm,hbm-to-smem{layout=pad8},smem-to-reg{warps="n:8"},reg-to-ptx' -t ptx | filecheck %s --check-prefix=DB

// DA: ex2.approx.ftz.f32
// DA: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [[[BASE:%r[0-9]+]]];
// DA-NEXT: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{.*}}, [[[BASE]]+32];
// DA-NEXT: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{.*}}, [[[BASE]]+64];
// DA-NEXT: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{.*}}, [[[BASE]]+96];
// DA-NEXT: mov.b32 {[[LO:%bh[0-9]+]], [[HI:%bh[0-9]+]]}, %r{{[0-9]+}};
// DA-NEXT: cvt.f32.bf16 %f{{[0-9]+}}, [[LO]];
// DA-NEXT: cvt.f32.bf16 %f{{[0-9]+}}, [[HI]];
// DA: mul.f32

// 16 rows of 128 bytes, padded by 16, per 16 columns of the fragment
// DB: ex2.approx.ftz.f32
// DB: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {{.*}}, [[[BASE:%r[0-9]+]]];
// DB-NEXT: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {{.*}}, [[[BASE]]+4352];
// DB-NEXT: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {{.*}}, [[[BASE]]+8704];
// DB-NEXT: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {{.*}}, [[[BASE]]+13056];
// DB-NEXT: mov.b32 {[[LO:%bh[0-9]+]], [[HI:%bh[0-9]+]]}, %r{{[0-9]+}};
// DB-NEXT: cvt.f32.bf16 %f{{[0-9]+}}, [[LO]];
// DB: mul.f32
// DB: cvt.rn.bf16x2.f32
// DB: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
