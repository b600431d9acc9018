// Attention's forward that also writes the log-sum-exp of each row (what the gradient
// recomputes the probabilities from): after the stream, lse = (row max + log2 row sum) ln 2
// on the `row` fragments (`reg.map log2`, `lg2.approx.ftz.f32`), stored by `reg.store` of
// the `row` fragment: the first lane of each quad (lane mod 4 = 0) writes the rows g and
// g + 8 of its warp's 16, rows past the ragged end (200 = 128 + 72) not written. On sm_90a
// the output leaves through stmatrix and a TMA store, the log-sum-exp straight from
// registers. ptxas accepts both, at head dims 64 and 128, without spills.
// RUN: napkin-opt %s -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8},smem-to-reg{warps="i:8"}' | filecheck %s --check-prefix=REG80
// RUN: napkin-opt %s -p 'ncd-relabel{grid="b,h,i:128" stream="j:128"},ncd-to-hbm,hbm-launch{order="last"},hbm-to-smem{copy="tma" store="tma"},smem-to-reg{mma="wgmma" a_registers=true},reg-wgmma-overlap,reg-pingpong' | filecheck %s --check-prefix=REG90
// RUN: napkin-opt %s -p napkin-sm80 -t ptx -o %t.80.ptx
// RUN: filecheck %s --check-prefix=PTX < %t.80.ptx
// RUN: %ptxas -v -arch=sm_80 %t.80.ptx -o %t.80.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: napkin-opt %s -p napkin-sm90 -t ptx -o %t.90.ptx
// RUN: filecheck %s --check-prefixes=PTX,TMA < %t.90.ptx
// RUN: %ptxas -v -arch=sm_90a %t.90.ptx -o %t.90.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: sed -e 's/d=64/d=128/g' -e 's/scale 0.125/scale 0.08838834764831845/g' %s | napkin-opt -p napkin-sm80 -t ptx -o %t.80.d128.ptx
// RUN: %ptxas -v -arch=sm_80 %t.80.d128.ptx -o %t.80.d128.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: sed -e 's/d=64/d=128/g' -e 's/scale 0.125/scale 0.08838834764831845/g' %s | napkin-opt -p napkin-sm90 -t ptx -o %t.90.d128.ptx
// RUN: %ptxas -v -arch=sm_90a %t.90.d128.ptx -o %t.90.d128.cubin 2>&1 | filecheck %s --check-prefix=REPORT
// The compiled sm_80 kernel, run in the PTX emulator, against float64.
// RUN: napkin-run %s --random-inputs --seed 5 --check --gpu napkin-sm80 2>&1 | filecheck %s --check-prefix=NUMBERS

// REG80:      smem.wait {pending = 0 : i32}
// REG80-NEXT: [[O:%.+]] = reg.map div [[ACC:%.+]], [[SUM:%.+]] : !reg.frag<c, i=16, d=64 : f32>, !reg.frag<row, i=16 : f32>
// REG80-NEXT: [[LOG:%.+]] = reg.map log2 [[SUM]] : !reg.frag<row, i=16 : f32> -> !reg.frag<row, i=16 : f32>
// REG80-NEXT: [[T:%.+]] = reg.map add [[MAX:%.+]], [[LOG]] : !reg.frag<row, i=16 : f32>, !reg.frag<row, i=16 : f32>
// REG80-NEXT: [[LSE:%.+]] = reg.map scale [[T]] by 0.6931471824645996 : !reg.frag<row, i=16 : f32> -> !reg.frag<row, i=16 : f32>
// REG80-NEXT: reg.store [[O]], %out0[%b0, %h0, %i0, %c0] : !reg.frag<c, i=16, d=64 : f32>, !hbm.global<b=2, h=4, i=200, d=64 : bf16>
// REG80-NEXT: reg.store [[LSE]], %out1[%b0, %h0, %i0] : !reg.frag<row, i=16 : f32>, !hbm.global<b=2, h=4, i=200 : f32>

// REG90:      reg.map log2 {{%.+}} : !reg.frag<row, i=16 : f32> -> !reg.frag<row, i=16 : f32>
// REG90:      [[LSE:%.+]] = reg.map scale {{%.+}} by 0.6931471824645996 : !reg.frag<row, i=16 : f32>
// REG90:      reg.stmatrix {{%.+}} -> {{%.+}} {at = #hbm.labels<d=0>} : !reg.frag<c, i=16, d=64 : f32>
// REG90-NEXT: smem.tma_store {{%.+}} -> %out0[%b0, %h0, %i0, %c0]
// REG90-NEXT: reg.store [[LSE]], %out1[%b0, %h0, %i0] : !reg.frag<row, i=16 : f32>, !hbm.global<b=2, h=4, i=200 : f32>

// the log-sum-exp is a plain pointer parameter, after the output's
// PTX:       .param .{{(u64|align 64 .b8)}} causal_attention_out0
// PTX-NEXT:  .param .u64 causal_attention_out1
// PTX:       lg2.approx.ftz.f32
// PTX-NEXT:  lg2.approx.ftz.f32
// TMA:       cp.async.bulk.tensor.4d.global.shared::cta.bulk_group
// rows g and g + 8 (32 bytes on), each where it lies before the end (room > 8 for the second)
// PTX:       @{{%p[0-9]+}} st.global.f32 [[[ADDR:%rd[0-9]+]]], %f{{[0-9]+}};
// PTX-NEXT:  mov.s32 {{%r[0-9]+}}, 8;
// PTX-NEXT:  setp.gt.s32 [[IN8:%p[0-9]+]], {{%r[0-9]+}}, {{%r[0-9]+}};
// PTX-NEXT:  and.pred [[OK8:%p[0-9]+]], {{%p[0-9]+}}, [[IN8]];
// PTX-NEXT:  @[[OK8]] st.global.f32 [[[ADDR]]+32], %f{{[0-9]+}};
// PTX-NOT:   st.global.f32

// REPORT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// NUMBERS: ran the compiled sm_80 PTX in the warp-level emulator
// NUMBERS: check output #0 against float64 reference: relative error {{.*}} (bound 2e-02 for bf16): ok
// NUMBERS: check output #1 against float64 reference: relative error {{.*}} (bound 1e-04 for f32): ok

func.func @causal_attention(%q: !ncd.tensor<b=2, h=4, i=200, d=64 : bf16>, %k: !ncd.tensor<b=2, h=4, j=200, d=64 : bf16>, %v: !ncd.tensor<b=2, h=4, j=200, d=64 : bf16>) -> (!ncd.tensor<b=2, h=4, i=200, d=64 : bf16>, !ncd.tensor<b=2, h=4, i=200 : f32>) {
  %s = ncd.contract %q, %k over [d] : !ncd.tensor<b=2, h=4, i=200, d=64 : bf16>, !ncd.tensor<b=2, h=4, j=200, d=64 : bf16> -> !ncd.tensor<b=2, h=4, i=200, j=200 : f32>
  %m = ncd.mask causal %s keep i >= j fill -inf : !ncd.tensor<b=2, h=4, i=200, j=200 : f32> -> !ncd.tensor<b=2, h=4, i=200, j=200 : f32>
  %p = ncd.softmax %m along j scale 0.125 : !ncd.tensor<b=2, h=4, i=200, j=200 : f32> -> !ncd.tensor<b=2, h=4, i=200, j=200 : f32>
  %lse = ncd.logsumexp %m along j scale 0.125 : !ncd.tensor<b=2, h=4, i=200, j=200 : f32> -> !ncd.tensor<b=2, h=4, i=200 : f32>
  %p16 = ncd.map cast %p : !ncd.tensor<b=2, h=4, i=200, j=200 : f32> -> !ncd.tensor<b=2, h=4, i=200, j=200 : bf16>
  %o = ncd.contract %p16, %v over [j] : !ncd.tensor<b=2, h=4, i=200, j=200 : bf16>, !ncd.tensor<b=2, h=4, j=200, d=64 : bf16> -> !ncd.tensor<b=2, h=4, i=200, d=64 : bf16>
  func.return %o, %lse : !ncd.tensor<b=2, h=4, i=200, d=64 : bf16>, !ncd.tensor<b=2, h=4, i=200 : f32>
}
