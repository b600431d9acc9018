"""A kernel on the roofline of its GPU, as the napkin model sees it (`napkin-model --plot`).

The axes are the usual ones, log-log: arithmetic intensity (FLOP per byte) across,
FLOP/s up, where FLOPs count the tensor cores' and every other instruction
(`Work.flops`). A kernel is one height, its FLOPs over its predicted time, seen from
each memory level it moves bytes through: its point for HBM stands at its FLOPs per DRAM
byte, for L2 at its FLOPs per byte the tiles move, for shared memory at its FLOPs per
byte staged and read. The ceilings are the model's own (`napkin_ir.model.timing`), so the
one that binds passes through the kernel's points:

- a compute ceiling (tensor cores, f32 ALU, special functions) is the kernel's FLOPs
  over the time that unit needs for its share of them: the unit's peak, scaled by how
  much of the kernel's work is the unit's, by the tail and by the warps an SM has;
- a memory ceiling is a slope, the bandwidth the model gives the level (HBM at the rate
  it sustains or the bytes in flight allow, L2, shared memory scaled like the units).

Dotted grey lines are the datasheet's peaks. At the ncd level each op is a point of its
own (each a kernel, unfused), under the peaks, with the floor one fused kernel could
reach.
"""

from __future__ import annotations

from napkin_ir.draw import style
from napkin_ir.model.report import Report
from napkin_ir.model.timing import BOUND_NAMES, op_times, fused_floor, sustained_hbm

UNIT_COLOURS = {"tensor": "#0072B2", "alu": "#009E73", "sfu": "#CC79A7", "smem": "#B8860B", "l2": "#7F5539", "hbm": "#D55E00",
                "chain": "#56B4E9"}
MEMORY = ("hbm", "l2", "smem")
COMPUTE = ("tensor", "alu", "sfu")


def _kernel_lines(r) -> tuple[dict[str, float], dict[str, tuple[float, float]], float, float]:
    """(compute ceilings, memory level -> (intensity, bandwidth), FLOPs, FLOP/s) of a kernel."""
    c, p = r.cost, r.prediction
    flops = c.work.flops
    height = flops / p.seconds if p.seconds else 0.0
    # products and the math between them, in turn (sm_90a attention): a ceiling below both
    ceilings = {u: flops / p.times[u] for u in (*COMPUTE, "chain") if p.times.get(u)}
    traffic = {"hbm": sum(p.dram.values()), "l2": c.hbm_bytes, "smem": c.smem_read + c.smem_written}
    memory = {u: (flops / b, b / p.times[u]) for u, b in traffic.items() if b and p.times.get(u)}
    return ceilings, memory, flops, height


def plot_roofline(report: Report, path: str) -> None:
    """Write the roofline of every kernel (or ncd function) of `report` to `path`."""
    style.output_format(path)
    plt = style.pyplot()
    panels = len(report.kernels) + len(report.functions)
    fig, axes = plt.subplots(1, panels, figsize=(7.8 * panels, 5.4), squeeze=False)
    for ax, r in zip(axes[0], report.kernels):
        _kernel_panel(ax, r, report)
    for ax, f in zip(axes[0][len(report.kernels):], report.functions):
        _function_panel(ax, f, report)
    fig.tight_layout(pad=1.2)
    style.save(fig, path)
    plt.close(fig)


def _frame(ax, xs: list[float], ys: list[float]) -> tuple[float, float, float, float]:
    x0, x1 = min(xs) / 8, max(xs) * 8
    y0, y1 = min(ys) / 6, max(ys) * 2.2
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_xlabel("arithmetic intensity (FLOP per byte)", fontsize=9)
    ax.set_ylabel("FLOP/s (tensor-core FLOPs and other ops)", fontsize=9)
    ax.grid(True, which="major", color="#E6E6E6", lw=0.6)
    ax.tick_params(labelsize=8)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return x0, x1, y0, y1


def _peaks(ax, hw, instruction: str, x0: float, x1: float) -> None:
    """The datasheet's tensor-core peak (for the kernel's instruction) and the HBM's, dotted."""
    peak = hw.tensor_flops(instruction)
    ax.plot([x0, x1], [peak, peak], color="#9A9A9A", lw=0.9, ls=(0, (1, 2)), zorder=1)
    ax.text(x0 * 1.15, peak * 1.08, f"tensor-core peak ({instruction}) {style.si(peak)}FLOP/s", fontsize=7, color="#8A8A8A",
            va="bottom", ha="left")
    bw = hw.hbm_bytes_per_s
    ax.plot([x0, peak / bw], [bw * x0, peak], color="#9A9A9A", lw=0.9, ls=(0, (1, 2)), zorder=1)


def _kernel_panel(ax, r, report: Report) -> None:
    hw = report.hardware
    ceilings, memory, flops, height = _kernel_lines(r)
    bound = r.prediction.bound
    instruction = r.prediction.instruction
    top = max([*ceilings.values(), hw.tensor_flops(instruction)])
    xs = [x for x, _ in memory.values()] + [top / bw for _, bw in memory.values()]
    floor_peaks = [hw.sfu_ops_per_s, hw.fp32_ops_per_s]
    x0, x1, y0, y1 = _frame(ax, xs or [1.0], [height, top, *ceilings.values(), *floor_peaks])
    _peaks(ax, hw, instruction, x0, x1)
    roof = max(ceilings.values(), default=top)
    for unit in COMPUTE:  # a unit the kernel gives no work: its peak alone, for reference
        if unit not in ceilings:
            peak = {"tensor": hw.tensor_flops(instruction), "alu": hw.fp32_ops_per_s, "sfu": hw.sfu_ops_per_s}[unit]
            ax.plot([x0, x1], [peak, peak], color=UNIT_COLOURS[unit], lw=0.8, ls=(0, (1, 2)), zorder=1, alpha=0.8)
            ax.text(x1 / 1.1, peak * 1.06, f"{BOUND_NAMES[unit]}: none in this kernel (peak {style.si(peak)}/s)",
                    fontsize=7, color=UNIT_COLOURS[unit], ha="right", va="bottom", zorder=5, alpha=0.9)
    for unit, ceiling in ceilings.items():
        binds = unit == bound
        ax.plot([x0, x1], [ceiling, ceiling], color=UNIT_COLOURS[unit], lw=2.6 if binds else 1.3,
                ls="-" if binds else (0, (5, 2)), zorder=3 if binds else 2)
        ax.text(x1 / 1.1, ceiling * 1.06, f"{BOUND_NAMES[unit]}: {style.si(ceiling)}FLOP/s", fontsize=7.5,
                color=UNIT_COLOURS[unit], ha="right", va="bottom", fontweight="bold" if binds else "normal", zorder=5)
    for n, (unit, (x, bw)) in enumerate(sorted(memory.items(), key=lambda kv: kv[1][0])):
        binds = unit == bound
        xe = roof / bw
        ax.plot([x0, xe], [bw * x0, roof], color=UNIT_COLOURS[unit], lw=2.6 if binds else 1.3,
                ls="-" if binds else (0, (5, 2)), zorder=3 if binds else 2)
        xl = max(x0 * 1.3, y0 * 2.2 / bw)  # low on its slope: apart from the others and from the points
        ax.text(xl, bw * xl * 1.25, f"{BOUND_NAMES[unit]} {style.si(bw, 'B/s')}", fontsize=7.5, color=UNIT_COLOURS[unit],
                rotation=_slope_angle(ax), rotation_mode="anchor", ha="left", va="bottom",
                fontweight="bold" if binds else "normal", zorder=5)
        ax.plot([x], [height], marker="*" if binds else "o", ms=14 if binds else 7, color=UNIT_COLOURS[unit],
                mec="white", mew=1.0, zorder=6, ls="none")
        ax.annotate(f"per {BOUND_NAMES[unit]} byte", (x, height), xytext=(6, -13 if n % 2 == 0 else 5), textcoords="offset points",
                    fontsize=7, color=UNIT_COLOURS[unit], zorder=6)
    ax.axhline(height, color=style.INK, lw=0.6, ls=":", zorder=1)
    c, p = r.cost, r.prediction
    ax.set_title(f"@{c.name} ({c.level} level) on the {hw.name}\npredicted {style.seconds(p.seconds)}, "
                 f"{style.si(height)}FLOP/s: bound by {BOUND_NAMES[bound]}", fontsize=10, loc="left")
    ax.text(0.99, 0.015, "solid/dashed: the model's ceilings for this kernel (its mix of work, tail, occupancy);\n"
                         "dotted: the datasheet's peaks", transform=ax.transAxes, fontsize=6.5, color=style.MUTED,
            ha="right", va="bottom")


def _slope_angle(ax) -> float:
    """The on-screen angle of a line of slope one in log-log axes."""
    import math

    ax.figure.canvas.draw_idle()
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    bbox = ax.get_window_extent()
    dx = bbox.width / math.log10(x1 / x0)
    dy = bbox.height / math.log10(y1 / y0)
    return math.degrees(math.atan2(dy, dx))


def _function_panel(ax, f, report: Report) -> None:
    hw = report.hardware
    hbm = sustained_hbm(hw)
    peaks = {"tensor": hw.tensor_flops(hw.best_mma), "alu": hw.fp32_ops_per_s, "sfu": hw.sfu_ops_per_s}
    points = []
    for o in f.ops:
        t = op_times(o, hw)
        b = max(t, key=lambda k: t[k])
        flops = o.work.flops
        if flops and t[b]:
            points.append((o.name.removeprefix("ncd.") + (f" {o.result}" if o.result else ""), flops / (o.read + o.written),
                           flops / t[b], b))
    floor = fused_floor(f, hw)
    fused = (f.work.flops / f.fused_bytes, f.work.flops / floor) if f.fused_bytes and floor else None
    xs = [x for _, x, _, _ in points] + ([fused[0]] if fused else []) + [peaks["tensor"] / hbm]
    ys = [y for _, _, y, _ in points] + list(peaks.values())
    x0, x1, y0, y1 = _frame(ax, xs, ys)
    for unit, peak in peaks.items():
        ax.plot([x0, x1], [peak, peak], color=UNIT_COLOURS[unit], lw=1.3, ls=(0, (5, 2)), zorder=2)
        ax.text(x1 / 1.1, peak * 1.06, f"{BOUND_NAMES[unit]}: {style.si(peak)}/s", fontsize=7.5, color=UNIT_COLOURS[unit],
                ha="right", va="bottom", zorder=5)
    ax.plot([x0, peaks["tensor"] / hbm], [hbm * x0, peaks["tensor"]], color=UNIT_COLOURS["hbm"], lw=1.6, zorder=2)
    xl = max(x0 * 2.2, y0 * 1.6 / hbm)
    ax.text(xl, hbm * xl * 1.25, f"HBM {style.si(hbm, 'B/s')} sustained", fontsize=7.5, color=UNIT_COLOURS["hbm"],
            rotation=_slope_angle(ax), rotation_mode="anchor", ha="left", va="bottom", zorder=5)
    for n, (name, x, y, b) in enumerate(points):
        ax.plot([x], [y], marker="o", ms=7, color=UNIT_COLOURS[b], mec="white", mew=1.0, zorder=6, ls="none")
        ax.annotate(f"{name} ({BOUND_NAMES[b]})", (x, y), xytext=(8, -13 if n % 2 == 0 else 4), textcoords="offset points",
                    fontsize=7.5, color=style.INK, zorder=6)
    if fused:
        ax.plot([fused[0]], [fused[1]], marker="*", ms=14, color=style.BOUND_COLOUR, mec="white", mew=1.0, zorder=6, ls="none")
        ax.annotate("fused (one kernel, the floor)", fused, xytext=(8, 2), textcoords="offset points", fontsize=7.5,
                    color=style.BOUND_COLOUR, zorder=6)
    ax.set_title(f"@{f.name} (ncd level, each op a kernel) on the {hw.name}\nunfused "
                 f"{style.seconds(sum(max(op_times(o, hw).values()) for o in f.ops))}, fused floor {style.seconds(floor)}",
                 fontsize=10, loc="left")
