"""torch.ops.napkin.matmul and torch.ops.napkin.attention on the GPU, against torch on fresh
random inputs (float64 references): GEMMs on both paths, attention of every kind with
grouped-query heads (causal too), attention that returns its log-sum-exp, non-contiguous inputs, torch.compile(fullgraph=True), a non-default
stream that the op waits on without synchronising, and torch.library.opcheck."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

TOLERANCE = {torch.bfloat16: 1e-2, torch.float16: 2e-3}


def _ops():
    import napkin_ir.torch as nt

    return nt


def rel(out, ref) -> float:
    return ((out.double() - ref).norm() / ref.norm()).item()


def rand(*shape, dtype=torch.bfloat16, seed=None):
    g = torch.Generator(device="cuda").manual_seed(seed) if seed is not None else None
    return torch.randn(*shape, device="cuda", generator=g).to(dtype)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("shape", [(4096, 4096, 4096), (1000, 744, 520), (128, 256, 64), (64, 64, 64), (40, 24, 16),
                                   (300, 296, 24), (7, 4096, 8), (1, 16, 8), (100, 128, 40)])
def test_matmul_against_torch(shape, dtype):
    nt = _ops()
    m, n, k = shape
    a, b = rand(m, k, dtype=dtype), rand(k, n, dtype=dtype)
    out = torch.ops.napkin.matmul(a, b)
    assert out.shape == (m, n) and out.dtype == dtype
    assert rel(out, a.double() @ b.double()) <= TOLERANCE[dtype]
    assert rel(out, torch.matmul(a, b).double()) <= TOLERANCE[dtype]
    del nt


@pytest.mark.parametrize("deterministic", [False, True])
@pytest.mark.parametrize("shape", [(1, 4096, 4096), (3, 512, 1024), (16, 4096, 14336), (64, 4096, 14336), (8, 64, 64),
                                   (13, 4096, 4096), (16, 14336, 4096), (128, 8192, 8192), (100, 1024, 200)])
def test_matmul_at_decode_sizes(shape, deterministic):
    """M of 1 to 128: on Hopper a 64-row tile whose copies bring A's rows only (rounded up to
    8), elsewhere a tile of 16 rows past the end; the contraction split over the grid where the tiles fill less than the machine (the
    parts' f32 sums added in order and rounded by the last to finish): the same bits twice,
    with or without use_deterministic_algorithms."""
    nt = _ops()
    m, n, k = shape
    a, b = rand(m, k), rand(k, n)
    torch.use_deterministic_algorithms(deterministic)
    try:
        out = torch.ops.napkin.matmul(a, b)
        again = torch.ops.napkin.matmul(a, b)
    finally:
        torch.use_deterministic_algorithms(False)
    assert out.shape == (m, n) and out.dtype == torch.bfloat16 and out.is_contiguous()
    assert rel(out, a.double() @ b.double()) <= TOLERANCE[torch.bfloat16]
    kernel = nt.matmul_kernel(m, n, k, "bf16", torch.cuda.get_device_capability())
    assert kernel.name == "matmul"  # one launch, a tile past A's rows
    if torch.cuda.get_device_capability() == (9, 0) and m < 64:
        assert kernel.boxes["a"].box[0] == -(-m // 8) * 8
    assert torch.equal(out, again)
    del nt


@pytest.mark.parametrize("shape", [(1, 4096, 4096), (13, 4096, 14336), (64, 4096, 4096)])
def test_decode_sizes_under_a_cuda_graph(shape):
    """A decode-sized call captured in a CUDA graph launches the eager call's kernel (loaded by
    it, so the capture loads nothing): both against float64, the graph replayed on new inputs,
    its output poisoned before each replay."""
    nt = _ops()
    m, n, k = shape
    a, b = rand(m, k), rand(k, n)
    eager = torch.ops.napkin.matmul(a, b)
    assert rel(eager, a.double() @ b.double()) <= TOLERANCE[torch.bfloat16]
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = torch.ops.napkin.matmul(a, b)
    for seed in (5, 6):
        a.copy_(rand(m, k, seed=seed))
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert rel(out, a.double() @ b.double()) <= TOLERANCE[torch.bfloat16] and not out.isnan().any()
    del nt


def test_matmul_non_contiguous_inputs():
    nt = _ops()
    a, bt = rand(512, 256), rand(384, 256)
    out = nt.matmul(a[:, :], bt.t())  # b is a transposed view: copied to a contiguous one first
    assert rel(out, a.double() @ bt.double().t()) <= 1e-2


def _reference(q, k, v, kind, scale=None):
    group = q.shape[1] // k.shape[1]
    k, v = (x.double().repeat_interleave(group, dim=1) for x in (k, v))
    if kind == "spherical":
        s = q.double() @ k.transpose(-1, -2)
        p = (s / s.norm(dim=-1, keepdim=True)).to(q.dtype).double()  # the probabilities enter the product in the input type
        return p @ v
    return torch.nn.functional.scaled_dot_product_attention(q.double(), k, v, is_causal=kind == "causal", scale=scale)


SHAPES = [(2, 4, 4, 256, 256, 64), (1, 8, 8, 1000, 1000, 128), (2, 8, 2, 300, 300, 64), (1, 4, 1, 77, 500, 64),
          (1, 16, 2, 1000, 1000, 128)]
CASES = [(kind, s) for kind in ("softmax", "causal", "spherical") for s in SHAPES
         if kind != "causal" or s[3] == s[4]]  # a causal mask takes no more keys than queries


@pytest.mark.parametrize("kind, shape", CASES, ids=lambda c: c if isinstance(c, str) else "b{}h{}kv{}n{}k{}d{}".format(*c))
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_attention_against_sdpa(kind, shape, dtype):
    nt = _ops()
    b, h, hk, n, nk, d = shape
    q, k, v = rand(b, h, n, d, dtype=dtype), rand(b, hk, nk, d, dtype=dtype), rand(b, hk, nk, d, dtype=dtype)
    out = nt.attention(q, k, v, kind)
    assert out.shape == q.shape and out.dtype == dtype and not out.isnan().any()
    assert rel(out, _reference(q, k, v, kind)) <= TOLERANCE[dtype]
    if kind != "spherical":
        sdpa = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=kind == "causal", enable_gqa=hk != h)
        assert rel(out, sdpa.double()) <= 2 * TOLERANCE[dtype]


def _lse_reference(q, k, v, causal, scale=None):
    """(out, lse) in float64: lse = log sum_j exp(scale q k_j), the keys after the query
    masked where causal, f32 [B, H, N] as flash-attn gives it."""
    group = q.shape[1] // k.shape[1]
    k, v = (x.double().repeat_interleave(group, dim=1) for x in (k, v))
    s = (q.double() @ k.transpose(-1, -2)) * (q.shape[-1] ** -0.5 if scale is None else scale)
    if causal:
        n = q.shape[2]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1), -float("inf"))
    lse = torch.logsumexp(s, dim=-1)
    return torch.softmax(s, dim=-1) @ v, lse


# the last on a plain grid at d=128 (over 4096 keys): without a mask, the lazy running max (`reg-lazy-rescale`)
LSE_SHAPES = [(2, 4, 4, 256, 64), (1, 4, 4, 200, 128), (2, 8, 2, 200, 64), (1, 16, 2, 1000, 128), (1, 2, 2, 77, 64), (1, 2, 2, 5000, 128)]


@pytest.mark.parametrize("shape", LSE_SHAPES, ids=lambda s: "b{}h{}kv{}n{}d{}".format(*s))
@pytest.mark.parametrize("causal", [False, True], ids=["softmax", "causal"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_attention_returns_the_log_sum_exp(shape, causal, dtype):
    """return_lse=True: the output and the log-sum-exp of each row (f32 [B, H, N], natural
    log) from one kernel, against float64 on fresh inputs, into poisoned memory (an
    element the kernel does not write shows as NaN); both layouts of SDPA's signature."""
    nt = _ops()
    b, h, hk, n, d = shape
    q, k, v = rand(b, h, n, d, dtype=dtype), rand(b, hk, n, d, dtype=dtype), rand(b, hk, n, d, dtype=dtype)
    want_out, want_lse = _lse_reference(q, k, v, causal)
    for _ in range(2):  # the first call compiles; the second takes the cached launch
        _poison_allocator()
        out, lse = nt.attention(q, k, v, "causal" if causal else "softmax", return_lse=True)
        torch.cuda.synchronize()
        assert out.shape == q.shape and out.dtype == dtype and not out.isnan().any()
        assert lse.shape == (b, h, n) and lse.dtype == torch.float32 and lse.is_contiguous() and lse.isfinite().all()
        assert rel(out, want_out) <= TOLERANCE[dtype]
        assert (lse.double() - want_lse).abs().max().item() <= 1e-3
    _poison_allocator()
    out, lse = nt.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=causal,
                                               enable_gqa=hk != h, layout="bnhd", return_lse=True)
    torch.cuda.synchronize()
    assert out.shape == (b, n, h, d) and lse.shape == (b, h, n) and lse.isfinite().all()
    assert rel(out.transpose(1, 2), want_out) <= TOLERANCE[dtype]
    assert (lse.double() - want_lse).abs().max().item() <= 1e-3


def test_attention_lse_with_a_scale():
    nt = _ops()
    q, k, v = rand(1, 2, 300, 64), rand(1, 2, 300, 64), rand(1, 2, 300, 64)
    _poison_allocator()
    out, lse = nt.scaled_dot_product_attention(q, k, v, scale=0.3, return_lse=True)
    want_out, want_lse = _lse_reference(q, k, v, False, 0.3)
    assert rel(out, want_out) <= 1e-2 and (lse.double() - want_lse).abs().max().item() <= 1e-3


def test_attention_scale():
    _ops()  # registers torch.ops.napkin
    q, k, v = rand(1, 2, 256, 64), rand(1, 2, 256, 64), rand(1, 2, 256, 64)
    out = torch.ops.napkin.attention(q, k, v, "softmax", 0.3)
    assert rel(out, _reference(q, k, v, "softmax", 0.3)) <= 1e-2


def test_under_torch_compile_fullgraph():
    nt = _ops()

    def block(x, w, q, k, v):
        return torch.ops.napkin.matmul(x, w).relu(), nt.attention(q, k, v, "causal") * 2

    x, w = rand(512, 256), rand(256, 384)
    q, k, v = rand(2, 4, 256, 64), rand(2, 4, 256, 64), rand(2, 4, 256, 64)
    compiled = torch.compile(block, fullgraph=True)
    h, o = compiled(x, w, q, k, v)
    assert rel(h, (x.double() @ w.double()).relu()) <= 1e-2
    assert rel(o, 2 * _reference(q, k, v, "causal")) <= 1e-2
    h2, _ = compiled(rand(512, 256, seed=1), w, q, k, v)  # fresh inputs, the same graph
    assert not h2.isnan().any()


def test_on_a_non_default_stream_without_synchronising():
    """The op's kernel waits for work queued before it on the current stream (a NaN input
    filled only after a long sleep on that stream), and the call returns before it runs.
    The kernels are compiled and loaded first: loading a module may wait for the GPU."""
    nt = _ops()
    m, n, k = 2048, 2048, 1024
    a, b = torch.full((m, k), float("nan"), device="cuda", dtype=torch.bfloat16), rand(k, n)
    src, q = rand(m, k), rand(1, 4, 512, 64)
    nt.matmul(src, b), nt.attention(q, q, q)
    torch.cuda.synchronize()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        torch.cuda._sleep(1_000_000_000)  # half a second of a busy stream
        a.copy_(src)
        out = nt.matmul(a, b)
        o = nt.attention(q, q, q)
        busy = not stream.query()
    assert busy, "the op synchronised its stream"
    stream.synchronize()
    assert rel(out, src.double() @ b.double()) <= 1e-2
    assert rel(o, _reference(q, q, q, "softmax")) <= 1e-2


def test_opcheck():
    nt = _ops()
    torch.library.opcheck(torch.ops.napkin.matmul.default, (rand(256, 128), rand(128, 256)))
    torch.library.opcheck(torch.ops.napkin.attention.default, (rand(1, 4, 128, 64), rand(1, 2, 128, 64), rand(1, 2, 128, 64)),
                          {"kind": "spherical"})
    del nt


def test_causal_grouped_query_attention():
    """A causal mask with grouped-query heads (once refused): each query head of a group
    masks by its own positions, as SDPA's is_causal with enable_gqa."""
    nt = _ops()
    q, k, v = rand(2, 8, 333, 64), rand(2, 2, 333, 64), rand(2, 2, 333, 64)
    out = nt.attention(q, k, v, "causal")
    sdpa = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    assert rel(out, _reference(q, k, v, "causal")) <= 1e-2
    assert rel(out, sdpa.double()) <= 2e-2


def test_refusals_name_the_argument():
    nt = _ops()
    with pytest.raises(ValueError, match="b is torch.float32"):
        nt.matmul(rand(64, 64), rand(64, 64, dtype=torch.float32))
    with pytest.raises(ValueError, match=r"does not compile: .*napkin-sm80: .*multiple of 8"):
        nt.matmul(rand(100, 100), rand(100, 100))


# --- inside real models: parameters, no_grad / inference_mode, CUDA graphs, reduce-overhead ---

def _poison_allocator(nbytes: int = 64 << 20) -> None:
    """Fill memory torch's caching allocator hands out next with NaN, so an output element
    the kernel does not write shows as NaN (the ops allocate their outputs with torch.empty)."""
    junk = torch.empty(nbytes // 2, device="cuda", dtype=torch.bfloat16).fill_(float("nan"))
    del junk


def _sdpa_reference(q, k, v, causal, scale=None):
    group = q.shape[1] // k.shape[1]
    k, v = (x.double().repeat_interleave(group, dim=1) for x in (k, v))
    return torch.nn.functional.scaled_dot_product_attention(q.double(), k, v, is_causal=causal, scale=scale)


class _Block(torch.nn.Module):
    """A projection whose weight is an nn.Parameter, then causal grouped-query attention."""

    def __init__(self, d_in=256, d_out=384):
        super().__init__()
        self.weight = torch.nn.Parameter(rand(d_in, d_out))

    def forward(self, x, q, k, v):
        nt = _ops()
        return nt.matmul(x, self.weight), nt.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
def test_parameters_and_requires_grad_inputs_in_a_module(mode):
    block = _Block().cuda()
    x = rand(512, 256).requires_grad_()
    q, k, v = rand(2, 8, 256, 64).requires_grad_(), rand(2, 2, 256, 64).requires_grad_(), rand(2, 2, 256, 64)
    context = torch.no_grad() if mode == "no_grad" else torch.inference_mode()
    for _ in range(2):  # the first call compiles; the second takes the cached launch
        _poison_allocator()
        with context:
            h, o = block(x, q, k, v)
        assert rel(h, x.double() @ block.weight.double()) <= 1e-2 and not h.isnan().any()
        assert rel(o, _sdpa_reference(q, k, v, True)) <= 1e-2 and not o.isnan().any()
        x, q = rand(512, 256).requires_grad_(), rand(2, 8, 256, 64).requires_grad_()  # fresh inputs


def test_cuda_graph_capture_and_replay():
    nt = _ops()
    w = torch.nn.Parameter(rand(256, 384))
    x, q, k, v = rand(512, 256), rand(1, 8, 256, 64), rand(1, 8, 256, 64), rand(1, 8, 256, 64)

    def step():
        return nt.matmul(x, w), nt.scaled_dot_product_attention(q, k, v)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.no_grad(), torch.cuda.stream(side):
        for _ in range(3):  # warm-up outside the capture: compiled, loaded, attributes set
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(graph):
        h, o = step()
    for seed in (1, 2):
        x.copy_(rand(512, 256, seed=seed))
        q.copy_(rand(1, 8, 256, 64, seed=seed + 10))
        h.fill_(float("nan")), o.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert rel(h, x.double() @ w.double()) <= 1e-2 and not h.isnan().any()
        assert rel(o, _sdpa_reference(q, k, v, False)) <= 1e-2 and not o.isnan().any()


def test_torch_compile_reduce_overhead():
    block = _Block().cuda()
    compiled = torch.compile(block, mode="reduce-overhead", fullgraph=True)
    with torch.no_grad():
        for seed in range(4):  # warm-up runs, the capture, then replays, each on fresh inputs
            x = rand(512, 256, seed=seed)
            q, k, v = rand(2, 8, 256, 64, seed=seed + 10), rand(2, 2, 256, 64, seed=seed + 20), rand(2, 2, 256, 64, seed=seed + 30)
            h, o = compiled(x, q, k, v)
            torch.cuda.synchronize()
            assert rel(h, x.double() @ block.weight.double()) <= 1e-2
            assert rel(o, _sdpa_reference(q, k, v, True)) <= 1e-2


@pytest.mark.parametrize("d", [32, 64, 96, 128])
def test_sdpa_head_dims_and_the_flash_attn_layout(d):
    """Head dims 32 and 96 take napkin-sm80 on Hopper (napkin-sm90 refuses them)."""
    nt = _ops()
    q, k, v = rand(2, 300, 8, d), rand(2, 300, 2, d), rand(2, 300, 2, d)  # (B, N, H, D)
    _poison_allocator()
    o = nt.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True, scale=0.2, layout="bnhd")
    ref = _sdpa_reference(*(t.transpose(1, 2) for t in (q, k, v)), True, 0.2).transpose(1, 2)
    assert o.shape == q.shape and not o.isnan().any() and rel(o, ref) <= 1e-2


def test_the_fake_kernel_and_the_gpu_refuse_alike():
    nt = _ops()
    q = rand(1, 2, 128, 72)  # no target compiles d=72
    with pytest.raises(ValueError) as eager:
        nt.scaled_dot_product_attention(q, q, q)
    with pytest.raises(Exception) as traced:
        torch.compile(lambda t: nt.scaled_dot_product_attention(t, t, t), fullgraph=True)(q)
    assert str(eager.value) in str(traced.value)


@pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_two_devices():
    nt = _ops()
    for index in (1, 0, 1):
        with torch.cuda.device(index):
            a, b = rand(256, 128), rand(128, 256)
            q = rand(1, 4, 128, 64)
        assert a.device.index == index
        out, o = nt.matmul(a, b), nt.scaled_dot_product_attention(q, q, q)
        assert out.device.index == index and rel(out, a.double() @ b.double()) <= 1e-2
        assert rel(o, _sdpa_reference(q, q, q, False)) <= 1e-2
    assert torch.cuda.current_device() == 0


def test_a_call_nothing_observes_skips_the_dispatcher(monkeypatch, below_autograd_calls):
    """Plain tensors (a parameter too) on the current device, no mode active: the wrappers
    run the ops' CUDA code directly (the dispatcher's path, spied on, is not taken). Under a
    TorchDispatchMode (what a FLOP counter or FakeTensorMode is), and for tensors on another
    device than the current one, the call goes through the dispatcher, which the mode sees."""
    from torch.utils._python_dispatch import TorchDispatchMode

    nt = _ops()
    dispatched = below_autograd_calls
    a, w = rand(256, 512), torch.nn.Parameter(rand(512, 384), requires_grad=False)
    q = rand(1, 2, 128, 64)
    assert rel(nt.matmul(a, w), a.double() @ w.double()) <= TOLERANCE[torch.bfloat16]
    assert nt.attention(q, q, q).shape == q.shape and dispatched == []

    class Seen(TorchDispatchMode):
        ops: list = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            Seen.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    with Seen():
        out = nt.matmul(a, w)
    assert "napkin.matmul.default" in Seen.ops and len(dispatched) == 1
    assert rel(out, a.double() @ w.double()) <= TOLERANCE[torch.bfloat16]
    # tensors on a device other than the current one (one the test makes up, on a machine of one GPU):
    # the dispatcher makes theirs current for the launch
    monkeypatch.setattr(nt, "_current_device", lambda: a.device.index + 1)
    assert rel(nt.matmul(a, w), a.double() @ w.double()) <= TOLERANCE[torch.bfloat16] and len(dispatched) == 2


@pytest.mark.parametrize("shape, stateful", [((128, 4096, 14336), True), ((16, 4096, 4096), False)],
                         ids=["scratch", "cluster"])
def test_a_split_matmul_on_two_streams_at_once(shape, stateful):
    """A split product launched on two streams in turn, 50 times each, nothing waiting
    between them: every result has the bits of the same product on one stream. 128 x 4096
    x 14336's parts meet in the module's scratch (each stream launches from a module of
    its own); 16 x 4096 x 4096's in their cluster's shared memory (one module)."""
    nt = _ops()
    m, n, k = shape
    a1, a2, b = rand(m, k), rand(m, k), rand(k, n)
    kernel = nt.matmul_kernel(m, n, k, "bf16", torch.cuda.get_device_capability())
    assert kernel.contract.grid[2] == 2 and kernel.stateful == stateful and (kernel.contract.cluster is None) == stateful
    want = {1: nt.matmul(a1, b), 2: nt.matmul(a2, b)}
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    s1.wait_stream(torch.cuda.current_stream())
    s2.wait_stream(torch.cuda.current_stream())
    outs = []
    for _ in range(50):
        with torch.cuda.stream(s1):
            outs.append((1, nt.matmul(a1, b)))
        with torch.cuda.stream(s2):
            outs.append((2, nt.matmul(a2, b)))
    torch.cuda.synchronize()
    assert all(torch.equal(out, want[which]) for which, out in outs)
    assert rel(want[1], a1.double() @ b.double()) <= TOLERANCE[torch.bfloat16]
