"""How far napkin-draw lowers a module: the level a module is at, and the module at a level.

A picture is drawn at one level (`ncd`, `hbm`, `smem`, `reg`). `napkin-draw -p PIPELINE`
runs the named passes and, with `--level`, keeps the module as it stood when the last
pass that left it at that level finished; the passes an umbrella pass (`napkin-sm80`)
runs inside are seen one by one, so `-p napkin-sm80 --level reg` stops above PTX. With
`--level` alone the napkin model chooses the labels (`napkin_ir.plan.autotile`), as
`ncd-relabel` does without options. Either way the labelled diagram is kept beside the
lowered module: the hbm, smem and reg pictures draw the diagram the kernel computes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline

from napkin_ir import registry
from napkin_ir.dialects import hbm
from napkin_ir.errors import UserError

LEVELS = ("ncd", "hbm", "smem", "reg", "ptx")
DRAWN = LEVELS[:-1]


def module_level(module: ModuleOp) -> str:
    """The deepest level any op of `module` belongs to (`ncd` for a module of functions)."""
    names = {op.dialect_name() for op in module.walk()}
    for level in reversed(LEVELS[1:]):
        if level in names:
            return level
    if any(isinstance(op, hbm.KernelOp) for op in module.walk()):
        return "hbm"
    return "ncd"


def diagram_functions(module: ModuleOp) -> list[func.FuncOp]:
    return [f for f in module.walk() if isinstance(f, func.FuncOp) and f.body.blocks]


@dataclass
class Lowered:
    """The module to draw, at `level`, and the ncd module it came from (labelled where a
    pass labelled it; None when the input was already below the ncd level)."""

    module: ModuleOp
    level: str
    diagram: ModuleOp | None
    how: str = ""  # what chose the labels or the passes, for the picture's caption
    kernel_module: ModuleOp | None = None  # the module at the hbm level, where it passed through it


class _Reached(Exception):
    """A pass took the module below the level asked for: stop there."""


def _napkin_pass_classes() -> list[type[ModulePass]]:
    return [factory() for factory in registry.napkin_passes().values()]


@contextmanager
def _watching(classes: list[type[ModulePass]], module: ModuleOp, seen: Callable[[ModulePass], None]) -> Iterator[None]:
    """Call `seen(pass)` each time one of `classes` finishes on `module` itself (not on the
    clones the model lowers while it chooses tiles), however deep inside other passes."""
    saved = {cls: cls.__dict__["apply"] for cls in classes if "apply" in cls.__dict__}

    def wrap(original):
        def apply(self, ctx, op):
            original(self, ctx, op)
            if op is module:
                seen(self)

        return apply

    for cls, original in saved.items():
        cls.apply = wrap(original)  # type: ignore[method-assign]
    try:
        yield
    finally:
        for cls, original in saved.items():
            cls.apply = original  # type: ignore[method-assign]


def _check_level(level: str | None) -> None:
    if level is not None and level not in DRAWN:
        raise UserError(f"--level must be one of {', '.join(DRAWN)}, got '{level}'")


def run_to_level(module: ModuleOp, spec: str, level: str | None) -> Lowered:
    """Run the pass pipeline `spec` on `module`, stopping once it goes below `level` (the
    module at the last pass that left it at `level`); with no level, the module it ends as."""
    from napkin_ir.passmanager import available_passes

    _check_level(level)
    start = module_level(module)
    diagram = module.clone() if start == "ncd" else None
    at_hbm = module.clone() if start == "hbm" else None
    at_level = module.clone() if level == start else None
    ctx = registry.make_context()
    pipeline = PassPipeline.parse_spec(available_passes(), spec, lambda *_: None)

    def seen(p: ModulePass) -> None:
        nonlocal diagram, at_level, at_hbm
        now = module_level(module)
        if now == "ncd":
            diagram = module.clone()
        if now == "hbm":
            at_hbm = module.clone()
        if level is not None and now == level:
            at_level = module.clone()
        if level is not None and LEVELS.index(now) > LEVELS.index(level):
            raise _Reached

    classes = _napkin_pass_classes() + [type(p) for p in pipeline.passes]
    stopped = False
    try:
        with _watching(list(dict.fromkeys(classes)), module, seen):
            pipeline.apply(ctx, module)
    except _Reached:
        stopped = True
    if level is None:
        module.verify()
        return Lowered(module, module_level(module), diagram, f"passes {spec}", at_hbm)
    if at_level is None:
        end = module_level(module)
        where = "starts" if LEVELS.index(start) > LEVELS.index(level) else "stops"
        lvl = start if where == "starts" else end
        raise UserError(f"the pipeline '{spec}' never leaves the module at the {level} level: the module {where} at the "
                        f"{lvl} level")
    how = f"passes {spec}" + (f", stopped at the {level} level" if stopped else "")
    return Lowered(at_level, level, diagram, how, at_hbm)


def lower_to(module: ModuleOp, level: str, hw: str = "h100", target: str = "sm80") -> Lowered:
    """`module` at `level`, its labels, tiles, warps and stages chosen by the napkin model
    for `hw` and `target` (sm80: cp.async and mma.sync; sm90: TMA and wgmma)."""
    _check_level(level)
    start = module_level(module)
    if LEVELS.index(start) > LEVELS.index(level):
        raise UserError(f"the module is at the {start} level, below the {level} level asked for: "
                        "napkin-draw lowers, it does not raise")
    if start == level:
        return Lowered(module, level, module.clone() if level == "ncd" else None, kernel_module=module if level == "hbm" else None)
    if start != "ncd":
        raise UserError(f"the module is at the {start} level; to take it to the {level} level name the passes "
                        "with -p (napkin-draw chooses labels only for an ncd diagram)")
    from napkin_ir.plan.autotile import SearchSpace, autotile

    if target not in ("sm80", "sm90"):
        raise UserError(f"--target must be sm80 or sm90, got '{target}'")
    if len(diagram_functions(module)) != 1:
        raise UserError("napkin-draw lowers one function at a time; this module has "
                        f"{len(diagram_functions(module))}")
    space = SearchSpace(target=target, block_sizes=(64, 128, 256), stream_sizes=(32, 64) if target == "sm80" else (64,))
    result = autotile(module.clone(), hw, space=space)
    spec = result.config.pipeline("reg")
    lowered = run_to_level(module, spec, level)
    lowered.how = f"tiles chosen by the napkin model for the {result.prediction.hardware.name}: {result.config.describe()}"
    return lowered


def prepare(module: ModuleOp, spec: str | None, level: str | None, hw: str = "h100", target: str = "sm80") -> Lowered:
    """What `napkin-draw` draws: `module` run through `spec` (to `level`, where given), or
    lowered to `level` by the model's choice, or as it is."""
    if spec:
        lowered = run_to_level(module, spec, level)
    elif level:
        lowered = lower_to(module, level, hw, target)
    else:
        start = module_level(module)
        lowered = Lowered(module, start, module.clone() if start == "ncd" else None,
                          kernel_module=module if start == "hbm" else None)
    if lowered.level == "ptx":
        raise UserError("the module is at the ptx level, below what napkin-draw draws (ncd, hbm, smem, reg); "
                        "add --level reg to stop the pipeline above PTX")
    return lowered
