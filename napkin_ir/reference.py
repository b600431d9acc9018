"""Independent float64 numpy references for the example diagrams.

These are written from the mathematics, not from the IR: they read only the input
arrays (in the examples' axis order) and are what `napkin-run --check` and the tests
compare the interpreters and the kernels against.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C[m, n] = A[m, k] B[k, n]."""
    return np.asarray(a, np.float64) @ np.asarray(b, np.float64)


def gemm_bias(a: np.ndarray, b: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """C[m, n] = A[m, k] B[k, n] + bias[n]."""
    return matmul(a, b) + np.asarray(bias, np.float64)


def _scores(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    q64, k64 = np.asarray(q, np.float64), np.asarray(k, np.float64)
    return (q64 @ np.swapaxes(k64, -1, -2)) / np.sqrt(q.shape[-1])


def _softmax(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """softmax(Q K^T / sqrt(d)) V over [..., i, d] x [..., j, d] x [..., j, d]."""
    return _softmax(_scores(q, k)) @ np.asarray(v, np.float64)


def causal_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """As `attention`, with key j visible to query i only when j <= i."""
    s = _scores(q, k)
    n_i, n_j = s.shape[-2:]
    s = np.where(np.arange(n_i)[:, None] >= np.arange(n_j)[None, :], s, -np.inf)
    return _softmax(s) @ np.asarray(v, np.float64)


def spherical_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """(S / ||S||_2 along j) V with S = Q K^T (no softmax; scaling S cancels in the norm)."""
    s = _scores(q, k)
    return (s / np.linalg.norm(s, axis=-1, keepdims=True)) @ np.asarray(v, np.float64)


def _grouped(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """K and V [..., g, j, d] given an axis of one place before j, so that they broadcast
    over the query heads of Q [..., g, r, i, d] that share them."""
    if q.ndim != k.ndim + 1:
        raise ValueError(f"grouped-query attention takes Q [..., g, r, i, d] and K, V [..., g, j, d], got {q.shape} and {k.shape}")
    return np.expand_dims(k, -3), np.expand_dims(v, -3)


def gqa_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """`attention` with a group of r query heads sharing each key/value head:
    Q [..., g, r, i, d], K and V [..., g, j, d]."""
    return attention(q, *_grouped(q, k, v))


def gqa_causal_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """`causal_attention` over grouped query heads (see `gqa_attention`)."""
    return causal_attention(q, *_grouped(q, k, v))


def gqa_spherical_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """`spherical_attention` over grouped query heads (see `gqa_attention`)."""
    return spherical_attention(q, *_grouped(q, k, v))


def row_softmax(x: np.ndarray) -> np.ndarray:
    """softmax(X) along its last axis."""
    return _softmax(np.asarray(x, np.float64))


def row_l2norm(x: np.ndarray) -> np.ndarray:
    """X / ||X||_2 along its last axis."""
    x64 = np.asarray(x, np.float64)
    return x64 / np.linalg.norm(x64, axis=-1, keepdims=True)


REFERENCES: dict[str, Callable[..., np.ndarray]] = {
    "matmul": matmul,
    "gemm_bias": gemm_bias,
    "attention": attention,
    "causal_attention": causal_attention,
    "spherical_attention": spherical_attention,
    "gqa_attention": gqa_attention,
    "gqa_causal_attention": gqa_causal_attention,
    "gqa_spherical_attention": gqa_spherical_attention,
    "row_softmax": row_softmax,
    "row_l2norm": row_l2norm,
}

# ||out - ref|| / ||ref|| that each output element type should meet against float64
TOLERANCE = {"bf16": 2e-2, "f16": 4e-3, "f32": 1e-4}


def relative_error(out: np.ndarray, ref: np.ndarray) -> float:
    out64, ref64 = np.asarray(out, np.float64), np.asarray(ref, np.float64)
    if not np.all(np.isfinite(out64)):
        return float("inf")
    return float(np.linalg.norm(out64 - ref64) / np.linalg.norm(ref64))
