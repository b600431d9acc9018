"""Draw the four examples at each level, and two rooflines, into docs/img/ (the pictures
README.md and docs/drawing.md show).

    python tools/draw_examples.py            # docs/img/*.png
    python tools/draw_examples.py --out DIR --format svg

Each picture is made the way a user makes it, through napkin-draw's and napkin-model's
command lines, with the tiles written out (not the model's choice, which moves as the
model does), so the pictures change only when the drawing or the compiler does.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

GEMM = 'ncd-relabel{grid="m:128,n:128" stream="k:32"},ncd-to-hbm,hbm-to-smem{stages=3},smem-to-reg{warps="m:2,n:2"}'
ATTENTION = ('ncd-relabel{grid="b,h,i:128" stream="j:64"},ncd-to-hbm,hbm-to-smem{stages=3 layout=pad8},'
             'smem-to-reg{warps="i:8"}')

# (picture, example, pipeline, level)
PICTURES = [
    *((f"{name}-ncd", name, None, None) for name in ("matmul", "attention", "causal_attention", "spherical_attention")),
    ("matmul-hbm", "matmul", GEMM, "hbm"),
    ("matmul-smem", "matmul", GEMM, "smem"),
    ("matmul-reg", "matmul", GEMM, "reg"),
    ("matmul-sm90-reg", "matmul", "napkin-sm90", "reg"),
    *((f"{name}-{level}", name, ATTENTION, level)
      for name in ("attention", "causal_attention", "spherical_attention") for level in ("hbm", "reg")),
]
# (picture, example, pipeline to the level modelled)
ROOFLINES = [
    ("attention-roofline-ncd", "attention", None),
    ("attention-roofline-reg", "attention", ATTENTION),
    ("matmul-roofline-reg", "matmul", GEMM),
]


def _call(main, argv: list[str]) -> None:
    try:
        main(argv)
    except SystemExit as e:
        if e.code:
            raise SystemExit(f"draw_examples: {' '.join(argv)} failed ({e.code})") from None


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    p.add_argument("--format", choices=["png", "svg", "pdf"], default="png")
    p.add_argument("--hw", default="h100")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    import io
    import contextlib

    from napkin_ir.cli import draw, model
    from napkin_ir.passmanager import run_pipeline

    for picture, name, spec, level in PICTURES:
        out = args.out / f"{picture}.{args.format}"
        argv_ = [str(EXAMPLES / f"{name}.mlir"), "-o", str(out), "--hw", args.hw]
        argv_ += ["-p", spec] if spec else []
        argv_ += ["--level", level] if level else []
        _call(draw.main, argv_)
        print(out.relative_to(ROOT) if out.is_relative_to(ROOT) else out)
    for picture, name, spec in ROOFLINES:
        out = args.out / f"{picture}.{args.format}"
        text = (EXAMPLES / f"{name}.mlir").read_text()
        stdin = str(run_pipeline(text, spec)) if spec else text
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()))
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                _call(model.main, ["-", "--hw", args.hw, "--plot", str(out)])
        finally:
            sys.stdin = sys.__stdin__
        print(out.relative_to(ROOT) if out.is_relative_to(ROOT) else out)


if __name__ == "__main__":
    main()
