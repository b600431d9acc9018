// ncd-extract keeps one result of one function, the ops and arguments it needs, named by
// the argument a gradient's result is the cotangent of; with ncd-grad and ncd-fold-casts,
// each gradient of a GEMM is a GEMM that both pipelines compile.
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-grad,ncd-fold-casts,ncd-extract{function="matmul_grad" result=0}' | filecheck %s --check-prefix=DA
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-grad,ncd-fold-casts,ncd-extract{function="matmul_grad" result=1}' | filecheck %s --check-prefix=DB
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-grad,ncd-fold-casts,ncd-extract{function="matmul_grad" result=1},napkin-sm80' -t ptx -o %t.db80.ptx
// RUN: %ptxas -arch=sm_80 %t.db80.ptx -o %t.db80.cubin
// RUN: napkin-opt %examples/matmul.mlir -p 'ncd-grad,ncd-fold-casts,ncd-extract{function="matmul_grad" result=1},napkin-sm90' -t ptx -o %t.db90.ptx
// RUN: %ptxas -arch=sm_90a %t.db90.ptx -o %t.db90.cubin
// RUN: napkin-opt %examples/two_products.mlir -p 'ncd-extract{function="two" result=1}' | filecheck %s --check-prefix=PLAIN
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="attention_grad" results="1,2" cut="delta"}' | filecheck %s --check-prefix=KV
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="attention_grad" results="1,2" cut="delta"},napkin-sm80' -t ptx -o %t.kv80.ptx
// RUN: %ptxas -arch=sm_80 %t.kv80.ptx -o %t.kv80.cubin
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="attention_grad" results="1,2" cut="delta"},napkin-sm90' -t ptx -o %t.kv90.ptx
// RUN: %ptxas -arch=sm_90a %t.kv90.ptx -o %t.kv90.cubin
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-grad,ncd-extract{function="matmul_grad" results="1,1"}' 2>&1 | filecheck %s --check-prefix=TWICE
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-extract{function="nope"}' 2>&1 | filecheck %s --check-prefix=NOFUNC
// RUN: not napkin-opt %examples/matmul.mlir -p 'ncd-grad,ncd-extract{function="matmul_grad" result=2}' 2>&1 | filecheck %s --check-prefix=NORESULT
// value= extracts a named value; cut= makes named values arguments (the attention gradient's D).
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-grad{residuals=true},ncd-extract{function="attention_grad" value="delta"}' | filecheck %s --check-prefix=VALUE
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-grad{residuals=true},ncd-extract{function="attention_grad" result=1 cut="delta"}' | filecheck %s --check-prefix=CUT
// RUN: not napkin-opt %examples/attention.mlir -p 'ncd-grad{residuals=true},ncd-extract{function="attention_grad" cut="nope"}' 2>&1 | filecheck %s --check-prefix=NONAME
// RUN: not napkin-opt %examples/attention.mlir -p 'ncd-grad{residuals=true},ncd-extract{function="attention_grad" result=1 value="delta"}' 2>&1 | filecheck %s --check-prefix=BOTH
// RUN: not napkin-opt %examples/attention.mlir -p 'ncd-grad{residuals=true},ncd-extract{function="attention_grad" value="delta" cut="delta"}' 2>&1 | filecheck %s --check-prefix=SELF
// RUN: not napkin-opt %examples/attention.mlir -p 'ncd-grad{residuals=true},ncd-extract{function="attention_grad" value="delta,delta"}' 2>&1 | filecheck %s --check-prefix=VALUES-TWICE

// DA:      func.func @matmul_grad_a(%b: !ncd.tensor<k=256, n=384 : bf16>, %d_c: !ncd.tensor<m=512, n=384 : bf16>) -> !ncd.tensor<m=512, k=256 : bf16>
// DA-NEXT:   ncd.contract %d_c, %b over [n] : !ncd.tensor<m=512, n=384 : bf16>, !ncd.tensor<k=256, n=384 : bf16> -> !ncd.tensor<m=512, k=256 : f32>
// DA-NEXT:   ncd.map cast
// DA-NEXT:   func.return
// DA-NOT:  func.func
// DB:      func.func @matmul_grad_b(%a: !ncd.tensor<m=512, k=256 : bf16>, %d_c: !ncd.tensor<m=512, n=384 : bf16>) -> !ncd.tensor<k=256, n=384 : bf16>
// DB-NEXT:   ncd.contract %d_c, %a over [m]
// PLAIN:   func.func @two_1(
// NOFUNC:  napkin-opt: error: ncd-extract: no function @nope; the module has @matmul
// NORESULT: napkin-opt: error: ncd-extract: @matmul_grad has 2 results; result=2 is not one
// VALUE:      func.func @attention_grad_delta(%d_o: !ncd.tensor<b=2, h=4, i=256, d=64 : bf16>, %o: !ncd.tensor<b=2, h=4, i=256, d=64 : bf16>) -> !ncd.tensor<b=2, h=4, i=256 : f32>
// VALUE:        %delta = ncd.reduce sum {{%.+}} along [d]
// VALUE-NEXT:   func.return %delta
// CUT:        func.func @attention_grad_k(%q: {{.*}}, %k: {{.*}}, %v: {{.*}}, %d_o: {{.*}}, %lse: !ncd.tensor<b=2, h=4, i=256 : f32>, %delta: !ncd.tensor<b=2, h=4, i=256 : f32>)
// CUT-NOT:      ncd.reduce
// CUT:          ncd.map sub %d_p16, %delta
// NONAME:     napkin-opt: error: ncd-extract: @attention_grad has no value %nope; its named values are
// BOTH:       napkin-opt: error: ncd-extract: give result= (or results=) or value=, not both
// SELF:       napkin-opt: error: ncd-extract: %delta is what is extracted; it cannot also be cut
// VALUES-TWICE: napkin-opt: error: ncd-extract: value="delta,delta" should name each value once

// KV: func.func @attention_grad_k_v(
// KV-SAME: -> (!ncd.tensor<b=2, h=4, j=256, d=64 : bf16>, !ncd.tensor<b=2, h=4, j=256, d=64 : bf16>)
// KV: %d_v = ncd.contract %d_o, %p16 over [i]
// KV: %d_k = ncd.contract %d_s16, %q over [i]
// KV: func.return %d_k_1, %d_v_1
// TWICE: napkin-opt: error: ncd-extract: results="1,1" should name each result once
