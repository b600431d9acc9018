"""Attention diagrams built in Python at any shape, for tests, benchmarks and users who
generate shapes: softmax, causal and spherical attention as `examples/` writes them, and
grouped-query attention, whose query heads come in groups that share a key/value head.

    text = attention_diagram("causal", b=2, h=4, n=1000, d=128, dtype="f16")
    text = gqa_attention_diagram("causal", b=1, g=2, r=4, n=1000, d=128)   # 8 query heads, 2 key/value heads
"""

from __future__ import annotations

import math
from typing import NamedTuple

from xdsl.dialects.builtin import ModuleOp

KINDS = ("softmax", "causal", "spherical")
NAMES = {"softmax": "attention", "causal": "causal_attention", "spherical": "spherical_attention"}
GQA_NAMES = {kind: f"gqa_{name}" for kind, name in NAMES.items()}


def attention_diagram(kind: str, b: int, h: int, n: int, d: int, dtype: str = "bf16", n_keys: int | None = None,
                      scale: float | None = None) -> str:
    """O[b, h, i, d] from Q[b, h, i, d], K[b, h, j, d], V[b, h, j, d] with i < n and j < n_keys
    (n by default; a causal mask needs them equal): softmax(Q K^T * scale) V (scale 1/sqrt(d)
    by default), the same with keys after the query masked, or the scores divided by their
    L2 norm along j (which takes no scale)."""
    return _diagram(kind, NAMES, {"b": b, "h": h}, {"b": b, "h": h}, n, d, dtype, n_keys, scale)


def gqa_attention_diagram(kind: str, b: int, g: int, r: int, n: int, d: int, dtype: str = "bf16", n_keys: int | None = None,
                          scale: float | None = None) -> str:
    """Grouped-query attention: O[b, g, r, i, d] from Q[b, g, r, i, d], K[b, g, j, d] and
    V[b, g, j, d]: g key/value heads, each shared by a group of r query heads. K and V lack
    the axis r, so the scores S[b, g, r, i, j] = sum_d Q K broadcast them over it by name;
    the rest is `attention_diagram`'s (softmax, causal or spherical). Q's axes in this
    order are a [b, g * r, n, d] tensor's memory, query head h = g r + r' (SDPA's
    `enable_gqa`)."""
    if r < 1 or g < 1:
        raise ValueError(f"grouped-query attention needs at least one group and one query head a group, got g={g}, r={r}")
    return _diagram(kind, GQA_NAMES, {"b": b, "g": g, "r": r}, {"b": b, "g": g}, n, d, dtype, n_keys, scale)


def _diagram(kind: str, names: dict[str, str], q_lead: dict[str, int], kv_lead: dict[str, int], n: int, d: int, dtype: str,
             n_keys: int | None, scale: float | None) -> str:
    """The attention diagram with Q's leading axes `q_lead` and K's and V's `kv_lead` (the
    scores and the output take Q's)."""
    if kind not in KINDS:
        raise ValueError(f"unknown attention kind '{kind}'; expected one of {', '.join(KINDS)}")
    if kind == "spherical" and scale is not None:
        raise ValueError("spherical attention divides the scores by their L2 norm: a scale would cancel out")
    nj = n if n_keys is None else n_keys
    if kind == "causal" and nj != n:
        raise ValueError("causal attention compares query and key positions: n_keys must equal n")
    ql, kvl = (", ".join(f"{a}={m}" for a, m in lead.items()) for lead in (q_lead, kv_lead))
    q = o = f"!ncd.tensor<{ql}, i={n}, d={d} : {dtype}>"
    kv = f"!ncd.tensor<{kvl}, j={nj}, d={d} : {dtype}>"
    s = f"!ncd.tensor<{ql}, i={n}, j={nj} : f32>"
    p16 = f"!ncd.tensor<{ql}, i={n}, j={nj} : {dtype}>"
    lines = [f"func.func @{names[kind]}(%q: {q}, %k: {kv}, %v: {kv}) -> {o} {{",
             f"  %s = ncd.contract %q, %k over [d] : {q}, {kv} -> {s}"]
    scores = "%s"
    if kind == "causal":
        lines.append(f"  %m = ncd.mask causal %s keep i >= j fill -inf : {s} -> {s}")
        scores = "%m"
    if kind == "spherical":
        lines.append(f"  %p = ncd.l2norm {scores} along j : {s} -> {s}")
    else:
        lines.append(f"  %p = ncd.softmax {scores} along j scale {1 / math.sqrt(d) if scale is None else float(scale)!r} : {s} -> {s}")
    lines += [f"  %p16 = ncd.map cast %p : {s} -> {p16}",
              f"  %o = ncd.contract %p16, %v over [j] : {p16}, {kv} -> {o}",
              f"  func.return %o : {o}", "}", ""]
    return "\n".join(lines)


def sm80_attention_pass_list(module: ModuleOp, block: int = 128, stream: int = 64, warps: int | None = None, stages: int = 3,
                             q_in_registers: bool = True, blocks_per_sm: int = 1) -> tuple:
    """The passes that take `module`, attention, to sm_80 PTX: `sm80_attention_pipeline`
    with its axes and tiles fitted to them, then reg-to-ptx. Grouped-query attention's
    blocks take `group_tiles`' query heads of a group by query positions: each K and V tile
    is copied once for them all."""
    from napkin_ir.lowering.reg_to_ptx import RegToPtxPass

    axes, sizes = attention_shape(module)
    fitted = fit_tiles(sizes[axes.query], sizes[axes.keys], block, stream, warps, _group_size(axes, sizes))
    group = (axes.group[0], fitted["heads"]) if axes.group else None
    return (*_attention_passes(fitted["block"], fitted["stream"], fitted["warps"], stages, q_in_registers, (axes.query, axes.keys),
                               axes.batch, blocks_per_sm, group),
            RegToPtxPass())


def _attention_passes(block: int, stream: int, warps: int | None, stages: int, q_in_registers: bool, axes: tuple[str, str],
                      batch: tuple[str, ...], blocks_per_sm: int, group: tuple[str, int] | None = None) -> tuple:
    from napkin_ir.lowering.hbm_to_smem import HbmToSmemPass
    from napkin_ir.lowering.ncd_to_hbm import NcdToHbmPass
    from napkin_ir.lowering.smem_to_reg import SmemToRegPass
    from napkin_ir.passes.launch import HbmLaunchPass
    from napkin_ir.passes.relabel import RelabelPass

    i, j = axes
    w = warps or block // 16
    per_block = group[1] if group else 1
    heads = [f"{group[0]}:{per_block}"] if group else []
    # a warp holds one query head of those a block packs, or more warps share it
    warp_heads = heads if per_block > 1 else []
    # the query tiles of one head run together (they share its K and V in L2), longest first
    return (RelabelPass(grid=",".join([*batch, *heads, f"{i}:{block // per_block}"]), stream=f"{j}:{stream}"), NcdToHbmPass(),
            HbmLaunchPass(blocks_per_sm=blocks_per_sm, order="last"), HbmToSmemPass(stages=stages, layout="pad8"),
            SmemToRegPass(warps=",".join([*warp_heads, f"{i}:{w // per_block}"]), hoist=q_in_registers))


def sm90_attention_pass_list(module: ModuleOp, block: int | None = None, stream: int | None = None, stages: int = 0,
                             overlap: bool = True, pingpong: bool = True, blocks_per_sm: int = 1, persistent: bool = False,
                             store: str = "auto", q_registers: bool | None = None) -> tuple:
    """The passes that take `module`, attention, to sm_90a PTX: blocks of `block` query rows
    (warpgroups of 64 consumer rows each; one batch entry and head a block, longest first),
    keys streamed `stream` at a time through `stages` TMA stages filled by a producer
    warpgroup (None or 0 for any: `sm90_attention_tiles`' defaults), Q copied once, S = Q K^T
    by wgmma with Q from shared memory or from registers, P V by wgmma with P from
    registers. `overlap` runs a
    tile's P V while the next tile's scores are made (`reg-wgmma-overlap`); `pingpong` has
    the consumer warpgroups take turns issuing products (`reg-pingpong`); `q_registers`
    loads each warp's rows of Q into registers once a tile and makes S = Q K^T by wgmma with
    A from them (`smem-to-reg{a_registers=true}`; None: where `q_registers_pay`); `blocks_per_sm`
    blocks share a multiprocessor (its shared memory and registers divided between them,
    so one's prologue and epilogue run under another's products); `persistent` launches as
    many blocks as fit, each looping over query tiles in pairs of equal work (the longest
    with the shortest: `hbm-launch{order=last}`), its producer loading the next tile's Q
    and keys while the consumers finish the last. The overlap holds two steps of the
    stream at once, the V of one and the K of the next; K and V are released on rings of
    their own (`hbm-to-smem`), so with two stages the producer still loads the next K while
    the consumers hold those. `store="tma"` writes the output by stmatrix into a buffer of
    64-column panels (two stages, or one where two do not fit) and TMA stores (which run on
    under a persistent block's next tile), `"direct"` from registers, `"auto"` the first
    where it fits (`sm90_attention_tiles`).

    Grouped-query attention packs the query heads of a group into a block (FlashAttention-3's
    PackGQA): its rows are `group_tiles`' heads (a group's r whole where r divides the
    block into whole warps' 16 rows a head: in 128 rows 4 heads by 32 positions, 8 by 16;
    in 192, 4 by 48) by query positions, head by head, so each K and V tile is copied once
    for all of them; Q's tile is one TMA box of heads x positions x 64 columns, the block's
    swizzled rows in shared memory."""
    from napkin_ir.lowering.hbm_to_smem import HbmToSmemPass
    from napkin_ir.lowering.ncd_to_hbm import NcdToHbmPass
    from napkin_ir.lowering.reg_to_ptx import RegToPtxPass
    from napkin_ir.lowering.smem_to_reg import SmemToRegPass
    from napkin_ir.passes.launch import HbmLaunchPass
    from napkin_ir.passes.pingpong import RegPingpongPass
    from napkin_ir.passes.relabel import RelabelPass
    from napkin_ir.passes.wgmma_overlap import RegWgmmaOverlapPass

    axes, sizes = attention_shape(module)
    if q_registers is None:
        q_registers = q_registers_pay(module, block, stream, blocks_per_sm)
    block, stream, stages, budget, store = sm90_attention_tiles(module, block, stream, stages, blocks_per_sm, store, q_registers)
    per_head, rows = group_tiles(_group_size(axes, sizes), block)
    packed = [f"{axes.group[0]}:{per_head}"] if axes.group else []
    return (RelabelPass(grid=",".join([*axes.batch, *packed, f"{axes.query}:{rows}"]), stream=f"{axes.keys}:{stream}"),
            NcdToHbmPass(), HbmLaunchPass(order="last", blocks_per_sm=blocks_per_sm, persistent=persistent),
            HbmToSmemPass(stages=stages, copy="tma", smem_bytes=budget, store=store), SmemToRegPass(mma="wgmma", a_registers=q_registers),
            *((RegWgmmaOverlapPass(),) if overlap else ()), *((RegPingpongPass(),) if pingpong else ()), RegToPtxPass())


def q_registers_pay(module: ModuleOp, block: int | None = None, stream: int | None = None, blocks_per_sm: int = 1) -> bool:
    """Whether napkin-sm90 keeps Q in registers by default (`sm90_attention_pass_list`'s
    `q_registers`) for `module`'s attention with blocks of `block` query rows and `stream`
    keys a tile (None: the defaults): at head dims from 64 up to 128, in a block of up to
    128 rows alone on its multiprocessor, with up to 128 keys a tile (a softmax then takes
    128, not WIDE_STREAM: `sm90_attention_tiles`; three consumer warpgroups, d=64's 192
    rows on a long stream, keep Q in shared memory). Q's 32 registers a thread at d=128 fit
    beside 128 keys' scores, probabilities and the output's accumulators in a consumer's
    240, not beside 176 keys' (ptxas spills). A persistent block releases Q's stage right
    after loading it, so its next tile's Q lands under this tile's stream.
    H200, 2026-11-26, d=128, against the defaults before (Q in shared memory) in one call:
    softmax 1k 550 TFLOP/s against 543, causal 420 against 414; 4k 633 against 607,
    causal 583 against 558; 16k 639 against 637, causal 633 against 629; spherical
    attention 643 against 628, 733 against 722, 755 against 748 (before the early release
    of Q it ran 1-2% slower with Q in registers). H200, 2026-11-26, d=64, 128 rows,
    against Q in shared memory in one call: 1k 407 against 393 (176 keys), causal 325
    against 311, spherical 620 against 573; 4k causal 420 against 405; packed query heads
    (4 or 8 a group) at 1k 407-410 against 393-395, causal 331-335 against 319-323."""
    axes, sizes = attention_shape(module)
    d = _head_dim(axes, sizes)
    return 64 <= d <= 128 and blocks_per_sm == 1 and (block or _default_rows(axes, sizes)) <= 128 and (stream or 0) <= 128


PERSISTENT_WORK = 2048 * 256  # keys x head dim a block streams on average, at which a persistent grid stops paying
LONG_STREAM = 2048  # a causal block's average keys over which its diagonal tiles are a small share


def persistent_pays(module: ModuleOp, block: int | None = None) -> bool:
    """Whether napkin-sm90 launches `module`'s attention persistent by default (with blocks
    of `block` query rows, or `sm90_attention_tiles`' default): where a query block's stream
    (its keys, half of them under a causal mask, times the head dim) is PERSISTENT_WORK or
    less on average, the prologue and epilogue each block pays (Q and the first keys
    landing, the output leaving) are a large share of its time, and a persistent block
    overlaps them with its next and last tiles. Measured on an H200 (2026-11-26): with
    128-key tiles, 3-16% faster at 1k tokens and 6-11% at 4k causal (d 64/128/256); at 4k
    without a mask, d=128, 176-key tiles and TMA stores, 631 TFLOP/s against 599. Over it,
    from 5% slower (d=256 at 4k without a mask) to 3% faster, and at 16k d=128 slower by
    2-3% (docs/benchmarks.md): there the static order's last round costs about as much as
    the prologue it hides. Blocks of three consumer warpgroups (192 rows) stay a block a
    tile: at 16k causal d=64, 472 TFLOP/s against 437 persistent; at 4k, 467 against 474.
    Spherical attention at head dims over 64 up to 128 is persistent at any length (128
    keys a tile, `sm90_attention_tiles`): it has no running max, and its blocks, all
    products, gain from the overlapped prologue at 16k too."""
    axes, sizes = attention_shape(module)
    if (block or _default_rows(axes, sizes)) > 128:
        return False
    d = _head_dim(axes, sizes)
    if _spherical_narrow(module, d):
        return True  # 16k, d=128: 743 TFLOP/s against 715 for 176 keys a block a tile (same call)
    return sizes[axes.keys] / (2 if axes.masked else 1) * d <= PERSISTENT_WORK


def default_rows(module: ModuleOp) -> int:
    """The query rows of napkin-sm90's attention blocks where none are given: 192 (three
    consumer warpgroups, FlashAttention-3's tile at head dim 64) at head dims up to 64 where
    the stream is long (`_long_stream`), else 128. H200, 2026-11-26, d=64, 128 keys a
    tile: 16k 511 TFLOP/s against 448 for 128 rows, 16k causal 472 against 437, 4k 467
    against 427; at 4k causal 396 against 401, and at 1k behind too. Packed query heads
    (`group_tiles`: 4 heads by 48 positions where the group has 4 or 8) the same, against
    128 rows in one call: 4k 490-492 against 439-440; 16k 512-513 against 439-440, causal
    488-490 against 426-443."""
    return _default_rows(*attention_shape(module))


def _default_rows(axes: AttentionAxes, sizes: dict[str, int]) -> int:
    return 192 if _head_dim(axes, sizes) <= 64 and _long_stream(axes, sizes) else 128


def _softmax(module: ModuleOp) -> bool:
    """Whether the attention normalises its scores by a softmax (else an L2 norm: spherical)."""
    from napkin_ir.dialects import ncd

    return any(isinstance(op, ncd.SoftmaxOp) for op in module.walk())


def _spherical_narrow(module: ModuleOp, d: int) -> bool:
    """Spherical attention at head dims over 64 up to 128: 128 keys a tile and a persistent
    grid (`sm90_attention_tiles`, `persistent_pays`)."""
    return 64 < d <= 128 and not _softmax(module)


def _long_stream(axes: AttentionAxes, sizes: dict[str, int]) -> bool:
    """Keys enough that a block's fixed costs are a small share: 4096 or more without a
    mask; under a causal mask, over LONG_STREAM on average (its diagonal tiles a small
    share too)."""
    return sizes[axes.keys] / 2 > LONG_STREAM if axes.masked else sizes[axes.keys] >= 4096


def _head_dim(axes: AttentionAxes, sizes: dict[str, int]) -> int:
    heads = [a for a in sizes if a not in (*axes.batch, *axes.group, axes.query, axes.keys)]
    return max(sizes[a] for a in heads) if heads else 0


WIDE_STREAM = 176  # keys a tile where no mask cuts them, at head dims up to 128
DEEP_STREAM = 80  # keys a tile of a long stream at head dims over 128 (FlashAttention-3's at 256)


def sm90_attention_tiles(module: ModuleOp, block: int | None = None, stream: int | None = None, stages: int = 0,
                         blocks_per_sm: int = 1, store: str = "auto", q_registers: bool | None = None) -> tuple[int, int, int, int, str]:
    """(query rows, keys a tile, stages, shared-memory budget of a block, how the output
    leaves) that `sm90_attention_pass_list` takes for `module`: the tiles fitted to the axes
    (a block of grouped-query attention no longer than its packed heads' positions need),
    and where none is given, the default query rows (`default_rows`), stream tile, store
    and stage count, with Q in registers or not as given (None: as napkin-sm90 decides,
    `q_registers_pay`).

    Keys a tile: WIDE_STREAM (FlashAttention-3's at head dim 128) at head dims up to 128,
    Q not held in registers (`q_registers`: 128 keys, `q_registers_pay`), where no causal
    mask cuts the tiles, or where the masked stream is long (its diagonal
    tiles, whose waste grows with the tile, a small share): each tile's fixed costs (the
    row reductions' shuffles, the rescale of the output, the barriers) spread over more
    keys. H200, 2026-11-26, d=128: at 4k without a mask 613-644 TFLOP/s against 557-605
    for 128 keys; at 16k causal 588-615 against 576-585 (128 keys and TMA stores), but at
    4k causal 526-557 against 564-596. Where the output's panels do not fit beside the
    wide tile, a softmax keeps it and stores from registers; spherical attention, without
    a running max to rescale by, takes 128 keys and the panels; at head dims over 64 it
    always takes 128 keys (H200, 2026-11-26, d=128, persistent, TMA stores, against 176
    keys, in one call: 629 TFLOP/s against 608 at 1k, 681 against 653 at 2k; in another,
    710 against 707 at 4k and 743 against 715 at 16k, the 176 keys a block a tile there). At head dims over 128 a
    softmax over a long stream (`_long_stream`) takes DEEP_STREAM keys, stores from
    registers (at 16k d=256: 693 TFLOP/s against 661 for 64 keys, causal 654 against 636;
    at 4k 638 against 628, but causal 524-558 against 574; spherical attention 718 against
    737; measured without packed query heads, so not taken with them). Else 128 keys, or
    64 at head dims over 128, or over 64 where the keys end in a partial tile of 128.
    Neither wide tile where an input holds the keys innermost (`_streamed_innermost`).
    `store="auto"` takes TMA stores of the output (a panel of 64 columns through two
    stages, or one where two do not fit beside Q and two stages of K and V; a block of
    packed query heads stores them head by head in one box) where they fit, else stores
    from registers: at 4k causal d=128, 564-596 against 523-558. Stages: three where they
    fit beside Q and a panel stage, else two."""
    from xdsl.utils.exceptions import PassFailedException

    axes, sizes = attention_shape(module)
    i, j = axes.query, axes.keys
    d = _head_dim(axes, sizes)
    if q_registers is None:
        q_registers = q_registers_pay(module, block, stream, blocks_per_sm)
    block = block or _default_rows(axes, sizes)
    if block % 64 or not 64 <= block <= 256:
        raise PassFailedException(f"napkin-sm90: attention's block is warpgroups of 64 query rows (64 to 256), got {block}")
    r = _group_size(axes, sizes)
    while block > 64 and group_tiles(r, block)[1] > sizes[i]:
        block -= 64
    # a block's shared memory: a multiprocessor's 228 KiB less 1 KiB the system keeps for
    # each block (227 KiB at most), less the swizzle's alignment slack and the barriers
    budget = min(227 * 1024, 228 * 1024 // blocks_per_sm - 1024) - 1024 - 64
    q_bytes, tile_bytes = block * d * 2, 2 * d * 2  # Q; a row of K and of V, bf16 or f16
    out = block * 64 * 2  # a stage of a 64-column panel of the output (hbm-to-smem takes two where they fit)

    def fits(keys: int, panels: bool) -> bool:
        return q_bytes + (stages or 2) * keys * tile_bytes + (out if panels else 0) <= budget

    if not stream:
        # the wide tile spreads a softmax's per-tile costs (the running max's shuffles, the
        # output's rescale); spherical attention has none, and gains more from TMA stores
        softmax = _softmax(module)
        inner = _streamed_innermost(module, j)
        # three consumer warpgroups at d=64 hold too little a thread for 176 keys (ptxas spills)
        three_at_64 = d <= 64 and block > 128
        # unmasked, or a mask's diagonal tiles a small share of a long stream
        wide = d <= 128 and not three_at_64 and not _spherical_narrow(module, d) and not q_registers and (
            not axes.masked or _long_stream(axes, sizes)) and sizes[j] >= WIDE_STREAM and not inner and (
            fits(WIDE_STREAM, store != "direct") or store == "auto" and softmax and fits(WIDE_STREAM, False))
        deep = d > 128 and softmax and not axes.group and _long_stream(axes, sizes) and not inner and store != "tma" and fits(
            DEEP_STREAM, False)
        stream = WIDE_STREAM if wide else DEEP_STREAM if deep else 64 if d > 128 or d > 64 and sizes[j] % 128 else 128
    while stream > 16 and stream > sizes[j]:  # the power of two below (176: 128), a multiple of 16 (P V's k step)
        stream = 1 << (stream - 1).bit_length() - 1
    if store == "auto":
        store = "tma" if d % 64 == 0 and fits(stream, True) else "direct"
    if not stages:
        stages = 3 if q_bytes + 3 * stream * tile_bytes + (out if store == "tma" else 0) <= budget else 2
    return block, stream, stages, budget, store


def _streamed_innermost(module: ModuleOp, j: str) -> bool:
    """Whether an input holds the streamed axis `j` innermost (an MLP's first weight [k, h]
    streams h): its TMA tiles along `j` are then whole 128-byte panels of the swizzle,
    which WIDE_STREAM and DEEP_STREAM keys (352 and 160 bytes) are not."""
    from xdsl.dialects import func

    from napkin_ir.dialects import ncd

    return any(isinstance(a.type, ncd.TensorType) and a.type.axis_names[-1] == j
               for f in module.walk() if isinstance(f, func.FuncOp) for a in f.args)


def sm80_attention_pipeline(block: int = 128, stream: int = 64, warps: int | None = None, stages: int = 3,
                            q_in_registers: bool = True, axes: tuple[str, str] = ("i", "j"),
                            batch: tuple[str, ...] = ("b", "h"), blocks_per_sm: int = 1, group: tuple[str, int] | None = None) -> str:
    """The passes from an attention diagram to the register level on sm_80: blocks of `block`
    query rows (one batch entry and head each), keys streamed `stream` at a time through
    `stages` shared-memory stages, `warps` warps sharing the rows (16 each by default), Q's
    fragments loaded once (`q_in_registers`) or at each product, and registers left for
    `blocks_per_sm` blocks on a multiprocessor. `group` (axis, heads) packs that many query
    heads of a group of grouped-query attention into a block, a warp a head or more."""
    from napkin_ir.passmanager import spec

    return spec(_attention_passes(block, stream, warps, stages, q_in_registers, axes, batch, blocks_per_sm, group))


def group_tiles(group: int, block: int, warps: int | None = None) -> tuple[int, int]:
    """(query heads, query positions) of a block of `block` query rows of grouped-query
    attention, `group` query heads sharing a key/value head: the most heads of the group
    (a divisor of it) that leave each head a multiple of 16 positions (whole warps' rows:
    each warp holds 16 rows or more of one head), and, given `warps`, a whole number of
    warps. (1, block) where the heads are not grouped."""
    for heads in range(group, 0, -1):
        if group % heads or block % heads or (block // heads) % 16:
            continue
        if warps is not None and (warps % heads or (block // heads) % (16 * (warps // heads))):
            continue
        return heads, block // heads
    return 1, block


def fit_tiles(n_queries: int, n_keys: int, block: int = 128, stream: int = 64, warps: int | None = None,
              group: int = 1) -> dict[str, int]:
    """Tiles no longer than the axes (a tile may not exceed its axis): the block's rows and
    the stream tile halve, down to 16, until they fit; the warps of a shrunk block keep 16
    rows or more each. With a `group` of query heads sharing K and V, a block holds
    `heads` of them (`group_tiles`), and its positions along the queries are what must fit."""
    fitted = block
    while fitted > 16 and group_tiles(group, fitted)[1] > n_queries and group_tiles(group, fitted // 2)[1] >= 16:
        fitted //= 2
    while stream > 16 and stream > n_keys:
        stream //= 2
    w = warps or fitted // 16
    w = w if fitted == block else min(w, fitted // 16)
    return {"block": fitted, "stream": stream, "warps": w, "heads": group_tiles(group, fitted, w)[0]}


class AttentionAxes(NamedTuple):
    """The axes of an attention diagram: `batch` (Q, K, V and O have them: a batch entry, a
    head), `query` and `keys` (the scores' rows and the axis the second product
    contracts), `group` (the axes of Q and O that K and V lack: grouped-query
    attention's query heads of a group, which share a key/value head), and whether the
    keys are masked by the query's position (`masked`: causal attention)."""

    batch: tuple[str, ...]
    query: str
    keys: str
    group: tuple[str, ...] = ()
    masked: bool = False  # a mask of the keys by the query's position (causal)


def _group_size(axes: AttentionAxes, sizes: dict[str, int]) -> int:
    return math.prod(sizes[a] for a in axes.group)


def attention_shape(module: ModuleOp) -> tuple[AttentionAxes, dict[str, int]]:
    """`attention_axes` and the size of every axis of the diagram; a diagram that is not
    attention is refused."""
    from xdsl.dialects import func
    from xdsl.utils.exceptions import PassFailedException

    from napkin_ir.passes.relabel import function_axes

    axes = attention_axes(module)
    if axes is None:
        raise PassFailedException("the diagram is not attention (two contractions, the second over the first's keys)")
    if len(axes.group) > 1:
        raise PassFailedException(f"grouped-query attention with one axis of query heads a group is compiled; Q has "
                                  f"{len(axes.group)} that K and V lack: {list(axes.group)}")
    (f,) = [op for op in module.walk() if isinstance(op, func.FuncOp) and op.body.blocks]
    return axes, function_axes(f)


def attention_axes(module: ModuleOp) -> AttentionAxes | None:
    """The `AttentionAxes` of a diagram that is attention, else None: one function whose
    result is a contraction over an axis (the keys) of a tile of scores that another
    contraction made; the scores' axes that the values lack are the query axis (the one a
    causal mask compares with the keys, else the last) and the query heads of a group
    (grouped-query attention: K and V broadcast over them by name)."""
    from xdsl.dialects import func

    from napkin_ir.dialects import ncd

    funcs = [f for f in module.walk() if isinstance(f, func.FuncOp) and f.body.blocks]
    contracts = [op for f in funcs for op in f.walk() if isinstance(op, ncd.ContractOp)]
    if len(funcs) != 1 or len(contracts) != 2 or any(len(c.over_axes) != 1 for c in contracts):
        return None
    first, second = contracts
    (j,) = second.over_axes
    scores, values = second.lhs.type, second.rhs.type  # type: ignore[attr-defined]
    if j not in first.result.type.shape or j in first.over_axes:  # type: ignore[attr-defined]
        return None
    queries = [a for a in scores.axis_names if a not in values.shape]
    if not queries:
        return None
    masks = {m.row.data for m in funcs[0].walk() if isinstance(m, ncd.MaskOp) and m.col.data == j}
    if len(masks) > 1 or masks - set(queries):
        return None
    query = next(iter(masks)) if masks else queries[-1]
    batch = tuple(a for a in second.result.type.axis_names if a in scores.shape and a in values.shape)  # type: ignore[attr-defined]
    return AttentionAxes(batch, query, j, tuple(a for a in queries if a != query), bool(masks))


def sm80_attention_passes(module: ModuleOp, **config) -> str | None:
    """The pipeline spec that takes `module`, if it is attention, to the register level on
    sm_80 (`sm80_attention_pass_list` without reg-to-ptx); None otherwise."""
    from napkin_ir.passmanager import spec

    return spec(sm80_attention_pass_list(module, **config)[:-1]) if attention_axes(module) is not None else None


def compile_attention(text: str, **config) -> tuple[str, dict]:
    """PTX for an attention diagram and what its launch needs (`pipelines.launch_config`);
    the tiles shrink to fit short sequences (`fit_tiles`)."""
    import io

    from napkin_ir import registry
    from napkin_ir.dialects.ptx.printer import print_ptx
    from napkin_ir.pipelines import launch_config, run_passes, run_pipeline

    module = run_pipeline(text)
    run_passes(registry.make_context(), module, sm80_attention_pass_list(module, **config))
    module.verify()
    out = io.StringIO()
    print_ptx(module, out)
    return out.getvalue(), launch_config(module)
