"""Compile a fixed set of diagrams and pipeline options to PTX and print one hash a case,
so a refactor of the planner, the passes or the lowerings can show that it changed no
kernel: `python3 tools/ptx_snapshot.py > before.txt`, change, then
`python3 tools/ptx_snapshot.py --compare before.txt` lists the cases whose PTX (or whose
error) differs. Each copy of the script compiles with the `napkin_ir` of its own checkout
(`python3 ../old/tools/ptx_snapshot.py > before.txt` snapshots another tree). `--write DIR`
keeps each case's PTX, to diff one by hand.

The cases: every example under both named pipelines with their defaults, the README's
option variants, and attention and GEMM diagrams generated at the shapes the benchmarks
and the torch ops use (head dims 64 to 256, short and long streams, packed query heads,
batched and f32-output GEMMs, shapes smaller than a tile, dQ's scale out of f32)."""

from __future__ import annotations

import argparse
import hashlib
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the napkin_ir beside this script, not an installed one: two checkouts compare


def cases() -> list[tuple[str, str, str]]:
    """(name, diagram text, pipeline) of every case."""
    from napkin_ir.attention_diagrams import attention_diagram, gqa_attention_diagram, gradient_passes
    from napkin_ir.diagrams import gemm, scaled

    out: list[tuple[str, str, str]] = []
    examples = sorted((ROOT / "examples").glob("*.mlir"))
    for path in examples:
        for pipe in ("napkin-sm80", "napkin-sm90"):
            out.append((f"{path.stem}/{pipe}", path.read_text(), pipe))
    ex = {p.stem: p.read_text() for p in examples}
    variants = [
        ("matmul", 'napkin-sm80{block="256,128,64" warps="4,2" stages=3 layout=pad8}'),
        ("matmul", "napkin-sm80{group=16}"),
        ("matmul", "napkin-sm90{persistent=false store=direct}"),
        ("matmul", "napkin-sm90{cluster=2}"),
        ("matmul", 'napkin-sm90{block="128,128,64" stages=5}'),
        ("matmul", "napkin-sm90{blocks_per_sm=2}"),
        ("matmul", "napkin-sm80{autotile=true hw=h200}"),
        ("matmul", "napkin-sm90{autotile=true hw=h200}"),
        ("attention", "napkin-sm90{autotile=true hw=h200}"),
        ("causal_attention", "napkin-sm90{persistent=false}"),
        ("causal_attention", "napkin-sm90{overlap=false pingpong=false}"),
        ("attention", "napkin-sm90{q_registers=false}"),
        ("attention", 'napkin-sm90{block="192,128"}'),
        ("attention", "napkin-sm90{store=direct}"),
        ("attention", 'napkin-sm80{block="64,64" warps="4" stages=2}'),
    ]
    for stem, pipe in variants:
        out.append((f"{stem}/{pipe}", ex[stem], pipe))
    for kind in ("softmax", "causal", "spherical"):
        for n, d in ((1024, 64), (1024, 128), (4096, 64), (4096, 128), (16384, 64), (16384, 128), (4096, 256), (8192, 256), (3000, 128),
                     (100, 64)):
            text = attention_diagram(kind, 1, 2, n, d)
            out.append((f"attention-{kind}-n{n}-d{d}/napkin-sm90", text, "napkin-sm90"))
            if d <= 128 and n <= 4096:
                out.append((f"attention-{kind}-n{n}-d{d}/napkin-sm80", text, "napkin-sm80"))
        for n, d, r in ((1024, 128, 4), (4096, 64, 4), (16384, 64, 8), (2048, 128, 8)):
            text = gqa_attention_diagram(kind, 1, 2, r, n, d)
            out.append((f"gqa-{kind}-n{n}-d{d}-r{r}/napkin-sm90", text, "napkin-sm90"))
            out.append((f"gqa-{kind}-n{n}-d{d}-r{r}/napkin-sm80", text, "napkin-sm80"))
    # the kernels of attention's gradient that napkin::attention_backward runs
    for kind in ("softmax", "causal", "spherical"):
        for n, d, parts in ((1024, 64, ("delta", "q", "kv")), (4096, 128, ("delta", "q", "kv", "qkv")),
                            (8192, 256, ("delta", "q", "kv", "k", "v")), (1024, 256, ("q", "k", "v")), (16384, 64, ("qkv",)),
                            (16384, 128, ("qkv",))):
            for part in parts:
                text = attention_diagram(kind, 1, 2, n, d)
                out.append((f"grad-{part}-{kind}-n{n}-d{d}/napkin-sm90", text, f"{gradient_passes(kind, part)},napkin-sm90"))
        text = gqa_attention_diagram(kind, 1, 2, 4, 2048, 128)
        out.append((f"grad-kv-gqa-{kind}-n2048-d128-r4/napkin-sm90", text, f"{gradient_passes(kind, 'kv', True)},napkin-sm90"))
    # dQ's scale and rounding out of f32 (`napkin_ir.torch.scaled_kernel`), over 16k tokens at d=128, and a row of 8
    for rows, cols in ((262144, 128), (3, 8)):
        for pipe in ("napkin-sm80", "napkin-sm90"):
            out.append((f"scaled-{rows}x{cols}/{pipe}", scaled(rows, cols, 0.08838834764831845), pipe))
    gemms = [((4096, 4096, 4096), {}), ((5000, 3000, 2056), {}), ((256, 8192, 8192), {}), ((100, 70, 40), {}),
             ((1024, 1024, 1024), {"b_nk": True}), ((512, 512, 256), {"batch": 3}), ((1024, 512, 256), {"out_dtype": "f32"}),
             ((1024, 1024, 512), {"bias": "n", "relu": True}), ((1024, 1024, 512), {"bias": "m", "bias_dtype": "bf16"}),
             ((2048, 2048, 2048), {"dtype": "f16"})]
    for (m, n, k), kw in gemms:
        tag = "-".join(f"{a}={b}" for a, b in kw.items())
        text = gemm(m, n, k, **kw)
        for pipe in ("napkin-sm80", "napkin-sm90"):
            out.append((f"gemm-{m}x{n}x{k}{'-' + tag if tag else ''}/{pipe}", text, pipe))
    return out


def compile_case(case: tuple[str, str, str]) -> tuple[str, str, str]:
    """(name, hash or error line, PTX or '')."""
    import contextlib
    import io

    from napkin_ir.passmanager import compile_to_ptx

    name, text, pipe = case
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            ptx = compile_to_ptx(text, pipe)
    except Exception as e:  # noqa: BLE001 - a refused case is part of the snapshot
        return name, "error: " + " ".join(str(e).split())[:200], ""
    return name, hashlib.sha256(ptx.encode()).hexdigest()[:16], ptx


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compare", type=Path, help="a snapshot printed before: list the cases that differ from it")
    ap.add_argument("--write", type=Path, help="a folder to write each case's PTX into")
    ap.add_argument("-j", type=int, default=4, help="processes")
    ap.add_argument("-k", default="", help="only the cases whose name contains this")
    args = ap.parse_args()
    todo = [c for c in cases() if args.k in c[0]]
    with ProcessPoolExecutor(args.j) as pool:
        results = list(pool.map(compile_case, todo))
    lines = [f"{name}\t{digest}" for name, digest, _ in results]
    if args.write:
        args.write.mkdir(parents=True, exist_ok=True)
        for name, _, ptx in results:
            if ptx:
                (args.write / (name.replace("/", "__").replace('"', "").replace(" ", "_") + ".ptx")).write_text(ptx)
    if not args.compare:
        print("\n".join(lines))
        return 0
    before = dict(line.split("\t", 1) for line in args.compare.read_text().splitlines() if "\t" in line)
    changed = [f"{name}\n  before: {before.get(name, '(absent)')}\n  after:  {digest}" for name, digest, _ in results
               if before.get(name) != digest]
    print("\n".join(changed) if changed else f"all {len(results)} cases identical")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
