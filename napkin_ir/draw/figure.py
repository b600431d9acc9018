"""One picture of a module at one level: the diagram, what a block holds, and the numbers.

- `ncd`: the diagram (`napkin_ir.draw.circuit`), with the model's unfused cost;
- `hbm`: the diagram with each axis marked by where it lives and the streaming loop's
  state, with the kernel's cost;
- `smem`, `reg`: the same diagram above what one block holds (`napkin_ir.draw.anatomy`).

The numbers on the right are the napkin model's (`napkin_ir.model.report`) for the GPU
named. `draw_lowered` writes the picture to a file (.svg, .png or .pdf).
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from napkin_ir.dialects import hbm
from napkin_ir.draw import style
from napkin_ir.draw.anatomy import draw_anatomy, read_anatomy
from napkin_ir.draw.circuit import _wire_style, build_circuit, draw_circuit
from napkin_ir.draw.levels import Lowered, diagram_functions
from napkin_ir.draw.numbers import Section, axis_key, draw_panel, flow, function_sections, kernel_sections, panel_height
from napkin_ir.errors import UserError

INCH = 0.42  # inches a unit of the diagram
MARGIN = 0.3
PANEL = 3.7  # the numbers' column
HEADER = 0.75
GAP = 0.45

LEVEL_SAYS = {
    "ncd": "the diagram",
    "hbm": "the diagram as the grid tiles it and the block streams it",
    "smem": "the diagram, and what one block stages in shared memory",
    "reg": "the diagram, and how one block's warps share it",
}


def _one(module: ModuleOp) -> tuple[hbm.KernelOp | None, int]:
    kernels = [k for k in module.walk() if isinstance(k, hbm.KernelOp)]
    n = len(kernels) + len(diagram_functions(module))
    return (kernels[0] if kernels else None), n


def _kernel(module: ModuleOp | None) -> hbm.KernelOp | None:
    if module is None:
        return None
    return next((k for k in module.walk() if isinstance(k, hbm.KernelOp)), None)


def model_sections(module: ModuleOp, hw: str, titles: list[str] | None = None) -> tuple[list[Section], str]:
    """The model's numbers for the module, or a section that says why there are none."""
    from napkin_ir.model.hardware import hardware
    from napkin_ir.model.report import function_dict, kernel_dict, model_report

    hwr = hardware(hw)
    try:
        report = model_report(module, hwr)
    except UserError as e:
        return [Section("napkin model", [("", line) for line in _wrap(str(e), 52)])], hwr.name
    sections: list[Section] = []
    for k in report.kernels:
        sections += kernel_sections(kernel_dict(k), hwr.name)
    for f in report.functions:
        sections += function_sections(function_dict(f, hwr), hwr.name, titles)
    return sections, hwr.name


def _wrap(text: str, width: int) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width) or [""]


def draw_lowered(lowered: Lowered, path: str, hw: str = "h100") -> None:
    """Draw `lowered` (from `napkin_ir.draw.levels.prepare`) into `path`."""
    style.output_format(path)
    plt = style.pyplot()
    module, level = lowered.module, lowered.level
    kernel, count = _one(module)
    if count != 1:
        raise UserError(f"napkin-draw draws one function or kernel a picture; the module has {count}"
                        + ("" if count else " (nothing to draw)"))
    diagram = module if level == "ncd" else lowered.diagram
    # the loop's state as the hbm level has it (per block, not per warp); none for a diagram
    state_from = None if level == "ncd" else _kernel(lowered.kernel_module) or kernel
    circuit = build_circuit(diagram, state_from)
    colours = style.axis_colours(list(circuit.sizes))

    fig = plt.figure()
    ax_c = fig.add_axes((0, 0, 1, 1))
    ext = draw_circuit(ax_c, circuit)
    wc, hc = (ext.x1 - ext.x0 + 0.6) * INCH, (ext.y1 - ext.y0 + 0.6) * INCH
    ax_c.set_xlim(ext.x0 - 0.3, ext.x1 + 0.3)
    ax_c.set_ylim(ext.y0 - 0.3, ext.y1 + 0.3)

    wa = ha = 0.0
    ax_a = None
    if level in ("smem", "reg") and kernel is not None:
        ax_a = fig.add_axes((0, 0, 1, 1))
        wa, ha = draw_anatomy(ax_a, read_anatomy(kernel), colours, 0.0, 0.0)
        ax_a.set_xlim(-0.1, wa + 0.1)
        ax_a.set_ylim(-ha - 0.1, 0.1)
        wa, ha = wa + 0.2, ha + 0.2

    sections, hw_name = model_sections(module, hw, circuit.ops() if level == "ncd" else None)
    sections.insert(0, axis_key(circuit, colours, _wire_style))

    caption = circuit.caption
    cap_h = 0.3 if caption else 0.0
    left_w = max(wc, wa)
    left_h = hc + (GAP + ha if ax_a is not None else 0.0) + cap_h
    columns = flow(sections, max(left_h, 4.6))
    hp = max(panel_height(c) for c in columns) + 0.1
    W = MARGIN + left_w + GAP + PANEL * len(columns) + MARGIN
    H = HEADER + max(left_h, hp) + MARGIN
    fig.set_size_inches(W, H)

    def place(ax, x, y_top, w, h):
        ax.set_position((x / W, (H - y_top - h) / H, w / W, h / H))
        ax.set_aspect("equal", adjustable="box")
        ax.axis("off")

    place(ax_c, MARGIN + (left_w - wc) / 2, HEADER, wc, hc)
    if ax_a is not None:
        place(ax_a, MARGIN, HEADER + hc + GAP, wa, ha)
    for n, column in enumerate(columns):
        ax_p = fig.add_axes((0, 0, 1, 1))
        used = draw_panel(ax_p, column, 0.0, 0.0, PANEL - 0.35)
        ax_p.set_xlim(-0.05, PANEL - 0.05)
        ax_p.set_ylim(-max(used, hp), 0.0)
        place(ax_p, MARGIN + left_w + GAP + n * PANEL, HEADER, PANEL, max(used, hp))

    name = circuit.name
    fig.text(MARGIN / W, 1 - 0.22 / H, f"@{name} at the {level} level", fontsize=style.TITLE_PT + 2, fontweight="bold",
             color=style.INK, va="top", ha="left")
    sub = LEVEL_SAYS[level] + (f"; {lowered.how}" if lowered.how else "")
    per_line = max(60, int((W - 2 * MARGIN) * 17))  # characters of 7.5 pt a line
    fig.text(MARGIN / W, 1 - 0.5 / H, "\n".join(_wrap(sub, per_line)[:2]), fontsize=7.5, color=style.MUTED,
             va="top", ha="left", linespacing=1.4)
    fig.text((MARGIN + left_w + GAP) / W, 1 - 0.28 / H, f"napkin model, {hw_name}", fontsize=10, fontweight="bold",
             color=style.INK, va="top", ha="left")
    if caption:
        fig.text(MARGIN / W, (MARGIN + 0.05) / H, caption, fontsize=7.5, color=style.MUTED, va="bottom", ha="left",
                 style="italic")
    style.save(fig, path)
    plt.close(fig)
