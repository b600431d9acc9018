// Streaming the key axis of attention: the online softmax (running row max and row sum,
// rescaled accumulator), the online L2 norm (running sum of squares, nothing to rescale),
// and causal attention's clipped, split loop, all from the same streamed reductions.
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm' | filecheck %s --check-prefix=ATTN
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm' | filecheck %s --check-prefix=CAUSAL
// RUN: napkin-opt %examples/spherical_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm' | filecheck %s --check-prefix=SPHERE
// The kernels compute what the diagrams do (the CPU interpreters, against float64 numpy).
// RUN: napkin-opt %examples/attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm' | napkin-run - --random-inputs --seed 2 --check | filecheck %s --check-prefix=NUMBERS
// RUN: napkin-opt %examples/causal_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm' | napkin-run - --random-inputs --seed 2 --check | filecheck %s --check-prefix=NUMBERS
// RUN: napkin-opt %examples/spherical_attention.mlir -p 'ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm' | napkin-run - --random-inputs --seed 2 --check | filecheck %s --check-prefix=NUMBERS

// NUMBERS: check against float64 reference: relative error {{.*}} (bound 2e-02 for bf16): ok

// The grid is (b, h, i-tiles); the Q tile is loaded once, before the stream.
// ATTN:      hbm.kernel attributes {sym_name = "attention", grid = #hbm.labels<b=1, h=1, i=128>, num_outputs = 1 : i32} {
// ATTN-NEXT: ^bb0(%q: !hbm.global<b=2, h=4, i=256, d=64 : bf16>, %k: {{.*}}, %v: {{.*}}, %out: {{.*}}, %b0: index, %h0: index, %i0: index):
// ATTN:      %q_tile = hbm.load %q[%b0, %h0, %i0, %c0] : !hbm.global<b=2, h=4, i=256, d=64 : bf16> -> !ncd.tensor<b=1, h=1, i=128, d=64 : bf16>
// ATTN-NEXT: [[MAX0:%.+]] = hbm.fill {value = 0xff800000 : f32} : !ncd.tensor<b=1, h=1, i=128 : f32>
// ATTN-NEXT: [[SUM0:%.+]] = hbm.fill {value = 0.000000e+00 : f32} : !ncd.tensor<b=1, h=1, i=128 : f32>
// ATTN-NEXT: [[ACC0:%.+]] = hbm.fill {value = 0.000000e+00 : f32} : !ncd.tensor<b=1, h=1, i=128, d=64 : f32>
// ATTN:      {{%.+}}, [[SUM:%.+]], [[ACC:%.+]] = scf.for %j0 = %c0 to %{{.+}} step %{{.+}} iter_args(%row_max = [[MAX0]], %row_sum = [[SUM0]], %acc = [[ACC0]])
// ATTN-NOT:  hbm.load %q
// ATTN:        %k_tile = hbm.load %k[%b0, %h0, %j0, %c0] : {{.*}} -> !ncd.tensor<b=1, h=1, j=64, d=64 : bf16>
// ATTN-NEXT:   %s = ncd.contract %q_tile, %k_tile over [d] : {{.*}} -> !ncd.tensor<b=1, h=1, i=128, j=64 : f32>
// scale 0.125 * log2(e): the exponentials are taken in base 2
// ATTN-NEXT:   %scaled = ncd.map scale %s by 0.1803368777036667
// ATTN-NEXT:   %tile_max = ncd.reduce max %scaled along [j] : {{.*}} -> !ncd.tensor<b=1, h=1, i=128 : f32>
// ATTN-NEXT:   %row_max_new = ncd.map max %row_max, %tile_max
// ATTN-NEXT:   [[DIFF:%.+]] = ncd.map sub %row_max, %row_max_new
// ATTN-NEXT:   %rescale = ncd.map exp2 [[DIFF]]
// ATTN-NEXT:   [[SHIFTED:%.+]] = ncd.map sub %scaled, %row_max_new
// ATTN-NEXT:   %p_unnorm = ncd.map exp2 [[SHIFTED]]
// ATTN-NEXT:   %row_sum_scaled = ncd.map mul %row_sum, %rescale
// ATTN-NEXT:   %tile_sum = ncd.reduce sum %p_unnorm along [j]
// ATTN-NEXT:   %row_sum_new = ncd.map add %row_sum_scaled, %tile_sum
// ATTN-NEXT:   %p16 = ncd.map cast %p_unnorm : !ncd.tensor<b=1, h=1, i=128, j=64 : f32> -> !ncd.tensor<b=1, h=1, i=128, j=64 : bf16>
// ATTN-NEXT:   %v_tile = hbm.load %v[%b0, %h0, %j0, %c0]
// ATTN-NEXT:   [[PV:%.+]] = ncd.contract %p16, %v_tile over [j] : {{.*}} -> !ncd.tensor<b=1, h=1, i=128, d=64 : f32>
// ATTN-NEXT:   %acc_scaled = ncd.map mul %acc, %rescale : !ncd.tensor<b=1, h=1, i=128, d=64 : f32>, !ncd.tensor<b=1, h=1, i=128 : f32>
// ATTN-NEXT:   %acc_new = ncd.map add %acc_scaled, [[PV]]
// ATTN-NEXT:   scf.yield %row_max_new, %row_sum_new, %acc_new
// ATTN-NEXT: } {hbm.stream = #hbm.stream<j>}
// 256 keys in tiles of 64 and no mask: one loop, no fills past the end
// ATTN-NOT:  scf.for
// ATTN-NEXT: %normalised = ncd.map div [[ACC]], [[SUM]] : !ncd.tensor<b=1, h=1, i=128, d=64 : f32>, !ncd.tensor<b=1, h=1, i=128 : f32>
// ATTN-NEXT: [[O:%.+]] = ncd.map cast %normalised : {{.*}} -> !ncd.tensor<b=1, h=1, i=128, d=64 : bf16>
// ATTN-NEXT: hbm.store [[O]], %out[%b0, %h0, %i0, %c0]
// ATTN-NEXT: hbm.return

// Keys past the block's last row are never read: the stream ends at min(256, i0 + 128).
// Tiles whose last key is at most the block's first row need no mask: [0, (i0+1)/64*64).
// CAUSAL:      %q_tile = hbm.load %q[%b0, %h0, %i0, %c0]
// CAUSAL:      [[C64:%.+]] = arith.constant 64 : index
// CAUSAL:      [[C128:%.+]] = arith.constant 128 : index
// CAUSAL-NEXT: %i_end = arith.addi %i0, [[C128]] : index
// CAUSAL-NEXT: [[C256:%.+]] = arith.constant 256 : index
// CAUSAL-NEXT: %j_end = arith.minui [[C256]], %i_end : index
// CAUSAL-NEXT: [[C1:%.+]] = arith.constant 1 : index
// CAUSAL-NEXT: [[FIRST:%.+]] = arith.addi %i0, [[C1]] : index
// CAUSAL-NEXT: [[TILES:%.+]] = arith.divui [[FIRST]], [[C64]] : index
// CAUSAL-NEXT: [[WHOLE:%.+]] = arith.muli [[TILES]], [[C64]] : index
// CAUSAL-NEXT: %j_masked = arith.minui %j_end, [[WHOLE]] : index
// CAUSAL-NEXT: [[M1:%.+]], [[L1:%.+]], [[A1:%.+]] = scf.for %j0 = %c0 to %j_masked step [[C64]] iter_args(%row_max = {{.*}}, %row_sum = {{.*}}, %acc = {{.*}})
// CAUSAL-NOT:  ncd.mask
// CAUSAL:      } {hbm.stream = #hbm.stream<j>}
// CAUSAL-NEXT: {{%.+}}, [[L2:%.+]], [[A2:%.+]] = scf.for %j0_1 = %j_masked to %j_end step [[C64]] iter_args(%row_max_1 = [[M1]], %row_sum_1 = [[L1]], %acc_1 = [[A1]])
// CAUSAL:        %s_1 = ncd.contract %q_tile, %k_tile_1 over [d]
// CAUSAL-NEXT:   [[MASKED:%.+]] = ncd.mask causal %s_1 keep i >= j fill -inf at [%i0, %j0_1] : !ncd.tensor<b=1, h=1, i=128, j=64 : f32>
// CAUSAL-NEXT:   %scaled_1 = ncd.map scale [[MASKED]] by 0.1803368777036667
// CAUSAL:        %acc_scaled_1 = ncd.map mul %acc_1, %rescale_1
// CAUSAL:      } {hbm.stream = #hbm.stream<j>}
// CAUSAL-NEXT: %normalised = ncd.map div [[A2]], [[L2]]
// CAUSAL-NOT:  ncd.mask_bound

// The L2 norm carries the running sum of squares alone: no max, no exp, no rescale.
// SPHERE:      %q_tile = hbm.load %q[%b0, %h0, %i0, %c0]
// SPHERE-NEXT: [[SSQ0:%.+]] = hbm.fill {value = 0.000000e+00 : f32} : !ncd.tensor<b=1, h=1, i=128 : f32>
// SPHERE-NEXT: [[ACC0:%.+]] = hbm.fill {value = 0.000000e+00 : f32} : !ncd.tensor<b=1, h=1, i=128, d=64 : f32>
// SPHERE:      [[SSQ:%.+]], [[ACC:%.+]] = scf.for %j0 = %c0 to %{{.+}} step %{{.+}} iter_args(%sum_sq = [[SSQ0]], %acc = [[ACC0]])
// SPHERE-NEXT:   %k_tile = hbm.load %k[%b0, %h0, %j0, %c0]
// SPHERE-NEXT:   %s = ncd.contract %q_tile, %k_tile over [d]
// SPHERE-NEXT:   [[SQ:%.+]] = ncd.map mul %s, %s
// SPHERE-NEXT:   %tile_sum_sq = ncd.reduce sum [[SQ]] along [j]
// SPHERE-NEXT:   %sum_sq_new = ncd.map add %sum_sq, %tile_sum_sq
// SPHERE-NEXT:   %p16 = ncd.map cast %s : {{.*}} -> !ncd.tensor<b=1, h=1, i=128, j=64 : bf16>
// SPHERE-NEXT:   %v_tile = hbm.load %v[%b0, %h0, %j0, %c0]
// SPHERE-NEXT:   [[PV:%.+]] = ncd.contract %p16, %v_tile over [j]
// SPHERE-NEXT:   %acc_new = ncd.map add %acc, [[PV]]
// SPHERE-NEXT:   scf.yield %sum_sq_new, %acc_new
// SPHERE-NEXT: } {hbm.stream = #hbm.stream<j>}
// SPHERE-NEXT: %norm = ncd.map sqrt [[SSQ]]
// SPHERE-NEXT: %normalised = ncd.map div [[ACC]], %norm
// SPHERE-NEXT: [[O:%.+]] = ncd.map cast %normalised
// SPHERE-NEXT: hbm.store [[O]], %out[%b0, %h0, %i0, %c0]
