"""Named pipelines and the in-process way to run them: text in, PTX (or IR) out.

`napkin-opt -p ...` and Python users share this: `compile_to_ptx(text, "convert-arith-to-ptx")`
parses, verifies, runs the pipeline (xDSL's spec syntax, napkin's and xDSL's passes) and
prints PTX. The whole-way pipelines `napkin-sm80` and `napkin-sm90` join here as the levels
between `ncd` and `ptx` land.
"""

from __future__ import annotations

import io

from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.passes import PassPipeline
from xdsl.universe import Universe

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import StringAttr
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from napkin_ir import registry


def available_passes() -> dict:
    return {**Universe.get_multiverse().all_passes, **registry.napkin_passes()}


def run_pipeline(text: str, pipeline: str = "", *, name: str = "<input>") -> ModuleOp:
    ctx = registry.make_context()
    module = Parser(ctx, text, name).parse_module()
    module.verify()
    PassPipeline.parse_spec(available_passes(), pipeline, lambda *_: None).apply(ctx, module)
    module.verify()
    return module


def compile_to_ptx(text: str, pipeline: str = "", *, arch: str | None = None, name: str = "<input>") -> str:
    from napkin_ir.dialects.ptx.printer import print_ptx

    out = io.StringIO()
    print_ptx(run_pipeline(text, pipeline, name=name), out, arch)
    return out.getvalue()


def sm80_gemm_pipeline(block: tuple[int, int, int] = (128, 128, 32), warps: tuple[int, int] = (2, 2), stages: int = 3,
                       axes: tuple[str, str, str] = ("m", "n", "k"), layout: str = "auto", group: int = 0,
                       unroll: bool = False) -> str:
    """The pass pipeline from a labelled-able GEMM diagram to sm_80 PTX (the start of napkin-sm80).
    `layout="auto"` swizzles the stages where their rows allow it (64 bytes or a multiple of
    128: A's rows are the stream tile, B's the column tile), else pads them (`pad8`).
    `group` launches the blocks in bands of that many block rows, column by column
    (`hbm-launch{group=G}`: the tiles the blocks running at once read stay in the L2); 0 the
    plain order, the first axis fastest. `unroll` unrolls the stream loop and loads
    fragments a step ahead as passes (`smem-unroll-stages`, `reg-prefetch`), so that
    `reg-to-ptx` lowers the kernel op by op instead of emitting it whole."""
    (m, n, k), (bm, bn, bk) = axes, block
    if layout == "auto":
        from napkin_ir.dialects.smem import swizzle_fits

        layout = "swizzle" if swizzle_fits(2 * bk) and swizzle_fits(2 * bn) else "pad8"
    launch = f"hbm-launch{{group={group}}}," if group else ""
    return (f'ncd-relabel{{grid="{m}:{bm},{n}:{bn}" stream="{k}:{bk}"}},ncd-to-hbm,{launch}'
            f'hbm-to-smem{{stages={stages} layout={layout}}},smem-to-reg{{warps="{m}:{warps[0]},{n}:{warps[1]}"}},'
            + ("smem-unroll-stages,reg-prefetch," if unroll else "") + 'reg-to-ptx')


def sm90_gemm_pipeline(block: tuple[int, int, int] = (128, 256, 64), stages: int = 4,
                       axes: tuple[str, str, str] = ("m", "n", "k"), group: int = 0, blocks_per_sm: int = 1,
                       persistent: bool = False, cluster: int = 1, store: str = "auto") -> str:
    """The pass pipeline from a GEMM diagram to sm_90a PTX (TMA, mbarriers, wgmma; napkin-sm90).
    `store="tma"` writes the output through shared memory with TMA stores, `"direct"` from
    registers to global memory; `"auto"` takes TMA stores where their two-stage panel buffer
    (rows x 64 x 2 bytes, twice) fits beside the stages, as it is faster (docs/benchmarks.md)."""
    (m, n, k), (bm, bn, bk) = axes, block
    smem_budget = 227 * 1024 // blocks_per_sm - 1024 - 8 * 2 * stages  # the alignment slack and barriers
    if store == "auto":
        staged = stages * (bm * bk + bk * bn) * 2 + 2 * bm * 64 * 2
        store = "tma" if bn % 64 == 0 and staged <= smem_budget else "direct"
    return (f'ncd-relabel{{grid="{m}:{bm},{n}:{bn}" stream="{k}:{bk}"}},ncd-to-hbm,hbm-launch{{group={group} blocks_per_sm={blocks_per_sm} persistent={str(persistent).lower()} cluster={cluster}}},'
            f'hbm-to-smem{{stages={stages} copy=tma store={store} smem_bytes={smem_budget}}},smem-to-reg{{mma=wgmma}},reg-to-ptx')


def launch_config(module: ModuleOp) -> dict[str, object]:
    """Kernel name, grid, block and dynamic shared memory of the (one) compiled kernel."""
    from napkin_ir.dialects.ptx.ops import KernelOp

    (kernel,) = [op for op in module.walk() if isinstance(op, KernelOp)]
    grid = [a.value.data for a in kernel.attributes["napkin.grid"].data]  # type: ignore[union-attr]
    threads = kernel.reqntid or kernel.maxntid
    block = [a.value.data for a in threads.data] if threads else [1]
    smem = kernel.attributes["napkin.smem_bytes"].value.data  # type: ignore[union-attr]
    tma = [a.data for a in kernel.attributes["napkin.tma"].data] if "napkin.tma" in kernel.attributes else []  # type: ignore[union-attr]
    return {"name": kernel.sym_name.data, "grid": grid, "block": block, "smem": smem, "tma": tma}


def _ints(text: str, n: int, what: str, pipeline: str = "napkin-sm80") -> tuple[int, ...]:
    try:
        vals = tuple(int(x) for x in text.split(","))
    except ValueError:
        vals = ()
    if len(vals) != n or min(vals) <= 0:
        raise PassFailedException(f"{pipeline}: {what}=\"{text}\" should be {n} positive integers separated by commas")
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


def _autotile(module: ModuleOp, hw: str, target: str, pipeline: str, group: int = 0):
    """The napkin model's choice of tiles for `target`, said on stderr and kept on the function."""
    import sys

    from napkin_ir.errors import UserError
    from napkin_ir.model.autotile import SearchSpace, autotile

    try:
        result = autotile(module.clone(), hw, space=SearchSpace(target=target, block_sizes=(64, 128, 256), stream_sizes=(32, 64)
                                                                   if target == "sm80" else (64,), group=group))
    except UserError as e:
        raise PassFailedException(f"{pipeline}: autotile: {e}") from None
    print(f"{pipeline}: autotile {result.reason}", file=sys.stderr)
    for f in module.walk():
        if isinstance(f, func.FuncOp) and f.body.blocks:
            f.attributes["ncd.autotile"] = StringAttr(result.reason)
    return result


@dataclass(frozen=True)
class NapkinSm80Pass(ModulePass):
    """`napkin-sm80`: the whole way from a GEMM diagram to sm_80 PTX (cp.async, ldmatrix,
    mma.sync). `block="128,128,32"` is the block tile (rows, columns, stream), `warps="2,2"`
    how many warps share the rows and the columns, `stages` the pipeline depth;
    `autotile=true` lets the napkin model choose all three for `hw` (h100, h200, a100);
    `layout` the stages' layout (`swizzle`, `pad8`, or `auto`: swizzled where the tile's
    rows allow); `group` the block-row bands of the launch order (L2 reuse; 0 = plain).
    Attention diagrams (softmax, causal, spherical) take `block="rows,keys"` (128,64 by
    default), `warps="n"` (rows / 16 by default) and `stages`."""

    name = "napkin-sm80"
    block: str = "128,128,32"
    warps: str = "2,2"
    stages: int = 3
    autotile: bool = False
    hw: str = "h100"
    layout: str = "auto"
    # plain by default: bands of block rows cut the GEMMs' DRAM traffic but measured no
    # faster, up to 5.4% slower (docs/benchmarks.md, "the launch order")
    group: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from napkin_ir.attention_diagrams import attention_axes, sm80_attention_passes

        if attention_axes(op) is not None:  # block="rows,keys", warps="n" (rows / 16 by default)
            rows, keys = _ints(self.block, 2, "block") if self.block.count(",") == 1 else (128, 64)
            warps = _ints(self.warps, 1, "warps")[0] if "," not in self.warps else None
            spec = sm80_attention_passes(op, rows, keys, warps, self.stages)
            PassPipeline.parse_spec(available_passes(), f"{spec},reg-to-ptx", lambda *_: None).apply(ctx, op)
            return
        axes = gemm_axes(op)
        if self.group < 0:
            raise PassFailedException(f"{self.name}: group must be 0 (plain launch order) or a positive band height, got {self.group}")
        if self.layout not in ("auto", "swizzle", "pad8", "row"):
            raise PassFailedException(f"{self.name}: layout must be auto, swizzle, pad8 or row, got '{self.layout}'")
        if self.autotile:
            result = _autotile(op, self.hw, "sm80", self.name, self.group)
            c = result.config
            block = (c.grid[axes[0]], c.grid[axes[1]], c.stream[axes[2]])
            warps = (c.warps.get(axes[0], 1), c.warps.get(axes[1], 1))
            spec = sm80_gemm_pipeline(block, warps, c.stages, axes, self.layout, self.group)
        else:
            block = _ints(self.block, 3, "block")
            warps = _ints(self.warps, 2, "warps")
            spec = sm80_gemm_pipeline(block, warps, self.stages, axes, self.layout, self.group)  # type: ignore[arg-type]
        PassPipeline.parse_spec(available_passes(), spec, lambda *_: None).apply(ctx, op)


@dataclass(frozen=True)
class NapkinSm90Pass(ModulePass):
    """`napkin-sm90`: the whole way from a GEMM diagram to sm_90a PTX: TMA copies into
    128-byte swizzled stages, full/empty mbarrier rings, a producer warpgroup and
    `block[0] / 64` consumer warpgroups issuing wgmma m64nNk16 from shared memory.
    `block="128,256,64"` is the block tile (rows, columns, stream), `stages` the ring depth,
    `group` the block-row groups of the launch order (L2 reuse; 0 = plain), `blocks_per_sm`
    how many blocks share a multiprocessor, `persistent` (on by default) a grid of as many
    blocks as fit, each looping over tiles, `cluster=2` pairs of blocks sharing B's tiles by
    TMA multicast (on a plain grid: no group, no persistence), `store` how the output leaves (`tma`: stmatrix into shared memory and TMA stores that
    overlap the next tile; `direct`: from registers; `auto`: TMA where it fits)."""

    name = "napkin-sm90"
    block: str = "128,256,64"
    stages: int = 4
    group: int = 8
    blocks_per_sm: int = 1
    persistent: bool = True
    cluster: int = 1
    store: str = "auto"
    autotile: bool = False
    hw: str = "h100"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        axes = gemm_axes(op, self.name)
        block, stages = _ints(self.block, 3, "block", self.name), self.stages
        if self.autotile:
            c = _autotile(op, self.hw, "sm90", self.name, 0 if self.cluster > 1 else self.group).config
            block, stages = (c.grid[axes[0]], c.grid[axes[1]], c.stream[axes[2]]), c.stages
        if self.store not in ("auto", "tma", "direct"):
            raise PassFailedException(f"{self.name}: store must be auto, tma or direct, got '{self.store}'")
        plain = self.cluster > 1  # clusters run a plain grid: no group order, no persistence
        spec = sm90_gemm_pipeline(block, stages, axes, 0 if plain else self.group, self.blocks_per_sm,  # type: ignore[arg-type]
                                  self.persistent and not plain, self.cluster, self.store)
        PassPipeline.parse_spec(available_passes(), spec, lambda *_: None).apply(ctx, op)
