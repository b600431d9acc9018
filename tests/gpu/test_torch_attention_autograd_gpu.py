"""napkin::attention's backward on the GPU: the four kernels `ncd-grad` derives (D, dQ, dK,
dV), through the op, against float64 torch.autograd on fresh random inputs (softmax, causal,
spherical; head dims 64/128/256; ragged lengths, more keys than queries, grouped heads;
parameters; a loss on the log-sum-exp; torch.compile), and a small transformer trained for
200 steps with napkin's attention and matmul whose losses follow the same model on SDPA and
torch.matmul."""

from __future__ import annotations

import math

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")


def _rel(x, y) -> float:
    return float((x.double() - y).norm() / y.norm())


def _reference(q, k, v, kind, scale=None):
    """float64 attention, grouped heads repeated."""
    r = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(r, 1), v.repeat_interleave(r, 1)
    s = q @ k.transpose(-1, -2)
    if kind == "spherical":
        return (s / s.norm(dim=-1, keepdim=True)) @ v
    s = s * (scale if scale is not None else 1 / math.sqrt(q.shape[-1]))
    if kind == "causal":
        s = s.masked_fill(~torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).tril(), float("-inf"))
    return torch.softmax(s, -1) @ v


CASES = [("softmax", (2, 4, 4, 512, 512, 64)), ("causal", (1, 4, 4, 1000, 1000, 128)), ("softmax", (1, 2, 2, 200, 333, 64)),
         ("causal", (1, 8, 2, 300, 300, 64)), ("softmax", (1, 2, 2, 384, 384, 256)), ("spherical", (1, 4, 4, 500, 500, 64)),
         ("spherical", (1, 4, 2, 256, 256, 128)), ("softmax", (2, 8, 1, 512, 700, 128)), ("causal", (1, 16, 4, 1000, 1000, 64)),
         ("causal", (1, 8, 2, 384, 384, 256)), ("softmax", (2, 4, 4, 512, 700, 128)), ("causal", (1, 2, 2, 200, 200, 128)),
         ("spherical", (1, 4, 4, 300, 300, 128)), ("softmax", (1, 8, 2, 300, 300, 64)),  # a group's 4 x 300 queries in tiles across heads
         ("softmax", (1, 2, 2, 4096, 4096, 128)),  # dQ, dK, dV from one kernel on Hopper
         ("causal", (1, 4, 2, 4096, 4096, 128)),  # grouped: the one kernel, each head's dK and dV added into its group's
         ("causal", (1, 2, 2, 4096, 4096, 256))]  # the forward with its log-sum-exp in persistent blocks, O from Q's room


@pytest.mark.parametrize("kind,shape", CASES, ids=lambda c: "x".join(map(str, c)) if isinstance(c, tuple) else c)
def test_attention_gradients_match_float64(kind, shape):
    _gradients_match(kind, shape)


@pytest.mark.sanitize
@pytest.mark.parametrize("shape", [(1, 2, 2, 200, 200, 256), (1, 4, 2, 200, 200, 256)], ids=["200", "grouped-200"])
def test_d256_gradient_kernels_a_block_a_tile_under_the_sanitizer(shape):
    """Small enough for compute-sanitizer's memcheck, racecheck and synccheck: the kernels of
    dQ, dK and dV at d=256 (a kernel each), which launch a block a tile at every length
    (`persistent_pays`), over a ragged causal 200; grouped, each head's dK and dV added into
    its group's f32 sums."""
    _gradients_match("causal", shape)


def _gradients_match(kind, shape):
    import napkin_ir.torch as nt

    b, h, hk, n, nk, d = shape
    q = torch.randn(b, h, n, d, device="cuda").to(torch.bfloat16).requires_grad_()  # fresh: no seed
    k = torch.nn.Parameter(torch.randn(b, hk, nk, d, device="cuda").to(torch.bfloat16))
    v = torch.randn(b, hk, nk, d, device="cuda").to(torch.bfloat16).requires_grad_()
    g = torch.randn(b, h, n, d, device="cuda").to(torch.bfloat16)
    out = nt.attention(q, k, v, kind)
    out.backward(g)
    q64, k64, v64 = (x.detach().double().requires_grad_() for x in (q, k, v))
    want = _reference(q64, k64, v64, kind)
    want.backward(g.double())
    assert _rel(out, want.detach()) <= 1e-2
    for name, got, ref in (("dq", q.grad, q64.grad), ("dk", k.grad, k64.grad), ("dv", v.grad, v64.grad)):
        assert torch.isfinite(got).all(), f"{name} has non-finite values"
        assert _rel(got, ref) <= 2e-2, f"{name}: {_rel(got, ref):.2e}"


@pytest.mark.parametrize("d", [128, 64])
@pytest.mark.parametrize("kind,shape", [("softmax", (2, 4, 512, 700)), ("causal", (1, 4, 1000, 1000)), ("spherical", (1, 2, 300, 300))])
def test_dq_beside_dk_and_dv_matches_float64(kind, shape, d, monkeypatch):
    """dQ, dK and dV from one kernel through the op, at lengths, masks and head dims where
    the default may keep dQ apart too (`FUSED_DQ_DIMS`, `FUSED_DQ_MIN_KEYS`,
    `FUSED_DQ_MASKED_MIN_KEYS`). At d=64 its blocks hold 128 keys in two warpgroups, which
    take dQ^T's 64 rows each for half of its columns."""
    _one_kernel_matches(kind, shape, d, monkeypatch)


@pytest.mark.parametrize("d", [128, 64])
@pytest.mark.parametrize("shape", [(1, 8, 2, 1000, 1000), (2, 4, 1, 384, 384)], ids=["8/2", "4/1"])
def test_grouped_heads_one_kernel_matches_float64(shape, d, monkeypatch):
    """Grouped heads under a causal mask through the one kernel of dQ, dK and dV: each query
    head's block adds its dK and dV into the group's f32 sums (no K and V repeated)."""
    _one_kernel_matches("causal", shape, d, monkeypatch)


@pytest.mark.sanitize
@pytest.mark.parametrize("d", [128, 64])
def test_one_kernel_of_the_backward_under_the_sanitizer(d, monkeypatch):
    """Small enough for compute-sanitizer's memcheck, racecheck and synccheck: dQ, dK and
    dV from one kernel over a ragged causal 200 (two key blocks, the second cut short), at
    d=64 its two warpgroups writing halves of dQ^T's columns into one f32 stage."""
    _one_kernel_matches("causal", (1, 2, 2, 200, 200), d, monkeypatch)
    _one_kernel_matches("causal", (1, 4, 2, 200, 200), d, monkeypatch)  # grouped: dK and dV added into


@pytest.mark.sanitize
@pytest.mark.parametrize("d", [128, 64])
@pytest.mark.parametrize("shape", [(1, 2, 2, 1536, 1536), (1, 2, 2, 232, 232), (1, 4, 2, 1100, 1100)],
                         ids=["1536", "232-ragged", "grouped-1100"])
def test_one_kernel_launched_longest_first_matches_float64(shape, d, monkeypatch):
    """The one kernel under a causal mask on a plain grid (not persistent: the default where
    a block streams enough queries, at d=128 over 16k), its key blocks launched from the
    first (`hbm.order = "last_from_start"`: the first streams the most queries). Shapes no
    other test compiles, so that no cached persistent kernel stands in for it."""
    from napkin_ir.plan.recipes import attention as recipe

    monkeypatch.setattr(recipe, "PERSISTENT_WORK", 0)
    _one_kernel_matches("causal", shape, d, monkeypatch)


def _one_kernel_matches(kind, shape, d, monkeypatch):
    import napkin_ir.torch as nt

    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("the one kernel of dQ, dK and dV is sm_90a's")
    monkeypatch.setattr(nt, "FUSED_DQ_DIMS", (d,))
    monkeypatch.setattr(nt, "FUSED_DQ_MIN_KEYS", 0)
    monkeypatch.setattr(nt, "FUSED_DQ_MASKED_MIN_KEYS", 0)
    assert nt.backward_parts(d, (9, 0), masked=kind == "causal", keys=shape[3]) == ("delta", "qkv")
    b, h, hk, n, nk = shape if len(shape) == 5 else (shape[0], shape[1], *shape[1:])
    q, g = (torch.randn(b, h, n, d, device="cuda").to(torch.bfloat16) for _ in range(2))
    k, v = (torch.randn(b, hk, nk, d, device="cuda").to(torch.bfloat16) for _ in range(2))
    q, k, v = (x.requires_grad_() for x in (q, k, v))
    nt.attention(q, k, v, kind).backward(g)
    q64, k64, v64 = (x.detach().double().requires_grad_() for x in (q, k, v))
    _reference(q64, k64, v64, kind).backward(g.double())
    for name, got, ref in (("dq", q.grad, q64.grad), ("dk", k.grad, k64.grad), ("dv", v.grad, v64.grad)):
        assert got.dtype == torch.bfloat16 and torch.isfinite(got).all(), name
        assert _rel(got, ref) <= 2e-2, f"{name}: {_rel(got, ref):.2e}"


# spherical attention over enough keys: its program of products (`attention_program`),
# ragged lengths, more keys than queries, grouped heads
PROGRAM_CASES = [(1, 4, 4, 2048, 2048, 64), (1, 8, 2, 1000, 1000, 128), (2, 2, 2, 1400, 3000, 128), (1, 16, 2, 4096, 4096, 128)]


@pytest.mark.parametrize("shape", PROGRAM_CASES, ids=lambda c: "x".join(map(str, c)))
def test_spherical_attention_by_its_program_matches_float64(shape, monkeypatch):
    """Forward (plain and with the norm), backward, against float64 autograd, every buffer
    the program allocates poisoned with NaN first: a kernel that leaves any of its output
    unwritten fails the test. The program runs at these shapes whether or not it pays
    there (`program_pays`: few heads keep the one kernel)."""
    import napkin_ir.plan.program as plan_program
    import napkin_ir.torch as nt

    monkeypatch.setattr(plan_program, "program_pays", lambda *a, **k: True)
    monkeypatch.setattr(nt, "_programs", {})
    b, h, hk, n, nk, d = shape
    cap = torch.cuda.get_device_capability()
    assert nt.attention_program("spherical", None, b, h, hk, n, nk, d, "bf16", cap) is not None
    assert nt.attention_program("spherical", None, b, h, hk, n, nk, d, "bf16", cap, gradient=True) is not None
    empty, full = torch.empty, torch.full
    monkeypatch.setattr(torch, "empty", lambda *size, dtype=None, device=None, **kw: full(
        size[0] if len(size) == 1 and isinstance(size[0], (tuple, list, torch.Size)) else size, float("nan"), dtype=dtype,
        device=device))
    q = torch.randn(b, h, n, d, device="cuda").to(torch.bfloat16).requires_grad_()  # fresh: no seed
    k = torch.nn.Parameter(torch.randn(b, hk, nk, d, device="cuda").to(torch.bfloat16))
    v = torch.randn(b, hk, nk, d, device="cuda").to(torch.bfloat16).requires_grad_()
    g = torch.randn(b, h, n, d, device="cuda").to(torch.bfloat16)
    with torch.no_grad():
        plain = nt.attention(q, k, v, "spherical")
    out = nt.attention(q, k, v, "spherical")
    out.backward(g)
    monkeypatch.setattr(torch, "empty", empty)
    q64, k64, v64 = (x.detach().double().requires_grad_() for x in (q, k, v))
    want = _reference(q64, k64, v64, "spherical")
    want.backward(g.double())
    assert _rel(plain, want.detach()) <= 1e-2 and _rel(out, want.detach()) <= 1e-2
    _, norm = torch.ops.napkin.attention_lse(q.detach(), k.detach(), v.detach(), "spherical")
    s = q64.detach() @ k64.detach().repeat_interleave(h // hk, 1).transpose(-1, -2)
    assert _rel(norm, s.norm(dim=-1)) <= 1e-2
    for name, got, ref in (("dq", q.grad, q64.grad), ("dk", k.grad, k64.grad), ("dv", v.grad, v64.grad)):
        assert got.dtype == torch.bfloat16 and torch.isfinite(got).all(), f"{name} has non-finite values"
        assert _rel(got, ref) <= 2e-2, f"{name}: {_rel(got, ref):.2e}"


def test_spherical_program_gives_the_same_bits_every_run():
    """The program's products split their contraction over the grid and add the parts in
    a fixed order: the forward and the gradients are the same bits on every run."""
    import napkin_ir.torch as nt

    b, h, hk, n, d = 1, 8, 2, 2048, 128
    q = torch.randn(b, h, n, d, device="cuda").to(torch.bfloat16).requires_grad_()
    k, v = (torch.randn(b, hk, n, d, device="cuda").to(torch.bfloat16).requires_grad_() for _ in range(2))
    g = torch.randn(b, h, n, d, device="cuda").to(torch.bfloat16)
    assert nt.attention_program("spherical", None, b, h, hk, n, n, d, "bf16", torch.cuda.get_device_capability(),
                                gradient=True) is not None
    runs = []
    for _ in range(3):
        q.grad = k.grad = v.grad = None
        out = nt.attention(q, k, v, "spherical")
        out.backward(g)
        runs.append([x.detach().clone() for x in (out, q.grad, k.grad, v.grad)])
    for later in runs[1:]:
        for first, again in zip(runs[0], later):
            assert torch.equal(first, again)


@pytest.mark.sanitize
def test_spherical_program_under_the_sanitizer(monkeypatch):
    """The program's kernels at a size compute-sanitizer runs quickly: ragged queries and
    keys (600 and 1000), each product and row kernel cut short at the edge."""
    test_spherical_attention_by_its_program_matches_float64((1, 2, 2, 600, 1000, 64), monkeypatch)


def test_grouped_heads_backward_is_deterministic_when_torch_asks():
    """Under torch.use_deterministic_algorithms(True), grouped heads' dK and dV come from
    the plain diagram's kernels on repeated K and V, summed in a fixed order: the same bits
    on every run (the grouped kernels add the heads' parts atomically, in any order)."""
    import napkin_ir.torch as nt

    b, h, hk, n, d = 1, 8, 2, 512, 64
    q = torch.randn(b, h, n, d, device="cuda").to(torch.bfloat16).requires_grad_()
    k, v = (torch.randn(b, hk, n, d, device="cuda").to(torch.bfloat16).requires_grad_() for _ in range(2))
    g = torch.randn(b, h, n, d, device="cuda").to(torch.bfloat16)
    q64, k64, v64 = (x.detach().double().requires_grad_() for x in (q, k, v))
    _reference(q64, k64, v64, "causal").backward(g.double())
    torch.use_deterministic_algorithms(True)
    try:
        runs = []
        for _ in range(3):
            q.grad = k.grad = v.grad = None
            nt.attention(q, k, v, "causal").backward(g)
            runs.append((k.grad.clone(), v.grad.clone()))
    finally:
        torch.use_deterministic_algorithms(False)
    assert all(torch.equal(a, b) for run in runs[1:] for a, b in zip(runs[0], run))
    assert _rel(runs[0][0], k64.grad) <= 2e-2 and _rel(runs[0][1], v64.grad) <= 2e-2


def test_a_loss_on_the_log_sum_exp_and_sdpa_layouts():
    import napkin_ir.torch as nt

    q, k, v = (torch.randn(2, 300, 4, 64, device="cuda").to(torch.bfloat16).requires_grad_() for _ in range(3))
    out, lse = nt.scaled_dot_product_attention(q, k, v, is_causal=True, layout="bnhd", return_lse=True)
    (out.float().square().mean() + lse.mean()).backward()
    q64, k64, v64 = (x.detach().double().transpose(1, 2).requires_grad_() for x in (q, k, v))
    s = (q64 @ k64.transpose(-1, -2)) / 8
    s = s.masked_fill(~torch.ones(300, 300, dtype=torch.bool, device="cuda").tril(), float("-inf"))
    o64 = (torch.softmax(s, -1) @ v64).transpose(1, 2)
    (o64.square().mean() + torch.logsumexp(s, -1).mean()).backward()
    for got, ref in ((q.grad, q64.grad.transpose(1, 2)), (k.grad, k64.grad.transpose(1, 2)), (v.grad, v64.grad.transpose(1, 2))):
        assert _rel(got, ref) <= 2e-2


def test_torch_compile_fullgraph_with_the_backward():
    import napkin_ir.torch as nt

    q, k, v = (torch.randn(1, 4, 256, 64, device="cuda").to(torch.bfloat16).requires_grad_() for _ in range(3))

    @torch.compile(fullgraph=True)
    def loss(q, k, v):
        return nt.scaled_dot_product_attention(q, k, v, is_causal=True).float().square().mean()

    loss(q, k, v).backward()
    q64, k64, v64 = (x.detach().double().requires_grad_() for x in (q, k, v))
    _reference(q64, k64, v64, "causal").square().mean().backward()
    for got, ref in ((q.grad, q64.grad), (k.grad, k64.grad), (v.grad, v64.grad)):
        assert _rel(got, ref) <= 2e-2


class _Block(torch.nn.Module):
    def __init__(self, width: int, heads: int, gen):
        super().__init__()
        self.heads = heads
        init = lambda *s: torch.nn.Parameter((torch.randn(*s, device="cuda", generator=gen) / math.sqrt(s[0])).to(torch.bfloat16))  # noqa: E731
        self.qkv, self.proj, self.up, self.down = init(width, 3 * width), init(width, width), init(width, 4 * width), init(4 * width, width)

    def forward(self, x, mm, attend):
        b, n, w = x.shape
        y = torch.nn.functional.layer_norm(x.float(), (w,)).to(x.dtype)
        q, k, v = mm(y.reshape(b * n, w), self.qkv).reshape(b, n, 3, self.heads, w // self.heads).permute(2, 0, 3, 1, 4)
        a = attend(q, k, v).transpose(1, 2).reshape(b * n, w)
        x = x + mm(a, self.proj).reshape(b, n, w)
        y = torch.nn.functional.layer_norm(x.float(), (w,)).to(x.dtype).reshape(b * n, w)
        return x + mm(torch.nn.functional.gelu(mm(y, self.up)), self.down).reshape(b, n, w)


class _Transformer(torch.nn.Module):
    def __init__(self, vocab=128, width=256, heads=4, layers=2):
        super().__init__()
        gen = torch.Generator(device="cuda").manual_seed(0)
        self.embed = torch.nn.Parameter((torch.randn(vocab, width, device="cuda", generator=gen) / 4).to(torch.bfloat16))
        self.blocks = torch.nn.ModuleList(_Block(width, heads, gen) for _ in range(layers))

    def forward(self, tokens, mm, attend):
        x = self.embed[tokens]
        for blk in self.blocks:
            x = blk(x, mm, attend)
        b, n, w = x.shape
        return mm(torch.nn.functional.layer_norm(x.float(), (w,)).to(x.dtype).reshape(b * n, w), self.embed.t().contiguous())


def test_a_small_transformer_trains_as_on_sdpa_and_cublas():
    import napkin_ir.torch as nt

    gen = torch.Generator(device="cuda").manual_seed(1)
    # sequences that repeat a random prefix: the second half is learnable from the first
    prefix = torch.randint(0, 128, (16, 8, 128), device="cuda", generator=gen)
    data = torch.cat([prefix, prefix], -1)
    backends = {"napkin": (nt.matmul, lambda q, k, v: nt.scaled_dot_product_attention(q, k, v, is_causal=True)),
                "torch": (torch.matmul, lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True))}
    curves = {}
    for name, (mm, attend) in backends.items():
        model = _Transformer()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        losses = []
        for step in range(200):
            tokens = data[step % len(data)]
            logits = model(tokens[:, :-1], mm, attend).float()
            loss = torch.nn.functional.cross_entropy(logits, tokens[:, 1:].reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        curves[name] = losses
    napkin, ref = curves["napkin"], curves["torch"]
    assert napkin[-1] < 0.9 * napkin[0], "the loss did not fall"
    worst = max(abs(a - b) / b for a, b in zip(napkin, ref))
    print(f"transformer: first {napkin[0]:.4f} / {ref[0]:.4f}, last {napkin[-1]:.4f} / {ref[-1]:.4f}, worst step {worst:.2%}")
    assert worst <= 0.01, list(zip(napkin, ref))[::20]


def test_views_off_sixteen_byte_alignment():
    """q, k, v and the output's cotangent as views 2 bytes past an aligned address (a slice
    one element in): the forward and the backward copy them for the TMA and match float64."""
    import napkin_ir.torch as nt

    b, h, n, d = 1, 2, 256, 64
    size = b * h * n * d

    # flat leaves (for .grad), the views one element in
    leaves = [torch.randn(size + 1, device="cuda").to(torch.bfloat16).requires_grad_() for _ in range(3)]
    q, k, v = (leaf[1:].view(b, h, n, d) for leaf in leaves)
    g = torch.randn(size + 1, device="cuda").to(torch.bfloat16)[1:].view(b, h, n, d)
    assert all(x.data_ptr() % 16 != 0 for x in (q, k, v, g))
    nt.attention(q, k, v, "causal").backward(g)
    q64, k64, v64 = (x.detach().double().requires_grad_() for x in (q, k, v))
    _reference(q64, k64, v64, "causal").backward(g.double())
    for name, leaf, ref in (("dq", leaves[0], q64.grad), ("dk", leaves[1], k64.grad), ("dv", leaves[2], v64.grad)):
        got = leaf.grad[1:].view(b, h, n, d)
        assert torch.isfinite(got).all() and leaf.grad[0] == 0, name
        assert _rel(got, ref) <= 2e-2, f"{name}: {_rel(got, ref):.2e}"


@pytest.mark.parametrize("shape", [(4, 16, 512, 128), (1, 3, 37, 64), (1, 1, 3, 8), (1, 1, 1, 12)], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_dq_leaves_f32_with_the_bits_of_torch_mul(shape, dtype):
    """dQ's finish (its f32 sums times the softmax scale, rounded): napkin's rows kernel
    (`scaled_kernel`; torch's multiply where no rows of 8 fill the elements, as 12) gives the
    bits of `torch.mul(out=)`, every element written, on a side stream."""
    import napkin_ir.torch as nt

    x = torch.randn(*shape, device="cuda") * 3
    scale = 1 / math.sqrt(shape[-1])
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        got = nt._finished(x, scale, dtype, nt.capability(x.device), side.cuda_stream, x.device.index or 0)
    side.synchronize()
    assert got.dtype == dtype and got.shape == x.shape
    assert torch.equal(got, torch.mul(x, scale, out=torch.empty(shape, dtype=dtype, device="cuda")))
