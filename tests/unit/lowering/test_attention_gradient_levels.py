"""The attention gradient keeps its numbers at every level on the CPU.

`ncd-grad{residuals=true}` derives dQ, dK and dV of softmax, causal and spherical attention;
`ncd-extract{cut="delta"}` makes each a kernel that reads the saved log-sum-exp (or norm)
and D = rowsum(dO * O). Each is planned as attention (dK's and dV's blocks hold keys and
stream queries) and run level by level, on sm_80's and sm_90a's plans, against the
extracted diagram's interpreter, with lengths the tiles do not divide; sm_80's PTX runs in
the warp-level emulator against float64 torch.autograd."""

from __future__ import annotations

import numpy as np
import pytest

from napkin_ir import reference
from napkin_ir.attention_diagrams import NAMES, ROW_VALUES, gradient_passes
from napkin_ir.dialects import ptx
from napkin_ir.interpreters.ptx import HALF, run_kernel
from napkin_ir.interpreters.run import find_entry, find_function
from napkin_ir.model.ptxas import find_ptxas, ptxas_resources
from napkin_ir.passes.composite import spec
from napkin_ir.passes.widen_results import result_scales
from napkin_ir.passmanager import compile_to_ptx, run_pipeline
from napkin_ir.plan.diagram import attention_axes
from napkin_ir.plan.recipes import attention
from tests.unit.lowering.levels import every_level_keeps, gradient_inputs
from xdsl.utils.exceptions import PassFailedException

GRAD = "ncd-grad{residuals=true},ncd-fold-casts"
CASES = [("softmax", 72, 40, 64), ("causal", 80, 80, 64), ("spherical", 48, 72, 64), ("spherical", 80, 80, 128)]  # kind, queries, keys, head dim


def _extract(kind: str, result: int) -> str:
    return f'{GRAD},ncd-extract{{function="{NAMES[kind]}_grad" result={result} cut="delta"}}'


@pytest.mark.parametrize("plan", ["sm80", "sm90"])
@pytest.mark.parametrize("result", [0, 1, 2], ids=["dq", "dk", "dv"])
@pytest.mark.parametrize("kind,n,nk,d", CASES)
def test_every_level_keeps_the_gradient(kind, n, nk, d, result, plan):
    text, values = gradient_inputs(kind, n, nk, d, seed=n + result)
    module = run_pipeline(text, _extract(kind, result))
    diagram = find_entry(module)
    inputs = [values[name] for name in diagram.input_names]
    kernel_plan = attention.sm80_plan(module) if plan == "sm80" else attention.sm90_plan(module, persistent=False)
    every_level_keeps(module, kernel_plan, inputs, diagram.run(inputs))


@pytest.mark.parametrize("kind,n,nk,d", [*CASES, ("causal", 200, 200, 128)])
def test_dq_dk_dv_from_one_kernel_keep_the_gradient(kind, n, nk, d):
    """dQ beside dK and dV: the blocks hold keys and stream queries (the axes most results
    agree on), dK and dV summed in the block, dQ's part over the block's keys added into
    its f32 output tile by tile of the stream, the skipped causal tiles adding nothing; dS
    staged through shared memory for dQ^T = K^T dS^T, whose rows (the head dim) the
    warps take 16 each (blocks of 128 keys: at d=64 each warpgroup the 64 rows of half the
    streamed columns)."""
    text, values = gradient_inputs(kind, n, nk, d, seed=n + 3)
    module = run_pipeline(text, f'{GRAD},ncd-extract{{function="{NAMES[kind]}_grad" results="0,1,2" cut="delta"}},'
                                'ncd-widen-results{result=0}')
    axes = attention_axes(module)
    assert axes is not None and (axes.query, axes.keys) == ("j", "i")
    diagram = find_entry(module)
    inputs = [values[name] for name in diagram.input_names]
    every_level_keeps(module, attention.sm90_plan(module, persistent=False), inputs, diagram.run(inputs))


@pytest.mark.parametrize("kind,n,nk,d", CASES)
def test_sm80_ptx_matches_torch_autograd(kind, n, nk, d):
    torch = pytest.importorskip("torch")
    text, values = gradient_inputs(kind, n, nk, d, seed=7)
    Q, K, V = (torch.tensor(values[a], dtype=torch.float64, requires_grad=True) for a in "qkv")
    s = Q @ K.transpose(-1, -2)
    if kind == "spherical":
        p = s / s.norm(dim=-1, keepdim=True)
    else:
        if kind == "causal":
            s = s.masked_fill(~torch.ones(n, nk, dtype=torch.bool).tril(), float("-inf"))
        p = torch.softmax(s / d ** 0.5, -1)
    (p @ V).backward(torch.tensor(values["d_o"], dtype=torch.float64))
    half = HALF["bf16"]
    for result, want in enumerate((Q.grad, K.grad, V.grad)):
        module = run_pipeline(text, f"{_extract(kind, result)},napkin-sm80")
        (kernel,) = [op for op in module.walk() if isinstance(op, ptx.KernelOp)]
        names = [p.removeprefix(f"{kernel.sym_name.data}_") for p, _ in kernel.param_list()]
        args = [values[name].astype(half) if name in ("q", "k", "v", "d_o", "o") else values[name] for name in names[:-1]]
        out = np.full(want.shape, 0xFFFF, np.uint16).view(half)  # poisoned: NaN
        run_kernel(module, [*args, out], lazy=True, reverse=True)
        assert np.isfinite(out.astype(np.float64)).all(), "some output was not written"
        assert reference.relative_error(out, want.numpy()) <= reference.TOLERANCE["bf16"], "dq dk dv".split()[result]


@pytest.mark.parametrize("kind", ["softmax", "causal"])
def test_grouped_query_dq_keeps_the_gradient(kind):
    """Grouped-query attention's dQ: a block packs a group's query heads (r x i rows), each
    warp holding one head, and reads that head's log-sum-exp and D into registers. Every
    level of both plans, and sm_80's PTX in the emulator, against the diagram."""
    from napkin_ir.attention_diagrams import GQA_NAMES, gqa_attention_diagram

    text = gqa_attention_diagram(kind, 1, 2, 4, 48, 64)
    name = GQA_NAMES[kind]
    fwd = find_entry(run_pipeline(text, GRAD), name)
    rng = np.random.default_rng(5)
    half = HALF["bf16"]
    q, d_o = (rng.standard_normal((1, 2, 4, 48, 64)).astype(half).astype(np.float32) for _ in range(2))
    k, v = (rng.standard_normal((1, 2, 48, 64)).astype(half).astype(np.float32) for _ in range(2))
    o, lse = fwd.run([q, k, v])
    delta = find_entry(run_pipeline(text, f'{GRAD},ncd-extract{{function="{name}_grad" value="delta"}}')).run([d_o, o])[0]
    values = {"q": q, "k": k, "v": v, "d_o": d_o, "lse": lse, "delta": delta}
    module = run_pipeline(text, f'{GRAD},ncd-extract{{function="{name}_grad" result=0 cut="delta"}}')
    diagram = find_entry(module)
    inputs = [values[a] for a in diagram.input_names]
    want = diagram.run(inputs)[0]
    for kernel_plan in (attention.sm80_plan(module), attention.sm90_plan(module, persistent=False)):
        got = find_entry(run_pipeline(str(module), spec(kernel_plan.passes("reg")))).run(inputs)[0]
        assert reference.relative_error(got, want) <= reference.TOLERANCE["bf16"]
    ptx_module = run_pipeline(str(module), "napkin-sm80")
    (kernel,) = [op for op in ptx_module.walk() if isinstance(op, ptx.KernelOp)]
    names = [p.removeprefix(f"{kernel.sym_name.data}_") for p, _ in kernel.param_list()]
    args = [values[a].astype(half) if a in ("q", "k", "v", "d_o") else values[a] for a in names[:-1]]
    out = np.full(want.shape, 0xFFFF, np.uint16).view(half)
    run_kernel(ptx_module, [*args, out], lazy=True, reverse=True)
    assert np.isfinite(out.astype(np.float64)).all(), "some output was not written"
    assert reference.relative_error(out, want) <= reference.TOLERANCE["bf16"]


@pytest.mark.parametrize("kind,n,d", [("causal", 80, 64), ("causal", 200, 128), ("softmax", 72, 64)])
def test_grouped_dq_dk_dv_from_one_kernel_keep_the_gradient(kind, n, d):
    """Grouped-query attention's dQ, dK and dV from one kernel (`gradient_passes(kind, "qkv",
    grouped=True)`): a block holds one query head's keys and streams its queries; dQ's
    parts and the head's dK and dV are each added into f32 results (zeroed first), so the
    group's query heads sum into their key/value head. Every level of sm_90a's plan keeps
    the gradient, with lengths the tiles do not divide."""
    from napkin_ir.attention_diagrams import GQA_NAMES, gqa_attention_diagram, gradient_passes

    text = gqa_attention_diagram(kind, 1, 2, 3, n, d)
    name = GQA_NAMES[kind]
    fwd = find_entry(run_pipeline(text, GRAD), name)
    rng = np.random.default_rng(n + d)
    half = HALF["bf16"]
    q, d_o = (rng.standard_normal((1, 2, 3, n, d)).astype(half).astype(np.float32) for _ in range(2))
    k, v = (rng.standard_normal((1, 2, n, d)).astype(half).astype(np.float32) for _ in range(2))
    o, lse = fwd.run([q, k, v])
    values = {"q": q, "k": k, "v": v, "d_o": d_o, "o": o, "lse": lse}
    rows = find_entry(run_pipeline(text, gradient_passes(kind, "delta", grouped=True)))
    values |= dict(zip(ROW_VALUES[kind], rows.run([values[a] for a in rows.input_names]), strict=True))
    module = run_pipeline(text, gradient_passes(kind, "qkv", grouped=True))
    diagram = find_entry(module)
    assert [t.dtype for t in diagram.outputs] == ["f32"] * 3  # every result added into
    inputs = [values[a] for a in diagram.input_names]
    every_level_keeps(module, attention.sm90_plan(module, persistent=False), inputs, diagram.run(inputs))


@pytest.mark.parametrize("kind,n,nk,d", CASES[:3])
def test_dk_and_dv_together_keep_both_gradients(kind, n, nk, d):
    """`ncd-extract{results="1,2"}`: dK and dV as one kernel, the scores, probabilities and
    dP recomputed once a tile for both. Every level of both plans, and sm_80's PTX in the
    emulator (two outputs, both poisoned), against the diagram."""
    text, values = gradient_inputs(kind, n, nk, d, seed=n)
    module = run_pipeline(text, f'{GRAD},ncd-extract{{function="{NAMES[kind]}_grad" results="1,2" cut="delta"}}')
    diagram = find_entry(module)
    inputs = [values[name] for name in diagram.input_names]
    want = diagram.run(inputs)
    assert len(want) == 2
    for kernel_plan in (attention.sm80_plan(module), attention.sm90_plan(module, persistent=False)):
        every_level_keeps(module, kernel_plan, inputs, want, ("hbm", "reg"))
    ptx_module = run_pipeline(str(module), "napkin-sm80")
    (kernel,) = [op for op in ptx_module.walk() if isinstance(op, ptx.KernelOp)]
    names = [p.removeprefix(f"{kernel.sym_name.data}_") for p, _ in kernel.param_list()]
    half = HALF["bf16"]
    args = [values[a].astype(half) if a in ("q", "k", "v", "d_o") else values[a] for a in names[:-2]]
    outs = [np.full(w.shape, 0xFFFF, np.uint16).view(half) for w in want]
    run_kernel(ptx_module, [*args, *outs], lazy=True, reverse=True)
    for out, w in zip(outs, want):
        assert np.isfinite(out.astype(np.float64)).all(), "some output was not written"
        assert reference.relative_error(out, w) <= reference.TOLERANCE["bf16"]


@pytest.mark.parametrize("keys", [128, 64])
@pytest.mark.parametrize("kind,n,nk,d", [c for c in CASES if c[3] == 64] + [("causal", 200, 200, 64)])
def test_dq_dk_dv_from_one_kernel_with_128_queries_a_tile(kind, n, nk, d, keys):
    """At d=64 the one kernel may stream 128 queries a tile (`block="keys,128"`): dS is
    staged as two 128-byte panels of queries (stmatrix writes each warp's 16 rows into
    both), dQ^T's product reads it as an N-major B over both, and in blocks of 128 keys
    each warpgroup takes dQ^T's columns of one panel. Every level keeps the gradient; the
    PTX writes the second panel (`rows` x 128 bytes past the first) and, where the
    warpgroups split dQ^T, its descriptors step a panel a warpgroup."""
    text, values = gradient_inputs(kind, n, nk, d, seed=n + 5)
    module = run_pipeline(text, f'{GRAD},ncd-extract{{function="{NAMES[kind]}_grad" results="0,1,2" cut="delta"}},'
                                'ncd-widen-results{result=0}')
    diagram = find_entry(module)
    inputs = [values[name] for name in diagram.input_names]
    plan = attention.sm90_plan(module, block=keys, stream=128, persistent=False)
    assert plan.stream == ("i", 128)
    every_level_keeps(module, plan, inputs, diagram.run(inputs))
    ptx, narrow = (compile_to_ptx(str(module), f'napkin-sm90{{block="{keys},{q}" persistent=false}}') for q in (128, 64))
    # each warp's 16 rows of dS: twice the 16 x 16 matrices (where the second panel lies:
    # tests/filecheck/lowering/reg_to_ptx_panels.mlir)
    assert ptx.count("stmatrix.sync") == 2 * narrow.count("stmatrix.sync") > 0
    if find_ptxas() is not None:
        (res,) = ptxas_resources(ptx, "sm_90a").values()  # ptxas takes it, within the launch's registers
        assert res.registers <= (168 if keys == 128 else 255), res  # three warpgroups, or two


@pytest.mark.parametrize("kind", ["softmax", "causal"])
def test_ds_takes_its_two_stages_before_dq_its_second(kind):
    """At d=64 the one kernel streams 128 queries a tile: a stage of dS (128 x 128 bf16) and
    one of dQ's f32 adds (128 x 64) are 32 KB each, and two of each do not fit beside Q, dO,
    K and V. dS has two (its writers then meet once a tile, not before their writes too)
    and dQ's adds one. At d=128 under a mask (64 queries) both have two; at 80 queries
    (without one) dQ's add stage is 40 KB and takes one beside dS's two."""
    from napkin_ir.attention_diagrams import attention_diagram
    from napkin_ir.dialects import smem

    for d, want in ((64, (2, 1)), (128, (2, 2) if kind == "causal" else (2, 1))):
        module = run_pipeline(attention_diagram(kind, 1, 2, 4096, d), gradient_passes(kind, "qkv"))
        plan = attention.sm90_plan(module, persistent=False)
        level = run_pipeline(str(module), spec(plan.passes("smem")))
        bufs = [o.result.type for o in level.walk() if isinstance(o, smem.AllocOp)]
        ds = [b for b in bufs if b.element_type.bitwidth == 16 and set(b.axis_names) == {"b", "h", "i", "j"}]
        dq = [b for b in bufs if b.element_type.bitwidth == 32 and "d" in b.axis_names and "i" in b.axis_names]
        assert len(ds) == len(dq) == 1, bufs
        assert (ds[0].stages.data, dq[0].stages.data) == want, (d, ds, dq)


@pytest.mark.parametrize("kind,n", [("softmax", 200), ("causal", 176)])
def test_dq_dk_dv_from_one_kernel_with_80_queries_a_tile(kind, n):
    """At d=128 the one kernel may stream 80 queries a tile (FlashAttention-4's): 160-byte
    rows of queries fill no 128-byte panel, so dS is staged with its keys innermost (two
    panels of 64 keys, each warpgroup's in one), written by stmatrix.trans with no branch
    (every warp's rows in the buffer), and dQ^T reads it as a K-major B of N = 80. The last
    tile of queries is ragged (200 = 2 x 80 + 40). Every level keeps the gradient; ptxas
    takes the PTX without a spill or a serialised wgmma where the 80 f32 values of dS die at
    the stmatrix (dK's A operand is the pairs it rounded) and D is read past dP's wait; dV's
    products are issued between dS's writes and the writers' meeting."""
    d = 128
    text, values = gradient_inputs(kind, n, n, d, seed=n + 9)
    module = run_pipeline(text, f'{GRAD},ncd-extract{{function="{NAMES[kind]}_grad" results="0,1,2" cut="delta"}},'
                                'ncd-widen-results{result=0}')
    diagram = find_entry(module)
    inputs = [values[name] for name in diagram.input_names]
    plan = attention.sm90_plan(module, block=128, stream=80, persistent=False)
    assert plan.stream == ("i", 80)
    every_level_keeps(module, plan, inputs, diagram.run(inputs))
    ptx = compile_to_ptx(str(module), 'napkin-sm90{block="128,80" persistent=false}')
    loops = 2 if kind == "causal" else 1  # the mask's diagonal tiles in a loop of their own
    assert ptx.count("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16") == 5 * loops  # 80 queries: 10 matrices of 8, 2 a store
    assert "wgmma.mma_async.sync.aligned.m64n80k16" in ptx
    last_stmatrix = ptx.rindex("stmatrix.sync")
    meeting = ptx.index("bar.sync", last_stmatrix)
    # dV's products (P rounded for them) between dS's writes and the writers' meeting
    assert "wgmma.mma_async.sync.aligned.m64n128k16" in ptx[last_stmatrix:meeting]
    dk = ptx.index("wgmma.mma_async.sync.aligned.m64n128k16", ptx.index("wgmma.mma_async.sync.aligned.m64n80k16", meeting))
    assert "cvt.rn.bf16x2" not in ptx[meeting:dk]  # dK's A: the pairs the stmatrix rounded
    if find_ptxas() is not None and kind == "softmax":
        (res,) = ptxas_resources(ptx, "sm_90a").values()
        assert res.registers <= 168 and not res.spills and not res.serialized_wgmma, res


def test_128_queries_a_tile_only_at_head_dim_64():
    """d=128's one kernel keeps 64 queries a tile, and the refusal says which are allowed."""
    text, _ = gradient_inputs("softmax", 72, 40, 128, seed=1)
    module = run_pipeline(text, f'{GRAD},ncd-extract{{function="{NAMES["softmax"]}_grad" results="0,1,2" cut="delta"}},'
                                'ncd-widen-results{result=0}')
    with pytest.raises(PassFailedException, match="or 128 at head dim 64"):
        attention.sm90_plan(module, stream=128)


@pytest.mark.parametrize("d", [64, 128])
def test_the_streamed_statistics_come_with_the_tiles(d):
    """The one kernel of dQ, dK and dV at the benchmarks' length: the TMA brings the streamed
    queries' log-sum-exp (in base 2) and D with Q and dO (one unswizzled box of f32 each,
    as many as the queries a tile: 128 at d=64, 64 at d=128, on their barriers), the
    consumers read them from shared memory, and the whole still fits a block's shared
    memory at both head dims (ptxas takes it)."""
    import napkin_ir
    from napkin_ir.attention_diagrams import attention_diagram, gradient_passes

    text = str(run_pipeline(attention_diagram("causal", 1, 2, 4096, d), gradient_passes("causal", "qkv")))
    kernel = napkin_ir.compile(text, "sm90")
    boxes = {p.arg: p.tma for p in kernel.contract.params if p.tma is not None}
    queries = {64: 128, 128: 64}[d]
    assert boxes["lse_log2"].box == (1, 1, queries) and boxes["lse_log2"].swizzle == "none"
    assert boxes["delta"].box == (1, 1, queries) and boxes["delta"].swizzle == "none"
    assert "ld.global.v2.f32" not in kernel.ptx and kernel.ptx.count("ld.shared.v2.f32") >= 16
    if find_ptxas() is not None:
        (res,) = ptxas_resources(kernel.ptx, "sm_90a").values()
        assert res.registers <= 168, res


@pytest.mark.parametrize("kind", ["softmax", "causal"])
def test_one_kernel_with_the_scale_past_the_products_keeps_the_gradient(kind):
    """As napkin::attention derives it (`gradient_passes`): over 144 keys at d=64, dS's
    softmax scale moves past dQ's and dK's products (`ncd-sink-scales`), dK's epilogue
    multiplies, and dQ, which the blocks add into, leaves the kernel unscaled with the
    factor on its result (`ncd.scale`); P is 2^x of the log-sum-exp in base 2
    (`ncd-fold-log2e`). Every level keeps the derived diagram's numbers, and those, dQ
    multiplied by its factor, are the gradient with the scale on dS and e^x."""
    text, values = gradient_inputs(kind, 144, 144, 64, seed=11)
    module = run_pipeline(text, gradient_passes(kind, "qkv"))
    (scale, *rest) = result_scales(find_function(module))
    assert scale == 0.125 and rest == [None, None]
    diagram = find_entry(module)
    inputs = [values[name] for name in diagram.input_names]
    got = diagram.run(inputs)
    every_level_keeps(module, attention.sm90_plan(module, persistent=False), inputs, got)
    plain = run_pipeline(text, f'{GRAD},ncd-extract{{function="{NAMES[kind]}_grad" results="0,1,2" cut="delta"}},'
                               'ncd-widen-results{result=0}')
    plain_entry = find_entry(plain)  # reading the log-sum-exp, not in base 2
    want = plain_entry.run([values[name] for name in plain_entry.input_names])
    for n, (g, w) in enumerate(zip([got[0] * scale, *got[1:]], want, strict=True)):
        assert reference.relative_error(g, w) <= reference.TOLERANCE["bf16"], "dq dk dv".split()[n]


@pytest.mark.parametrize("part", ["q", "kv"])
def test_sm80_ptx_with_the_scale_past_the_products_matches_torch_autograd(part):
    """sm_80's dQ and dK kernels as napkin::attention derives them over 144 keys: the scale
    an epilogue of the accumulators, the PTX in the warp-level emulator against float64
    torch.autograd."""
    torch = pytest.importorskip("torch")
    n, d = 144, 64
    text, values = gradient_inputs("softmax", n, n, d, seed=13)
    Q, K, V = (torch.tensor(values[a], dtype=torch.float64, requires_grad=True) for a in "qkv")
    (torch.softmax(Q @ K.transpose(-1, -2) / d ** 0.5, -1) @ V).backward(torch.tensor(values["d_o"], dtype=torch.float64))
    module = run_pipeline(text, f"{gradient_passes('softmax', part)},napkin-sm80")
    assert "mul.f32" in compile_to_ptx(str(run_pipeline(text, gradient_passes("softmax", part))), "napkin-sm80")
    (kernel,) = [op for op in module.walk() if isinstance(op, ptx.KernelOp)]
    names = [p.removeprefix(f"{kernel.sym_name.data}_") for p, _ in kernel.param_list()]
    half = HALF["bf16"]
    wants = {"q": [Q.grad], "kv": [K.grad, V.grad]}[part]
    args = [values[name].astype(half) if name in ("q", "k", "v", "d_o", "o") else values[name] for name in names[:-len(wants)]]
    outs = [np.full(w.shape, 0xFFFF, np.uint16).view(half) for w in wants]  # poisoned: NaN
    run_kernel(module, [*args, *outs], lazy=True, reverse=True)
    for out, want in zip(outs, wants, strict=True):
        assert np.isfinite(out.astype(np.float64)).all(), "some output was not written"
        assert reference.relative_error(out, want.numpy()) <= reference.TOLERANCE["bf16"]
