"""Where the attention backward's kernel waits, beside FA4's: ncu's issue-stall reasons (cycles
a warp spends stalled per issued instruction, by reason), the kernel's time, instructions
and tensor-pipe activity, for napkin's one kernel of dQ, dK and dV and FA4's main backward
kernel at the same shape, profiled in one GPU call. The instruction counts of the two loops
match (research/fa4_backward_sm90_leads.md, session 62), so what is left is in the stalls.

    # on the GPU, FA4 brought by ../shared/tools/fa4-peer (its two calls):
    python3 research/backward_stalls.py profile OUT [--causal] [--d 128] [--n 16384] [--batch 1] [--forward]
    # anywhere, from the CSVs that left:
    python3 research/backward_stalls.py table OUT/napkin.csv OUT/fa4.csv
    # on the GPU: stall samples per SASS instruction (ncu's source page), then anywhere:
    python3 research/backward_stalls.py sass OUT [napkin|fa4] [--causal]
    python3 research/backward_stalls.py hottest OUT/napkin_sass.csv [KERNEL]

`profile` runs ncu (`--clock-control none --profile-from-start off`, the sections named in
`SECTIONS` and the stall metrics, raw page as CSV) on
`run napkin` and on `run fa4`: each runs the backward twice, then once more inside
cudaProfilerStart/Stop, so only that third call's kernels are profiled; the table takes
from each CSV the kernel that ran longest (the main kernel, not the row kernel or the
conversions around it)."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import ncu_raw  # research/

STALLS = ("wait", "dispatch_stall", "long_scoreboard", "short_scoreboard", "barrier", "membar", "mio_throttle",
          "math_pipe_throttle", "lg_throttle", "not_selected", "gmma", "branch_resolving", "no_instruction", "sleeping",
          "misc", "drain", "imc_miss", "tex_throttle", "selected")
STALL = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"
# the figures beside the stalls: the first of each's names the CSV has (the sections give
# some, under names that differ between ncu versions)
OTHER = {"time (us)": ("gpu__time_duration.sum",),
         "instructions (M)": ("smsp__inst_executed.sum", "sm__inst_executed.sum"),
         "issue slots busy (%)": ("smsp__issue_active.avg.pct_of_peak_sustained_active", "sm__inst_issued.avg.pct_of_peak_sustained_elapsed"),
         "tensor pipe (%)": ("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",),  # as tensor_busy.py reads it
         "LSU pipe instructions (%)": ("sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",),
         "MIO instructions issued (%)": ("sm__mio_inst_issued.avg.pct_of_peak_sustained_elapsed",),
         "L1 data pipe wavefronts (%)": ("l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed",
                                         "l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed")}
SCALE = {"gpu__time_duration.sum": 1e-3, "smsp__inst_executed.sum": 1e-6, "sm__inst_executed.sum": 1e-6}  # ns -> us, millions
SECTIONS = ("SpeedOfLight", "WarpStateStats", "ComputeWorkloadAnalysis", "InstructionStats")


def run(who: str, causal: bool, d: int, n: int, forward: bool = False, batch: int = 1) -> None:
    """The backward (or with `forward`, the forward alone) at `batch` x 2048 / d heads, n
    tokens, bf16, three times, the last profiled."""
    import torch

    h = 2048 // d
    if who == "napkin":
        import napkin_ir.torch as nt

        q, k, v = (torch.randn(batch, h, n, d, device="cuda", dtype=torch.bfloat16, requires_grad=not forward) for _ in range(3))

        def call():
            out = nt.attention(q, k, v, "causal" if causal else "softmax")
            if not forward:
                torch.autograd.grad(out, (q, k, v), torch.randn_like(out))
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
        from bench_attention_backward import fa4_func

        flash_attn_func = fa4_func()
        if flash_attn_func is None:
            raise SystemExit("FA4 is not installed here: ../shared/tools/fa4-peer brings it")
        q, k, v = (torch.randn(batch, n, h, d, device="cuda", dtype=torch.bfloat16, requires_grad=not forward) for _ in range(3))

        def call():
            out = flash_attn_func(q, k, v, causal=causal)
            out = out[0] if isinstance(out, tuple) else out
            if not forward:
                torch.autograd.grad(out, (q, k, v), torch.randn_like(out))
    for _ in range(2):
        call()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    call()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


def _run(who: str, causal: bool, d: int, n: int, forward: bool = False, batch: int = 1) -> list[str]:
    """The command line of `run`: `who`'s backward (or forward), the third call profiled."""
    return [sys.executable, __file__, "run", who, "--d", str(d), "--n", str(n), "--batch", str(batch),
            *(["--causal"] if causal else []), *(["--forward"] if forward else [])]


def main_kernel(path: Path) -> dict[str, str]:
    """The row of the launch that ran longest in an ncu raw-page CSV."""
    rows = ncu_raw.launches(path.read_text())
    if not rows:
        raise SystemExit(f"{path}: no kernel profiled")
    return max(rows, key=lambda r: ncu_raw.number(r.get("gpu__time_duration.sum", "0")))


def table(a: Path, b: Path) -> str:
    """The two main kernels' stalls side by side, the largest differences first."""
    ra, rb = main_kernel(a), main_kernel(b)
    out = [f"| | {a.stem} | {b.stem} | difference |", "|---|---|---|---|",
           f"| kernel | {ra['Kernel Name'][:40]} | {rb['Kernel Name'][:40]} | |"]
    for label, names in OTHER.items():
        x, y = (next((ncu_raw.number(r[m]) * SCALE.get(m, 1) for m in names if m in r), float("nan")) for r in (ra, rb))
        out.append(f"| {label} | {x:.1f} | {y:.1f} | {x - y:+.1f} |")
    stalls = [(s, ncu_raw.number(ra.get(STALL.format(s), "nan")), ncu_raw.number(rb.get(STALL.format(s), "nan"))) for s in STALLS]
    total = [sum(x for _, x, _ in stalls if x == x), sum(y for _, _, y in stalls if y == y)]
    out.append(f"| cycles a warp per issued instruction | {total[0]:.2f} | {total[1]:.2f} | {total[0] - total[1]:+.2f} |")
    for s, x, y in sorted(stalls, key=lambda t: -abs(t[1] - t[2]) if t[1] == t[1] and t[2] == t[2] else 0):
        out.append(f"| stalled: {s} | {x:.2f} | {y:.2f} | {x - y:+.2f} |")
    return "\n".join(out)


def profile(out: Path, causal: bool, d: int, n: int, forward: bool = False, batch: int = 1) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for who in ("napkin", "fa4"):
        sections = [x for name in SECTIONS for x in ("--section", name)]
        wanted = [STALL.format(s) for s in STALLS] + ["sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"]
        cmd = ["ncu", "--clock-control", "none", "--profile-from-start", "off", *sections, "--metrics", ",".join(wanted),
               "--csv", "--page", "raw", *_run(who, causal, d, n, forward, batch)]
        with open(out / f"{who}.csv", "w") as f:
            done = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, check=False)
        if done.returncode:
            raise SystemExit(f"ncu on {who} failed ({done.returncode}): see {out / f'{who}.csv'}")
    print(f"b{batch} h{2048 // d} n{n} d{d} bf16{' causal' if causal else ''}{' forward' if forward else ''}, "
          "the third call's main kernels")
    print(table(out / "napkin.csv", out / "fa4.csv"))


def sass(out: Path, who: str, causal: bool, d: int, n: int, forward: bool = False, batch: int = 1) -> None:
    """ncu's stall samples per SASS instruction of `who`'s backward (the third call's
    kernels): `out/WHO.ncu-rep` and its source page as `out/WHO_sass.csv`; the hottest
    instructions of the longest kernel printed."""
    out.mkdir(parents=True, exist_ok=True)
    rep = out / f"{who}.ncu-rep"
    cmd = ["ncu", "--clock-control", "none", "--profile-from-start", "off", "--section", "SourceCounters",
           "--section", "WarpStateStats", "--import-source", "no", "-f", "-o", str(rep.with_suffix("")), *_run(who, causal, d, n, forward, batch)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"ncu on {who} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    page = subprocess.run(["ncu", "--import", str(rep), "--page", "source", "--csv", "--print-source", "sass"],
                          capture_output=True, text=True, check=False)
    (out / f"{who}_sass.csv").write_text(page.stdout)
    if page.returncode:
        raise SystemExit(f"ncu --import failed ({page.returncode}): {page.stderr[-2000:]}")
    print(hottest(out / f"{who}_sass.csv"))


def _source_pages(text: str) -> dict[str, list[dict[str, str]]]:
    """A source-page CSV's kernels (each a `"Kernel Name",NAME` line and its table), by name."""
    import csv
    import io

    pages: dict[str, list[dict[str, str]]] = {}
    for part in text.split('"Kernel Name","')[1:]:
        name, _, table = part.partition("\n")
        pages[name.rstrip('",')] = list(csv.DictReader(io.StringIO(table)))
    return pages


def _count(cell: str | None) -> float:
    x = ncu_raw.number(cell or "0")
    return x if x == x else 0.0


def hottest(path: Path, top: int = 40, kernel: str = "") -> str:
    """Of the kernel with the most stall samples in a source-page CSV (the one named
    `kernel`, else among those whose name holds it): the samples by reason, by opcode, and
    the hottest instructions, each with its largest reasons. The source page has no
    column for the GMMA stall: an HGMMA's samples beyond its listed reasons are mostly
    that (waiting for the tensor pipe)."""
    total = "Warp Stall Sampling (All Samples)"
    every = _source_pages(path.read_text())
    pages = {kernel: every[kernel]} if kernel in every else {k: v for k, v in every.items() if kernel in k}
    if not pages:
        raise SystemExit(f"{path}: no kernel whose name holds {kernel!r}")
    name, rows = max(pages.items(), key=lambda kv: sum(_count(r.get(total)) for r in kv[1]))
    reasons = [c for c in rows[0] if c.startswith("stall_") and "(Not Issued)" not in c]
    whole = sum(_count(r[total]) for r in rows) or 1.0
    pct = lambda x: f"{100 * x / whole:5.2f}%"
    out = [f"{name}: {whole:.0f} samples", "by reason:"]
    by_reason = {c: sum(_count(r[c]) for r in rows) for c in reasons}
    out += [f"  {c:22s} {pct(x)}" for c, x in sorted(by_reason.items(), key=lambda t: -t[1]) if x]
    by_op: dict[str, dict[str, float]] = {}
    for r in rows:
        op = r["Source"].split()[0] if r["Source"].split() else "?"
        if op.startswith("@"):
            op = r["Source"].split()[1]
        entry = by_op.setdefault(op.split(".")[0], {})
        for c in [total, *reasons]:
            entry[c] = entry.get(c, 0.0) + _count(r[c])
    out.append("by opcode (its three largest reasons):")
    for op, e in sorted(by_op.items(), key=lambda t: -t[1][total])[:20]:
        big = sorted(((x, c) for c, x in e.items() if c != total), reverse=True)[:3]
        out.append(f"  {op:12s} {pct(e[total])}  " + ", ".join(f"{c[6:]} {pct(x).strip()}" for x, c in big if x))
    out.append("hottest instructions:")
    for r in sorted(rows, key=lambda r: -_count(r[total]))[:top]:
        big = sorted(((_count(r[c]), c) for c in reasons), reverse=True)[:3]
        out.append(f"  {r['Address']:>6} {pct(_count(r[total]))}  {r['Source'][:58]:58s} "
                   + ", ".join(f"{c[6:]} {pct(x).strip()}" for x, c in big if x))
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=["profile", "run", "table", "sass", "hottest"])
    ap.add_argument("args", nargs="+", help="profile: OUT; run: napkin or fa4; table: two CSVs; sass: OUT [napkin or fa4]; "
                                            "hottest: a source-page CSV [a kernel's name]")
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--n", type=int, default=16384)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--forward", action="store_true", help="profile the forward alone, not the backward")
    a = ap.parse_args()
    if a.mode == "profile":
        profile(Path(a.args[0]), a.causal, a.d, a.n, a.forward, a.batch)
    elif a.mode == "sass":
        sass(Path(a.args[0]), a.args[1] if len(a.args) > 1 else "napkin", a.causal, a.d, a.n, a.forward, a.batch)
    elif a.mode == "hottest":
        print(hottest(Path(a.args[0]), kernel=a.args[1] if len(a.args) > 1 else ""))
    elif a.mode == "run":
        run(a.args[0], a.causal, a.d, a.n, a.forward, a.batch)
    else:
        print(table(Path(a.args[0]), Path(a.args[1])))


if __name__ == "__main__":
    main()
