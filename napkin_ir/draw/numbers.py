"""The numbers the napkin model reads off a level, set beside the picture.

Everything here comes from `napkin_ir.model.report` (`model_report`, `kernel_dict`,
`function_dict`): bytes at each level, FLOPs, occupancy, the time each unit needs and the
bound. The panel is drawn in inches on its own axes; `axis_key` adds the key to the
wires (each axis's colour, size and, once labelled, where it lives).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from napkin_ir.draw import style
from napkin_ir.model.timing import BOUND_NAMES

LINE = 0.19  # inches between lines
UNIT_NAMES = {"tensor": "tensor cores", "alu": "f32 ALU", "sfu": "special fn", "smem": "shared mem", "l2": "L2", "hbm": "HBM",
              "chain": "in turn"}


@dataclass
class Section:
    title: str
    rows: list[tuple[str, str]] = field(default_factory=list)  # (label, value)
    bars: dict[str, float] | None = None  # unit -> seconds, the binding one marked
    bound: str | None = None
    swatches: list[tuple[str, str, dict]] = field(default_factory=list)  # (colour, text, line style)


def kernel_sections(kernel: dict, hw_name: str) -> list[Section]:
    """Sections from `report.kernel_dict`."""
    k = kernel
    blocks = " × ".join(f"{a} {n}" for a, n in k["blocks"].items()) or "1"
    warps = f"{k['warps_per_block']} warps" + (" (assumed)" if k["warps_assumed"] else "")
    launch = Section("launch", [("grid", f"{blocks} = {k['n_blocks']} blocks"), ("a block", warps)])
    h = k["hbm"]
    traffic = Section("HBM traffic (napkin count)")
    for name, v in h["read"].items():
        traffic.rows.append((f"{name} read", style.si(v, "B")))
    for name, v in h["written"].items():
        traffic.rows.append((f"{name} written", style.si(v, "B")))
    traffic.rows.append(("total", style.si(h["total"], "B")))
    traffic.rows.append(("DRAM estimate", style.si(h["dram_total"], "B")))
    w = k["work"]
    instr = w["instruction"] + (", assumed" if w["instruction_assumed"] else "")
    work = Section("work", [("tensor-core FLOPs", f"{style.si(w['tensor_flops'])} ({instr})"),
                            ("other f32 ops", style.si(w["alu_ops"])), ("special functions", style.si(w["sfu_ops"]))])
    s = k["smem"]
    on_chip = Section("on chip", [("shared memory", f"{style.si(s['per_block'], 'B', True)} a block" + (" (assumed)" if s["assumed"] else "")),
                                  ("smem traffic", f"{style.si(s['written'], 'B')} in, {style.si(s['read'], 'B')} out")])
    r = k["registers"]
    on_chip.rows.append(("registers", f"{r['used']} a thread" + (" (ptxas)" if r["ptxas"] else " (estimate)") if r["used"] else "not known yet"))
    o = k["occupancy"]
    on_chip.rows.append(("occupancy", f"{o['blocks_per_sm']} block{'s' if o['blocks_per_sm'] != 1 else ''} "
                                      f"({o['warps_per_sm']} warps) an SM"))
    on_chip.rows.append(("limited by", o["limiter"]))
    it = k["intensity"]
    inten = Section("FLOP per byte", [(name, f"{v:.1f}") for name, v in (("HBM", it["flop_per_hbm_byte"]),
                    ("DRAM", it["flop_per_dram_byte"]), ("shared memory", it["flop_per_smem_byte"])) if v])
    time = Section(f"time on the {hw_name}", bars=dict(k["times_s"]), bound=k["bound"])
    bound = "products and math in turn" if k["bound"] == "chain" else BOUND_NAMES[k["bound"]]  # fits the panel's width
    time.rows.append(("predicted", f"{style.seconds(k['predicted_s'])}, bound by {bound}"))
    return [launch, traffic, work, on_chip, inten, time]


def function_sections(f: dict, hw_name: str, titles: list[str] | None = None) -> list[Section]:
    """Sections from `report.function_dict`: each op a kernel of its own (unfused), named
    by `titles` (as the picture names them) where given."""
    ops = Section("each op a kernel: bytes · FLOPs · bound")
    names = titles if titles and len(titles) == len(f["ops"]) else [o["op"].removeprefix("ncd.") for o in f["ops"]]
    for o, name in zip(f["ops"], names):
        flops = o["tensor_flops"] + o["alu_ops"] + o["sfu_ops"]
        ops.rows.append((f"{name} {o['result']}", f"{style.si(o['read'] + o['written'], 'B')} · {style.si(flops)} · "
                                                   f"{BOUND_NAMES[o['bound']]}"))
    fusion = Section("HBM bytes", [("unfused", style.si(f["unfused_bytes"], "B")), ("fused", style.si(f["fused_bytes"], "B")),
                                   ("fusion saves", f"{f['saving_bytes'] / f['unfused_bytes'] * 100:.0f}%" if f["unfused_bytes"] else "-")])
    time = Section(f"time on the {hw_name}", [("unfused", style.seconds(f["unfused_time_s"])),
                                               ("fused floor", style.seconds(f["fused_floor_s"]))])
    return [ops, fusion, time]


def axis_key(circuit, colours: dict[str, str], wire_style) -> Section:
    key = Section("axes")
    for a, size in circuit.sizes.items():
        p = circuit.placement.get(a)
        key.swatches.append((colours[a], f"{a} {size}" + (f": {p.describe()}" if p else ""), wire_style(circuit, a)))
    return key


def section_height(s: Section) -> float:
    return LINE * (1.3 + len(s.rows) + len(s.swatches) + (len(s.bars) if s.bars else 0)) + 0.12


def panel_height(sections: list[Section]) -> float:
    return sum(section_height(s) for s in sections)


def flow(sections: list[Section], height: float, most: int = 3) -> list[list[Section]]:
    """The sections in order, in as few columns (up to `most`) as keep each near `height`."""
    total = panel_height(sections)
    n = 1
    while n < most and total / n > height * 1.15:
        n += 1
    target = total / n
    columns: list[list[Section]] = [[]]
    used = 0.0
    for s in sections:
        h = section_height(s)
        if columns[-1] and used + h / 2 > target and len(columns) < n:
            columns.append([])
            used = 0.0
        columns[-1].append(s)
        used += h
    return columns


def draw_panel(ax, sections: list[Section], x: float, y: float, width: float) -> float:
    """Draw the sections top-down from (x, y); return the height used."""
    pos = y
    for s in sections:
        ax.text(x, pos, s.title, fontsize=9, fontweight="bold", color=style.INK, va="top", ha="left", zorder=6)
        ax.plot([x, x + width], [pos - 0.2, pos - 0.2], color="#D0D0D0", lw=0.6, zorder=5)
        pos -= LINE * 1.3
        for colour, text, st in s.swatches:
            ax.plot([x + 0.02, x + 0.42], [pos - 0.08, pos - 0.08], color=colour, lw=st["lw"], ls=st["ls"],
                    solid_capstyle="butt", zorder=6)
            if st.get("grid"):
                ax.plot([x + 0.02, x + 0.42], [pos - 0.08, pos - 0.08], color="white", lw=1.0, zorder=6.1, solid_capstyle="butt")
            ax.text(x + 0.52, pos, text, fontsize=7.5, color=style.INK, va="top", ha="left", zorder=6)
            pos -= LINE
        if s.bars:
            longest = max(s.bars.values()) or 1.0
            for unit, t in s.bars.items():
                bound = unit == s.bound
                colour = style.BOUND_COLOUR if bound else "#9AA5B1"
                ax.text(x, pos, UNIT_NAMES.get(unit, unit), fontsize=7.5, color=style.INK, va="top", ha="left",
                        fontweight="bold" if bound else "normal", zorder=6)
                bx, bw = x + 0.85, (width - 1.75) * t / longest
                from matplotlib.patches import Rectangle

                ax.add_patch(Rectangle((bx, pos - 0.14), max(bw, 0.01), 0.11, fc=colour, ec="none", zorder=6))
                ax.text(bx + max(bw, 0.01) + 0.05, pos, style.seconds(t), fontsize=7, color=colour if bound else style.MUTED,
                        va="top", ha="left", zorder=6)
                pos -= LINE
        for label, value in s.rows:
            ax.text(x, pos, label, fontsize=7.5, color=style.MUTED, va="top", ha="left", zorder=6)
            ax.text(x + 1.15, pos, value, fontsize=7.5, color=style.INK, va="top", ha="left", zorder=6)
            pos -= LINE
        pos -= 0.12
    return y - pos
