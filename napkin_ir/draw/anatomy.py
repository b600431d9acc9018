"""What one thread block of a kernel holds, at the smem and reg levels, drawn.

Three columns, the way data moves:

- HBM: each global tensor, with the part one block reads over its whole streaming loop
  (light) and the tile one step brings in (dark); the output with the block's tile;
- shared memory: each buffer as a deck of its stages, with its tile, bytes, layout and
  how it is filled (cp.async, TMA), and who fills it: every warp (cp.async, so many tiles
  in flight) or a producer warpgroup feeding consumers through full/empty mbarriers;
- registers: the block's output tile split over its warps (`reg.warps`), and the
  fragments each warp holds, with the tensor-core instruction that consumes them.

`read_anatomy(kernel)` reads it off an `hbm.kernel`; `draw_anatomy(ax, anatomy, ...)`
draws it in inches on an equal-aspect axes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.ir import SSAValue

from napkin_ir.dialects import hbm, reg, smem
from napkin_ir.draw import style
from napkin_ir.draw.circuit import carried_state, kernel_stream
from napkin_ir.model.analysis import copied_buffer, kernel_level

ROLE_WHAT = {"a": "A operand", "b": "B operand", "c": "accumulator", "row": "one value a row", "col": "one value a column"}


@dataclass
class GlobalView:
    name: str
    shape: dict[str, int]
    dtype: str
    output: bool


@dataclass
class Buffer:
    shape: dict[str, int]
    dtype: str
    stages: int
    layout: str
    bytes: int
    fill: str  # cp.async, TMA, or what writes it (the output's staging)
    source: str  # the global it is filled from, or written to


@dataclass
class Fragment:
    role: str
    shape: dict[str, int]
    dtype: str
    values_per_lane: int
    names: list[str] = field(default_factory=list)


@dataclass
class Anatomy:
    name: str
    level: str
    grid: dict[str, int]  # axis -> tile
    blocks: dict[str, int]  # axis -> blocks along it
    stream: dict[str, int]
    globals: list[GlobalView]
    buffers: list[Buffer]
    producer_warps: int | None
    barrier_rings: int
    warps: dict[str, int]
    fragments: list[Fragment]
    instruction: str | None
    state: list[tuple[str, str]]

    @property
    def compute_warps(self) -> int:
        n = 1
        for w in self.warps.values():
            n *= w
        return n


def _name(v: SSAValue, n: int) -> str:
    return v.name_hint or f"arg{n}"


def read_anatomy(kernel: hbm.KernelOp) -> Anatomy:
    globs = kernel.globals
    n_out = kernel.num_outputs.value.data
    names = {g: _name(g, n) for n, g in enumerate(globs)}
    views = [GlobalView(names[g], dict(g.type.shape), g.type.dtype, n >= len(globs) - n_out)  # type: ignore[attr-defined]
             for n, g in enumerate(globs)]
    buffers: dict[SSAValue, Buffer] = {}
    producer, rings = None, 0
    frags: dict[tuple, Fragment] = {}
    instruction = None
    for op in kernel.walk():
        if isinstance(op, smem.AllocOp):
            t: smem.BufferType = op.result.type  # type: ignore[assignment]
            buffers[op.result] = Buffer(dict(t.shape), t.dtype, t.stages.data, t.layout.data, t.bytes(), "", "")
        elif copied_buffer(op) is not None and op.dest in buffers:  # type: ignore[attr-defined]
            b = buffers[op.dest]  # type: ignore[attr-defined]
            b.fill = "TMA" if isinstance(op, smem.TmaCopyOp) else "cp.async"
            b.source = names.get(op.source, "?")  # type: ignore[attr-defined]
        elif isinstance(op, smem.TmaStoreOp) and op.source in buffers:
            b = buffers[op.source]
            b.fill, b.source = "TMA store", names.get(op.dest, "?")
        elif isinstance(op, smem.ProducerOp):
            producer = op.warps.value.data
        elif isinstance(op, smem.MbarrierAllocOp):
            rings += 1
        elif isinstance(op, reg.MmaOp):
            instruction = instruction or "mma.sync.m16n8k16"
        elif isinstance(op, reg.WgmmaOp):
            c = op.operands[4].type
            instruction = f"wgmma.m64n{c.dims[1]}k16"  # type: ignore[attr-defined]
        for r in op.results:
            if isinstance(r.type, reg.FragType):
                t = r.type
                key = (t.role.data, tuple(t.shape.items()), t.dtype)
                f = frags.setdefault(key, Fragment(t.role.data, dict(t.shape), t.dtype, t.values_per_lane()))
                if r.name_hint and r.name_hint not in f.names:
                    f.names.append(r.name_hint)
    for b in buffers.values():
        if not b.fill:
            b.fill, b.source = "written by the block", "out"
    loops_state = carried_state(kernel)
    for f in frags.values():  # the loop's state by the names it carries
        for arg in _loop_args(kernel):
            t = arg.type
            if isinstance(t, reg.FragType) and (t.role.data, tuple(t.shape.items()), t.dtype) == (f.role, tuple(f.shape.items()), f.dtype):
                if arg.name_hint and arg.name_hint not in f.names:
                    f.names.insert(0, arg.name_hint)
    warps = kernel.warp_grid
    staged = sorted(buffers.values(), key=lambda b: b.fill not in ("cp.async", "TMA"))  # the inputs' stages first
    return Anatomy(kernel.sym_name.data, kernel_level(kernel), kernel.grid_tiles, kernel.grid_shape(), kernel_stream(kernel),
                   views, staged, producer, rings, warps,
                   sorted(frags.values(), key=lambda f: "cabr".index(f.role) if f.role in "cabr" else 9), instruction,
                   loops_state)


def _loop_args(kernel: hbm.KernelOp) -> list[SSAValue]:
    from napkin_ir.dialects.loop_facts import stream_loops

    loops = stream_loops(kernel)
    return list(loops[0].body.block.args[1:]) if loops else []


# --------------------------------------------------------------------------------------
# drawing, in inches
# --------------------------------------------------------------------------------------

COLUMN_GAP = 0.55
HEAD = 0.42  # a column's heading above its content


def _rect(ax, x, y, w, h, fc, ec=style.BOX_EDGE, lw=0.9, z=2, alpha=1.0, ls="-"):
    from matplotlib.patches import Rectangle

    ax.add_patch(Rectangle((x, y), w, h, fc=fc, ec=ec, lw=lw, zorder=z, alpha=alpha, ls=ls))


def _text(ax, x, y, s, size=style.TEXT_PT, ha="left", va="top", colour=style.INK, weight="normal", z=6, **kw):
    ax.text(x, y, s, fontsize=size, ha=ha, va=va, color=colour, fontweight=weight, zorder=z, **kw)


def _tint(colour: str, amount: float) -> tuple[float, float, float]:
    from matplotlib.colors import to_rgb

    r, g, b = to_rgb(colour)
    return (1 - amount + amount * r, 1 - amount + amount * g, 1 - amount + amount * b)


def _drawn_axes(g: GlobalView, a: Anatomy) -> tuple[str | None, str | None, list[str]]:
    """(rows, cols, the rest): a global drawn as a rectangle over its two last axes that
    are not one block each (batch axes)."""
    batch = [x for x in g.shape if a.grid.get(x) == 1 and g.shape[x] > 1]
    rest = [x for x in g.shape if x not in batch and g.shape[x] > 1] or [x for x in g.shape if x not in batch]
    rows, cols = (rest[-2], rest[-1]) if len(rest) >= 2 else (None, rest[-1] if rest else None)
    return rows, cols, batch


def _extent(a: Anatomy, axis: str, size: int) -> tuple[int, int]:
    """(what one block reads of the axis over its loop, what one step brings in)."""
    if axis in a.grid:
        return min(a.grid[axis], size), min(a.grid[axis], size)
    if axis in a.stream:
        return size, min(a.stream[axis], size)
    return size, size


def _draw_global(ax, g: GlobalView, a: Anatomy, colours, x: float, y_top: float, scale: float) -> tuple[float, float]:
    """Draw one global with its top-left at (x, y_top); return (width, height) used."""
    rows, cols, batch = _drawn_axes(g, a)
    def length(axis):
        return max(0.3, g.shape[axis] * scale) if axis else 0.3
    w, h = length(cols), length(rows)
    title = g.name + ("  (output)" if g.output else "")
    _text(ax, x, y_top, title, size=9, weight="bold")
    shape = " × ".join(f"{k} {v}" for k, v in g.shape.items())
    _text(ax, x, y_top - 0.17, f"{shape} {g.dtype}", size=6.8, colour=style.MUTED)
    top = y_top - 0.58
    y0 = top - h
    if batch:  # the other blocks' sheets behind
        for k in (2, 1):
            _rect(ax, x + 0.06 * k, y0 + 0.06 * k, w, h, "white", ec=style.MUTED, lw=0.6, z=1)
    _rect(ax, x, y0, w, h, "#FAFAFA", lw=0.9, z=2)
    # what the block reads over the loop (light) and one step's tile (dark)
    bw = (_extent(a, cols, g.shape[cols])[0] * scale if cols else w)
    bh = (_extent(a, rows, g.shape[rows])[0] * scale if rows else h)
    sw = (_extent(a, cols, g.shape[cols])[1] * scale if cols else w)
    sh = (_extent(a, rows, g.shape[rows])[1] * scale if rows else h)
    bw, bh, sw, sh = min(bw, w), min(bh, h), min(max(sw, 0.04), w), min(max(sh, 0.04), h)
    light, dark = ("#F3D9C8", "#D55E00") if g.output else ("#CFE3F3", "#2F7BB8")
    _rect(ax, x, top - bh, bw, bh, light, ec="none", z=2.2)
    _rect(ax, x, top - sh, sw, sh, dark, ec="none", z=2.4, alpha=0.85)
    _rect(ax, x, y0, w, h, "none", lw=0.9, z=2.6)
    # the steps of a streamed axis, across what the block reads
    for axis, horizontal in ((cols, True), (rows, False)):
        if axis in a.stream and a.stream[axis] < g.shape[axis]:
            n = -(-g.shape[axis] // a.stream[axis])
            for k in range(2, n):
                p = k * a.stream[axis] * scale
                if horizontal:
                    ax.plot([x + p, x + p], [top - bh, top], color="#2F7BB8", lw=0.5, ls=(0, (2, 2)), zorder=2.45)
                else:
                    ax.plot([x, x + bw], [top - p, top - p], color="#2F7BB8", lw=0.5, ls=(0, (2, 2)), zorder=2.45)
    # block boundaries of the grid axes
    for axis, horizontal in ((cols, True), (rows, False)):
        if axis in a.grid and a.grid[axis] > 1:
            n = -(-g.shape[axis] // a.grid[axis])
            for k in range(1, n):
                p = k * a.grid[axis] * scale
                if horizontal and p < w:
                    ax.plot([x + p, x + p], [y0, top], color="white", lw=1.0, zorder=2.5)
                    ax.plot([x + p, x + p], [y0, top], color=style.MUTED, lw=0.4, zorder=2.55)
                if not horizontal and p < h:
                    ax.plot([x, x + w], [top - p, top - p], color="white", lw=1.0, zorder=2.5)
                    ax.plot([x, x + w], [top - p, top - p], color=style.MUTED, lw=0.4, zorder=2.55)
    if cols:
        _text(ax, x + w / 2, top + (0.15 if batch else 0.03), f"{cols} {g.shape[cols]}", size=6.8, ha="center", va="bottom",
              colour=colours.get(cols, style.INK), weight="bold")
    if rows:
        _text(ax, x - 0.05, top - h / 2, f"{rows} {g.shape[rows]}", size=6.8, ha="right", va="center",
              colour=colours.get(rows, style.INK), weight="bold", rotation=90)
    step = " × ".join(f"{ax_} {_extent(a, ax_, g.shape[ax_])[1]}" for ax_ in (rows, cols) if ax_)
    once = not any(ax_ in a.stream for ax_ in g.shape)
    _text(ax, x, y0 - 0.06, ("the block's tile: " if g.output else "read once: " if once else "a step: ") + step, size=6.5,
          colour=dark)
    if batch:
        _text(ax, x, y0 - 0.22, "one block per " + ", ".join(batch), size=6.5, colour=style.MUTED)
    return max(w + 0.2, 1.15), (y_top - y0) + 0.42


def _column_hbm(ax, a: Anatomy, colours, x: float, y: float) -> tuple[float, float]:
    sizes = [v for g in a.globals for ax_ in _drawn_axes(g, a)[:2] if ax_ for v in [g.shape[ax_]]]
    scale = 1.25 / max(sizes or [1])
    pos_x, pos_y, row_h, width, height = x, y, 0.0, 0.0, 0.0
    for n, g in enumerate(a.globals):
        if n and n % 2 == 0:
            pos_x, pos_y = x, pos_y - row_h - 0.12
            row_h = 0.0
        w, h = _draw_global(ax, g, a, colours, pos_x + 0.2, pos_y, scale)
        pos_x += w + 0.35
        row_h = max(row_h, h)
        width = max(width, pos_x - x)
        height = max(height, y - (pos_y - row_h))
    return width, height


def _column_smem(ax, a: Anatomy, colours, x: float, y: float) -> tuple[float, float]:
    pos, width = y, 2.6
    total = sum(b.bytes for b in a.buffers)
    for b in a.buffers:
        w, h = 0.8, 0.42
        depth = min(b.stages, 6)
        for k in reversed(range(depth)):  # a deck: the stages behind one another
            fc = "#CFE3F3" if k == 0 else _tint("#2F7BB8", 0.12 + 0.05 * k)
            if "store" in b.fill or b.source == "out":
                fc = "#F3D9C8" if k == 0 else _tint("#D55E00", 0.12 + 0.05 * k)
            _rect(ax, x + 0.1 + 0.09 * k, pos - h - 0.09 * (depth - 1) + 0.09 * k, w, h, fc, lw=0.8, z=3 - 0.1 * k)
        shape = " × ".join(f"{k} {v}" for k, v in b.shape.items() if v != 1)
        front_y = pos - h - 0.09 * (depth - 1)
        _text(ax, x + 0.1 + w / 2, front_y + h / 2, f"{b.stages}×", size=9, ha="center", va="center", weight="bold", z=7)
        tx = x + 0.1 + w + 0.09 * (depth - 1) + 0.15
        _text(ax, tx, pos + 0.02, f"{b.source}: {shape} {b.dtype}", size=7.5, weight="bold")
        layout = {"row": "row-major", "pad8": "rows padded by 8", "swizzle": "swizzled"}.get(b.layout, b.layout)
        _text(ax, tx, pos - 0.16, f"{b.stages} stage{'s' if b.stages != 1 else ''} · {style.si(b.bytes, 'B', True)} · {layout}",
              size=6.8, colour=style.MUTED)
        _text(ax, tx, pos - 0.32, f"filled by {b.fill}" if b.fill in ("cp.async", "TMA") else b.fill, size=6.8, colour=style.MUTED)
        pos -= max(h + 0.09 * (depth - 1), 0.5) + 0.22
    _text(ax, x + 0.1, pos - 0.02, f"{style.si(total, 'B', True)} of shared memory a block", size=7.5, weight="bold")
    pos -= 0.3
    roles = _roles(a)
    for title, lines, fc in roles:
        body = "\n".join(lines)
        n = len(lines) + 1
        hh = 0.16 * n + 0.14
        from matplotlib.patches import FancyBboxPatch

        ax.add_patch(FancyBboxPatch((x + 0.12, pos - hh), width - 0.2, hh, boxstyle="round,pad=0.03,rounding_size=0.06",
                                    fc=fc, ec=style.BOX_EDGE, lw=0.7, zorder=2))
        _text(ax, x + 0.2, pos - 0.06, title, size=7.3, weight="bold")
        _text(ax, x + 0.2, pos - 0.22, body, size=6.8, linespacing=1.35)
        pos -= hh + 0.1
    return width, y - pos


def _roles(a: Anatomy) -> list[tuple[str, list[str], str]]:
    ring = max((b.stages for b in a.buffers if b.fill in ("TMA", "cp.async")), default=1)
    if a.producer_warps:
        consumers = a.compute_warps or 4
        return [
            (f"producer: {a.producer_warps} warp{'s' if a.producer_warps != 1 else ''}",
             ["waits for an empty stage, issues TMA copies",
              f"a ring of {ring} stages: full and empty mbarriers" if a.barrier_rings == 2
              else f"a ring of {ring} stages, {a.barrier_rings} mbarrier rings"], "#E3EEF9"),
            (f"consumers: {consumers} warps" + (f" ({consumers // 4} warpgroups)" if consumers % 4 == 0 and consumers > 4 else ""),
             ["wait for a full stage, compute on it,", "then arrive on its empty barrier"], "#FBE9DF"),
        ]
    warps = f"{a.compute_warps} warps" if a.warps else "every warp"
    ahead = f"copies run {ring - 1} step{'s' if ring != 2 else ''} ahead of the math" if ring > 1 else "one stage: copy, then compute"
    return [(f"{warps}: copy and compute", [f"cp.async {ahead},", "a wait and a barrier before each step"], "#EEF3E6")]


def _column_reg(ax, a: Anatomy, colours, x: float, y: float, tile: dict[str, int]) -> tuple[float, float]:
    axes = [k for k, v in tile.items() if v > 1]
    rows, cols = (axes[0], axes[1]) if len(axes) >= 2 else (axes[0] if axes else None, None)
    R, C = (tile.get(rows, 1) if rows else 1), (tile.get(cols, 1) if cols else 1)
    scale = 1.6 / max(R, C)
    w, h = max(C * scale, 0.45), max(R * scale, 0.45)
    top = y - 0.3
    wr = a.warps.get(rows, 1) if rows else 1
    wc = a.warps.get(cols, 1) if cols else 1
    palette = ["#DCEAF5", "#F6E3D6", "#DDF0E8", "#F2E0EC", "#F4EBCF", "#E3EEF9", "#EADFD7", "#E6E6E6"]
    if a.warps:
        k = 0
        for i in range(wr):
            for j in range(wc):
                _rect(ax, x + 0.25 + j * w / wc, top - (i + 1) * h / wr, w / wc, h / wr, palette[k % len(palette)], lw=0.6, z=2)
                if h / wr >= 0.14:
                    _text(ax, x + 0.25 + (j + 0.5) * w / wc, top - (i + 0.5) * h / wr, f"w{k}", size=6.5 if h / wr < 0.25 else 7.5,
                          ha="center", va="center", colour=style.INK)
                k += 1
    else:
        _rect(ax, x + 0.25, top - h, w, h, "#F0F0F0", lw=0.6, z=2, ls=(0, (3, 2)))
        _text(ax, x + 0.25 + w / 2, top - h / 2, "warps not\ndecided yet", size=6.8, ha="center", va="center",
              colour=style.MUTED)
    _rect(ax, x + 0.25, top - h, w, h, "none", lw=1.0, z=3)
    if cols:
        _text(ax, x + 0.25 + w / 2, top + 0.03, f"{cols} {C}", size=6.8, ha="center", va="bottom", colour=colours.get(cols, style.INK),
              weight="bold")
    if rows:
        _text(ax, x + 0.2, top - h / 2, f"{rows} {R}", size=6.8, ha="right", va="center", colour=colours.get(rows, style.INK),
              weight="bold", rotation=90)
    tx = x + 0.25 + w + 0.22
    split = " × ".join(f"{k} {v}" for k, v in a.warps.items()) if a.warps else "-"
    lines = [(f"the block's tile over {a.compute_warps} warps" if a.warps else "the block's tile", True),
             (f"split {split}" if a.warps else "smem-to-reg splits it over warps", False)]
    if a.instruction:
        lines.append((a.instruction, False))
    pos = top
    for text, bold in lines:
        _text(ax, tx, pos, text, size=7.3 if bold else 6.9, weight="bold" if bold else "normal",
              colour=style.INK if bold else style.MUTED)
        pos -= 0.18
    pos = min(pos, top - h) - 0.22
    if a.fragments:
        _text(ax, x + 0.1, pos, "fragments of each warp", size=7.5, weight="bold")
        pos -= 0.2
        for f in a.fragments:
            shape = " × ".join(f"{k} {v}" for k, v in f.shape.items())
            what = ROLE_WHAT.get(f.role, f.role)
            names = f" ({', '.join(f.names[:3])})" if f.names else ""
            _text(ax, x + 0.1, pos, f"{f.role}", size=7, weight="bold", colour="#2F7BB8" if f.role in "ab" else "#D55E00")
            _text(ax, x + 0.42, pos, f"{shape} {f.dtype}: {what}{names}, {f.values_per_lane} a lane", size=6.8)
            pos -= 0.17
    elif a.state:
        _text(ax, x + 0.1, pos, "carried by the block: " + "; ".join(f"{n} ({s})" for n, s in a.state), size=6.8,
              colour=style.MUTED)
        pos -= 0.2
    width = max(tx - x + 2.2, 3.6)
    return width, y - pos


def block_tile(a: Anatomy) -> dict[str, int]:
    """The tile of the output one block computes (the grid's tiles, whole elsewhere)."""
    out = next((g for g in a.globals if g.output), a.globals[-1])
    return {k: (a.grid[k] if k in a.grid else v) for k, v in out.shape.items() if (a.grid.get(k, v) if k in a.grid else v) > 0}


def draw_anatomy(ax, a: Anatomy, colours: dict[str, str], x: float = 0.0, y: float = 0.0) -> tuple[float, float]:
    """Draw the three columns with their top-left at (x, y); return (width, height)."""
    heads = [("HBM", "the tiles one block reads and writes"), ("shared memory", "the stages a block holds"),
             ("registers", "the warps and their fragments")]
    widths, heights = [], []
    cx = x
    tile = block_tile(a)
    for n, (title, sub) in enumerate(heads):
        top = y - HEAD
        if n == 0:
            w, h = _column_hbm(ax, a, colours, cx, top)
        elif n == 1:
            w, h = _column_smem(ax, a, colours, cx, top)
        else:
            w, h = _column_reg(ax, a, colours, cx, top, tile)
        _text(ax, cx + 0.1, y, title, size=10.5, weight="bold")
        _text(ax, cx + 0.1, y - 0.2, sub, size=7, colour=style.MUTED)
        if n:
            arrow = "cp.async" if any(b.fill == "cp.async" for b in a.buffers) else "TMA" if n == 1 else ""
            if n == 2:
                arrow = ("wgmma" if a.instruction.startswith("wgmma") else "ldmatrix") if a.instruction else "read"
            ax.annotate("", (cx + 0.02, y - 0.1), (cx - COLUMN_GAP + 0.08, y - 0.1),
                        arrowprops={"arrowstyle": "-|>", "color": style.MUTED, "lw": 1.2}, zorder=6)
            _text(ax, cx - COLUMN_GAP / 2 + 0.05, y - 0.15, arrow, size=6.3, ha="center", colour=style.MUTED)
        widths.append(w)
        heights.append(h + HEAD)
        cx += w + COLUMN_GAP
    return cx - COLUMN_GAP - x, max(heights)
