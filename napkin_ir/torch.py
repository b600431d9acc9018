"""napkin-ir's kernels as PyTorch ops: `torch.ops.napkin.matmul` and `torch.ops.napkin.attention`.

    import napkin_ir.torch                                          # registers the ops (pip install 'napkin-ir[torch]')
    c = napkin_ir.torch.matmul(a, b)                                # torch.ops.napkin.matmul(a, b)
    o = napkin_ir.torch.scaled_dot_product_attention(q, k, v, is_causal=True)   # SDPA's signature
    o = napkin_ir.torch.attention(q, k, v, kind="spherical")       # torch.ops.napkin.attention(q, k, v, "spherical")
    o, lse = napkin_ir.torch.attention(q, k, v, return_lse=True)   # torch.ops.napkin.attention_lse: lse f32 [B, H, N]

The first call of a shape builds its diagram (`napkin_ir.diagrams.gemm`,
`napkin_ir.attention_diagrams.attention_diagram`, or `gqa_attention_diagram` for
grouped-query heads), compiles it through the compile cache (once per shape on a machine:
later processes read it from disk) and loads it; a compile or load that takes more than a
second says so in one line on the `napkin_ir` logger. Later calls of the same shapes,
strides, dtype and device look the launch up and cost a few microseconds of host time: no
check is repeated, nothing is asked of the driver, and the launch goes on torch's current
stream without synchronising, so calls can be captured in CUDA graphs
(`torch.compile(mode="reduce-overhead")`) once they have run outside the capture.

Which target a shape compiles for is decided by one function per op (`matmul_kernel`,
`attention_kernel`) that both the real and the fake (meta) implementation call, so
`torch.compile(fullgraph=True)` refuses at trace time exactly what the GPU would refuse.
A GEMM takes `napkin-sm90` on a Hopper GPU where its tiles fit, else `napkin-sm80`;
attention takes `napkin-sm90` on Hopper and falls back to `napkin-sm80` for what
`napkin-sm90` refuses (head dims 32 and 96). Without a GPU, a fake kernel judges for
sm_80, which every GPU napkin-ir runs on accepts. `napkin::matmul` has a backward: dA and
dB are GEMMs derived from the diagram by `ncd-grad` and compiled per shape
(`matmul_grad_kernel`). `napkin::attention_lse` is the same forward returning each row's
statistic too (the log-sum-exp, f32 [B, H, N], natural log, as flash-attn returns it; the
norm for spherical attention): what its backward (`napkin::attention_backward`) recomputes
the probabilities from, with four kernels derived from the diagram by
`ncd-grad{residuals=true}` (`attention_grad_kernel`): D = rowsum(dO * O), dQ, dK, dV.
Spherical attention over enough keys runs instead, forward and backward, as a program of
products of the head dim (`attention_program`, `napkin_ir.plan.program`).

The ops are registered with `torch.library.Library` on the CUDA key (and the CPU key, only
to name a CPU argument), not `torch.library.custom_op`, whose Python autograd and
dispatch wrappers cost 3 to 10 us a call (`tools/bench_torch_ops.py` measures both).
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from typing import Any

import torch
from torch import Tensor

import napkin_ir
from napkin_ir.attention_diagrams import KINDS, ROW_VALUES, attention_diagram, gqa_attention_diagram, gradient_passes
from napkin_ir.diagrams import gemm, scaled
from napkin_ir.plan.recipes.product_targets import gemm_candidates

DTYPES = {torch.bfloat16: "bf16", torch.float16: "f16"}
_TORCH_DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
_DTYPE_NAMES = {t: name for name, t in _TORCH_DTYPES.items()}
LAYOUTS = ("bhnd", "bnhd")  # SDPA's (batch, heads, tokens, head dim); flash-attn's (batch, tokens, heads, head dim)
FAKE_CAPABILITY = (8, 0)  # what a fake kernel judges for where no GPU can be asked
SLOW_S = 1.0  # a first call slower than this says so on the `napkin_ir` logger

log = logging.getLogger("napkin_ir")

_kernels: dict[tuple, Any] = {}  # (op, shapes, dtype, capability) -> CompiledKernel or the refusal's message
_launches: dict[tuple, Any] = {}  # (op, shapes, strides, dtype, device, options) -> _Launch
_capabilities: dict[int, tuple[int, int]] = {}
_derived: dict[tuple, str] = {}  # a gradient's shape -> the diagram of one of its kernels
_programs: dict[tuple, Any] = {}  # attention's shape -> (Program, its kernels), or None where one kernel does less work
_lock = threading.RLock()


# --- checks (shared by the real and the fake implementations) ---------------------------

def _check_tensor(op: str, name: str, t: Tensor, ndim: int, layout: str) -> None:
    if t.device.type not in ("cuda", "meta"):
        raise ValueError(f"{op}: {name} is on {t.device}; napkin's kernels run on CUDA tensors (move it with .cuda())")
    if t.dtype not in DTYPES:
        raise ValueError(f"{op}: {name} is {t.dtype}; napkin's kernels take torch.bfloat16 or torch.float16")
    if t.dim() != ndim:
        raise ValueError(f"{op}: {name} must be {ndim}-dimensional ({layout}), found shape {list(t.shape)}")


def _check_same(op: str, tensors: dict[str, Tensor]) -> None:
    (first, t0), *rest = tensors.items()
    for name, t in rest:
        if t.dtype != t0.dtype:
            raise ValueError(f"{op}: {first} is {t0.dtype} but {name} is {t.dtype}; give them one dtype")
        if t.device != t0.device:
            raise ValueError(f"{op}: {first} is on {t0.device} but {name} on {t.device}")


def matmul_shapes(a: Tensor, b: Tensor) -> tuple[int, int, int]:
    """(M, N, K) of a[M, K] @ b[K, N], or a ValueError naming what does not fit."""
    op = "napkin::matmul"
    _check_tensor(op, "a", a, 2, "[M, K]")
    _check_tensor(op, "b", b, 2, "[K, N]")
    _check_same(op, {"a": a, "b": b})
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"{op}: a is {list(a.shape)} and b is {list(b.shape)}; a's columns (K) must equal b's rows")
    return a.shape[0], b.shape[1], a.shape[1]


def attention_shapes(q: Tensor, k: Tensor, v: Tensor, kind: str, scale: float | None) -> tuple[int, int, int, int, int, int]:
    """(B, H, H_kv, N, N_keys, D) of attention on q[B, H, N, D], k and v [B, H_kv, N_keys, D],
    or a ValueError naming what does not fit."""
    op = "napkin::attention"
    if kind not in KINDS:
        raise ValueError(f"{op}: kind must be one of {', '.join(KINDS)}, found {kind!r}")
    if kind == "spherical" and scale is not None:
        raise ValueError(f"{op}: spherical attention divides the scores by their L2 norm and takes no scale")
    for name, t in (("q", q), ("k", k), ("v", v)):
        _check_tensor(op, name, t, 4, "[batch, heads, tokens, head dim]")
    _check_same(op, {"q": q, "k": k, "v": v})
    (b, h, n, d), (bk, hk, nk, dk) = q.shape, k.shape
    if k.shape != v.shape:
        raise ValueError(f"{op}: k is {list(k.shape)} but v is {list(v.shape)}; they must match")
    if bk != b or dk != d:
        raise ValueError(f"{op}: q is {list(q.shape)} and k is {list(k.shape)}; their batch and head dim must match")
    if hk > h or h % hk:
        raise ValueError(f"{op}: q has {h} heads and k, v {hk}; the query heads must be a multiple of the key/value heads")
    if kind == "causal" and nk != n:
        raise ValueError(f"{op}: causal attention compares query and key positions: q has {n} tokens, k {nk}")
    return b, h, hk, n, nk, d


def attention_text(kind: str, b: int, h: int, hk: int, n: int, nk: int, d: int, dtype: str, scale: float | None = None,
                   lse: bool = False) -> str:
    """The diagram `napkin::attention` compiles for q[B, H, N, D], k and v [B, H_kv, N_keys,
    D]: attention over the heads, or, where H_kv < H, grouped-query attention whose group
    axis r holds the H / H_kv query heads that share a key/value head (q viewed as [B,
    H_kv, H / H_kv, N, D]); with `lse` (`napkin::attention_lse`) it returns the log-sum-exp
    of each row too."""
    if hk == h:
        return attention_diagram(kind, b, h, n, d, dtype, n_keys=nk, scale=scale, lse=lse)
    return gqa_attention_diagram(kind, b, hk, h // hk, n, d, dtype, n_keys=nk, scale=scale, lse=lse)


# --- the one decision: which kernel a shape gets, or why none -----------------------------

def _say(message: str) -> None:
    """One line on the `napkin_ir` logger at INFO; where nothing would show it (no handler
    anywhere, as in a fresh notebook), the logger gets a stderr handler of its own."""
    if not log.hasHandlers():
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
        log.addHandler(handler)
        if log.level == logging.NOTSET:
            log.setLevel(logging.INFO)
    log.info(message)


def _compiled(key: tuple, candidates: list[tuple[str, str, dict[str, Any]]], what: str) -> Any:
    """The first candidate (target, diagram, options) that compiles, remembered under `key`,
    or a ValueError with every candidate's reason (remembered too: a refusal is not retried)."""
    with _lock:
        found = _kernels.get(key)
        if found is None:
            start, refused = time.perf_counter(), []
            for target, text, options in candidates:
                try:
                    found = napkin_ir.compile(text, target, **options)
                    break
                except Exception as e:  # the compiler's diagnostic says why; the next candidate may fit
                    refused.append(f"napkin-{target}: {str(e).strip().splitlines()[0]}")
            if found is None:
                found = f"{what} does not compile: " + ("; ".join(refused) or "no napkin kernel takes tiles this small")
            else:
                seconds = time.perf_counter() - start
                if seconds > SLOW_S:
                    _say(f"compiled {what} for {found.contract.target} in {seconds:.1f} s (cached: later calls do not compile)")
            _kernels[key] = found
    if isinstance(found, str):
        raise ValueError(found)
    return found


def capability(device: torch.device) -> tuple[int, int]:
    """The compute capability napkin compiles for on `device`: the GPU's, or, for meta and
    fake tensors where no GPU can be asked, FAKE_CAPABILITY (sm_80)."""
    if device.type != "cuda" or not torch.cuda.is_available():
        return FAKE_CAPABILITY
    index = device.index if device.index is not None else torch.cuda.current_device()
    found = _capabilities.get(index)
    if found is None:
        found = _capabilities[index] = torch.cuda.get_device_capability(index)
    return found


def _refuse_old_gpu(op: str, cap: tuple[int, int]) -> None:
    if cap < (8, 0):
        raise ValueError(f"{op}: the GPU is sm_{cap[0]}{cap[1]}; napkin's kernels need sm_80 or newer")


def matmul_kernel(m: int, n: int, k: int, dtype: str, cap: tuple[int, int]) -> Any:
    """The CompiledKernel of a[M, K] @ b[K, N] on a GPU of capability `cap`, or a ValueError
    with each candidate's reason: what the op and its fake kernel both ask. Where the model
    puts it first (`gemm_candidates`), the contraction is split over the grid: each part
    writes its f32 sums, and the part of each output tile that finishes last adds them up
    in order and rounds them into the output (one launch, no zeroing, the same bits every
    run); on Hopper a split in two parts runs as clusters of its parts, which add their
    sums in shared memory (`product_targets.split_cluster`). On Hopper a decode-sized M (below 64) runs in a 64-row tile whose copies of A
    bring only its rows rounded up to 8 (`smem.tma_copy`'s `rows`): 0.94-1.32x cuBLAS at
    M 1 and 16 under CUDA graphs (H200, 2026-11-29), eager and captured calls alike."""
    _refuse_old_gpu("napkin::matmul", cap)
    text = gemm(m, n, k, dtype)
    candidates = [(t, text, o) for t, o in gemm_candidates(m, n, k, cap, split=True)]
    return _compiled(("matmul", m, n, k, dtype, cap), candidates, f"napkin::matmul of a {m}x{k} and a {k}x{n} {dtype} matrix")


GRADIENT = "ncd-grad,ncd-fold-casts"  # the backward derived from the diagram, its f32 casts folded into the products


def matmul_grad_kernel(which: int, m: int, n: int, k: int, dtype: str, cap: tuple[int, int]) -> Any:
    """The CompiledKernel of one gradient of a[M, K] @ b[K, N], derived from the GEMM's
    diagram by `ncd-grad` and taken out by `ncd-extract`: `which` 0 is dA[M, K] =
    grad[M, N] b^T (arguments b, d_c), 1 is dB[K, N] = a^T grad (arguments a, d_c). Each is
    a GEMM of its own shape (dB's A is read by its rows: A stored [M, K], contracted over
    M), compiled for its shape's tiles as the forward's are (`gemm_candidates`)."""
    from napkin_ir.passmanager import run_pipeline

    _refuse_old_gpu("napkin::matmul's backward", cap)
    with _lock:
        derived = _derived.get((which, m, n, k, dtype))
        if derived is None:  # the gradient's own diagram: its arguments and result are the kernel's
            derive = f'{GRADIENT},ncd-extract{{function="matmul_grad" result={which}}}'
            derived = _derived[(which, m, n, k, dtype)] = str(run_pipeline(gemm(m, n, k, dtype), derive))
    rows, cols, over = (m, k, n) if which == 0 else (k, n, m)
    candidates = [(t, derived, o) for t, o in gemm_candidates(rows, cols, over, cap)]
    what = ("dA" if which == 0 else "dB") + f" of napkin::matmul of a {m}x{k} and a {k}x{n} {dtype} matrix"
    return _compiled(("matmul_grad", which, m, n, k, dtype, cap), candidates, what)


def attention_targets(cap: tuple[int, int]) -> list[str]:
    """napkin-sm90 then napkin-sm80 on Hopper (the first that compiles), napkin-sm80 elsewhere."""
    return ["sm90", "sm80"] if cap == (9, 0) else ["sm80"]


def attention_kernel(kind: str, scale: float | None, b: int, h: int, hk: int, n: int, nk: int, d: int, dtype: str,
                     cap: tuple[int, int], lse: bool = False) -> Any:
    """The CompiledKernel of attention of these shapes on a GPU of capability `cap` (with
    `lse`, the one that writes the log-sum-exp of each row too: `napkin::attention_lse`),
    or a ValueError with each target's reason: what the op and its fake kernel both ask."""
    op = "napkin::attention_lse" if lse else "napkin::attention"
    _refuse_old_gpu(op, cap)
    text = attention_text(kind, b, h, hk, n, nk, d, dtype, scale, lse)
    key = ("attention", kind, scale, b, h, hk, n, nk, d, dtype, cap, *(("lse",) if lse else ()))
    return _compiled(key, [(t, text, {}) for t in attention_targets(cap)],
                     f"{op} ({kind}) of q [{b}, {h}, {n}, {d}], k and v [{b}, {hk}, {nk}, {d}], {dtype}")


ATTENTION_GRAD_PARTS = ("delta", "q", "k", "v", "kv", "qkv")
# dQ, dK and dV from one kernel on sm_90a (dQ^T's tiles added into f32 by the TMA's
# reduce-add) at these head dims, from this many keys (under a causal mask, from
# FUSED_DQ_MASKED_MIN_KEYS), else dQ's kernel beside dK's and dV's. With its blocks on a
# plain grid (`persistent_pays`), the op over 16k tokens (H200, 2026-12-01, against the two
# kernels): d=128 1.13x at 1k keys, 1.03x at 512, 0.92x at 256; causal 1.21x at 4k, 1.16x
# at 2k, 1.09x at 1k, 0.98x at 512, 0.84x at 256; d=64 1.19x at 1k, 1.07x at 512, 0.92x at
# 256; causal 1.27x at 2k, 1.15x at 1k, 1.01x at 512, 0.93x at 256; grouped heads (4 a
# group, d=128, causal) 1.09x at 1k (research/benchmarks.md, session 71).
FUSED_DQ_DIMS: tuple[int, ...] = (64, 128)
FUSED_DQ_MIN_KEYS = 512
FUSED_DQ_MASKED_MIN_KEYS = 1024


def backward_parts(d: int, cap: tuple[int, int] = (9, 0), masked: bool = False, keys: int = 0,
                   deterministic: bool = False) -> tuple[str, ...]:
    """The kernels napkin::attention_backward runs at head dim `d` on a GPU of capability
    `cap`, for `keys` keys (`masked`: causal): D, then on Hopper at FUSED_DQ_DIMS, from
    FUSED_DQ_MIN_KEYS keys (FUSED_DQ_MASKED_MIN_KEYS under a mask), dQ, dK and dV from one
    kernel (the scores, P, dP and dS made once for all three, dQ's part of each key block
    added into an f32 dQ: 5 products a tile where the two kernels below make 7), but not
    where results must be `deterministic` (the TMA adds the key blocks' parts in no fixed
    order); else dQ, then dK and dV
    from one kernel (the scores and dP made once for both; 4-28% faster than a kernel each
    at d 64 and 128 on the H100, research/benchmarks.md), or a kernel each at head dims
    over 128, where the one kernel's two accumulators spill (5.5 KB a thread on sm_90a).
    The grouped diagram's heads (a causal mask over grouped heads) take the same kernels,
    each block adding its query head's dK and dV into the group's f32 sums."""
    if cap == (9, 0) and d in FUSED_DQ_DIMS and not deterministic \
            and keys >= (FUSED_DQ_MASKED_MIN_KEYS if masked else FUSED_DQ_MIN_KEYS):
        return ("delta", "qkv")
    return ("delta", "q", "kv") if d <= 128 else ("delta", "q", "k", "v")


def gradient_heads(h: int, hk: int, n: int, kind: str, deterministic: bool = False) -> tuple[int, int, int]:
    """(query heads, key/value heads, queries a head) of the kernels napkin::attention's
    backward runs for `h` query heads of `n` queries over `hk` key/value heads. Grouped
    heads without a mask are the plain diagram's: each key/value head's h / hk query heads
    one head of h / hk x n queries (q [B, H, N, D] viewed [B, H_kv, H / H_kv x N, D]), so
    dK's and dV's blocks sum over the group in registers as they stream the queries, and
    no block adds into another's. A causal mask compares a query's position in its own
    head: there the grouped diagram's (hk key/value heads of h query heads; with the one
    kernel of dQ, dK and dV where the plain heads take it, `backward_parts`), or the plain
    diagram's on K and V repeated (h of each) where results must be `deterministic`: its
    dK and dV summed back over each group in a fixed order."""
    if hk == h:
        return h, h, n
    if kind != "causal":
        return hk, hk, h // hk * n
    return (h, h, n) if deterministic else (h, hk, n)


def attention_grad_kernel(part: str, kind: str, scale: float | None, b: int, h: int, n: int, nk: int, d: int, dtype: str,
                          cap: tuple[int, int], hk: int | None = None) -> Any:
    """The CompiledKernel of one part of attention's gradient, derived from the diagram by
    `ncd-grad{residuals=true}` (the forward's row statistic and output saved) and taken out
    by `ncd-extract`: `delta` is the row kernel of D = rowsum(dO * O) and a softmax's
    log-sum-exp in base 2 (`ROW_VALUES`: f32 [B, H, N] each), `q`, `k` and `v` the
    cotangents, each reading D and the statistic (`lse_log2`, or spherical attention's
    `norm`), `kv` dK and dV from one kernel (outputs `out0`, `out1`), the
    scores and probabilities recomputed once for both, and `qkv` all three from one kernel
    whose blocks hold keys, dQ (f32, zeroed by the launch) added into tile by tile of the
    streamed queries. dQ's blocks hold queries and stream keys, dK's and dV's hold keys
    and stream queries. With `hk` < `h` key/value heads, the grouped diagram's: Q, dO, D
    and the statistic viewed [B, H_kv, H / H_kv, N(, D)], and dK and dV summed over a
    group's query heads by blocks that each add one head's part into an f32 output
    (`ncd-widen-results`; the launch zeroes it)."""
    from napkin_ir.passmanager import run_pipeline

    if part not in ATTENTION_GRAD_PARTS:
        raise ValueError(f"attention_grad_kernel: part must be one of {', '.join(ATTENTION_GRAD_PARTS)}, found {part!r}")
    if part == "qkv" and cap != (9, 0):
        raise ValueError(f"attention_grad_kernel: part 'qkv' (dQ, dK and dV from one kernel) is sm_90a's; got capability {cap[0]}.{cap[1]}")
    _refuse_old_gpu("napkin::attention's backward", cap)
    hk = hk or h
    shape = (kind, scale, b, h, hk, n, nk, d, dtype)
    with _lock:
        derived = _derived.get(("attention", part, *shape))
        if derived is None:
            text = attention_text(kind, b, h, hk, n, nk, d, dtype, scale)
            derived = _derived[("attention", part, *shape)] = str(run_pipeline(text, gradient_passes(kind, part, hk < h)))
    what = ("D" if part == "delta" else " and ".join(f"d{c}" for c in part)) + f" of napkin::attention ({kind}) of q [{b}, {h}, {n}, {d}], k and v " \
        f"[{b}, {hk}, {nk}, {d}], {dtype}"
    return _compiled(("attention_grad", part, *shape, cap), [(t, derived, {}) for t in attention_targets(cap)], what)


def _part_candidates(part: Any, cap: tuple[int, int]) -> list[tuple[str, str, dict[str, Any]]]:
    """The targets and options a kernel of a program tries, best first: a product's as
    `napkin::matmul`'s (`gemm_candidates`, its batch counted as rows: a d x d product of
    each head over many keys splits its contraction over the grid), then each target's
    default; a row kernel each target's default. A sum of several products takes
    napkin-sm90's own plan first, whose tile leaves room for every product's operands
    (`sm90_fit`) and for the output's TMA stores: spherical attention's dK over 1k keys
    at d=128 took a GEMM's 192 x 128 tile, two stages and stores from registers, 295 us
    against 83 us (H200, 2026-12-01)."""
    tried: list[tuple[str, str, dict[str, Any]]] = []
    if part.products > 1 and cap == (9, 0):
        tried.append(("sm90", part.text, {}))
    if part.product is not None:
        batch, m, n, k = part.product
        tried += [(t, part.text, o) for t, o in gemm_candidates(batch * m, n, k, cap, split=True)]
    return tried + [(t, part.text, {}) for t in attention_targets(cap)]


# reassociate what `attention_program` finds worth it (spherical attention over enough keys)
REASSOCIATE = True


def attention_program(kind: str, scale: float | None, b: int, h: int, hk: int, n: int, nk: int, d: int, dtype: str,
                      cap: tuple[int, int], lse: bool = False, gradient: bool = False) -> Any:
    """(the Program, its CompiledKernels) where attention of these shapes is reassociated
    (`ncd-reassociate`: spherical attention without a mask, as products of the head dim)
    and that runs faster than the one tiled kernel (`program_pays`: its bytes against the
    tiled kernel's multiply-adds), else None: the kernels
    `napkin::attention` (with `lse`, `napkin::attention_lse`; with `gradient`, the
    backward, derived from the reassociated diagram by `ncd-grad`) runs in order
    (`napkin_ir.plan.program`) in place of one attention kernel. Grouped heads take the
    plain diagram on q viewed [B, H_kv, H / H_kv x N, D]: each key/value head's products
    of K are made once for its group. Each kernel compiles as `attention_kernel`'s does
    (the first target that takes it), or a ValueError names the one that none takes.
    None too while `REASSOCIATE` is False (the one tiled kernel, as before: a shape's
    forward reads it when the shape is first called, its backward on every call)."""
    if not REASSOCIATE:
        return None
    rows = h // hk * n
    key = ("attention_program", kind, scale, b, hk, rows, nk, d, dtype, cap, lse, gradient)
    with _lock:
        found = _programs.get(key, False)
        if found is False:
            text = attention_text(kind, b, h, hk, n, nk, d, dtype, scale, lse and not gradient)
            program = None
            # only an L2 norm with no mask reassociates: no other diagram is parsed (nor xDSL imported) here
            if "ncd.l2norm" in text and "ncd.mask" not in text:
                from napkin_ir.plan.program import reassociated_program

                if hk < h:  # no mask: each key/value head's queries are one head's rows
                    text = attention_diagram(kind, b, hk, rows, d, dtype, n_keys=nk, scale=scale, lse=lse and not gradient)
                program = reassociated_program(text, gradient)
            found = None
            if program is not None:
                what = f"napkin::attention ({kind}{', backward' if gradient else ''}) of q [{b}, {h}, {n}, {d}], k and v [{b}, {hk}, {nk}, {d}], {dtype}"
                kernels = tuple(_compiled((*key, part.name), _part_candidates(part, cap), f"kernel {part.name} of {what}")
                                for part in program.parts)
                found = (program, kernels)
            _programs[key] = found
    return found


# --- launching ----------------------------------------------------------------------------

_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


_HAS_CUDA = torch.cuda.is_available()
# the C function behind torch.cuda.is_current_stream_capturing (a call of it costs a fraction)
_stream_capturing = getattr(torch._C, "_cuda_isCurrentStreamCapturing", None) if _HAS_CUDA else None


def _capturing() -> bool:
    """Whether torch's current stream is capturing a CUDA graph."""
    if _stream_capturing is not None:
        return _stream_capturing()
    return _HAS_CUDA and torch.cuda.is_current_stream_capturing()


def _stream(index: int) -> int:
    """torch's current stream on device `index`, as a handle (without a Stream object)."""
    if _raw_stream is not None:
        return _raw_stream(index)
    return torch.cuda.current_stream(index).cuda_stream


class _Launch:
    """What a call of one (shapes, strides, dtype, device) needs: the launcher, the
    output's shape, whether inputs are copied to contiguous ones, and where each pointer
    goes in the kernel's parameter list."""

    __slots__ = ("kernel", "launcher", "out_shape", "copy", "names", "order", "in_order", "views", "checked", "index", "streams")

    def __init__(self, kernel: Any, index: int, out_shape: tuple[int, ...], copy: bool, names: tuple[str, ...],
                 views: dict[str, tuple[int, ...]] | None = None) -> None:
        self.kernel, self.names, self.checked, self.index = kernel, names, False, index
        # a module whose launches share state (a split's scratch and counters): a module of its
        # own for each stream the op launches it on, so that launches running at once do not meet
        self.streams: dict[int, Any] | None = {} if kernel.stateful else None
        start = time.perf_counter()
        with torch.cuda.device(index):  # loading makes the device's context current: torch's device comes back after
            self.launcher = kernel.launcher(index)  # loads the module: the driver's JIT where there is no cubin
        seconds = time.perf_counter() - start
        if seconds > SLOW_S:
            _say(f"loading {kernel.name} on cuda:{index} took {seconds:.1f} s (once per process)")
        self.out_shape, self.copy, self.views = out_shape, copy, views or {}
        position = {name: k for k, name in enumerate(names)}
        self.order = tuple(position[a] for a in kernel.arg_names())
        self.in_order = self.order == tuple(range(len(names)))  # the kernel takes the pointers as the op names them

    def on(self, stream: int) -> Any:
        """The launcher for `stream`: the one launcher, or for a stateful kernel the module
        loaded for that stream (the first stream's is `launcher`). A stream being captured
        into a CUDA graph loads no module (the capture would fail): it takes `launcher`."""
        if self.streams is None:
            return self.launcher
        found = self.streams.get(stream)
        if found is None:
            if not self.streams:  # the first stream: the module loaded already
                found = self.launcher
            elif _capturing():
                return self.launcher
            else:
                with torch.cuda.device(self.index):
                    found = self.kernel.launcher(self.index, len(self.streams))
            self.streams[stream] = found
        return found

    def check(self, tensors: tuple[Tensor, ...]) -> None:
        """The first call's tensors against the kernel's contract (dtype, shape, strides,
        alignment, device), once: the op's own checks should have caught anything wrong."""
        arrays = dict(zip(self.names, tensors))
        for name, shape in self.views.items():  # grouped heads: q and out as the diagram's [B, H_kv, H / H_kv, N, D]
            arrays[name] = arrays[name].view(shape)
        self.kernel.check(arrays, tensors[0].device.index)
        self.checked = True


class _ProgramLaunch:
    """A kernel program (`attention_program`) on one device: a `_Launch` for each kernel,
    run in order on one stream, each output allocated by torch's caching allocator."""

    __slots__ = ("program", "launches", "out_shapes")

    def __init__(self, found: Any, index: int, out_shapes: tuple[tuple[int, ...], ...]) -> None:
        self.program, kernels = found
        self.out_shapes = out_shapes
        self.launches = [_Launch(k, index, self.program.values[p.output].dims, False, (*(a for a, _ in p.inputs), "out"))
                         for p, k in zip(self.program.parts, kernels)]

    def run(self, given: dict[str, Tensor], stream: int) -> list[Tensor]:
        """The program's results from its arguments (`given`, by name, shaped as its
        diagram's), each viewed as `out_shapes` says."""
        device = given[self.program.arguments[0]].device
        memory = dict(given)
        values = self.program.values
        for part, launch in zip(self.program.parts, self.launches):
            v = values[part.output]
            out = torch.empty(v.dims, dtype=_TORCH_DTYPES[v.dtype], device=device)
            tensors = (*(memory[m] for _, m in part.inputs), out)
            if not launch.checked:
                launch.check(tensors)
            launch.on(stream).launch(_pointers(launch, tensors), stream)
            memory[part.output] = out
        return [memory[self.program.memory(r)].view(shape) for r, shape in zip(self.program.results, self.out_shapes)]


def _remember(key: tuple, launch: _Launch | _ProgramLaunch | None) -> None:
    if len(_launches) > 4096:
        _launches.clear()
    _launches[key] = launch


def _pointers(launch: _Launch, tensors: tuple[Tensor, ...]) -> tuple[int, ...]:
    ptrs = [t.data_ptr() for t in tensors]
    return tuple(ptrs[k] for k in launch.order)


def _aligned(*tensors: Tensor) -> tuple[Tensor, ...]:
    """The tensors, each copied where its address is not 16-byte aligned (a view at an odd offset)."""
    return tuple(t if t.data_ptr() % 16 == 0 else t.clone(memory_format=torch.contiguous_format) for t in tensors)


# --- the ops ------------------------------------------------------------------------------

_lib = torch.library.Library("napkin", "DEF")
_lib.define("matmul(Tensor a, Tensor b) -> Tensor")
_lib.define('attention(Tensor q, Tensor k, Tensor v, str kind="softmax", float? scale=None) -> Tensor')
_lib.define('attention_lse(Tensor q, Tensor k, Tensor v, str kind="softmax", float? scale=None) -> (Tensor, Tensor)')
_lib.define("matmul_backward(Tensor a, Tensor b, Tensor grad, bool[2] mask) -> (Tensor, Tensor)")
_lib.define('attention_backward(Tensor q, Tensor k, Tensor v, Tensor out, Tensor stat, Tensor grad, Tensor? grad_stat=None, '
            'str kind="softmax", float? scale=None) -> (Tensor, Tensor, Tensor)')


def _matmul_launch(a: Tensor, b: Tensor) -> _Launch | None:
    """The launch of `matmul_kernel`'s kernel for these tensors (None for an empty product)."""
    m, n, k = matmul_shapes(a, b)
    if not (m and n and k):
        return None
    kernel = matmul_kernel(m, n, k, DTYPES[a.dtype], capability(a.device))
    return _Launch(kernel, a.device.index, (m, n), not (a.is_contiguous() and b.is_contiguous()), ("a", "b", "out"))


def _matmul_impl(a: Tensor, b: Tensor) -> Tensor:
    # every argument's dtype and device in the key: a call differing in any is checked anew.
    # devices by index (`get_device`, no torch.device made): the op's CUDA key brings only CUDA tensors
    index = a.get_device()
    key = (a.shape, b.shape, a.stride(), b.stride(), a.dtype, b.dtype, index, b.get_device())
    launch = _launches.get(key, False)
    if launch is False:
        launch = _matmul_launch(a, b)
        _remember(key, launch)
    if launch is None:  # an empty product
        return torch.zeros((a.shape[0], b.shape[1]), dtype=a.dtype, device=a.device)
    if launch.copy:
        a, b = a.contiguous(), b.contiguous()
    out = a.new_empty(launch.out_shape)
    pointers = _pointers(launch, (a, b, out))
    if (pointers[0] | pointers[1] | pointers[2]) & 15:
        a, b = _aligned(a, b)
        pointers = _pointers(launch, (a, b, out))
    if not launch.checked:
        launch.check((a, b, out))
    stream = _stream(index)
    launch.on(stream).launch(pointers, stream)
    return out


def _static(*sizes: Any) -> bool:
    """Whether every size is a plain int: under dynamic shapes (symbolic sizes) the fake
    kernel cannot compile for them, and the real call decides when the sizes are known."""
    return all(isinstance(s, int) for s in sizes)


def _matmul_fake(a: Tensor, b: Tensor) -> Tensor:
    m, n, k = matmul_shapes(a, b)
    if m and n and k and _static(m, n, k):
        matmul_kernel(m, n, k, DTYPES[a.dtype], capability(a.device))
    return a.new_empty((m, n))


def _attention_by_program(launch: _ProgramLaunch, q: Tensor, k: Tensor, v: Tensor) -> list[Tensor]:
    """Attention's results from its kernel program, q viewed as the program's diagram reads
    it ([B, H_kv, H / H_kv x N, D]: the same memory)."""
    (b, h, n, d), hk = q.shape, k.shape[1]
    q, k, v = _aligned(*(t.contiguous() for t in (q, k, v)))
    return launch.run({"q": q.view(b, hk, h // hk * n, d), "k": k, "v": v}, _stream(q.device.index))


def _attention_impl(q: Tensor, k: Tensor, v: Tensor, kind: str = "softmax", scale: float | None = None) -> Tensor:
    key = (q.shape, k.shape, v.shape, q.stride(), k.stride(), v.stride(), q.dtype, k.dtype, v.dtype, q.device, k.device, v.device,
           kind, scale)
    launch = _launches.get(key, False)
    if launch is False:
        b, h, hk, n, nk, d = attention_shapes(q, k, v, kind, scale)
        launch = None
        found = attention_program(kind, scale, b, h, hk, n, nk, d, DTYPES[q.dtype], capability(q.device)) if q.numel() else None
        if found is not None:
            launch = _ProgramLaunch(found, q.device.index, ((b, h, n, d),))
        elif q.numel():
            kernel = attention_kernel(kind, scale, b, h, hk, n, nk, d, DTYPES[q.dtype], capability(q.device))
            # grouped: q and the output as [B, H_kv, H / H_kv, N, D], the diagram's Q and O (the same memory)
            views = {} if hk == h else {"q": (b, hk, h // hk, n, d), "out": (b, hk, h // hk, n, d)}
            copy = not (q.is_contiguous() and k.is_contiguous() and v.is_contiguous())
            launch = _Launch(kernel, q.device.index, (b, h, n, d), copy, ("q", "k", "v", "out"), views)
        _remember(key, launch)
    if launch is None:  # no queries, or no batch
        return q.new_zeros(q.shape)
    if launch.__class__ is _ProgramLaunch:
        return _attention_by_program(launch, q, k, v)[0]
    if launch.copy:
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    out = torch.empty(launch.out_shape, dtype=q.dtype, device=q.device)
    pointers = _pointers(launch, (q, k, v, out))
    if (pointers[0] | pointers[1] | pointers[2] | pointers[3]) & 15:
        q, k, v = _aligned(q, k, v)
        pointers = _pointers(launch, (q, k, v, out))
    if not launch.checked:
        launch.check((q, k, v, out))
    stream = _stream(q.device.index)
    launch.on(stream).launch(pointers, stream)
    return out


def _attention_fake(q: Tensor, k: Tensor, v: Tensor, kind: str = "softmax", scale: float | None = None) -> Tensor:
    b, h, hk, n, nk, d = attention_shapes(q, k, v, kind, scale)
    if _static(b, h, hk, n, nk, d) and q.numel():
        cap = capability(q.device)
        if attention_program(kind, scale, b, h, hk, n, nk, d, DTYPES[q.dtype], cap) is None:
            attention_kernel(kind, scale, b, h, hk, n, nk, d, DTYPES[q.dtype], cap)
    return q.new_empty(q.shape)


def _records_grad(*tensors: Tensor) -> bool:
    """Whether autograd records a call on `tensors`: then the forward keeps its row
    statistic for the backward (`napkin::attention_lse`) rather than running again.
    A loop, not `any` over a generator: this runs on every call."""
    for t in tensors:
        if t.requires_grad:
            return torch.is_grad_enabled()
    return False


def _attention_lse_impl(q: Tensor, k: Tensor, v: Tensor, kind: str = "softmax",
                        scale: float | None = None) -> tuple[Tensor, Tensor]:
    key = (q.shape, k.shape, v.shape, q.stride(), k.stride(), v.stride(), q.dtype, k.dtype, v.dtype, q.device, k.device, v.device,
           kind, scale, "lse")
    launch = _launches.get(key, False)
    if launch is False:
        b, h, hk, n, nk, d = attention_shapes(q, k, v, kind, scale)
        launch = None
        found = attention_program(kind, scale, b, h, hk, n, nk, d, DTYPES[q.dtype], capability(q.device), lse=True) \
            if q.numel() else None
        if found is not None:
            launch = _ProgramLaunch(found, q.device.index, ((b, h, n, d), (b, h, n)))
        elif q.numel():
            kernel = attention_kernel(kind, scale, b, h, hk, n, nk, d, DTYPES[q.dtype], capability(q.device), lse=True)
            # grouped: q, the output and the log-sum-exp as the diagram's [B, H_kv, H / H_kv, N, (D)] (the same memory)
            views = {} if hk == h else {"q": (b, hk, h // hk, n, d), "out0": (b, hk, h // hk, n, d), "out1": (b, hk, h // hk, n)}
            copy = not (q.is_contiguous() and k.is_contiguous() and v.is_contiguous())
            launch = _Launch(kernel, q.device.index, (b, h, n, d), copy, ("q", "k", "v", "out0", "out1"), views)
        _remember(key, launch)
    if launch is None:  # no queries, or no batch: no row, or rows of no key (log 0)
        return q.new_zeros(q.shape), torch.full(q.shape[:3], -float("inf"), dtype=torch.float32, device=q.device)
    if launch.__class__ is _ProgramLaunch:
        out, stat = _attention_by_program(launch, q, k, v)
        return out, stat
    if launch.copy:
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    out = torch.empty(launch.out_shape, dtype=q.dtype, device=q.device)
    lse = torch.empty(launch.out_shape[:3], dtype=torch.float32, device=q.device)
    pointers = _pointers(launch, (q, k, v, out, lse))
    if (pointers[0] | pointers[1] | pointers[2] | pointers[3] | pointers[4]) & 15:
        q, k, v = _aligned(q, k, v)
        pointers = _pointers(launch, (q, k, v, out, lse))
    if not launch.checked:
        launch.check((q, k, v, out, lse))
    stream = _stream(q.device.index)
    launch.on(stream).launch(pointers, stream)
    return out, lse


def _attention_lse_fake(q: Tensor, k: Tensor, v: Tensor, kind: str = "softmax",
                        scale: float | None = None) -> tuple[Tensor, Tensor]:
    b, h, hk, n, nk, d = attention_shapes(q, k, v, kind, scale)
    if _static(b, h, hk, n, nk, d) and q.numel():
        cap = capability(q.device)
        if attention_program(kind, scale, b, h, hk, n, nk, d, DTYPES[q.dtype], cap, lse=True) is None:
            attention_kernel(kind, scale, b, h, hk, n, nk, d, DTYPES[q.dtype], cap, lse=True)
    return q.new_empty(q.shape), q.new_empty((b, h, n), dtype=torch.float32)


def _matmul_backward_impl(a: Tensor, b: Tensor, grad: Tensor, mask: list[bool]) -> tuple[Tensor, Tensor]:
    """dA and dB (each where `mask` asks for it, else an empty tensor) by the kernels
    `matmul_grad_kernel` derives, on torch's current stream."""
    m, n, k = matmul_shapes(a, b)
    if tuple(grad.shape) != (m, n) or grad.dtype != a.dtype or grad.device != a.device:
        raise ValueError(f"napkin::matmul's backward: grad is {grad.dtype} {list(grad.shape)} on {grad.device}; "
                         f"expected {a.dtype} {[m, n]} on {a.device}")
    index = a.device.index if a.device.index is not None else torch.cuda.current_device()
    stream, cap, dt = _stream(index), capability(a.device), DTYPES[a.dtype]
    a, b, grad = a.contiguous(), b.contiguous(), grad.contiguous()
    out = []
    for which, (wanted, shape, args) in enumerate(((mask[0], (m, k), {"b": b}), (mask[1], (k, n), {"a": a}))):
        if not wanted or not (m and n and k):
            out.append(torch.zeros(shape, dtype=a.dtype, device=a.device) if wanted else a.new_empty(0))
            continue
        d = torch.empty(shape, dtype=a.dtype, device=a.device)
        matmul_grad_kernel(which, m, n, k, dt, cap)(**args, d_c=grad, out=d, stream=stream, device=index)
        out.append(d)
    return out[0], out[1]


def _matmul_backward_fake(a: Tensor, b: Tensor, grad: Tensor, mask: list[bool]) -> tuple[Tensor, Tensor]:
    m, n, k = matmul_shapes(a, b)
    if m and n and k and _static(m, n, k):
        for which in (0, 1):
            if mask[which]:
                matmul_grad_kernel(which, m, n, k, DTYPES[a.dtype], capability(a.device))
    return (a.new_empty((m, k)) if mask[0] else a.new_empty(0)), (a.new_empty((k, n)) if mask[1] else a.new_empty(0))


def _matmul_setup(ctx: Any, inputs: tuple[Tensor, Tensor], output: Tensor) -> None:
    a, b = inputs
    ctx.save_for_backward(a, b)


def _matmul_backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
    a, b = ctx.saved_tensors
    mask = [bool(ctx.needs_input_grad[0]), bool(ctx.needs_input_grad[1])]
    da, db = torch.ops.napkin.matmul_backward(a, b, grad, mask)
    return (da if mask[0] else None), (db if mask[1] else None)


def _attention_backward_impl(q: Tensor, k: Tensor, v: Tensor, out: Tensor, stat: Tensor, grad: Tensor,
                             grad_stat: Tensor | None = None, kind: str = "softmax",
                             scale: float | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """dq, dk, dv of attention by the kernels `attention_grad_kernel` derives, on torch's
    current stream: the row kernel first, D = rowsum(grad * out) (less the row statistic's
    own cotangent, for a log-sum-exp that the loss reads) and a softmax's log-sum-exp in base
    2, then dQ, dK and dV, each reading D and the statistic (that log-sum-exp, or spherical
    attention's norm as `stat` holds it). Grouped heads
    (`gradient_heads`): without a mask, the plain diagram's kernels on each key/value
    head's query heads as one head of H / H_kv x N queries, dK and dV summed over the
    group in each block's registers; under a causal mask, the grouped diagram's kernels,
    dK and dV summed over a group's query heads in f32 (atomically, in any order), then
    rounded, or, under `torch.use_deterministic_algorithms(True)`, the plain diagram's on
    K and V repeated over the query heads, dK and dV summed back in a fixed order (memory
    for H heads; deterministic, the same bits every run). Deterministic, dQ comes from its
    own kernel, not added up by the key blocks (`backward_parts`). Views at an address
    that is not 16-byte aligned are copied (the TMA's rule), as the forward's are."""
    op = "napkin::attention's backward"
    b, h, hk, n, nk, d = attention_shapes(q, k, v, kind, scale)
    for name, t, shape, dt in (("out", out, q.shape, q.dtype), ("grad", grad, q.shape, q.dtype),
                               ("stat", stat, q.shape[:3], torch.float32)):
        if tuple(t.shape) != tuple(shape) or t.dtype != dt or t.device != q.device:
            raise ValueError(f"{op}: {name} is {t.dtype} {list(t.shape)} on {t.device}; expected {dt} {list(shape)} on {q.device}")
    if grad_stat is not None and kind == "spherical":
        raise NotImplementedError(f"{op}: a loss that reads spherical attention's norm has no backward here")
    if not q.numel() or not k.numel():
        return torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)
    index = q.device.index if q.device.index is not None else torch.cuda.current_device()
    stream, cap, dt = _stream(index), capability(q.device), DTYPES[q.dtype]
    found = attention_program(kind, scale, b, h, hk, n, nk, d, dt, cap, gradient=True)
    if found is not None:  # the reassociated diagram's gradient: products of the head dim
        key = ("attention_backward", kind, b, h, hk, n, nk, d, dt, index)
        launch = _launches.get(key)
        if launch is None:
            launch = _ProgramLaunch(found, index, (q.shape, k.shape, v.shape))
            _remember(key, launch)
        q, k, v, grad = _aligned(*(t.contiguous() for t in (q, k, v, grad)))
        rows = (b, hk, h // hk * n, d)
        dq, dk, dv = launch.run({"q": q.view(rows), "k": k, "v": v, "d_o": grad.view(rows)}, stream)
        return dq, dk, dv
    deterministic = torch.are_deterministic_algorithms_enabled()
    gh, ghk, gn = gradient_heads(h, hk, n, kind, deterministic)
    repeated = ghk > hk  # each query head's K and V, as the plain diagram reads them: no sum across blocks
    if repeated:
        k, v = k.repeat_interleave(h // hk, dim=1), v.repeat_interleave(h // hk, dim=1)
    q, k, v, out, grad, stat = _aligned(*(t.contiguous() for t in (q, k, v, out, grad, stat)))
    r = gh // ghk
    # the kernels' view of the query heads: the grouped diagram's [B, H_kv, r, N], or one head
    # of r x N queries a key/value head
    rows = (b, ghk, r, gn) if r > 1 else (b, gh, gn)
    given = {"q": q.view(*rows, d), "k": k, "v": v, "d_o": grad.view(*rows, d), "o": out.view(*rows, d), "lse": stat.view(rows),
             "norm": stat.view(rows)}
    # the row kernel: D, and a softmax's log-sum-exp in base 2 (ROW_VALUES), f32 a query each
    row_kernel = attention_grad_kernel("delta", kind, scale, b, gh, gn, nk, d, dt, cap, ghk)
    row_outs = [p for p in row_kernel.contract.params if p.role == "out"]
    row_values = {name: torch.empty(rows, dtype=_TORCH_DTYPES[p.dtype], device=q.device)
                  for name, p in zip(ROW_VALUES[kind], row_outs, strict=True)}
    row_kernel(**{p.arg: given[p.arg] for p in row_kernel.contract.params if p.role == "in"},
               **{p.arg: t for p, t in zip(row_outs, row_values.values())}, stream=stream, device=index)
    if grad_stat is not None:  # d lse_i adds P_ij d lse_i to dS_ij / scale: D less it
        row_values["delta"] = row_values["delta"] - grad_stat.float().reshape(rows)
    given.update(row_values)
    grads = []
    likes_of = {"q": (q,), "k": (k,), "v": (v,), "kv": (k, v), "qkv": (q, k, v)}
    for part in backward_parts(d, cap, kind == "causal", nk, deterministic)[1:]:
        likes = likes_of[part]
        kernel = attention_grad_kernel(part, kind, scale, b, gh, gn, nk, d, dt, cap, ghk)
        outs = [p for p in kernel.contract.params if p.role in ("out", "accumulate")]
        # in the kernel's type: f32 where blocks add into it (dQ, a group's dK and dV) or the caller scales it
        made = [torch.empty(like.shape, dtype=_TORCH_DTYPES[p.dtype], device=like.device) for p, like in zip(outs, likes)]
        arrays = {p.arg: g.view(given[c].shape) for p, g, c in zip(outs, made, part)}
        kernel(**{p.arg: given[p.arg] for p in kernel.contract.params if p.arg not in arrays}, **arrays, stream=stream, device=index)
        grads += [_finished(g, p.scale, like.dtype, cap, stream, index) for g, p, like in zip(made, outs, likes)]
    dq, dk, dv = grads
    if repeated:  # summed over each group's query heads in a fixed order
        dk, dv = (x.view(b, hk, h // hk, nk, d).sum(2, dtype=torch.float32).to(q.dtype) for x in (dk, dv))
    return dq, dk, dv


def _finished(g: Tensor, scale: float | None, dtype: Any, cap: tuple[int, int], stream: int, index: int) -> Tensor:
    """A kernel's whole output as the caller takes it: multiplied by the factor the kernel
    left to it (the launch contract's `scale`; attention's dQ, its softmax scale), and
    rounded to `dtype`, in one pass: napkin's kernel of that map (`scaled_kernel`, 16 bytes
    a lane: 51 us for the 128 MB of dQ over 16k tokens at d=128 on an H200, where
    `torch.mul(out=)` of another dtype takes 64 us, the same bits), or torch's where none
    takes the size."""
    if scale is None:
        return g if g.dtype == dtype else g.to(dtype)
    out = torch.empty(g.shape, dtype=dtype, device=g.device)
    kernel = scaled_kernel(g.numel(), scale, _DTYPE_NAMES[g.dtype], _DTYPE_NAMES[dtype], cap)
    if kernel is None:
        return torch.mul(g, scale, out=out)
    rows = (kernel.contract.param("x").shape[0], -1)
    kernel(x=g.view(rows), out=out.view(rows), stream=stream, device=index)
    return out


def scaled_kernel(n: int, scale: float, dtype: str, out_dtype: str, cap: tuple[int, int]) -> Any:
    """The CompiledKernel of out = scale * x over `n` elements, x of `dtype` rounded to
    `out_dtype` (`diagrams.scaled`: rows of the longest of 128 down to 8 elements that fill
    them), or None where no whole rows do or no target compiles it."""
    cols = next((c for c in (128, 64, 32, 16, 8) if n % c == 0), None)
    if cols is None:
        return None
    what = f"out = {scale!r} x over {n} elements, {dtype} to {out_dtype}"
    try:
        return _compiled(("scaled", n, scale, dtype, out_dtype, cap), [(t, scaled(n // cols, cols, scale, dtype, out_dtype), {})
                                                                       for t in attention_targets(cap)], what)
    except ValueError:  # no target takes it (remembered): torch's multiply gives the same bits
        return None


def _attention_backward_fake(q: Tensor, k: Tensor, v: Tensor, out: Tensor, stat: Tensor, grad: Tensor,
                             grad_stat: Tensor | None = None, kind: str = "softmax",
                             scale: float | None = None) -> tuple[Tensor, Tensor, Tensor]:
    b, h, hk, n, nk, d = attention_shapes(q, k, v, kind, scale)
    deterministic = torch.are_deterministic_algorithms_enabled()
    if _static(b, h, hk, n, nk, d) and q.numel() and k.numel() and \
            attention_program(kind, scale, b, h, hk, n, nk, d, DTYPES[q.dtype], capability(q.device), gradient=True) is None:
        gh, ghk, gn = gradient_heads(h, hk, n, kind, deterministic)
        for part in backward_parts(d, capability(q.device), kind == "causal", nk, deterministic):
            attention_grad_kernel(part, kind, scale, b, gh, gn, nk, d, DTYPES[q.dtype], capability(q.device), ghk)
    return q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape)


def _attention_lse_setup(ctx: Any, inputs: tuple[Any, ...], output: tuple[Tensor, Tensor]) -> None:
    q, k, v, kind, scale = inputs
    ctx.kind, ctx.scale = kind, scale
    ctx.set_materialize_grads(False)  # an output the loss does not read gets None, not zeros
    ctx.save_for_backward(q, k, v, *output)


def _attention_lse_backward(ctx: Any, grad: Tensor | None, grad_stat: Tensor | None) -> tuple[Tensor | None, ...]:
    q, k, v, out, stat = ctx.saved_tensors
    if grad is None:
        grad = torch.zeros_like(out)
    dq, dk, dv = torch.ops.napkin.attention_backward(q, k, v, out, stat, grad, grad_stat, ctx.kind, ctx.scale)
    return dq, dk, dv, None, None


def _attention_setup(ctx: Any, inputs: tuple[Any, ...], output: Tensor) -> None:
    q, k, v, kind, scale = inputs
    ctx.kind, ctx.scale = kind, scale
    ctx.save_for_backward(q, k, v)


def _attention_backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    """napkin::attention saves no row statistic: its backward runs the forward again with
    it (`napkin::attention_lse`). The Python functions `attention` and
    `scaled_dot_product_attention` call that op directly where autograd records them."""
    q, k, v = ctx.saved_tensors
    out, stat = torch.ops.napkin.attention_lse(q, k, v, ctx.kind, ctx.scale)
    dq, dk, dv = torch.ops.napkin.attention_backward(q, k, v, out, stat, grad, None, ctx.kind, ctx.scale)
    return dq, dk, dv, None, None


for _key in ("CUDA", "CPU"):  # CPU: only to say that a CPU argument is on the CPU, by name
    _lib.impl("matmul", _matmul_impl, _key)
    _lib.impl("attention", _attention_impl, _key)
    _lib.impl("attention_lse", _attention_lse_impl, _key)
    _lib.impl("matmul_backward", _matmul_backward_impl, _key)
    _lib.impl("attention_backward", _attention_backward_impl, _key)
torch.library.register_fake("napkin::matmul", _matmul_fake, lib=_lib)
torch.library.register_fake("napkin::attention", _attention_fake, lib=_lib)
torch.library.register_fake("napkin::attention_lse", _attention_lse_fake, lib=_lib)
torch.library.register_fake("napkin::matmul_backward", _matmul_backward_fake, lib=_lib)
torch.library.register_fake("napkin::attention_backward", _attention_backward_fake, lib=_lib)
torch.library.register_autograd("napkin::matmul", _matmul_backward, setup_context=_matmul_setup, lib=_lib)
torch.library.register_autograd("napkin::attention", _attention_backward, setup_context=_attention_setup, lib=_lib)
torch.library.register_autograd("napkin::attention_lse", _attention_lse_backward, setup_context=_attention_lse_setup, lib=_lib)

_matmul_op = torch.ops.napkin.matmul.default
_attention_op = torch.ops.napkin.attention.default
_attention_lse_op = torch.ops.napkin.attention_lse.default
_below_autograd = torch._C._AutoDispatchBelowAutograd


_IMPLS = {_matmul_op: (_matmul_impl, 2), _attention_op: (_attention_impl, 3), _attention_lse_op: (_attention_lse_impl, 3)}
_PLAIN = (torch.Tensor, torch.nn.Parameter)
_current_device = getattr(torch._C, "_cuda_getDevice", None) or torch.cuda.current_device
_wrapped = torch._C._functorch.is_functorch_wrapped_tensor


def _unobserved(tensors: tuple[Any, ...]) -> bool:
    """Whether nothing but the op's own kernel would see a call on `tensors`: plain tensors
    (or parameters; no subclass, no functorch wrapper) on the current CUDA device, and no
    torch-function or dispatch mode (FakeTensorMode, a FLOP counter, `with torch.device`)
    active."""
    if torch._C._is_torch_function_mode_enabled() or torch._C._len_torch_dispatch_stack():
        return False
    for t in tensors:
        if type(t) not in _PLAIN or _wrapped(t):
            return False
    first = tensors[0]
    return first.is_cuda and first.get_device() == _current_device()


_function_modes = torch._C._is_torch_function_mode_enabled
_dispatch_modes = torch._C._len_torch_dispatch_stack


def _matmul_now(a: Tensor, b: Tensor) -> Tensor | None:
    """`matmul`'s launch at once, where a call of the same shapes, strides, dtypes and device
    ran before (its kernel loaded, the first call's tensors checked against its contract)
    and nothing but the kernel would see this one: plain tensors or parameters, autograd
    not recording, no torch-function or dispatch mode, no torch.compile trace, no functorch
    wrapper, on the current device; a kernel that keeps no state between launches (a
    split's scratch takes a module per stream: `_Launch.on`), inputs contiguous and 16-byte
    aligned. Else None, and the call goes the whole way (`_call`). The same checks as
    `_call`, `_unobserved` and `_matmul_impl`, done once each and in line: 2.5-2.8 us a
    call less than that way (H200 machines' host, 2026-11-29, 100 calls a round over 30
    interleaved rounds: 128x4096x4096 15.6 us against 18.4; torch.matmul 17.3), which
    where the host paces the calls is their rate."""
    if torch.compiler.is_compiling():  # first: a trace takes it as constant and reads none of what follows
        return None
    if type(a) not in _PLAIN or type(b) not in _PLAIN or _function_modes() or _dispatch_modes():
        return None
    if (a.requires_grad or b.requires_grad) and torch.is_grad_enabled() or _wrapped(a) or _wrapped(b):
        return None
    index = a.get_device()
    launch = _launches.get((a.shape, b.shape, a.stride(), b.stride(), a.dtype, b.dtype, index, b.get_device()))
    if not launch or launch.streams is not None or not launch.checked or launch.copy or not launch.in_order or index != _current_device():
        return None
    out = a.new_empty(launch.out_shape)
    pointers = (a.data_ptr(), b.data_ptr(), out.data_ptr())
    if (pointers[0] | pointers[1] | pointers[2]) & 15:  # a view at an odd offset: `_matmul_impl` copies it
        return None
    launch.launcher.launch(pointers, _stream(index))
    return out


def _call(op: Any, records: bool, *args: Any) -> Any:
    """`op(*args)`. Where autograd records (an input requires grad, grad on) or
    torch.compile traces, the op is called as it is. Otherwise a call that nothing observes
    (`_unobserved`) runs the op's CUDA implementation directly, and any other is dispatched
    below the autograd key. The dispatcher's own work and the Python wrapper that
    `torch.library.register_autograd` puts on the autograd key cost a call tens of us on a
    slow host (H200 machines, 2026-11-27, 128 x 4096 x 4096, each beside torch.matmul in its
    own run: through both, the op 40.9 us a call against 21.4; below the autograd key 26.3
    against 17.3; eager through this direct path 18.0 against 18.0, `bench_gemm.py --op`)."""
    if records or torch.compiler.is_compiling():
        return op(*args)
    impl, tensors = _IMPLS[op]
    if _unobserved(args[:tensors]):
        return impl(*args)
    with _below_autograd():
        return op(*args)


def matmul(a: Tensor, b: Tensor) -> Tensor:
    """a[M, K] @ b[K, N] in bf16 or f16 (f32 accumulation), on the GPU: `torch.ops.napkin.matmul`.

    Compiles once per shape (`napkin-sm90` on Hopper where the tiles fit, else
    `napkin-sm80`) and launches on torch's current stream without synchronising.
    Parameters (`nn.Parameter`) and tensors that require grad are taken as they are, and
    autograd works: the backward (`torch.ops.napkin.matmul_backward`) runs dA = grad b^T
    and dB = a^T grad, two GEMMs derived from the diagram by `ncd-grad`
    (`matmul_grad_kernel`), each compiled once per shape.
    Non-contiguous inputs are copied to contiguous ones first (`.contiguous()`), so a
    transposed operand such as `linear.weight.t()` costs a copy. Any M compiles (a decode's
    1 row too: on Hopper a 64-row tile whose copies bring A's rows only, `matmul_kernel`);
    where the model puts it first, the contraction is split over the grid, each output tile's parts
    summed in f32 in a fixed order and rounded by the last, in the one kernel (the same
    bits every run); such a kernel keeps its parts' sums in its module, which the op loads
    once for each stream it launches on, so that launches on two streams at once do not
    meet (a CUDA graph's capture loads none: its launches share the first stream's module,
    so do not replay it while that stream runs the same product). Errors name the argument:
    a dtype other than bf16/f16, tensors of two dtypes or devices, a CPU tensor, shapes
    that do not chain, a shape no napkin kernel compiles for (with each target's reason).
    """
    out = _matmul_now(a, b)
    if out is not None:
        return out
    return _call(_matmul_op, _records_grad(a, b), a, b)


def attention(q: Tensor, k: Tensor, v: Tensor, kind: str = "softmax", scale: float | None = None, *,
              return_lse: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """Attention on q[B, H, N, D], k and v [B, H_kv, N_keys, D] (bf16 or f16), on the GPU:
    `torch.ops.napkin.attention`. `kind` is `softmax` (softmax(q k^T * scale) v, scale
    1/sqrt(D) by default, as torch.nn.functional.scaled_dot_product_attention), `causal`
    (keys after the query masked; N_keys == N) or `spherical` (the scores divided by their
    L2 norm along the keys; no scale).

    Grouped-query attention (H a multiple of H_kv, query head h reading key/value head
    h // (H / H_kv), as SDPA's enable_gqa) compiles the grouped-query diagram, with any of
    the three kinds. Compiles once per shape (`napkin-sm90` on Hopper, falling back to
    `napkin-sm80` for what it refuses; `napkin-sm80` elsewhere) and launches on torch's
    current stream without synchronising. Non-contiguous inputs are copied first.
    `scaled_dot_product_attention` is the same op with SDPA's signature.

    `return_lse=True` (softmax and causal attention) returns (out, lse) instead, lse the
    log-sum-exp of each row's scaled scores, log(sum_j exp(scale q k_j)): f32 [B, H, N],
    natural log, as flash-attn returns it. The same kernel writes both
    (`torch.ops.napkin.attention_lse`).

    Autograd works (`torch.ops.napkin.attention_backward`): where it records the call, the
    forward keeps each row's statistic (the log-sum-exp, or spherical attention's norm),
    and the backward runs kernels derived from the diagram by `ncd-grad`: D = rowsum(dO *
    O), then dQ, dK and dV, which recompute the probabilities tile by tile as
    FlashAttention does (from one kernel on Hopper at head dims 64 and 128 for long enough
    sequences, else from two or three: `backward_parts`). A loss that reads the log-sum-exp gets its gradient too. Grouped
    heads: without a mask, each key/value head's query heads are one head of H / H_kv x N
    queries to the plain kernels, which sum dK and dV over the group in registers; under a
    causal mask dK and dV are the grouped diagram's, summed over a group's query heads by
    blocks that each add one head's part into f32, then rounded (K and V are repeated only
    under `torch.use_deterministic_algorithms(True)`; `gradient_heads`).

    Spherical attention over enough keys (its products 4x fewer multiply-adds reassociated)
    runs, forward and backward, as the program of products `ncd-reassociate` derives (K^T V,
    K^T K and Q (K^T K) in place of the N x N scores; `attention_program`): the same bits
    every run, about 3e-3 relative error in bf16; `REASSOCIATE = False` keeps the tiled
    kernel. In f16 it is not reassociated (K^T K's sums would pass f16's range).
    """
    if return_lse:
        if kind == "spherical":
            raise ValueError("napkin_ir.torch.attention: spherical attention divides the scores by their L2 norm: it has no "
                             "softmax, so no log-sum-exp (return_lse=True is for softmax and causal attention)")
        return _call(_attention_lse_op, _records_grad(q, k, v), q, k, v, kind, scale)
    if _records_grad(q, k, v):
        return _attention_lse_op(q, k, v, kind, scale)[0]
    return _call(_attention_op, False, q, k, v, kind, scale)


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False, *, layout: str = "bhnd",
                                 return_lse: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """`torch.nn.functional.scaled_dot_product_attention`'s signature on napkin's attention
    kernels: softmax(query key^T * scale) value, scale 1/sqrt(D) by default, bf16 or f16.

    layout="bhnd" (SDPA's): query [B, H, N, D], key and value [B, H_kv, N_keys, D], and
    the output [B, H, N, D]. layout="bnhd" (flash-attn's `flash_attn_func`): query
    [B, N, H, D], key and value [B, N_keys, H_kv, D], and the output [B, N, H, D]; the
    kernels read the first layout, so this one costs a copy of each input and of the output.
    `is_causal` masks the keys after each query (N_keys == N, as SDPA's top-left mask
    when they are equal). `enable_gqa` lets H be a multiple of H_kv (query head h reads
    key/value head h // (H / H_kv)); without it the heads must be equal, as in SDPA.

    `return_lse=True` returns (out, lse), lse the log-sum-exp of each row's scaled scores
    (f32 [B, H, N] in either layout, natural log, as flash-attn returns it), written by the
    same kernel (`torch.ops.napkin.attention_lse`).

    Refused by name (NotImplementedError) rather than ignored: `attn_mask` (a mask tensor;
    `is_causal=True` is the causal mask) and `dropout_p` other than 0. Head dims and
    shapes that no kernel compiles for are refused with each target's reason (ValueError),
    by the fake kernel under torch.compile too. docs/guide.md section 6 has the table.
    """
    op = "napkin_ir.torch.scaled_dot_product_attention"
    if attn_mask is not None:
        raise NotImplementedError(f"{op}: attn_mask is not supported (napkin's kernels take no mask tensor); "
                                  "is_causal=True gives the causal mask")
    if dropout_p != 0.0:
        raise NotImplementedError(f"{op}: dropout_p={dropout_p} is not supported (the kernels have no dropout); "
                                  "pass dropout_p=0.0, as in evaluation")
    if layout not in LAYOUTS:
        raise ValueError(f"{op}: layout must be 'bhnd' (SDPA's [B, H, N, D]) or 'bnhd' (flash-attn's [B, N, H, D]), "
                         f"found {layout!r}")
    if layout == "bnhd":
        query, key, value = (t.transpose(1, 2) if t.dim() == 4 else t for t in (query, key, value))
    if not enable_gqa and query.dim() == 4 and key.dim() == 4 and query.shape[1] != key.shape[1]:
        heads = 2 if layout == "bnhd" else 1
        raise ValueError(f"{op}: query has {query.shape[1]} heads and key {key.shape[1]} (dimension {heads}); "
                         "pass enable_gqa=True for grouped-query attention")
    kind = "causal" if is_causal else "softmax"
    records = _records_grad(query, key, value)
    if return_lse:
        out, lse = _call(_attention_lse_op, records, query, key, value, kind, scale)
        return (out.transpose(1, 2).contiguous() if layout == "bnhd" else out), lse
    out = _attention_lse_op(query, key, value, kind, scale)[0] if records else _call(_attention_op, False, query, key, value, kind, scale)
    return out.transpose(1, 2).contiguous() if layout == "bnhd" else out


__all__ = ["DTYPES", "FAKE_CAPABILITY", "LAYOUTS", "attention", "attention_grad_kernel", "attention_kernel", "attention_program",
           "attention_shapes", "REASSOCIATE",
           "attention_targets",
           "attention_text", "backward_parts", "capability", "gemm_candidates", "gradient_heads", "matmul", "matmul_kernel", "matmul_shapes",
           "scaled_dot_product_attention"]
