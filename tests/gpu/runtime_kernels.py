"""Hand-written PTX for the runtime's GPU tests (test_runtime_gpu.py).

Module-level constants so that a CPU test (tests/unit/runtime) can run ptxas on each of
them: the PTX is known to assemble even where no GPU can run it. `GOOD_PTX` lists the
ones ptxas must accept, with their target; `BAD_PTX` must be refused.
"""

# c[i] = a[i] + b[i] for i < n, and y[i] = alpha * x[i] + y[i]: two entries in one module.
VECTOR_PTX = r"""
.version 8.0
.target sm_80
.address_size 64

.visible .entry vec_add(
	.param .u64 vec_add_a,
	.param .u64 vec_add_b,
	.param .u64 vec_add_c,
	.param .u32 vec_add_n
)
{
	.reg .pred %p<2>;
	.reg .b32 %r<6>;
	.reg .b64 %rd<8>;
	.reg .f32 %f<4>;

	ld.param.u64 %rd1, [vec_add_a];
	ld.param.u64 %rd2, [vec_add_b];
	ld.param.u64 %rd3, [vec_add_c];
	ld.param.u32 %r1, [vec_add_n];
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.s32 %r5, %r2, %r3, %r4;
	setp.ge.u32 %p1, %r5, %r1;
	@%p1 bra $L_done;
	cvta.to.global.u64 %rd1, %rd1;
	cvta.to.global.u64 %rd2, %rd2;
	cvta.to.global.u64 %rd3, %rd3;
	mul.wide.u32 %rd4, %r5, 4;
	add.s64 %rd5, %rd1, %rd4;
	add.s64 %rd6, %rd2, %rd4;
	add.s64 %rd7, %rd3, %rd4;
	ld.global.f32 %f1, [%rd5];
	ld.global.f32 %f2, [%rd6];
	add.rn.f32 %f3, %f1, %f2;
	st.global.f32 [%rd7], %f3;
$L_done:
	ret;
}

.visible .entry axpy(
	.param .u64 axpy_x,
	.param .u64 axpy_y,
	.param .f32 axpy_alpha,
	.param .u32 axpy_n
)
{
	.reg .pred %p<2>;
	.reg .b32 %r<6>;
	.reg .b64 %rd<6>;
	.reg .f32 %f<5>;

	ld.param.u64 %rd1, [axpy_x];
	ld.param.u64 %rd2, [axpy_y];
	ld.param.f32 %f1, [axpy_alpha];
	ld.param.u32 %r1, [axpy_n];
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.s32 %r5, %r2, %r3, %r4;
	setp.ge.u32 %p1, %r5, %r1;
	@%p1 bra $L_done;
	cvta.to.global.u64 %rd1, %rd1;
	cvta.to.global.u64 %rd2, %rd2;
	mul.wide.u32 %rd3, %r5, 4;
	add.s64 %rd4, %rd1, %rd3;
	add.s64 %rd5, %rd2, %rd3;
	ld.global.f32 %f2, [%rd4];
	ld.global.f32 %f3, [%rd5];
	fma.rn.f32 %f4, %f1, %f2, %f3;
	st.global.f32 [%rd5], %f4;
$L_done:
	ret;
}
"""

# Each block stages 16384 floats (64 KiB, over the 48 KiB default) of `in` in dynamic
# shared memory and writes them to `out` reversed: out[b][i] = in[b][16383 - i].
SMEM_ELEMENTS = 16384
SMEM_REVERSE_PTX = r"""
.version 8.0
.target sm_80
.address_size 64

.extern .shared .align 16 .b8 smem[];

.visible .entry smem_reverse(
	.param .u64 smem_reverse_in,
	.param .u64 smem_reverse_out
)
{
	.reg .pred %p<3>;
	.reg .b32 %r<12>;
	.reg .b64 %rd<8>;
	.reg .f32 %f<2>;

	ld.param.u64 %rd1, [smem_reverse_in];
	ld.param.u64 %rd2, [smem_reverse_out];
	cvta.to.global.u64 %rd1, %rd1;
	cvta.to.global.u64 %rd2, %rd2;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mul.wide.u32 %rd3, %r2, 65536;
	add.s64 %rd1, %rd1, %rd3;
	add.s64 %rd2, %rd2, %rd3;
	mov.u32 %r4, smem;
	mov.u32 %r5, %r1;
$L_load:
	setp.ge.u32 %p1, %r5, 16384;
	@%p1 bra $L_loaded;
	mul.wide.u32 %rd4, %r5, 4;
	add.s64 %rd5, %rd1, %rd4;
	ld.global.f32 %f1, [%rd5];
	shl.b32 %r6, %r5, 2;
	add.s32 %r7, %r4, %r6;
	st.shared.f32 [%r7], %f1;
	add.s32 %r5, %r5, %r3;
	bra.uni $L_load;
$L_loaded:
	bar.sync 0;
	mov.u32 %r5, %r1;
	mov.u32 %r8, 16383;
$L_store:
	setp.ge.u32 %p2, %r5, 16384;
	@%p2 bra $L_done;
	sub.s32 %r9, %r8, %r5;
	shl.b32 %r10, %r9, 2;
	add.s32 %r11, %r4, %r10;
	ld.shared.f32 %f1, [%r11];
	mul.wide.u32 %rd6, %r5, 4;
	add.s64 %rd7, %rd2, %rd6;
	st.global.f32 [%rd7], %f1;
	add.s32 %r5, %r5, %r3;
	bra.uni $L_store;
$L_done:
	ret;
}
"""

# One 32x64 f32 tile per block, fetched by TMA into shared memory (completion tracked by an
# mbarrier's transaction count), then written with plain stores to out[tile][32][64] where
# tile = ctaid.y * nctaid.x + ctaid.x. The tensor map is a by-value parameter; the
# instruction takes its generic address. Coordinates are innermost first: {col, row}.
TMA_BOX_ROWS, TMA_BOX_COLS = 32, 64
TMA_TILE_PTX = r"""
.version 8.0
.target sm_90a
.address_size 64

.visible .entry tma_tile_copy(
	.param .align 64 .b8 tma_tile_copy_tmap[128],
	.param .u64 tma_tile_copy_out
)
.reqntid 256
{
	.reg .pred %p<5>;
	.reg .b32 %r<20>;
	.reg .b64 %rd<10>;
	.reg .f32 %f<2>;
	.shared .align 128 .b8 tile[8192];
	.shared .align 8 .b64 bar;

	mov.u64 %rd1, tma_tile_copy_tmap;
	cvta.param.u64 %rd2, %rd1;
	ld.param.u64 %rd3, [tma_tile_copy_out];
	cvta.to.global.u64 %rd3, %rd3;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ctaid.y;
	mov.u32 %r4, tile;
	mov.u32 %r5, bar;
	mov.u32 %r6, 1;
	mov.u32 %r7, 8192;
	mov.u32 %r8, 0;
	setp.eq.u32 %p1, %r1, 0;
	@!%p1 bra $L_synced;
	mbarrier.init.shared::cta.b64 [%r5], %r6;
	fence.mbarrier_init.release.cluster;
$L_synced:
	bar.sync 0;
	@!%p1 bra $L_wait;
	mbarrier.arrive.expect_tx.shared::cta.b64 %rd4, [%r5], %r7;
	shl.b32 %r9, %r2, 6;
	shl.b32 %r10, %r3, 5;
	cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r4], [%rd2, {%r9, %r10}], [%r5];
$L_wait:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r5], %r8;
	@!%p2 bra $L_wait;
	mov.u32 %r11, %nctaid.x;
	mad.lo.s32 %r12, %r3, %r11, %r2;
	mul.wide.u32 %rd5, %r12, 8192;
	add.s64 %rd6, %rd3, %rd5;
	mov.u32 %r13, %r1;
$L_copy:
	setp.ge.u32 %p3, %r13, 2048;
	@%p3 bra $L_done;
	shl.b32 %r14, %r13, 2;
	add.s32 %r15, %r4, %r14;
	ld.shared.f32 %f1, [%r15];
	mul.wide.u32 %rd7, %r13, 4;
	add.s64 %rd8, %rd6, %rd7;
	st.global.f32 [%rd8], %f1;
	add.s32 %r13, %r13, 256;
	bra.uni $L_copy;
$L_done:
	ret;
}
"""

# Reads a register that was never declared: ptxas (and the driver's JIT) must refuse it.
BAD_PTX = r"""
.version 8.0
.target sm_80
.address_size 64

.visible .entry broken(
	.param .u64 broken_out
)
{
	.reg .b32 %r<2>;

	mov.u32 %r1, %undeclared_register;
	ret;
}
"""

GOOD_PTX = {
    "VECTOR_PTX": (VECTOR_PTX, "sm_80"),
    "SMEM_REVERSE_PTX": (SMEM_REVERSE_PTX, "sm_80"),
    "TMA_TILE_PTX": (TMA_TILE_PTX, "sm_90a"),
}
