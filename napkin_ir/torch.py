"""napkin-ir's kernels as PyTorch custom ops: `torch.ops.napkin.matmul` and `torch.ops.napkin.attention`.

    import napkin_ir.torch                                   # registers the ops (pip install 'napkin-ir[torch]')
    c = napkin_ir.torch.matmul(a, b)                         # torch.ops.napkin.matmul(a, b)
    o = napkin_ir.torch.attention(q, k, v, kind="causal")    # torch.ops.napkin.attention(q, k, v, "causal")

Each call builds the diagram for its shapes (`napkin_ir.diagrams.gemm`,
`napkin_ir.attention_diagrams.attention_diagram`, or `gqa_attention_diagram` for
grouped-query heads), compiles it through the compile cache
(once per shape on a machine: later processes read the PTX from disk) and launches it on
torch's current stream without synchronising. A GEMM compiles with `napkin-sm90` (TMA,
wgmma) on a Hopper GPU where its shape allows, else with `napkin-sm80`; attention with
`napkin-sm90` on a Hopper GPU, `napkin-sm80` on the others. Inputs are checked (dtype, device, shapes) with errors that name the
argument; both ops have fake (meta) implementations, so `torch.compile(fullgraph=True)`
traces them without a graph break. They are forward only: no autograd formula is registered.
"""

from __future__ import annotations

import threading
from typing import Any

import torch
from torch import Tensor

import napkin_ir
from napkin_ir.attention_diagrams import KINDS, attention_diagram, gqa_attention_diagram
from napkin_ir.diagrams import gemm
from napkin_ir.plan.recipes.products import gemm_candidates

DTYPES = {torch.bfloat16: "bf16", torch.float16: "f16"}

_kernels: dict[tuple, Any] = {}  # (op, shapes, dtype, GPU) -> CompiledKernel, so a refused candidate is tried once
_lock = threading.Lock()


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


def attention_text(kind: str, b: int, h: int, hk: int, n: int, nk: int, d: int, dtype: str, scale: float | None = None) -> str:
    """The diagram `napkin::attention` compiles for q[B, H, N, D], k and v [B, H_kv, N_keys,
    D]: attention over the heads, or, where H_kv < H, grouped-query attention whose group
    axis r holds the H / H_kv query heads that share a key/value head (q viewed as [B,
    H_kv, H / H_kv, N, D])."""
    if hk == h:
        return attention_diagram(kind, b, h, n, d, dtype, n_keys=nk, scale=scale)
    return gqa_attention_diagram(kind, b, hk, h // hk, n, d, dtype, n_keys=nk, scale=scale)


# --- compiling and launching ------------------------------------------------------------

def _compiled(key: tuple, candidates: list[tuple[str, str, dict[str, Any]]], what: str) -> Any:
    """The first candidate (target, diagram, options) that compiles, remembered under `key`."""
    with _lock:
        if key in _kernels:
            return _kernels[key]
        refused = []
        for target, text, options in candidates:
            try:
                _kernels[key] = napkin_ir.compile(text, target, **options)
                return _kernels[key]
            except Exception as e:  # the compiler's diagnostic says why; the next candidate may fit
                refused.append(f"napkin-{target}: {str(e).strip().splitlines()[0]}")
        raise ValueError(f"{what} does not compile: " + ("; ".join(refused) or "no napkin kernel takes tiles this small"))


def _launch(kernel: Any, device: torch.device, **tensors: Tensor) -> None:
    index = device.index if device.index is not None else torch.cuda.current_device()
    stream = torch.cuda.current_stream(index)
    kernel(stream=stream.cuda_stream, device=index, **tensors)


def _capability(device: torch.device) -> tuple[int, int]:
    return torch.cuda.get_device_capability(device)


# --- the ops ----------------------------------------------------------------------------

@torch.library.custom_op("napkin::matmul", mutates_args=())
def matmul(a: Tensor, b: Tensor) -> Tensor:
    """a[M, K] @ b[K, N] in bf16 or f16 (f32 accumulation), on the GPU.

    Compiles once per shape (`napkin-sm90` on Hopper where the tiles fit, else
    `napkin-sm80`) and launches on torch's current stream without synchronising.
    Non-contiguous inputs are copied to contiguous ones first (`.contiguous()`), so a
    transposed operand costs a copy. Errors name the argument: a dtype other than
    bf16/f16, tensors of two dtypes or devices, a CPU tensor, shapes that do not chain.
    """
    m, n, k = matmul_shapes(a, b)
    if m == 0 or n == 0 or k == 0:
        return torch.zeros((m, n), dtype=a.dtype, device=a.device)
    dt, cap = DTYPES[a.dtype], _capability(a.device)
    text = gemm(m, n, k, dt)
    kernel = _compiled(("matmul", m, n, k, dt, cap), [(t, text, o) for t, o in gemm_candidates(m, n, k, cap)],
                       f"napkin::matmul of a {m}x{k} and a {k}x{n} {dt} matrix")
    out = torch.empty((m, n), dtype=a.dtype, device=a.device)
    _launch(kernel, a.device, a=a.contiguous(), b=b.contiguous(), out=out)
    return out


@matmul.register_fake
def _matmul_fake(a: Tensor, b: Tensor) -> Tensor:
    m, n, _ = matmul_shapes(a, b)
    return a.new_empty((m, n))


@torch.library.custom_op("napkin::attention", mutates_args=())
def attention(q: Tensor, k: Tensor, v: Tensor, kind: str = "softmax", scale: float | None = None) -> Tensor:
    """Attention on q[B, H, N, D], k and v [B, H_kv, N_keys, D] (bf16 or f16), on the GPU:
    `softmax` (softmax(q k^T * scale) v, scale 1/sqrt(D) by default, as
    torch.nn.functional.scaled_dot_product_attention), `causal` (keys after the query
    masked; N_keys == N) or `spherical` (the scores divided by their L2 norm along the keys).

    Grouped-query attention (H a multiple of H_kv, query head h reading key/value head
    h // (H / H_kv), as SDPA's enable_gqa) compiles the grouped-query diagram (K and V
    broadcast over a group's query heads by name; the kernels pack a group's heads into a
    block, so each K and V tile is read once for them), with any of the three kinds.
    Compiles once per shape (`napkin-sm90` on Hopper, else `napkin-sm80`) and launches on torch's current stream
    without synchronising. Non-contiguous inputs are copied to contiguous ones first.
    """
    b, h, hk, n, nk, d = attention_shapes(q, k, v, kind, scale)
    if q.numel() == 0:
        return q.new_zeros(q.shape)
    dt = DTYPES[q.dtype]
    text = attention_text(kind, b, h, hk, n, nk, d, dt, scale)
    capability = _capability(q.device)
    targets = ["sm90"] if capability == (9, 0) else ["sm80"]
    kernel = _compiled(("attention", kind, scale, b, h, hk, n, nk, d, dt, capability), [(t, text, {}) for t in targets],
                       f"napkin::attention ({kind}) of q {list(q.shape)}, k and v {list(k.shape)}, {dt}")
    # grouped: q and the output as [B, H_kv, H / H_kv, N, D], the diagram's Q and O (the same memory)
    shape = (b, h, n, d) if hk == h else (b, hk, h // hk, n, d)
    out = torch.empty(shape, dtype=q.dtype, device=q.device)
    _launch(kernel, q.device, q=q.contiguous().view(shape), k=k.contiguous(), v=v.contiguous(), out=out)
    return out.view(b, h, n, d)


@attention.register_fake
def _attention_fake(q: Tensor, k: Tensor, v: Tensor, kind: str = "softmax", scale: float | None = None) -> Tensor:
    attention_shapes(q, k, v, kind, scale)
    return q.new_empty(q.shape)


__all__ = ["attention", "attention_shapes", "attention_text", "gemm_candidates", "matmul", "matmul_shapes"]
