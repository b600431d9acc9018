"""Named pipelines and the in-process way to run them: text in, PTX (or IR) out.

`napkin-opt -p ...` and Python users share this: `compile_to_ptx(text, "convert-arith-to-ptx")`
parses, verifies, runs the pipeline (xDSL's spec syntax, napkin's and xDSL's passes) and
prints PTX.

The whole-way pipelines `napkin-sm80` and `napkin-sm90` are passes made of passes
(`passmanager.PipelinePass`): what they run depends on the diagram (a GEMM or attention,
its axes, the model's choice of tiles), so each one looks at the module when its turn
comes and returns the pass instances, with typed options, that take it to PTX.
`run_passes` (and so `napkin-opt`) splices those into the pipeline it is running:
`--print-between-passes` shows every level, `--time-passes` times each pass. An option a
pipeline cannot honour for the diagram at hand is an error that names it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from napkin_ir.passmanager import PipelinePass, available_passes, compile_to_ptx, run_passes, run_pipeline, spec

if TYPE_CHECKING:
    from napkin_ir.model.autotile import AttentionSpace

__all__ = ["NapkinSm80Pass", "NapkinSm90Pass", "PipelinePass", "available_passes", "compile_to_ptx", "gemm_axes", "launch_config",
           "run_passes", "run_pipeline", "sm80_gemm_passes", "sm80_gemm_pipeline", "sm90_gemm_passes", "sm90_gemm_pipeline", "spec"]

def sm80_gemm_passes(block: tuple[int, int, int] = (128, 128, 32), warps: tuple[int, int] = (2, 2), stages: int = 3,
                     axes: tuple[str, str, str] = ("m", "n", "k"), layout: str = "auto", group: int = 0,
                     unroll: int = 2, batch: tuple[str, ...] = ()) -> tuple[ModulePass, ...]:
    """The passes from a GEMM diagram to sm_80 PTX (what napkin-sm80 runs for a GEMM).
    `layout="auto"` swizzles the stages where their rows allow it (64 bytes or a multiple of
    128: A's rows are the stream tile, B's the column tile), else pads them (`pad8`).
    `group` launches the blocks in bands of that many block rows, column by column
    (`hbm-launch{group=G}`: the tiles the blocks running at once read stay in the L2); 0 the
    plain order, the first axis fastest. `unroll` > 0 unrolls the stream loop (`unroll`
    times its stages a trip: two measured faster than one), carries the next trip's first
    fragments across its back edge and loads fragments a step ahead, the tile's copies
    spread among the loads (`smem-unroll-stages`, `reg-carry-fragments`, `reg-prefetch`);
    0 leaves the loop as `hbm-to-smem` built it. `batch` axes (a batched GEMM's) are spread
    over the grid a block each."""
    from napkin_ir.dialects.smem import swizzle_fits
    from napkin_ir.lowering.hbm_to_smem import HbmToSmemPass
    from napkin_ir.lowering.ncd_to_hbm import NcdToHbmPass
    from napkin_ir.lowering.reg_to_ptx import RegToPtxPass
    from napkin_ir.lowering.smem_to_reg import SmemToRegPass
    from napkin_ir.passes.carry_fragments import RegCarryFragmentsPass
    from napkin_ir.passes.launch import HbmLaunchPass
    from napkin_ir.passes.prefetch import RegPrefetchPass
    from napkin_ir.passes.relabel import RelabelPass
    from napkin_ir.passes.unroll_stages import SmemUnrollStagesPass

    (m, n, k), (bm, bn, bk) = axes, block
    if layout == "auto":
        layout = "swizzle" if swizzle_fits(2 * bk) and swizzle_fits(2 * bn) else "pad8"
    return (RelabelPass(grid=",".join([*batch, f"{m}:{bm}", f"{n}:{bn}"]), stream=f"{k}:{bk}"), NcdToHbmPass(),
            *((HbmLaunchPass(group=group),) if group else ()),
            HbmToSmemPass(stages=stages, layout=layout), SmemToRegPass(warps=f"{m}:{warps[0]},{n}:{warps[1]}"),
            *((SmemUnrollStagesPass(trips=int(unroll)), RegCarryFragmentsPass(), RegPrefetchPass()) if unroll else ()), RegToPtxPass())


def sm80_gemm_pipeline(*args, **kwargs) -> str:
    """`sm80_gemm_passes` as a pipeline spec."""
    return spec(sm80_gemm_passes(*args, **kwargs))


def sm90_gemm_passes(block: tuple[int, int, int] = (128, 256, 64), stages: int = 4,
                     axes: tuple[str, str, str] = ("m", "n", "k"), group: int = 0, blocks_per_sm: int = 1,
                     persistent: bool = False, cluster: int = 1, store: str = "auto", batch: tuple[str, ...] = (),
                     outputs: int = 1) -> tuple[ModulePass, ...]:
    """The passes from a GEMM diagram to sm_90a PTX (TMA, mbarriers, wgmma; napkin-sm90).
    `store="tma"` writes the output through shared memory with TMA stores, `"direct"` from
    registers to global memory; `"auto"` takes TMA stores where their two-stage panel buffer
    (rows x 64 x 2 bytes, twice) fits beside the stages, as it is faster (docs/benchmarks.md).
    `batch` axes (a batched GEMM's) are spread over the grid a block each; `outputs`
    products of one A stream one B each through the stages."""
    from napkin_ir.lowering.hbm_to_smem import HbmToSmemPass
    from napkin_ir.lowering.ncd_to_hbm import NcdToHbmPass
    from napkin_ir.lowering.reg_to_ptx import RegToPtxPass
    from napkin_ir.lowering.smem_to_reg import SmemToRegPass
    from napkin_ir.passes.launch import HbmLaunchPass
    from napkin_ir.passes.relabel import RelabelPass

    (m, n, k), (bm, bn, bk) = axes, block
    smem_budget = 227 * 1024 // blocks_per_sm - 1024 - 8 * 2 * stages  # the alignment slack and barriers
    if store == "auto":
        staged = stages * (bm * bk + outputs * bk * bn) * 2 + outputs * 2 * bm * 64 * 2
        store = "tma" if bn % 64 == 0 and staged <= smem_budget and not batch else "direct"
    return (RelabelPass(grid=",".join([*batch, f"{m}:{bm}", f"{n}:{bn}"]), stream=f"{k}:{bk}"), NcdToHbmPass(),
            HbmLaunchPass(group=group, blocks_per_sm=blocks_per_sm, persistent=persistent, cluster=cluster),
            HbmToSmemPass(stages=stages, copy="tma", store=store, smem_bytes=smem_budget), SmemToRegPass(mma="wgmma"), RegToPtxPass())


def sm90_gemm_pipeline(*args, **kwargs) -> str:
    """`sm90_gemm_passes` as a pipeline spec."""
    return spec(sm90_gemm_passes(*args, **kwargs))


def launch_config(module: ModuleOp) -> dict[str, object]:
    """Kernel name, grid, block, dynamic shared memory and TMA boxes ((argument, box, swizzle)
    each) of the (one) compiled kernel."""
    from napkin_ir.dialects.ptx.ops import KernelOp

    (kernel,) = [op for op in module.walk() if isinstance(op, KernelOp)]
    assert kernel.launch_grid is not None and kernel.smem_bytes is not None, f"@{kernel.sym_name.data} has no launch configuration"
    grid = [a.value.data for a in kernel.launch_grid.data]
    threads = kernel.reqntid or kernel.maxntid
    block = [a.value.data for a in threads.data] if threads else [1]
    tma = [(t.arg.data, t.dims, t.swizzle.data) for t in (kernel.tma.data if kernel.tma else [])]
    return {"name": kernel.sym_name.data, "grid": grid, "block": block, "smem": kernel.smem_bytes.value.data, "tma": tma}


def _ints(text: str, n: int, what: str, pipeline: str = "napkin-sm80", meaning: str = "") -> tuple[int, ...]:
    try:
        vals = tuple(int(x) for x in text.split(","))
    except ValueError:
        vals = ()
    if len(vals) != n or min(vals) <= 0:
        raise PassFailedException(f"{pipeline}: {what}=\"{text}\" should be {n} positive integers separated by commas"
                                  + (f" ({meaning})" if meaning else ""))
    return vals


def gemm_axes(module: ModuleOp, pipeline: str = "napkin-sm80") -> tuple[str, str, str]:
    """(rows, cols, contracted) of the one contraction a GEMM diagram computes."""
    from napkin_ir.dialects import ncd

    funcs = [f for f in module.walk() if isinstance(f, func.FuncOp) and f.body.blocks]
    contracts = [op for f in funcs for op in f.walk() if isinstance(op, ncd.ContractOp)]
    if len(funcs) != 1 or len(contracts) != 1 or len(contracts[0].over_axes) != 1:
        raise PassFailedException(f"{pipeline}: compiles a GEMM (one function, one contraction over one axis)"
                                  + (" or attention" if pipeline == "napkin-sm80" else " for now; attention takes napkin-sm80"))
    out = contracts[0].result.type
    if len(out.axis_names) != 2:  # type: ignore[attr-defined]
        raise PassFailedException(f"{pipeline}: the contraction's result must have two axes, got {out}")
    rows, cols = out.axis_names  # type: ignore[attr-defined]
    return rows, cols, contracts[0].over_axes[0]


@dataclass(frozen=True)
class ProductShape:
    """How a diagram of products over one shared axis tiles: its outputs' leading axes
    (`batch`, a block each), their rows and columns (tiled), the contracted axis
    (streamed); `plain` for the one-contraction 2-D GEMM with B stored [k, n]."""

    batch: tuple[str, ...]
    rows: str
    cols: str
    k: str
    plain: bool
    outputs: int = 1  # products the block computes
    half_output: bool = True  # every output is bf16 or f16


def product_shape(module: ModuleOp, pipeline: str = "napkin-sm80") -> ProductShape:
    """The tiling axes of a diagram whose contractions all contract one axis into outputs
    of the same axes (a GEMM, batched, B stored either way, several products of one A)."""
    from napkin_ir.dialects import ncd

    funcs = [f for f in module.walk() if isinstance(f, func.FuncOp) and f.body.blocks]
    contracts = [op for f in funcs for op in f.walk() if isinstance(op, ncd.ContractOp)]
    what = "products over one shared axis (a GEMM, batched or not, or several of one operand)"
    if len(funcs) != 1 or not contracts:
        raise PassFailedException(f"{pipeline}: compiles one function of {what}" + (" or attention" if pipeline == "napkin-sm80" else ""))
    overs = {tuple(c.over_axes) for c in contracts}
    outs = {tuple(c.result.type.axis_names) for c in contracts}  # type: ignore[attr-defined]
    if len(overs) != 1 or len(next(iter(overs))) != 1 or len(outs) != 1 or len(next(iter(outs))) < 2:
        found = "; ".join(f"{list(c.over_axes)} -> {c.result.type}" for c in contracts)
        raise PassFailedException(f"{pipeline}: compiles {what}" + (" or attention" if pipeline == "napkin-sm80" else "")
                                  + f"; this diagram's contractions are {found}")
    (k,), out = next(iter(overs)), next(iter(outs))
    *batch, rows, cols = out
    c = contracts[0]
    b_kn = c.rhs.type.axis_names == (k, cols) or c.lhs.type.axis_names == (k, cols)  # type: ignore[attr-defined]
    halves = all(t.dtype in ("bf16", "f16") for f in funcs for t in f.function_type.outputs.data)  # type: ignore[attr-defined]
    return ProductShape(tuple(batch), rows, cols, k, len(contracts) == 1 and not batch and b_kn, len(contracts), halves)


def _autotile(module: ModuleOp, hw: str, target: str, pipeline: str, group: int = 0, attention: AttentionSpace | None = None):
    """The napkin model's choice of tiles for `target`, said on stderr and kept on the
    function; for attention, of napkin-sm90's configurations in the `attention` space."""
    import sys

    from napkin_ir.errors import UserError
    from napkin_ir.model.autotile import SearchSpace, autotile, autotile_attention

    try:
        if attention is not None:
            result = autotile_attention(module.clone(), hw, space=attention)
        else:
            result = autotile(module.clone(), hw, space=SearchSpace(target=target, block_sizes=(64, 128, 256), stream_sizes=(32, 64)
                                                                       if target == "sm80" else (64,), group=group))
    except UserError as e:
        raise PassFailedException(f"{pipeline}: autotile: {str(e).removeprefix('autotile: ')}") from None
    print(f"{pipeline}: autotile {result.reason}", file=sys.stderr)
    for f in module.walk():
        if isinstance(f, func.FuncOp) and f.body.blocks:
            f.attributes["ncd.autotile"] = StringAttr(result.reason)
    return result


def _fit(module: ModuleOp, axes: tuple[str, str, str], block: tuple[int, int, int], least: int = 16) -> tuple[int, int, int]:
    """The default block tile, halved along an axis shorter than it (down to `least`): a
    tile may not exceed its axis."""
    from napkin_ir.passes.relabel import function_axes

    (f,) = [op for op in module.walk() if isinstance(op, func.FuncOp) and op.body.blocks]
    sizes = function_axes(f)
    out = list(block)
    for n, axis in enumerate(axes):
        while out[n] > least and out[n] > sizes[axis]:
            out[n] //= 2
    return tuple(out)  # type: ignore[return-value]


def _fitting(module: ModuleOp, axes: tuple[str, str, str], block: tuple[int, int, int], pipeline: str) -> tuple[int, int, int]:
    """`block`, where no tile is longer than its axis: napkin-sm90's GEMM places every block's
    TMA boxes inside the output (a tile past the edge is attention's, whose rows are masked)."""
    from napkin_ir.passes.relabel import function_axes

    (f,) = [op for op in module.walk() if isinstance(op, func.FuncOp) and op.body.blocks]
    sizes = function_axes(f)
    for axis, tile in zip(axes, block):
        if tile > sizes[axis]:
            raise PassFailedException(f"{pipeline}: a tile of {tile} does not fit axis '{axis}' of size {sizes[axis]}: "
                                      "a GEMM's block tiles may not exceed their axes")
    return block


def _warps_for(block: tuple[int, int, int], outputs: int) -> tuple[int, int]:
    """The default warps (2 x 2), doubled along the columns, then the rows (up to 16 warps,
    each a multiple of 16 x 8), until each thread holds at most 128 accumulators for the
    block's `outputs` products."""
    wm, wn = 2, 2
    while outputs * block[0] * block[1] // (32 * wm * wn) > 128:
        if block[1] // (2 * wn) >= 8 and wm * wn < 16:
            wn *= 2
        elif block[0] // (2 * wm) >= 16 and wm * wn < 16:
            wm *= 2
        else:
            break
    return wm, wn


def _refuse(pipeline: str, what: str, given: dict[str, object]) -> None:
    """An error naming the options that `what` cannot honour, where any was given."""
    bad = [f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in given.items() if v]
    if bad:
        raise PassFailedException(f"{pipeline}: {', '.join(bad)} cannot be honoured for {what}")


@dataclass(frozen=True)
class NapkinSm80Pass(PipelinePass):
    """`napkin-sm80`: the whole way from a diagram to sm_80 PTX (cp.async, ldmatrix,
    mma.sync). A GEMM takes `block="128,128,32"` (rows, columns, stream), `warps="2,2"`
    (warps sharing the rows and the columns), `stages`; `autotile=true` lets the napkin
    model choose all three for `hw` (h100, h200, a100); `layout` the stages' layout
    (`swizzle`, `pad8`, or `auto`: swizzled where the tile's rows allow); `group` the
    block-row bands of the launch order (L2 reuse; 0 = plain). Attention (softmax, causal,
    spherical) takes `block="rows,keys"` (128,64 by default), `warps="n"` (rows / 16 by
    default) and `stages`; the model does not choose attention tiles on sm_80, and its
    stages are padded, launched head by head: `autotile`, `layout` and `group` are refused.
    Grouped-query attention (K and V without the query heads' axis of a group) packs a
    group's heads into a block's rows, a warp or more a head (`group_tiles`)."""

    name = "napkin-sm80"
    block: str = ""
    warps: str = ""
    stages: int = 3
    autotile: bool = False
    hw: str = "h100"
    layout: str = "auto"
    # plain by default: bands of block rows cut the GEMMs' DRAM traffic but measured no
    # faster, up to 5.4% slower (docs/benchmarks.md, "the launch order")
    group: int = 0

    def passes(self, module: ModuleOp) -> Sequence[ModulePass]:
        from napkin_ir.attention_diagrams import attention_axes, sm80_attention_pass_list

        if self.layout not in ("auto", "swizzle", "pad8", "row"):
            raise PassFailedException(f"{self.name}: layout must be auto, swizzle, pad8 or row, got '{self.layout}'")
        if self.group < 0:
            raise PassFailedException(f"{self.name}: group must be 0 (plain launch order) or a positive band height, got {self.group}")
        if attention_axes(module) is not None:
            _refuse(self.name, "attention on sm_80", {"autotile": self.autotile, "layout": self.layout if self.layout != "auto" else "",
                                                      "group": self.group})
            rows, keys = _ints(self.block, 2, "block", self.name, "for attention: query rows, keys") if self.block else (128, 64)
            warps = _ints(self.warps, 1, "warps", self.name, "for attention: the warps sharing the rows")[0] if self.warps else None
            return sm80_attention_pass_list(module, rows, keys, warps, self.stages)
        shape = product_shape(module)
        axes = (shape.rows, shape.cols, shape.k)
        if self.group and shape.batch:
            raise PassFailedException(f"{self.name}: group={self.group} orders a two-axis grid; this one has batch axes {list(shape.batch)}")
        if self.autotile:
            _refuse(self.name, "autotile=true (the model chooses them)", {"block": self.block, "warps": self.warps})
            if not shape.plain:
                raise PassFailedException(f"{self.name}: autotile=true chooses tiles for a plain GEMM only, for now; give block= and warps=")
            c = _autotile(module, self.hw, "sm80", self.name, self.group).config
            block = (c.grid[axes[0]], c.grid[axes[1]], c.stream[axes[2]])
            warps = (c.warps.get(axes[0], 1), c.warps.get(axes[1], 1))
            return sm80_gemm_passes(block, warps, c.stages, axes, self.layout, self.group)
        # a tile may be longer than its axis: the copies zero-fill what lies past the edge
        block = _ints(self.block, 3, "block", self.name, "for a GEMM: rows, columns, stream") if self.block \
            else _fit(module, axes, (128, 128, 32))
        warps = _ints(self.warps, 2, "warps", self.name, "for a GEMM: warps along the rows, the columns") if self.warps else \
            _warps_for(block, shape.outputs)  # type: ignore[arg-type]
        return sm80_gemm_passes(block, warps, self.stages, axes, self.layout, self.group, batch=shape.batch)  # type: ignore[arg-type]


@dataclass(frozen=True)
class NapkinSm90Pass(PipelinePass):
    """`napkin-sm90`: the whole way from a GEMM diagram to sm_90a PTX: TMA copies into
    128-byte swizzled stages, full/empty mbarrier rings, a producer warpgroup and
    `block[0] / 64` consumer warpgroups issuing wgmma m64nNk16 from shared memory.
    `block="128,256,64"` is the block tile (rows, columns, stream), `stages` the ring depth,
    `group` the block-row groups of the launch order (L2 reuse; 0 = plain), `blocks_per_sm`
    how many blocks share a multiprocessor, `persistent` (on by default) a grid of as many
    blocks as fit, each looping over tiles, `cluster=2` pairs of blocks sharing B's tiles by
    TMA multicast (on a plain grid: no group, no persistence), `store` how the output leaves
    (`tma`: stmatrix into shared memory and TMA stores that overlap the next tile; `direct`:
    from registers; `auto`: TMA where it fits). `autotile=true` lets the napkin model
    choose the block tile and the stages for `hw` (h100, h200); `block` is refused with it.
    Attention (softmax, causal, spherical) takes `block="rows,keys"` (128 query rows: two
    consumer warpgroups, or 192, three, at head dims up to 64 on a long stream; 176 keys a
    tile at head dims up to 128 where no mask cuts them or a causal stream is long and Q
    is not held in registers, 80 for
    a softmax's long stream at head dims over 128 (no packed query heads), else 128, 64 at
    head dims over 128: `sm90_attention_tiles`), `stages` (3 where they fit beside Q and
    the output's panels, else 2) and
    `blocks_per_sm` (the shared memory and registers shared out): Q, K and V by TMA (K and
    V released on rings of their own), S = Q K^T by wgmma (Q from shared memory or
    registers), P V by wgmma with P from registers, `overlap` running a tile's P V while
    the next tile's scores are made, `pingpong` the consumer warpgroups taking turns
    issuing products (both on by default), `q_registers` each warp's rows of Q loaded into
    registers once a tile and S = Q K^T by wgmma with A from them, a persistent block
    releasing Q's stage right after (by default at head dims from 64 up to 128 in blocks
    of up to 128 rows: a softmax then streams 128 keys a tile, which leave room for Q's
    registers; `q_registers_pay`). With `autotile=true` the model chooses among 64, 128
    and 192 query rows, 64, 128 and 176 keys, 2 and 3 stages, overlap and ping-pong on or off
    (`autotile_attention`: those over the shared memory or the consumers' registers set
    aside); `stages` given, `overlap=false`, `pingpong=false` and `blocks_per_sm` bound its
    search, and `block` is refused. `persistent` loops each block over query tiles in pairs
    of equal work (the longest with the shortest), its producer loading the next tile
    while the consumers finish the last; by default it is on where a block of up to 128
    rows streams 2048 keys of head dim 256 or fewer on average, or as much work in more
    keys of a smaller head dim (`persistent_pays`). `store=tma` writes attention's output by stmatrix and TMA
    stores, `direct` from registers; `auto` takes TMA stores where a panel stage fits
    beside two stages of K and V (`sm90_attention_tiles`). The other options
    (`group`, `cluster`) are refused for attention. Grouped-query attention packs a group's
    query heads into a block (its 128 rows 4 heads by 32 positions, 8 by 16; 192 rows, at
    d=64 on a long stream, 4 heads by 48), so each K and V tile is loaded once for them all.
    """

    name = "napkin-sm90"
    block: str = ""
    stages: int = 0  # the ring's depth: 4 for a GEMM, 2 for attention
    group: int = 8
    blocks_per_sm: int = 1
    persistent: bool | None = None  # None: on for a GEMM; for attention, where its streams are short
    cluster: int = 1
    store: str = "auto"
    autotile: bool = False
    hw: str = "h100"
    overlap: bool = True
    pingpong: bool = True
    q_registers: bool | None = None  # None: where it pays (`q_registers_pay`)

    def passes(self, module: ModuleOp) -> Sequence[ModulePass]:
        from napkin_ir.attention_diagrams import attention_axes, persistent_pays, sm90_attention_pass_list

        if attention_axes(module) is not None:
            rows, keys = _ints(self.block, 2, "block", self.name, "for attention: query rows, keys") if self.block else (0, 0)
            persistent = persistent_pays(module, rows) if self.persistent is None else self.persistent
            _refuse(self.name, "attention on sm_90a", {"group": self.group if self.group != 8 else 0,
                                                       "cluster": self.cluster if self.cluster != 1 else 0})
            if self.store not in ("auto", "tma", "direct"):
                raise PassFailedException(f"{self.name}: store must be auto, tma or direct, got '{self.store}'")
            if self.autotile:
                from napkin_ir.model.autotile import AttentionSpace

                _refuse(self.name, "autotile=true (the model chooses it)", {"block": self.block})
                # stages given, overlap or ping-pong turned off, and the blocks an SM bound the search
                space = AttentionSpace(stages=(self.stages,) if self.stages else (2, 3), overlap=(True, False) if self.overlap else (False,),
                                       pingpong=(True, False) if self.pingpong else (False,), blocks_per_sm=self.blocks_per_sm,
                                       persistent=persistent, store=self.store, q_registers=self.q_registers)
                return _autotile(module, self.hw, "sm90", self.name, attention=space).config.passes(module)
            return sm90_attention_pass_list(module, rows or None, keys or None, self.stages, self.overlap, self.pingpong, self.blocks_per_sm,
                                            persistent, self.store, self.q_registers)
        shape = product_shape(module, self.name)
        if not self.overlap or not self.pingpong:
            raise PassFailedException(f"{self.name}: overlap=false and pingpong=false order attention's products; a GEMM's "
                                      "pipeline always overlaps")
        if shape.batch and self.store == "tma":
            raise PassFailedException(f"{self.name}: store=tma writes 2-D tiles; a batched product's (batch axes {list(shape.batch)}) "
                                      "are stored directly: use store=direct or auto")
        axes = (shape.rows, shape.cols, shape.k)
        if self.store not in ("auto", "tma", "direct"):
            raise PassFailedException(f"{self.name}: store must be auto, tma or direct, got '{self.store}'")
        block = _fitting(module, axes, _ints(self.block, 3, "block", self.name, "rows, columns, stream") if self.block
                         else _fit(module, axes, (128, 256, 64), 64), self.name)
        stages = self.stages or _sm90_stages(block, shape.outputs)  # type: ignore[arg-type]
        if self.autotile:
            _refuse(self.name, "autotile=true (the model chooses it)", {"block": self.block})
            c = _autotile(module, self.hw, "sm90", self.name, 0 if self.cluster > 1 else self.group).config
            block, stages = (c.grid[axes[0]], c.grid[axes[1]], c.stream[axes[2]]), c.stages
        plain = self.cluster > 1  # clusters run a plain grid: no group order, no persistence
        if shape.batch and self.cluster > 1:
            raise PassFailedException(f"{self.name}: cluster={self.cluster} shares B's tiles between two blocks of a 2-D grid; "
                                      f"this one has batch axes {list(shape.batch)}")
        group = 0 if shape.batch else self.group  # bands of block rows order a 2-D grid
        store = self.store
        if not shape.half_output:  # stmatrix moves 16-bit elements
            if store == "tma":
                raise PassFailedException(f"{self.name}: store=tma writes bf16 or f16 outputs (stmatrix); this one is f32: use store=direct")
            store = "direct"
        return sm90_gemm_passes(block, stages, axes, 0 if plain else group, self.blocks_per_sm,  # type: ignore[arg-type]
                                self.persistent is not False and not plain, self.cluster, store, shape.batch, shape.outputs)


def _sm90_stages(block: tuple[int, int, int], outputs: int) -> int:
    """4 stages, or fewer (2 at the least) where `outputs` products' stages would not fit."""
    bm, bn, bk = block
    stages = 4
    while stages > 2 and stages * (bm * bk + outputs * bk * bn) * 2 > 227 * 1024 - 1024:
        stages -= 1
    return stages
