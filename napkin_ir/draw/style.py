"""The look every napkin picture shares: matplotlib set up for files, colours, sizes.

matplotlib is an optional dependency (`pip install 'napkin-ir[draw]'`); `pyplot()` says
how to install it when it is missing. SVG keeps its text as `<text>` elements
(`svg.fonttype: none`), so a picture's labels can be searched and read back.
"""

from __future__ import annotations

from napkin_ir.errors import UserError

# Okabe and Ito's colours, told apart with every kind of colour blindness, darkened
# where they are too light for thin lines on white.
AXIS_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#B8860B", "#4BA3D6", "#7F5539", "#555555")
INK = "#222222"
MUTED = "#6B6B6B"
PAPER = "white"
BOX_FILL = "#F4F1EA"  # an op's box: the napkin's paper
BOX_EDGE = "#3A3A3A"
STREAM_FILL = "#FFF4D6"  # the ops a streamed loop runs
GRID_FILL = "#E3EEF9"
BOUND_COLOUR = "#C0392B"

FONT = "DejaVu Sans"  # ships with matplotlib
TITLE_PT = 12
TEXT_PT = 8.5
SMALL_PT = 7.5

FORMATS = ("svg", "png", "pdf")


def pyplot():
    """matplotlib's pyplot on a file-only backend, or a diagnostic saying how to get it."""
    try:
        import matplotlib
    except ImportError:
        raise UserError("drawing needs matplotlib: pip install 'napkin-ir[draw]'") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({
        "svg.fonttype": "none",  # text stays text: searchable, and read back by the tests
        "svg.hashsalt": "napkin",  # the same picture gives the same file
        "font.family": "sans-serif",
        "font.sans-serif": [FONT],
        "font.size": TEXT_PT,
        "axes.unicode_minus": True,
        "figure.dpi": 100,
        "savefig.dpi": 150,
        "path.simplify": False,
    })
    return plt


def output_format(path: str) -> str:
    fmt = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    if fmt not in FORMATS:
        raise UserError(f"cannot tell the picture's format from '{path}': name it .svg, .png or .pdf")
    return fmt


def save(fig, path: str) -> None:
    fmt = output_format(path)
    metadata = {"Date": None} if fmt == "svg" else {}  # reproducible files
    from napkin_ir.files import atomic_output

    with atomic_output(path, "wb") as out:  # the whole picture or the old file, never half of one
        fig.savefig(out, format=fmt, facecolor=PAPER, metadata=metadata or None)


def axis_colours(axes: list[str]) -> dict[str, str]:
    return {a: AXIS_COLOURS[i % len(AXIS_COLOURS)] for i, a in enumerate(dict.fromkeys(axes))}


def si(x: float, unit: str = "", binary: bool = False) -> str:
    """3 significant figures and a prefix: 1.57 M, 24.0 KiB."""
    if x is None:
        return "-"
    base, prefixes = (1024.0, ("", "Ki", "Mi", "Gi", "Ti")) if binary else (1000.0, ("", "k", "M", "G", "T", "P"))
    v, p = float(x), 0
    while abs(v) >= base and p < len(prefixes) - 1:
        v /= base
        p += 1
    text = f"{v:.0f}" if p == 0 and v == int(v) else f"{v:.3g}"
    sep = " " if unit or prefixes[p] else ""
    return f"{text}{sep}{prefixes[p]}{unit}"


def seconds(s: float) -> str:
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    if s >= 1e-6:
        return f"{s * 1e6:.3g} µs"
    return f"{s * 1e9:.3g} ns"
