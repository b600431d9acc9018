"""What the user asked of a named pipeline, parsed once from its options.

`napkin-sm90{block="128,256,64" stages=4}` reaches the planner as a `PlanRequest`:
integers, enumerations and None for "not given, the recipe's default". The option
strings are read here and nowhere below; the recipes read typed fields and say, in the
pipeline's name, which option a diagram cannot honour.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.utils.exceptions import PassFailedException

from napkin_ir.plan.kernel_plan import SmemLayout, StorePath


def parse_ints(text: str) -> tuple[int, ...] | None:
    """Positive integers separated by commas, or None where `text` is not that."""
    try:
        vals = tuple(int(x) for x in text.split(","))
    except ValueError:
        return None
    return vals if vals and min(vals) > 0 else None


# `reg-early-waits`'s places, and "none" for the wait where `reg-wgmma-overlap` left it
EARLY_WAITS = ("scores", "max", "products", "none")


@dataclass(frozen=True)
class PlanRequest:
    """The options of a named pipeline, typed. None: not given."""

    pipeline: str  # its name, for messages
    block: tuple[int, ...] | None = None
    warps: tuple[int, ...] | None = None
    stages: int | None = None
    layout: SmemLayout | None = None  # None: auto
    group: int | None = None
    blocks_per_sm: int = 1
    persistent: bool | None = None
    cluster: int = 1
    store: StorePath | None = None  # None: auto
    autotile: bool = False
    hw: str = "h100"
    overlap: bool = True
    pingpong: bool = True
    q_registers: bool | None = None
    schedule: bool | None = None  # wgmma groups issued early and waited for late (None: where it pays)
    early_waits: str | None = None  # where an overlapped trip waits for V: scores, max, products or none (None: where it pays)
    partial_sums: bool | None = None  # a running row sum kept as each lane's part (None: where it pays)
    lazy_rescale: bool | None = None  # a running row max kept until outgrown by a slack (None: where it pays)
    split: int = 1  # blocks sharing each output tile's contraction, each adding its part
    deterministic: bool = False  # those parts added in a fixed order
    swap: bool | None = None  # a GEMM computed with wgmma's rows over its columns (None: where the tile needs it or the model puts it first)
    # the options as the user wrote them, to name them in a refusal
    given: dict[str, str] = field(default_factory=dict, compare=False)

    def fail(self, message: str) -> PassFailedException:
        return PassFailedException(f"{self.pipeline}: {message}")

    def sized(self, name: str, n: int, meaning: str) -> tuple[int, ...] | None:
        """Option `name` (block or warps) as `n` integers, None where not given; a wrong
        count is the user's error, said with `meaning`."""
        vals = getattr(self, name)
        if vals is None:
            return None
        if len(vals) != n:
            raise self.fail(f"{name}=\"{self.given[name]}\" should be {n} positive integers separated by commas"
                            + (f" ({meaning})" if meaning else ""))
        return vals

    def refuse(self, what: str, names: tuple[str, ...]) -> None:
        """An error naming those of the options `names` that were given, which `what`
        cannot honour."""
        bad = [f"{n}={self.given[n]}" for n in names if n in self.given]
        if bad:
            raise self.fail(f"{', '.join(bad)} cannot be honoured for {what}")


def request(pipeline: str, options: dict[str, object], defaults: dict[str, object]) -> PlanRequest:
    """A `PlanRequest` from a named pipeline's options (`options`, with the values that
    mean "not given" in `defaults`); malformed values are the user's errors."""
    given = {k: (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in options.items()
             if k in defaults and v != defaults[k] and v is not None}
    kw: dict[str, object] = {}
    for name in ("block", "warps"):
        text = str(options.get(name) or "")
        if text:
            vals = parse_ints(text)
            if vals is None:
                raise PassFailedException(f"{pipeline}: {name}=\"{text}\" should be positive integers separated by commas")
            kw[name] = vals
    layout = options.get("layout", "auto")
    if layout not in ("auto", *SmemLayout):
        raise PassFailedException(f"{pipeline}: layout must be auto, swizzle, pad8 or row, got '{layout}'")
    store = options.get("store", "auto")
    if store not in ("auto", *StorePath):
        raise PassFailedException(f"{pipeline}: store must be auto, tma or direct, got '{store}'")
    group = options.get("group")
    if isinstance(group, int) and group < 0:
        raise PassFailedException(f"{pipeline}: group must be 0 (plain launch order) or a positive band height, got {group}")
    stages = options.get("stages")
    early_waits = options.get("early_waits")
    if early_waits is not None and early_waits not in EARLY_WAITS:
        raise PassFailedException(f"{pipeline}: early_waits must be {', '.join(EARLY_WAITS)}, got '{early_waits}'")
    split = options.get("split", 1)
    if not isinstance(split, int) or split < 1:
        raise PassFailedException(f"{pipeline}: split must be a positive number of blocks sharing a contraction, got {split}")
    return PlanRequest(
        pipeline, **kw,  # type: ignore[arg-type]
        stages=stages if isinstance(stages, int) and stages else None,
        layout=None if layout == "auto" else SmemLayout(layout),
        group=group if "group" in given else None,  # type: ignore[arg-type]
        blocks_per_sm=int(options.get("blocks_per_sm", 1)),  # type: ignore[arg-type]
        persistent=options.get("persistent"),  # type: ignore[arg-type]
        cluster=int(options.get("cluster", 1)),  # type: ignore[arg-type]
        store=None if store == "auto" else StorePath(store),
        autotile=bool(options.get("autotile", False)), hw=str(options.get("hw", "h100")),
        overlap=bool(options.get("overlap", True)), pingpong=bool(options.get("pingpong", True)),
        q_registers=options.get("q_registers"), schedule=options.get("schedule"),  # type: ignore[arg-type]
        early_waits=early_waits, partial_sums=options.get("partial_sums"),  # type: ignore[arg-type]
        lazy_rescale=options.get("lazy_rescale"),  # type: ignore[arg-type]
        split=split, deterministic=bool(options.get("deterministic", False)),
        swap=options.get("swap"), given=given)  # type: ignore[arg-type]
