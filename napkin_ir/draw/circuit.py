"""A diagram drawn as the neural-circuit-diagram papers draw it (arXiv 2402.05424, 2412.03317).

Each tensor is a bundle of wires, one per axis, each labelled with its name and size and
coloured by axis throughout the picture; data flows left to right. An op is a box:

- an op along some axes (softmax, L2 norm, a reduction, a mask) covers only the wires of
  those axes; the other wires pass by, which is how the papers show that it is broadcast
  over them, and the axes it consumes (a reduction's) end at the box;
- an op of several operands (a contraction, a binary map) is a box the operands' wires
  enter: a contracted axis's wires meet at a dot and end (Σ), an axis both operands share
  leaves as one wire from a junction where its copies fan in, the rest pass through;
- an elementwise op of one operand (cast, exp, scale) covers the whole bundle.

At the hbm level (labels from `ncd-relabel` on the function, or the kernel's grid and
streaming loops) each wire also says where its axis lives: spread over the grid in tiles
(a thick wire cut into tiles), streamed through the block (dashed) or whole (thin), and
the ops the streaming loop runs are shaded, with the state it carries from step to step
(the online softmax's running max and sum, the accumulator).

`build_circuit` reads a function (or, failing one, a kernel's signature) into a
`Circuit`; `draw_circuit` lays it out on a matplotlib axes in data units.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import func, scf
from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation, SSAValue

from napkin_ir.dialects import hbm, loop_facts, ncd
from napkin_ir.dialects.ncd import NamedAxesType
from napkin_ir.draw import style

# geometry, in data units (`figure.INCH` inches each)
LANE = 0.62  # between the wires of a bundle
GAP = 0.9  # between the bundles a joining box takes
COLUMN = 3.3  # between the centres of consecutive columns
WIDTH = {"input": 1.0, "output": 1.0, "join": 1.7, "along": 0.8, "elementwise": 0.55}
PAD = 0.24  # a box beyond its outermost wire


@dataclass
class Bundle:
    name: str
    shape: dict[str, int]  # axis -> size, in the type's order
    dtype: str


@dataclass
class Node:
    key: int
    kind: str  # input, output, join, along, elementwise
    title: str
    note: str = ""
    operands: list[int] = field(default_factory=list)
    out: Bundle | None = None
    acts_on: tuple[str, ...] = ()  # along / elementwise: the operand's axes the box covers
    consumed: tuple[str, ...] = ()
    col: int = 0
    lanes: dict[str, float] = field(default_factory=dict)  # y of each wire of `out`

    @property
    def width(self) -> float:
        return WIDTH[self.kind]


@dataclass
class Placement:
    """Where an axis lives in the kernel: `grid` (tile), `stream` (tile) or `whole`."""

    where: str
    tile: int
    size: int

    def describe(self) -> str:
        if self.where == "grid":
            n = -(-self.size // self.tile)
            return f"grid, tiles of {self.tile}: {n} block{'s' if n != 1 else ''}"
        if self.where == "stream":
            n = -(-self.size // self.tile)
            return f"streamed, tiles of {self.tile}: {n} step{'s' if n != 1 else ''}"
        return "whole in each block"

    def short(self) -> str:
        return {"grid": f"grid {self.tile}", "stream": f"stream {self.tile}"}.get(self.where, "whole")


@dataclass
class Circuit:
    name: str
    nodes: list[Node]
    sizes: dict[str, int]
    placement: dict[str, Placement] = field(default_factory=dict)
    state: list[tuple[str, str]] = field(default_factory=list)  # carried by the streaming loop
    caption: str = ""  # said under the picture (e.g. why a kernel is drawn as one box)

    @property
    def labelled(self) -> bool:
        return bool(self.placement)

    @property
    def streamed(self) -> list[str]:
        return [a for a, p in self.placement.items() if p.where == "stream"]

    def ops(self) -> list[str]:
        """Every op's title, as the picture shows it."""
        return [n.title for n in self.nodes if n.kind not in ("input", "output")]


# --------------------------------------------------------------------------------------
# reading the IR
# --------------------------------------------------------------------------------------


def _name(v: SSAValue, fallback: str) -> str:
    return v.name_hint or fallback


def _bundle(v: SSAValue, fallback: str) -> Bundle:
    t: NamedAxesType = v.type  # type: ignore[assignment]
    return Bundle(_name(v, fallback), t.shape, t.dtype)


def _fmt(x: float) -> str:
    return ncd.format_float(x).removesuffix(".0") if abs(x) < 1e4 else f"{x:.3g}"


def describe_op(op: Operation) -> tuple[str, str, str, tuple[str, ...], tuple[str, ...]]:
    """(kind, title, note, axes its box covers, axes it consumes) of an ncd op."""
    if isinstance(op, ncd.ContractOp):
        over = tuple(op.over_axes)
        return "join", "contract", "Σ " + ", ".join(over), (), over
    if isinstance(op, ncd.SoftmaxOp):
        scale = f", × {_fmt(op.scale.value.data)}" if op.scale is not None else ""
        return "along", "softmax", f"along {op.axis.data}{scale}", (op.axis.data,), ()
    if isinstance(op, ncd.L2NormOp):
        return "along", "L2 norm", f"along {op.axis.data}", (op.axis.data,), ()
    if isinstance(op, ncd.ReduceOp):
        along = tuple(op.along_axes)
        return "along", op.kind.data, "along " + ", ".join(along), along, along
    if isinstance(op, ncd.MaskOp):
        fill = _fmt(op.fill.value.data).replace("-inf", "−∞").replace("inf", "∞")
        return "along", f"mask {op.kind.data}", f"keep {op.row.data} ≥ {op.col.data}, else {fill}", op.compared_axes, ()
    if isinstance(op, ncd.MaskBoundOp):
        return "along", "mask", f"{op.axis.data} < {op.bound.data}", (op.axis.data,), ()
    if isinstance(op, ncd.MapOp):
        fn = op.fn.data
        if len(op.inputs) > 1:
            return "join", fn, "elementwise", (), ()
        axes = tuple(op.inputs[0].type.axis_names)  # type: ignore[attr-defined]
        note = f"to {op.result.type.dtype}" if fn == "cast" else f"× {_fmt(op.by.value.data)}" if op.by is not None else ""  # type: ignore[attr-defined]
        return "elementwise", fn, note, axes, ()
    tensors = [v for v in op.operands if isinstance(v.type, NamedAxesType)]
    if len(tensors) > 1:
        return "join", op.name, "", (), ()
    return "elementwise", op.name, "", tuple(tensors[0].type.axis_names) if tensors else (), ()  # type: ignore[attr-defined]


def _labels(attr) -> dict[str, int]:
    return hbm.parse_labels(attr) if attr is not None else {}


def _placement(sizes: dict[str, int], grid: dict[str, int], stream: dict[str, int]) -> dict[str, Placement]:
    if not grid and not stream:
        return {}
    out = {}
    for a, n in sizes.items():
        if a in grid:
            out[a] = Placement("grid", grid[a], n)
        elif a in stream:
            out[a] = Placement("stream", stream[a], n)
        else:
            out[a] = Placement("whole", n, n)
    return out


def from_function(f: func.FuncOp) -> Circuit:
    nodes: list[Node] = []
    producer: dict[SSAValue, int] = {}
    sizes: dict[str, int] = {}

    def add(node: Node) -> Node:
        nodes.append(node)
        if node.out is not None:
            sizes.update(node.out.shape)
        return node

    for n, arg in enumerate(f.body.block.args):
        if isinstance(arg.type, NamedAxesType):
            b = _bundle(arg, f"arg{n}")
            producer[arg] = add(Node(len(nodes), "input", b.name, b.dtype, out=b)).key
    for n, op in enumerate(f.body.block.ops):
        if isinstance(op, func.ReturnOp):
            for v in op.operands:
                if v in producer:
                    title = nodes[producer[v]].out.name  # type: ignore[union-attr]
                    add(Node(len(nodes), "output", title, nodes[producer[v]].out.dtype, [producer[v]]))  # type: ignore[union-attr]
            continue
        tensors = [v for v in op.operands if v in producer]
        results = [r for r in op.results if isinstance(r.type, NamedAxesType)]
        if not results:
            continue
        kind, title, note, acts_on, consumed = describe_op(op)
        node = add(Node(len(nodes), kind, title, note, [producer[v] for v in tensors], _bundle(results[0], ""),
                        acts_on, consumed))
        for r in results:
            producer[r] = node.key
    grid, stream = _labels(f.attributes.get("ncd.grid")), _labels(f.attributes.get("ncd.stream"))
    circuit = Circuit(f.sym_name.data, nodes, sizes, _placement(sizes, grid, stream))
    _layout(circuit)
    return circuit


def _constant(v: SSAValue) -> int | None:
    owner = v.owner
    if isinstance(owner, ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def kernel_stream(kernel: hbm.KernelOp) -> dict[str, int]:
    """Streamed axes and their tiles: each streaming loop's axis and step."""
    out: dict[str, int] = {}
    for loop in loop_facts.stream_loops(kernel):
        axis = loop_facts.stream_axis(loop)
        assert axis is not None  # a stream loop
        step = _constant(loop.step)
        if step is not None:
            out.setdefault(axis, step)
    return out


def carried_state(kernel: hbm.KernelOp) -> list[tuple[str, str]]:
    """What the (first) streaming loop carries from one step to the next: (name, shape)."""
    loops = loop_facts.stream_loops(kernel)
    if not loops:
        return []
    state = []
    for n, arg in enumerate(loops[0].body.block.args[1:]):
        t = arg.type
        if isinstance(t, NamedAxesType):
            shape = " × ".join(f"{a} {s}" for a, s in t.shape.items() if s != 1) or "1"
            state.append((_name(arg, f"state{n}"), f"{shape} {t.dtype}"))
    return state


def from_kernel(kernel: hbm.KernelOp) -> Circuit:
    """A kernel whose diagram is gone: its globals in, one box, its outputs out."""
    nodes: list[Node] = []
    globs = kernel.globals
    n_out = kernel.num_outputs.value.data
    ins, outs = globs[: len(globs) - n_out], globs[len(globs) - n_out:]
    sizes = kernel.axis_sizes()
    for n, g in enumerate(ins):
        nodes.append(Node(len(nodes), "input", _name(g, f"arg{n}"), g.type.dtype, out=_bundle(g, f"arg{n}")))  # type: ignore[attr-defined]
    out_axes: dict[str, int] = {}
    for g in outs:
        out_axes.update(g.type.shape)  # type: ignore[attr-defined]
    consumed = tuple(a for a in sizes if a not in out_axes)
    first = outs[0]
    body = Node(len(nodes), "join", "hbm.kernel", f"@{kernel.sym_name.data}", list(range(len(ins))),
                Bundle(_name(first, "out"), dict(first.type.shape), first.type.dtype), (), consumed)  # type: ignore[attr-defined]
    nodes.append(body)
    nodes.append(Node(len(nodes), "output", body.out.name, body.out.dtype, [body.key]))  # type: ignore[union-attr]
    circuit = Circuit(kernel.sym_name.data, nodes, sizes, _placement(sizes, kernel.grid_tiles, kernel_stream(kernel)),
                      carried_state(kernel),
                      caption="drawn from the kernel's signature: draw the ncd diagram (napkin-draw FILE.mlir --level hbm) "
                              "to see its ops")
    _layout(circuit)
    return circuit


def build_circuit(diagram, kernel: hbm.KernelOp | None = None) -> Circuit:
    """The circuit of the one function of `diagram` (a module, or None), its axes placed as
    the function's labels or `kernel` say; from `kernel` alone where there is no function."""
    funcs = [] if diagram is None else [f for f in diagram.walk() if isinstance(f, func.FuncOp) and f.body.blocks]
    if funcs:
        circuit = from_function(funcs[0])
        if kernel is not None:
            if not circuit.placement:
                circuit.placement = _placement(circuit.sizes, kernel.grid_tiles, kernel_stream(kernel))
            circuit.state = carried_state(kernel)
        return circuit
    assert kernel is not None
    return from_kernel(kernel)


# --------------------------------------------------------------------------------------
# layout
# --------------------------------------------------------------------------------------


def _layout(c: Circuit) -> None:
    nodes = c.nodes
    consumers: dict[int, list[int]] = {n.key: [] for n in nodes}
    for n in nodes:
        for p in n.operands:
            consumers[p].append(n.key)
    for n in nodes:  # an op one column right of its latest operand
        if n.kind not in ("input", "output"):
            n.col = 1 + max((nodes[p].col for p in n.operands), default=0)
    last = max((n.col for n in nodes), default=0)
    for n in nodes:
        if n.kind == "output":
            n.col = last + 1
        elif n.kind == "input":  # an input enters just before its first use
            n.col = max(0, min((nodes[k].col for k in consumers[n.key]), default=1) - 1)
    shift = min(n.col for n in nodes)
    for n in nodes:
        n.col -= shift
    # lanes, from the outputs back: an op keeps its operand's wires where they are; a
    # joining op stacks its operands, the first on top, around its own bundle's centre
    outputs = [n for n in nodes if n.kind == "output"]
    top = 0.0
    for n in outputs:
        p = nodes[n.operands[0]]
        if not p.lanes:
            p.lanes = _stack(list(p.out.shape), top)  # type: ignore[union-attr]
            top = min(p.lanes.values()) - GAP - LANE
        n.lanes = dict(p.lanes)
    for n in reversed(nodes):
        if n.kind in ("input", "output"):
            continue
        if not n.lanes:  # a result nothing uses
            low = min((y for m in nodes for y in m.lanes.values()), default=0.0)
            n.lanes = _stack(list(n.out.shape), low - GAP - LANE)  # type: ignore[union-attr]
        operands = [nodes[p] for p in n.operands]
        if n.kind == "join":
            counts = [len(p.out.shape) for p in operands]  # type: ignore[union-attr]
            height = (sum(counts) - len(counts)) * LANE + (len(counts) - 1) * GAP
            centre = sum(n.lanes.values()) / len(n.lanes) if n.lanes else 0.0
            y = centre + height / 2
            for p, k in zip(operands, counts):
                if not p.lanes:
                    p.lanes = _stack(list(p.out.shape), y)  # type: ignore[union-attr]
                y -= (k - 1) * LANE + GAP
        elif operands:
            p = operands[0]
            if not p.lanes:
                lanes, low = {}, min(n.lanes.values(), default=0.0)
                for a in p.out.shape:  # type: ignore[union-attr]
                    if a in n.lanes:
                        lanes[a] = n.lanes[a]
                    else:
                        low -= LANE
                        lanes[a] = low
                p.lanes = lanes


def _stack(axes: list[str], top: float) -> dict[str, float]:
    return {a: top - i * LANE for i, a in enumerate(axes)}


# --------------------------------------------------------------------------------------
# drawing
# --------------------------------------------------------------------------------------


@dataclass
class Extent:
    x0: float
    x1: float
    y0: float
    y1: float

    def grow(self, x0: float, x1: float, y0: float, y1: float) -> None:
        self.x0, self.x1, self.y0, self.y1 = min(self.x0, x0), max(self.x1, x1), min(self.y0, y0), max(self.y1, y1)


INPUT_LEAD = 1.5  # an input stands further left than its column: room for its wires' labels


def _x(n: Node) -> float:
    return n.col * COLUMN - (INPUT_LEAD if n.kind == "input" else 0.0)


def _in_lanes(c: Circuit, n: Node) -> dict[tuple[int, str], float]:
    return {(p, a): y for p in n.operands for a, y in c.nodes[p].lanes.items()}


def box_span(c: Circuit, n: Node) -> tuple[float, float]:
    """(bottom, top) of a node's box."""
    if n.kind == "join":
        ys = list(_in_lanes(c, n).values()) + list(n.lanes.values())
    elif n.kind in ("input", "output"):
        ys = list(n.lanes.values())
    else:
        src = c.nodes[n.operands[0]].lanes if n.operands else n.lanes
        ys = [src[a] for a in n.acts_on if a in src] or list(src.values())
    return min(ys) - PAD, max(ys) + PAD


def node_top(c: Circuit, n: Node) -> float:
    """Above everything at the node's column: its box and the wires passing it."""
    bottom, top = box_span(c, n)
    if n.kind in ("along", "elementwise") and n.operands:
        top = max([top, *(y + PAD for y in c.nodes[n.operands[0]].lanes.values())])
    return top


def _wire_style(c: Circuit, axis: str) -> dict:
    p = c.placement.get(axis)
    if p is None or p.where == "whole":
        return {"lw": 1.6 if p is None else 1.3, "ls": "-"}
    if p.where == "grid":
        return {"lw": 3.6, "ls": "-", "grid": True}
    return {"lw": 2.0, "ls": (0, (3.2, 1.8))}


def _wire(ax, c: Circuit, colours, axis: str, x0: float, x1: float, y: float, z: float = 2) -> None:
    st = _wire_style(c, axis)
    ax.plot([x0, x1], [y, y], color=colours[axis], lw=st["lw"], ls=st["ls"], solid_capstyle="butt", zorder=z)
    p = c.placement.get(axis)
    if p is not None and p.where == "grid":  # a wire split along its length: cut over the blocks
        ax.plot([x0, x1], [y, y], color=style.PAPER, lw=1.1, solid_capstyle="butt", zorder=z + 0.1)


def _curve(ax, c: Circuit, colours, axis: str, p0, p1, z: float = 3) -> None:
    import numpy as np

    (x0, y0), (x1, y1) = p0, p1
    t = np.linspace(0, 1, 40)
    xm = (x0 + x1) / 2
    xs = (1 - t) ** 3 * x0 + 3 * (1 - t) ** 2 * t * xm + 3 * (1 - t) * t ** 2 * xm + t ** 3 * x1
    ys = (1 - t) ** 3 * y0 + 3 * (1 - t) ** 2 * t * y0 + 3 * (1 - t) * t ** 2 * y1 + t ** 3 * y1
    st = _wire_style(c, axis)
    ax.plot(xs, ys, color=colours[axis], lw=min(st["lw"], 2.0), ls=st["ls"], zorder=z, solid_capstyle="butt")


def _dot(ax, colour: str, x: float, y: float, z: float = 3.5, size: float = 6.5) -> None:
    ax.plot([x], [y], marker="o", ms=size, color=colour, mec="white", mew=0.8, zorder=z, ls="none")


def _box(ax, x: float, w: float, y0: float, y1: float, fill: str, z: float, alpha: float = 1.0, lw: float = 1.1,
         edge: str = style.BOX_EDGE, ls: str = "-") -> None:
    from matplotlib.patches import FancyBboxPatch

    r = min(0.12, (y1 - y0) / 4)
    ax.add_patch(FancyBboxPatch((x - w / 2 + r, y0 + r), w - 2 * r, y1 - y0 - 2 * r, boxstyle=f"round,pad={r}",
                                fc=fill, ec=edge, lw=lw, alpha=alpha, zorder=z, ls=ls))


def _label(ax, c: Circuit, colours, axis: str, x: float, y: float, long: bool) -> None:
    size = c.sizes.get(axis)
    text = f"{axis}={size}"
    p = c.placement.get(axis)
    if long and p is not None:
        text += f" · {p.short()}"
    ax.text(x, y, text, color=colours[axis], fontsize=style.SMALL_PT, ha="left", va="center", zorder=6,
            fontweight="bold", bbox={"boxstyle": "round,pad=0.18", "fc": "white", "ec": "none", "alpha": 0.92})


def _join_inside(ax, c: Circuit, colours, n: Node, x: float) -> None:
    """Inside a joining box: contracted wires meet and end, shared ones merge, the rest pass."""
    w = n.width
    xl, xr = x - w / 2, x + w / 2
    ins = _in_lanes(c, n)
    by_axis: dict[str, list[float]] = {}
    for (_, a), y in ins.items():
        by_axis.setdefault(a, []).append(y)
    for a, ys in by_axis.items():
        if a in n.lanes:
            yo = n.lanes[a]
            if len(ys) == 1:
                _curve(ax, c, colours, a, (xl, ys[0]), (xr, yo))
            else:
                xj = xr - 0.3 * w
                for y in ys:
                    _curve(ax, c, colours, a, (xl, y), (xj, yo))
                _wire(ax, c, colours, a, xj, xr, yo, z=3)
                _dot(ax, colours[a], xj, yo, size=5.5)
        else:  # consumed: the wires meet at a dot and end there
            ym = sum(ys) / len(ys)
            xm = xl + 0.5 * w
            for y in ys:
                _curve(ax, c, colours, a, (xl, y), (xm, ym))
            _dot(ax, colours[a], xm, ym, size=9)
            ax.text(xm, ym, "Σ", color="white", fontsize=6.5, ha="center", va="center", zorder=3.6, fontweight="bold")


def draw_circuit(ax, c: Circuit) -> Extent:
    """Draw `c` on `ax` (data units, equal aspect) and return what it covers."""
    colours = style.axis_colours(list(c.sizes))
    nodes = c.nodes
    ext = Extent(0, 0, 0, 0)
    if c.streamed:
        _stream_region(ax, c, ext)
    # wires between nodes (and past the boxes of ops along other axes)
    for n in nodes:
        x = _x(n)
        for k in n.operands:
            p = nodes[k]
            xp = _x(p) + p.width / 2
            for a, y in p.lanes.items():
                passing = n.kind == "along" and a not in n.acts_on
                x_end = x + n.width / 2 if passing else x - n.width / 2
                _wire(ax, c, colours, a, xp, x_end, y)
                if p.kind in ("input", "join"):
                    _label(ax, c, colours, a, xp + 0.14, y, long=p.kind == "input")
            if p.out is not None and p.kind not in ("input",):
                bottom = min(p.lanes.values())
                ax.text(xp + 0.2, bottom - 0.3, f"{p.out.name} : {p.out.dtype}" if p.out.name else p.out.dtype,
                        fontsize=style.SMALL_PT, color=style.MUTED, ha="left", va="top", zorder=5, style="italic")
    for n in nodes:
        x, w = _x(n), n.width
        y0, y1 = box_span(c, n)
        ext.grow(x - w / 2, x + w / 2, y0, node_top(c, n))
        if n.kind == "input":
            _box(ax, x, w, y0, y1, "#FFFFFF", 4, lw=1.4)
            ax.text(x, (y0 + y1) / 2, n.title, fontsize=13, fontweight="bold", ha="center", va="center", color=style.INK, zorder=5)
            ax.text(x, y0 - 0.12, n.note, fontsize=style.SMALL_PT, ha="center", va="top", color=style.MUTED, zorder=5)
            ext.grow(x, x, y0 - 0.45, y1)
        elif n.kind == "output":
            _box(ax, x, w, y0, y1, "#FFFFFF", 4, lw=1.4)
            for y in n.lanes.values():
                _dot(ax, style.INK, x - w / 2, y, z=4.5, size=3.5)
            ax.text(x, (y0 + y1) / 2, n.title, fontsize=13, fontweight="bold", ha="center", va="center", color=style.INK, zorder=5)
            ax.text(x, y0 - 0.12, f"result : {n.note}", fontsize=style.SMALL_PT, ha="center", va="top", color=style.MUTED, zorder=5)
            ext.grow(x, x, y0 - 0.45, y1)
        elif n.kind == "join":
            _box(ax, x, w, y0, y1, style.BOX_FILL, 1, alpha=1.0, lw=0)
            _box(ax, x, w, y0, y1, "none", 4, lw=1.3)
            _join_inside(ax, c, colours, n, x)
        elif n.kind == "along":
            _box(ax, x, w, y0, y1, style.BOX_FILL, 4, lw=1.3)
            for a in n.consumed:  # a consumed axis ends at the box
                src = nodes[n.operands[0]].lanes
                if a in src:
                    _dot(ax, colours[a], x - w / 2, src[a], z=4.5, size=5)
        else:  # elementwise: the wires run through a see-through box
            src = nodes[n.operands[0]].lanes if n.operands else n.lanes
            for a, y in src.items():
                _wire(ax, c, colours, a, x - w / 2, x + w / 2, y, z=2)
            _box(ax, x, w, y0, y1, style.BOX_FILL, 3, alpha=0.55, lw=0)
            _box(ax, x, w, y0, y1, "none", 4, lw=1.3)
        if n.kind not in ("input", "output"):
            top = node_top(c, n)
            if top > y1 + 0.05:  # the title stands above wires passing the box: a thread down to it
                ax.plot([x, x], [y1, top], color=style.MUTED, lw=0.8, ls=(0, (1, 2)), zorder=1.5)
            ax.annotate(n.title, (x, top), xytext=(0, 14 if n.note else 3), textcoords="offset points", ha="center",
                        va="bottom", fontsize=9.5, fontweight="bold", color=style.INK, zorder=6)
            if n.note:
                ax.annotate(n.note, (x, top), xytext=(0, 3), textcoords="offset points", ha="center", va="bottom",
                            fontsize=style.SMALL_PT, color=style.INK, zorder=6)
            ext.grow(x - 1.2, x + 1.2, y0, top + 0.85)
    return ext


def _stream_region(ax, c: Circuit, ext: Extent) -> None:
    """Shade the ops the streaming loop runs (those whose tensors have a streamed axis)
    and say what the loop carries from one tile to the next."""
    streamed = set(c.streamed)

    def touches(n: Node) -> bool:
        bundles = [c.nodes[p].out for p in n.operands] + [n.out]
        return any(b is not None and streamed & set(b.shape) for b in bundles)

    inside = [n for n in c.nodes if n.kind not in ("input", "output") and touches(n)]
    if not inside:
        return
    x0 = min(_x(n) - n.width / 2 for n in inside) - 0.45
    x1 = max(_x(n) + n.width / 2 for n in inside) + 0.45
    y0 = min(box_span(c, n)[0] for n in inside) - 0.45
    y1 = max(node_top(c, n) for n in inside) + 1.05
    from matplotlib.patches import FancyBboxPatch

    ax.add_patch(FancyBboxPatch((x0, y0), x1 - x0, y1 - y0, boxstyle="round,pad=0.05,rounding_size=0.35",
                                fc=style.STREAM_FILL, ec="#D9B24C", lw=1.0, ls=(0, (4, 2)), zorder=0))
    axes = ", ".join(f"{a} in tiles of {c.placement[a].tile}" for a in c.streamed)
    lines = [f"streaming loop: {axes}"]
    if c.state:
        lines.append("carries from tile to tile: " + "; ".join(f"{n} ({s})" for n, s in c.state))
    ax.text(x0 + 0.25, y0 - 0.15, "\n".join(lines), fontsize=style.SMALL_PT, color="#7A5B00", ha="left", va="top",
            zorder=5, linespacing=1.5)
    wide = max(len(line) for line in lines) * 0.16  # 7.5 pt characters, in units
    ext.grow(x0, max(x1, x0 + 0.25 + wide), y0 - 0.35 - 0.42 * len(lines), y1)
