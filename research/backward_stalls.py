"""Where the attention backward's kernel waits, beside FA4's: ncu's issue-stall reasons (cycles
a warp spends stalled per issued instruction, by reason), the kernel's time, instructions
and tensor-pipe activity, for napkin's one kernel of dQ, dK and dV and FA4's main backward
kernel at the same shape, profiled in one GPU call. The instruction counts of the two loops
match (research/fa4_backward_sm90_leads.md, session 62), so what is left is in the stalls.

    # on the GPU, FA4 brought by ../shared/tools/fa4-peer (its two calls):
    python3 research/backward_stalls.py profile OUT [--causal] [--d 128] [--n 16384]
    # anywhere, from the CSVs that left:
    python3 research/backward_stalls.py table OUT/napkin.csv OUT/fa4.csv

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
         "issue slots busy (%)": ("smsp__issue_active.avg.pct_of_peak_sustained_active",),
         "tensor pipe (%)": ("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",),  # as tensor_busy.py reads it
         "shared memory wavefronts (%)": ("l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed",)}
SCALE = {"gpu__time_duration.sum": 1e-3, "smsp__inst_executed.sum": 1e-6, "sm__inst_executed.sum": 1e-6}  # ns -> us, millions
SECTIONS = ("SpeedOfLight", "WarpStateStats", "ComputeWorkloadAnalysis", "InstructionStats")


def run(who: str, causal: bool, d: int, n: int) -> None:
    """The backward at b=1, 2048 / d heads, n tokens, bf16, three times, the last profiled."""
    import torch

    h = 2048 // d
    if who == "napkin":
        import napkin_ir.torch as nt

        q, k, v = (torch.randn(1, h, n, d, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))

        def call():
            out = nt.attention(q, k, v, "causal" if causal else "softmax")
            torch.autograd.grad(out, (q, k, v), torch.randn_like(out))
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
        from bench_attention_backward import fa4_func

        flash_attn_func = fa4_func()
        if flash_attn_func is None:
            raise SystemExit("FA4 is not installed here: ../shared/tools/fa4-peer brings it")
        q, k, v = (torch.randn(1, n, h, d, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))

        def call():
            out = flash_attn_func(q, k, v, causal=causal)
            out = out[0] if isinstance(out, tuple) else out
            torch.autograd.grad(out, (q, k, v), torch.randn_like(out))
    for _ in range(2):
        call()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    call()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


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


def profile(out: Path, causal: bool, d: int, n: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for who in ("napkin", "fa4"):
        sections = [x for name in SECTIONS for x in ("--section", name)]
        wanted = [STALL.format(s) for s in STALLS] + ["sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"]
        cmd = ["ncu", "--clock-control", "none", "--profile-from-start", "off", *sections, "--metrics", ",".join(wanted),
               "--csv", "--page", "raw", sys.executable, __file__, "run", who, "--d", str(d), "--n", str(n),
               *(["--causal"] if causal else [])]
        with open(out / f"{who}.csv", "w") as f:
            done = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, check=False)
        if done.returncode:
            raise SystemExit(f"ncu on {who} failed ({done.returncode}): see {out / f'{who}.csv'}")
    print(f"b1 h{2048 // d} n{n} d{d} bf16{' causal' if causal else ''}, the third call's main kernels")
    print(table(out / "napkin.csv", out / "fa4.csv"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=["profile", "run", "table"])
    ap.add_argument("args", nargs="+", help="profile: OUT; run: napkin or fa4; table: two CSVs")
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--n", type=int, default=16384)
    a = ap.parse_args()
    if a.mode == "profile":
        profile(Path(a.args[0]), a.causal, a.d, a.n)
    elif a.mode == "run":
        run(a.args[0], a.causal, a.d, a.n)
    else:
        print(table(Path(a.args[0]), Path(a.args[1])))


if __name__ == "__main__":
    main()
