// smem-to-reg{mma=wgmma} of a product over the block's rows whose own rows are fewer than
// the consumers' warps take 16 each: the attention gradient's dQ^T = K^T dS^T at head dim
// 64 in a block of 128 keys (j), two warpgroups. Each warpgroup takes dQ^T's 64 rows (d),
// 16 a warp, for its own half of the 64 streamed columns (i): a `split=4` fragment of 32
// columns. reg-to-ptx issues m64n32k16 with A (K's one panel of d) the same for both
// warpgroups and B's descriptor 64 bytes (32 bf16 columns) on for the second, and writes
// each warp's values at row 16 (warp mod 4), column 32 (warp / 4), then hands the stage
// to the store role (fenced, an arrival on its full barrier). The lane's places in a stage
// are computed once, where the consumers start; a tile's writes add the stage's address.
// RUN: napkin-opt %s -p 'ncd-relabel{grid="j:128" stream="i:64"},ncd-to-hbm,hbm-to-smem{copy=tma stages=2},smem-to-reg{mma=wgmma}' | filecheck %s
// RUN: napkin-opt %s -p 'ncd-relabel{grid="j:128" stream="i:64"},ncd-to-hbm,hbm-to-smem{copy=tma stages=2},smem-to-reg{mma=wgmma},reg-to-ptx{arch=sm_90a}' -t ptx | filecheck %s --check-prefix=PTX

// CHECK: %[[Z:.*]] = reg.zeros : !reg.frag<c, d=16, i=32 : f32, split=4>
// CHECK-NEXT: reg.wgmma %{{.*}}, %{{.*}}, %[[Z]] {at = #hbm.labels<j=0>} : !smem.buffer<j=128, d=64 : bf16, stages=1, layout=swizzle>, !smem.buffer<j=128, i=64 : bf16, stages=2, layout=swizzle>, !reg.frag<c, d=16, i=32 : f32, split=4>
// CHECK: reg.write %{{.*}} -> %{{.*}}[%{{.*}}] {at = #hbm.labels<>} : !reg.frag<c, d=16, i=32 : f32, split=4>, !smem.buffer<i=64, d=64 : f32, stages=2, layout=swizzle>

// A's descriptor (M-major: K's one panel) and B's offset, 64 bytes a warpgroup (warp /
// 4) on, made once; B's descriptor each tile: its stage (16 KB each) and that offset
// the consumer warp's index (broadcast from lane 0, less the producer's 4 warps)
// PTX: shfl.sync.idx.b32 [[WIDX:%r[0-9]+]],
// PTX: sub.u32 [[WARP:%r[0-9]+]], [[WIDX]], %r{{[0-9]+}};
// PTX: or.b64 [[A:%rd[0-9]+]], %rd{{[0-9]+}}, 4611686293372403712;
// PTX-NEXT: mov.u32 [[BYTES:%r[0-9]+]], 64;
// PTX-NEXT: mul.lo.u32 [[OFF:%r[0-9]+]], %r{{[0-9]+}}, [[BYTES]];
// the write's place, before the loop: row 16 (warp mod 4), column 32 (warp / 4), swizzled
// PTX: and.b32 [[ROWW:%r[0-9]+]], [[WARP]], %r{{[0-9]+}};
// PTX-NEXT: mov.u32 [[SIXTEEN:%r[0-9]+]], 16;
// PTX-NEXT: mul.lo.u32 %r{{[0-9]+}}, [[ROWW]], [[SIXTEEN]];
// PTX: shr.u32 [[COLW:%r[0-9]+]], [[WARP]], %r{{[0-9]+}};
// PTX-NEXT: mov.u32 [[W:%r[0-9]+]], 32;
// PTX-NEXT: mul.lo.u32 %r{{[0-9]+}}, [[COLW]], [[W]];
// PTX: xor.b32 [[SWIZZLED:%r[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}};
// PTX-NEXT: add.u32 [[PLACE:%r[0-9]+]], %r{{[0-9]+}}, [[SWIZZLED]];
// PTX: fence.proxy.async.shared::cta;
// PTX-NEXT: bar.sync 1, 256;
// PTX: mov.u32 [[STAGE:%r[0-9]+]], 16384;
// PTX-NEXT: mul.lo.u32 [[SOFF:%r[0-9]+]], %r{{[0-9]+}}, [[STAGE]];
// PTX-NEXT: add.u32 [[SAT:%r[0-9]+]], %r{{[0-9]+}}, [[SOFF]];
// PTX-NEXT: add.u32 [[AT:%r[0-9]+]], [[SAT]], [[OFF]];
// PTX-NEXT: cvt.u64.u32 [[B:%rd[0-9]+]], [[AT]];
// PTX: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {{{.*}}}, [[A]], [[B]], %p{{[0-9]+}}, 1, 1, 1, 1;
// PTX-COUNT-7: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// the write: the stage's address plus the place
// PTX: add.u32 [[AT:%r[0-9]+]], %r{{[0-9]+}}, [[PLACE]];
// PTX-NEXT: st.shared.f32 {{\[}}[[AT]]{{\]}}, %f{{[0-9]+}};
// PTX: fence.proxy.async.shared::cta;
// PTX: mbarrier.arrive.shared::cta.b64

func.func @f(%b: !ncd.tensor<i=200, d=64 : bf16>, %k: !ncd.tensor<j=256, d=64 : bf16>) -> (!ncd.tensor<i=200, d=64 : f32>, !ncd.tensor<j=256, d=64 : f32>) {
  %s = ncd.contract %b, %k over [d] : !ncd.tensor<i=200, d=64 : bf16>, !ncd.tensor<j=256, d=64 : bf16> -> !ncd.tensor<i=200, j=256 : f32>
  %s16 = ncd.map cast %s : !ncd.tensor<i=200, j=256 : f32> -> !ncd.tensor<i=200, j=256 : bf16>
  %t = ncd.contract %s16, %k over [j] : !ncd.tensor<i=200, j=256 : bf16>, !ncd.tensor<j=256, d=64 : bf16> -> !ncd.tensor<i=200, d=64 : f32>
  %r = ncd.contract %s16, %b over [i] : !ncd.tensor<i=200, j=256 : bf16>, !ncd.tensor<i=200, d=64 : bf16> -> !ncd.tensor<j=256, d=64 : f32>
  func.return %t, %r : !ncd.tensor<i=200, d=64 : f32>, !ncd.tensor<j=256, d=64 : f32>
}
