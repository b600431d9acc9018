"""Attention diagrams built in Python at any shape, for tests, benchmarks and users who
generate shapes: softmax, causal and spherical attention as `examples/` writes them, and
grouped-query attention, whose query heads come in groups that share a key/value head.

    text = attention_diagram("causal", b=2, h=4, n=1000, d=128, dtype="f16")
    text = gqa_attention_diagram("causal", b=1, g=2, r=4, n=1000, d=128)   # 8 query heads, 2 key/value heads
    text = attention_diagram("softmax", b=2, h=4, n=1000, d=64, lse=True)  # (O, the log-sum-exp of each row)

These build diagrams only: how a diagram of attention becomes a kernel is the attention
recipe's (`napkin_ir.plan.recipes.attention`).
"""

from __future__ import annotations

import math

from napkin_ir.diagrams import element_type, finite_float, positive_int
from napkin_ir.errors import BadArgument

KINDS = ("softmax", "causal", "spherical")
NAMES = {"softmax": "attention", "causal": "causal_attention", "spherical": "spherical_attention"}
GQA_NAMES = {kind: f"gqa_{name}" for kind, name in NAMES.items()}
# the passes that derive attention's backward reading the forward's statistic and output
# (dS's softmax scale moved past dQ's and dK's products: a multiply a head-dim element, not a
# key; the probabilities' e^x as 2^x, log2 e folded into the scale and the statistic)
RESIDUAL_GRADIENT = "ncd-grad{residuals=true},ncd-fold-casts,ncd-sink-scales,ncd-fold-log2e"
# the row values the gradient's row kernel computes and its other kernels read: D =
# rowsum(dO * O), and a softmax's log-sum-exp in base 2 (`ncd-fold-log2e`); spherical
# attention's norm is read as the forward saved it
ROW_VALUES = {"softmax": ("delta", "lse_log2"), "causal": ("delta", "lse_log2"), "spherical": ("delta",)}


def gradient_passes(kind: str, part: str, grouped: bool = False) -> str:
    """The passes that take attention's diagram (`kind`) to the kernel of one part of its
    gradient: `delta`, the row kernel of ROW_VALUES[kind] (D = rowsum(dO * O), and a
    softmax's log-sum-exp in base 2), or the cotangents named in `part` (`q`, `k`, `v`,
    `kv`, `qkv`), each reading those row values (spherical attention's, D and the forward's
    norm). Sums that blocks add into (dQ in `qkv`, grouped heads' dK and dV) are widened to
    f32."""
    rows = ",".join(ROW_VALUES[kind])
    pick = f'value="{rows}"' if part == "delta" else f'results="{",".join(str("qkv".index(c)) for c in part)}" cut="{rows}"'
    derive = f'{RESIDUAL_GRADIENT},ncd-extract{{function="{(GQA_NAMES if grouped else NAMES)[kind]}_grad" {pick}}}'
    if grouped and part in ("k", "v", "kv", "qkv"):
        derive += ",ncd-widen-results"
    elif part == "qkv":
        derive += ",ncd-widen-results{result=0}"
    return derive


def attention_diagram(kind: str, b: int, h: int, n: int, d: int, dtype: str = "bf16", n_keys: int | None = None,
                      scale: float | None = None, lse: bool = False) -> str:
    """O[b, h, i, d] from Q[b, h, i, d], K[b, h, j, d], V[b, h, j, d] with i < n and j < n_keys
    (n by default; a causal mask needs them equal): softmax(Q K^T * scale) V (scale 1/sqrt(d)
    by default), the same with keys after the query masked, or the scores divided by their
    L2 norm along j (which takes no scale). With `lse` a softmax's diagram returns the
    log-sum-exp of each row's scaled scores too (f32 [b, h, i], natural log: what the
    gradient recomputes the probabilities from, as `ncd-grad{residuals=true}` writes it);
    spherical attention's returns each row's norm, its own statistic."""
    return _diagram(kind, NAMES, {"b": b, "h": h}, {"b": b, "h": h}, n, d, dtype, n_keys, scale, lse)


def gqa_attention_diagram(kind: str, b: int, g: int, r: int, n: int, d: int, dtype: str = "bf16", n_keys: int | None = None,
                          scale: float | None = None, lse: bool = False) -> str:
    """Grouped-query attention: O[b, g, r, i, d] from Q[b, g, r, i, d], K[b, g, j, d] and
    V[b, g, j, d]: g key/value heads, each shared by a group of r query heads. K and V lack
    the axis r, so the scores S[b, g, r, i, j] = sum_d Q K broadcast them over it by name;
    the rest is `attention_diagram`'s (softmax, causal or spherical). Q's axes in this
    order are a [b, g * r, n, d] tensor's memory, query head h = g r + r' (SDPA's
    `enable_gqa`); `lse` as `attention_diagram`'s."""
    for arg, value in (("g", g), ("r", r)):
        positive_int("gqa_attention_diagram", arg, value)
    return _diagram(kind, GQA_NAMES, {"b": b, "g": g, "r": r}, {"b": b, "g": g}, n, d, dtype, n_keys, scale, lse)


def _diagram(kind: str, names: dict[str, str], q_lead: dict[str, int], kv_lead: dict[str, int], n: int, d: int, dtype: str,
             n_keys: int | None, scale: float | None, lse: bool = False) -> str:
    """The attention diagram with Q's leading axes `q_lead` and K's and V's `kv_lead` (the
    scores and the output take Q's)."""
    where = "gqa_attention_diagram" if names is GQA_NAMES else "attention_diagram"
    if kind not in KINDS:
        raise BadArgument(f"{where}: unknown attention kind {kind!r}; expected one of {', '.join(KINDS)}")
    for arg, value in (*q_lead.items(), ("n", n), ("d", d)):
        positive_int(where, arg, value)
    if n_keys is not None:
        positive_int(where, "n_keys", n_keys)
    element_type(where, "dtype", dtype)
    if scale is not None:
        finite_float(where, "scale", scale)
    if kind == "spherical" and scale is not None:
        raise BadArgument(f"{where}: spherical attention divides the scores by their L2 norm: a scale would cancel out")
    nj = n if n_keys is None else n_keys
    if kind == "causal" and nj != n:
        raise BadArgument(f"{where}: causal attention compares query and key positions: n_keys must equal n")
    ql, kvl = (", ".join(f"{a}={m}" for a, m in lead.items()) for lead in (q_lead, kv_lead))
    q = o = f"!ncd.tensor<{ql}, i={n}, d={d} : {dtype}>"
    kv = f"!ncd.tensor<{kvl}, j={nj}, d={d} : {dtype}>"
    s = f"!ncd.tensor<{ql}, i={n}, j={nj} : f32>"
    p16 = f"!ncd.tensor<{ql}, i={n}, j={nj} : {dtype}>"
    rows = f"!ncd.tensor<{ql}, i={n} : f32>"
    results = f"({o}, {rows})" if lse else o
    lines = [f"func.func @{names[kind]}(%q: {q}, %k: {kv}, %v: {kv}) -> {results} {{",
             f"  %s = ncd.contract %q, %k over [d] : {q}, {kv} -> {s}"]
    scores = "%s"
    if kind == "causal":
        lines.append(f"  %m = ncd.mask causal %s keep i >= j fill -inf : {s} -> {s}")
        scores = "%m"
    if kind == "spherical":
        lines.append(f"  %p = ncd.l2norm {scores} along j : {s} -> {s}")
        if lse:  # a spherical row's statistic is its norm
            lines += [f"  %sq = ncd.map mul {scores}, {scores} : {s}, {s} -> {s}",
                      f"  %ss = ncd.reduce sum %sq along [j] : {s} -> {rows}",
                      f"  %lse = ncd.map sqrt %ss : {rows} -> {rows}"]
    else:
        c = 1 / math.sqrt(d) if scale is None else float(scale)
        lines.append(f"  %p = ncd.softmax {scores} along j scale {c!r} : {s} -> {s}")
        if lse:
            lines.append(f"  %lse = ncd.logsumexp {scores} along j scale {c!r} : {s} -> {rows}")
    lines += [f"  %p16 = ncd.map cast %p : {s} -> {p16}",
              f"  %o = ncd.contract %p16, %v over [j] : {p16}, {kv} -> {o}",
              f"  func.return %o, %lse : {o}, {rows}" if lse else f"  func.return %o : {o}", "}", ""]
    return "\n".join(lines)
