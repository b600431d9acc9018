"""Choosing labels and tile sizes by the napkin model.

`autotile(module, hw)` reads the roles of a diagram's axes off its ncd function, not off
a list of known examples: output axes that no contraction sums over are cut into block
tiles (a GEMM's m and n, attention's queries i), output axes shared by both operands of
every contraction that has them are batch axes with one block per index (attention's b
and h), output axes some contraction sums over stay whole (attention's head dim d, which
the scores contract), and axes that are reduced and not output are streamed (k; the keys
j). Each candidate (block tiles, stream tile, warps over the tiled axes, pipeline stages)
is lowered as far as the passes go (`ncd-relabel`, `ncd-to-hbm`, `hbm-to-smem`,
`smem-to-reg`), analysed at the deepest level reached and predicted on `hw`; those over
the shared-memory or register budget are set aside with the reason. The fastest
prediction wins; near-ties (within `TIE_TOLERANCE`) go to fewer HBM bytes, then to more
stages (more latency hidden than the model sees).

A recipe whose plans are not labels alone searches its own space with the same judge and
ranking (`recipes.attention.autotile_attention`: napkin-sm90's attention configurations).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.utils.exceptions import PassFailedException, VerifyException

from napkin_ir.dialects import ncd
from napkin_ir.errors import UserError
from napkin_ir.model.analysis import KernelCost, analyse_module
from napkin_ir.model.hardware import Hardware, hardware
from napkin_ir.model.registers import SPILL_SLACK
from napkin_ir.model.timing import BOUND_NAMES, Prediction, predict, register_budget
from napkin_ir.passes.composite import run_passes, spec
from napkin_ir.plan.kernel_plan import CopyEngine, KernelPlan, Launch, ProductEngine, SmemLayout
from napkin_ir.progress import ProgressLine
from napkin_ir.target import SM80, SM90

TIE_TOLERANCE = 0.01
LEVELS = ("hbm", "smem", "reg")


@dataclass(frozen=True)
class SearchSpace:
    block_sizes: tuple[int, ...] = (64, 128, 256)
    stream_sizes: tuple[int, ...] = (32, 64)
    stages: tuple[int, ...] = (2, 3, 4)
    warp_counts: tuple[int, ...] = (4, 8)
    min_warp_tile: int = 16  # a warp's share of a tiled axis: a multiple of the mma's 16
    layout: str = "pad8"
    # sm80: cp.async copies and mma.sync, warps searched; sm90: TMA copies and wgmma, the
    # warpgroups chosen by smem-to-reg
    target: str = "sm80"
    group: int = 0  # the launch order every candidate gets (hbm-launch{group=G}; 0 = plain)


@dataclass(frozen=True)
class AxisRoles:
    sizes: dict[str, int]
    tiled: tuple[str, ...]  # output axes cut into block tiles
    batch: tuple[str, ...]  # output axes with one block per index
    whole: tuple[str, ...]  # output axes kept whole in every block
    streamed: tuple[str, ...]  # reduced axes, streamed through the block


@dataclass(frozen=True)
class TileConfig:
    grid: dict[str, int]
    stream: dict[str, int]
    warps: dict[str, int]
    stages: int
    layout: str = "pad8"
    target: str = "sm80"
    group: int = 0

    def plan(self) -> KernelPlan:
        """The kernel plan of this configuration (its grid axes in the order given)."""
        stream = next(iter(self.stream.items()), None)
        sm90 = self.target == "sm90"
        return KernelPlan("autotile", SM90 if sm90 else SM80, grid=tuple(self.grid.items()),
                          stream=stream, stages=self.stages, copy=CopyEngine.TMA if sm90 else CopyEngine.CP_ASYNC,
                          product=ProductEngine.WGMMA if sm90 else ProductEngine.MMA_SYNC,
                          layout=None if sm90 else SmemLayout(self.layout), warps=tuple(self.warps.items()),
                          launch=Launch(group=self.group))

    def passes(self, level: str = "reg") -> tuple:
        """The passes from the ncd function down to `level` with this configuration."""
        return self.plan().passes(level)

    def pipeline(self, level: str = "reg") -> str:
        """`passes` as a pipeline spec."""
        return spec(self.passes(level))

    def describe(self) -> str:
        warps = f", warps {_labels(self.warps)}" if self.warps else ""
        group = f", launched in bands of {self.group} block rows" if self.group else ""
        return f"grid {_labels(self.grid)}, stream {_labels(self.stream)}{warps}, {self.stages} stages{group}"


@dataclass
class Candidate:
    config: Any  # TileConfig, or a recipe's own configuration (stages, describe(), plan(module))
    level: str = ""
    cost: KernelCost | None = None
    prediction: Prediction | None = None
    rejected: str | None = None


@dataclass
class AutotileResult:
    config: Any  # TileConfig, or a recipe's own configuration (stages, describe(), plan(module))
    level: str
    cost: KernelCost
    prediction: Prediction
    reason: str
    candidates: list[Candidate] = field(default_factory=list)


def _labels(labels: dict[str, int]) -> str:
    return ",".join(f"{a}:{t}" for a, t in labels.items())


# --------------------------------------------------------------------------------------
# the roles of the axes
# --------------------------------------------------------------------------------------


def the_function(module: ModuleOp) -> func.FuncOp:
    funcs = [f for f in module.walk() if isinstance(f, func.FuncOp) and f.body.blocks]
    if len(funcs) != 1:
        raise UserError(f"autotile: expects one ncd function, found {len(funcs)}")
    return funcs[0]


def axis_roles(f: func.FuncOp) -> AxisRoles:
    sizes: dict[str, int] = {}
    for v in [*f.body.block.args, *(r for op in f.body.walk() for r in op.results)]:
        if isinstance(v.type, ncd.TensorType):
            sizes.update(v.type.shape)
    outputs = [a for t in f.function_type.outputs.data if isinstance(t, ncd.TensorType) for a in t.axis_names]
    contracts = [op for op in f.body.walk() if isinstance(op, ncd.ContractOp)]
    summed = {a for c in contracts for a in c.over_axes}
    reduced = summed | {op.axis.data for op in f.body.walk() if isinstance(op, ncd.AlongOneAxisOp)}
    reduced |= {a for op in f.body.walk() if isinstance(op, ncd.ReduceOp) for a in op.along_axes}

    def is_batch(a: str) -> bool:
        having = [c for c in contracts if a in c.result.type.shape]  # type: ignore[attr-defined]
        return bool(having) and all(a in c.lhs.type.shape and a in c.rhs.type.shape for c in having)  # type: ignore[attr-defined]

    out = list(dict.fromkeys(outputs))
    whole = tuple(a for a in out if a in summed)
    batch = tuple(a for a in out if a not in whole and is_batch(a))
    tiled = tuple(a for a in out if a not in whole and a not in batch)
    streamed = tuple(a for a in sizes if a in reduced and a not in out)
    return AxisRoles(sizes, tiled, batch, whole, streamed)


# --------------------------------------------------------------------------------------
# candidates
# --------------------------------------------------------------------------------------


def _tile_choices(size: int, choices: Sequence[int]) -> list[int]:
    fitting = [t for t in choices if t <= size]
    return fitting or [size]


def _warp_choices(grid: dict[str, int], axes: Sequence[str], space: SearchSpace) -> Iterator[dict[str, int]]:
    if space.target == "sm90":  # smem-to-reg gives each 64 rows a warpgroup
        yield {}
        return
    for total in space.warp_counts:
        for split in itertools.product(*(_divisors(total) for _ in axes)):
            warps = dict(zip(axes, split))
            if _product(split) == total and all(grid[a] % n == 0 and grid[a] // n % space.min_warp_tile == 0 for a, n in warps.items()):
                yield warps


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def _product(xs: Sequence[int]) -> int:
    p = 1
    for x in xs:
        p *= x
    return p


def _label_choices(roles: AxisRoles, space: SearchSpace) -> Iterator[tuple[dict[str, int], dict[str, int]]]:
    tiles = [_tile_choices(roles.sizes[a], space.block_sizes) for a in roles.tiled]
    streams = [(s, t) for s in roles.streamed for t in _tile_choices(roles.sizes[s], space.stream_sizes)] or [None]
    for combo in itertools.product(*tiles):
        grid = {**dict(zip(roles.tiled, combo)), **{a: 1 for a in roles.batch}}
        for st in streams:
            yield grid, ({st[0]: st[1]} if st else {})


# --------------------------------------------------------------------------------------
# lowering and predicting each candidate
# --------------------------------------------------------------------------------------


def _apply(module: ModuleOp, passes: tuple) -> ModuleOp:
    out = module.clone()
    run_passes(Context(), out, passes)
    out.verify()
    return out


def _lowered(module: ModuleOp, passes: tuple) -> tuple[ModuleOp | None, str | None]:
    try:
        return _apply(module, passes), None
    except (PassFailedException, VerifyException, UserError) as e:
        return None, str(e).strip().splitlines()[0]


def _level(cfg: TileConfig, level: str) -> tuple:
    """The passes that take `cfg`'s kernel from the level above `level` to it."""
    above = {"smem": "hbm", "reg": "smem"}.get(level)
    return cfg.passes(level)[len(cfg.passes(above)) if above else 0:]


def judge(cand: Candidate, module: ModuleOp, level: str, hw: Hardware, instruction: str | None) -> Candidate:
    cand.level = level
    try:
        (cost,) = analyse_module(module).kernels
        cand.cost = cost
        budget = register_budget(cost, hw)
        if cost.registers and cost.registers.total > budget + (SPILL_SLACK if cost.producer_warps else 0):
            whom = f"consumer thread, over the {budget} setmaxnreg gives the consumers" if cost.producer_warps else \
                f"thread, over the {budget} a thread may have"
            cand.rejected = f"registers: about {cost.registers.total} per {whom}"
            return cand
        cand.prediction = predict(cost, hw, instruction=instruction)
    except UserError as e:
        cand.rejected = str(e)
    return cand


def _step(module: ModuleOp, cfg: TileConfig, passes: tuple, level: str) -> tuple[ModuleOp | None, Candidate | None]:
    """`module` lowered by `passes`, or the candidate set aside with the pass's reason."""
    out, why = _lowered(module, passes)
    return out, None if out is not None else Candidate(cfg, level, rejected=f"does not lower: {why}")


def _candidates(fmodule: ModuleOp, roles: AxisRoles, hw: Hardware, space: SearchSpace, instruction: str | None) -> Iterator[Candidate]:
    group = space.group if len(roles.tiled) == 2 and not roles.batch else 0  # grouping orders a two-axis grid
    for grid, stream in _label_choices(roles, space):
        first = TileConfig(grid, stream, {}, space.stages[0], space.layout, space.target, group)
        hbm_mod, refused = _step(fmodule, first, _level(first, "hbm"), "ncd")
        if hbm_mod is None:
            yield refused  # type: ignore[misc]
            continue
        smem_lowered = False
        for stages in space.stages:
            cfg = replace(first, stages=stages)
            smem_mod, refused = _step(hbm_mod, cfg, _level(cfg, "smem"), "smem")
            smem_lowered |= smem_mod is not None
            yield from [refused] if smem_mod is None else _below_smem(smem_mod, cfg, roles, hw, space, instruction)  # type: ignore[list-item]
        if not smem_lowered:  # the smem level does not take this kernel yet: judge it at the hbm level
            yield judge(Candidate(first), hbm_mod, "hbm", hw, instruction)


def _below_smem(smem_mod: ModuleOp, cfg: TileConfig, roles: AxisRoles, hw: Hardware, space: SearchSpace,
                instruction: str | None) -> Iterator[Candidate]:
    """Each warp split judged at the reg level; the smem level itself if none lowers."""
    reg_lowered = False
    for warps in _warp_choices(cfg.grid, roles.tiled, space):
        wcfg = replace(cfg, warps=warps)
        reg_mod, refused = _step(smem_mod, wcfg, _level(wcfg, "reg"), "reg")
        reg_lowered |= reg_mod is not None
        yield refused if reg_mod is None else judge(Candidate(wcfg), reg_mod, "reg", hw, instruction)  # type: ignore[misc]
    if not reg_lowered:
        yield judge(Candidate(cfg), smem_mod, "smem", hw, instruction)


def count_candidates(roles: AxisRoles, space: SearchSpace) -> int:
    """How many candidates the search judges at most (fewer where a labelling does not lower)."""
    return sum(len(space.stages) * max(1, sum(1 for _ in _warp_choices(grid, roles.tiled, space)))
               for grid, _ in _label_choices(roles, space))


Progress = Callable[[int, int, Candidate], None]


def search(candidates: Iterator[Candidate], at_most: int, progress: Progress | None) -> list[Candidate]:
    """Every candidate, each reported as it is judged."""
    line = ProgressLine("autotile") if progress is None else None
    best: Candidate | None = None
    out: list[Candidate] = []
    try:
        for c in candidates:
            out.append(c)
            if progress is not None:
                progress(len(out), at_most, c)
                continue
            if c.prediction and (best is None or c.prediction.seconds < best.prediction.seconds):  # type: ignore[union-attr]
                best = c
            fastest = f"; fastest so far {best.config.describe()}, {best.prediction.seconds * 1e6:.1f} us" if best else ""  # type: ignore[union-attr]
            line.update(f"{len(out)} of at most {at_most} candidates judged{fastest}")  # type: ignore[union-attr]
    finally:
        if line is not None:
            line.close()
    return out


def preference(seconds: float, best: float, hbm_bytes: float, stages: int, spill_smem: int | None = None,
               tma_stores: bool = False) -> tuple:
    """Sort key of a candidate predicted at `seconds` when the fastest prediction is `best`:
    the faster first, except that near-ties (within `TIE_TOLERANCE`) go to fewer HBM bytes
    (the napkin count), then to outputs stored by the TMA (`tma_stores`: the model counts
    the same bytes either way, not the epilogue's exposed time), then to more stages; but
    where the candidate spills registers (`spill_smem`: its shared memory), to less shared
    memory, which leaves the L1 that holds the spills more room. The gradient's one kernel
    at d=64, 128 queries a tile, 44 bytes spilled: two stages 1.09x three at 4k without a
    mask, within 2% causal and at 16k; the gradient's dQ and dK/dV kernels at d=128 over
    1k tokens: two stages with TMA stores 1.09-1.17x three whose outputs leave from
    registers (H200, research/benchmarks.md 2026-11-29)."""
    near = seconds <= best * (1 + TIE_TOLERANCE)
    return (not near, seconds if not near else 0.0, hbm_bytes, not tma_stores, -stages if spill_smem is None else spill_smem,
            seconds)


def _rank_key(c: Candidate, best: float) -> tuple:
    assert c.prediction is not None and c.cost is not None
    spills = c.cost.registers is not None and c.cost.registers.total > register_budget(c.cost, c.prediction.hardware)
    return preference(c.prediction.seconds, best, c.cost.hbm_bytes, c.config.stages, c.cost.smem_per_block if spills else None,
                      c.cost.tma_stores)


def autotile(module: ModuleOp | str, hw: Hardware | str = "h100", *, space: SearchSpace = SearchSpace(),
             instruction: str | None = None, progress: Progress | None = None) -> AutotileResult:
    """Pick the labels, tiles, warps and stages that minimise the predicted time of the one
    ncd function in `module` (text or a parsed module) on `hw`. `progress(judged, at_most,
    candidate)` is called after each candidate; by default a progress line on stderr says
    how far the search is, where stderr is a terminal."""
    hw = hardware(hw) if isinstance(hw, str) else hw
    module = parsed(module)
    roles = axis_roles(the_function(module))
    if not roles.tiled and not roles.batch:
        raise UserError("autotile: the function's output has no axis to spread over the grid")
    cands = search(_candidates(module, roles, hw, space, instruction), count_candidates(roles, space), progress)
    return chosen(cands, roles)


def parsed(module: ModuleOp | str) -> ModuleOp:
    if isinstance(module, str):
        from xdsl.parser import Parser

        from napkin_ir.dialects.context import make_context

        ctx = make_context()
        module = Parser(ctx, module).parse_module()
        module.verify()
    return module


def chosen(cands: list[Candidate], roles: AxisRoles) -> AutotileResult:
    """The fastest predicted candidate of those judged at the deepest level any reached
    (ties broken by `_rank_key`), with the reason; an error where none was judged."""
    deepest = max((LEVELS.index(c.level) for c in cands if c.prediction), default=None)
    if deepest is None:
        reasons = sorted({c.rejected for c in cands if c.rejected})
        raise UserError(f"autotile: none of {len(cands)} candidates fits or lowers: {'; '.join(reasons[:3])}")
    ok = [c for c in cands if c.prediction and LEVELS.index(c.level) == deepest]
    best = min(c.prediction.seconds for c in ok)  # type: ignore[union-attr]
    ranked = sorted(ok, key=lambda c: _rank_key(c, best))
    win = ranked[0]
    assert win.prediction is not None and win.cost is not None
    return AutotileResult(win.config, win.level, win.cost, win.prediction, _reason(win, ranked, cands, roles), cands)


def _reason(win: Candidate, ranked: list[Candidate], cands: list[Candidate], roles: AxisRoles) -> str:
    p = win.prediction
    assert p is not None
    o = p.occupancy
    text = (f"chose {win.config.describe()}: predicted {p.seconds * 1e6:.1f} us on the {p.hardware.name}, bound by "
            f"{BOUND_NAMES[p.bound]}, {o.describe()}, judged at the {win.level} level")
    slower = [c for c in ranked[1:] if c.prediction and c.prediction.seconds > p.seconds * (1 + TIE_TOLERANCE)]
    if slower:
        r = slower[0]
        text += (f"; the next best, {r.config.describe()}, is {(r.prediction.seconds / p.seconds - 1) * 100:.0f}% slower "  # type: ignore[union-attr]
                 f"(bound by {BOUND_NAMES[r.prediction.bound]})")  # type: ignore[union-attr]
    rejected = sum(1 for c in cands if c.rejected)
    text += f"; {len(cands)} candidates, {rejected} set aside (over a budget or not lowering)"
    if roles.batch or roles.whole:
        text += f"; one block per {', '.join(roles.batch) or '-'}; kept whole: {', '.join(roles.whole) or '-'}"
    return text


# --------------------------------------------------------------------------------------
# the named pipelines' use: the choice said on stderr and kept on the function
# --------------------------------------------------------------------------------------


def announce(module: ModuleOp, pipeline: str, search: Callable[[], AutotileResult]) -> AutotileResult:
    """`search()`'s choice, said on stderr and kept on the function (`ncd.autotile`); its
    error in the pipeline's name."""
    import sys

    try:
        result = search()
    except UserError as e:
        raise PassFailedException(f"{pipeline}: autotile: {str(e).removeprefix('autotile: ')}") from None
    print(f"{pipeline}: autotile {result.reason}", file=sys.stderr)
    for f in module.walk():
        if isinstance(f, func.FuncOp) and f.body.blocks:
            f.attributes["ncd.autotile"] = StringAttr(result.reason)
    return result


def chosen_tiles(module: ModuleOp, hw: str, target: str, pipeline: str, group: int = 0) -> TileConfig:
    """The model's choice of a GEMM's tiles for `target` (sm80: tiles of 64 to 256 rows and
    columns, streams of 32 or 64, warps searched; sm90: streams of 64)."""
    space = SearchSpace(target=target, block_sizes=(64, 128, 256), stream_sizes=(32, 64) if target == "sm80" else (64,), group=group)
    return announce(module, pipeline, lambda: autotile(module.clone(), hw, space=space)).config  # type: ignore[return-value]
