#!/usr/bin/env python3
"""Run napkin-ir's GPU tests (and, where the machine has it, compute-sanitizer) in one call.

Meant for the lent GPU machine: `python3 tools/gpu_check.py` from the repository root,
with napkin_ir importable (PYTHONPATH=.) and its Python dependencies present. Writes the
full logs to $OUT (or ./gpu-logs) and prints a short table last.

The whole sweep takes about 8 minutes on an H200; a call may run part of it:

    python3 tools/gpu_check.py tests/gpu/test_attention_sm90_gpu.py   # these files' tests
    python3 tools/gpu_check.py -k persistent                           # a pytest selection
    python3 tools/gpu_check.py --no-sanitizer --no-sass ...            # the tests alone
    python3 tools/gpu_check.py --bench                                 # and the quick benchmarks
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import argparse
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(os.environ.get("OUT") or ROOT / "gpu-logs")


def run(cmd: list[str], log: str, env: dict[str, str] | None = None) -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / log, "w") as fh:
        proc = subprocess.run(cmd, cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT, env=env, text=True)
    return proc.returncode


def device_line() -> str:
    smi = shutil.which("nvidia-smi")
    if not smi:
        return "no nvidia-smi"
    out = subprocess.run([smi, "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"], capture_output=True, text=True)
    return out.stdout.strip() or out.stderr.strip()


# `--bench`: each benchmark's quick run after the tests, (what it times, its command, the
# table it writes under $OUT); every one times its peers in the same rounds
BENCHES = [("GEMM against cuBLAS", ["tools/bench_gemm.py", "--quick", "--path", "sm90"], "bench_gemm.txt"),
           ("attention forward against SDPA and FA4", ["tools/bench_attention.py", "--path", "sm90", "--quick"], "bench_attention.txt"),
           ("attention backward against SDPA and FA4", ["tools/bench_attention_backward.py", "--dims", "128", "--seqs", "4096"],
            "bench_attention_backward.txt")]


def bench_tables(env: dict[str, str]) -> tuple[list[str], list[tuple[str, str, str]]]:
    """Run BENCHES, each writing its table under OUT: (the tables' lines, a row each for the
    summary: ran, or its exit status where it wrote no table)."""
    lines, rows = [], []
    for title, cmd, table in BENCHES:
        path, log = OUT / table, table.replace(".txt", ".log")
        path.unlink(missing_ok=True)
        code = run([sys.executable, *cmd], log, {**env, "OUT": str(OUT)})
        if code == 0 and path.exists():
            lines += ["", f"{title}: python3 {' '.join(cmd)}", *path.read_text().rstrip().splitlines()]
            rows.append((f"bench: {title}", "ran", str(path)))
        else:
            rows.append((f"bench: {title}", f"rc={code}", f"no table; see {log}"))
    return lines, rows


def sass_rows(env: dict[str, str]) -> list[tuple[str, str, str]]:
    """Assemble napkin-sm90's default GEMM, attention and attention backward (dQ, dK and dV
    from one kernel, derived by `ncd-grad` from examples/attention.mlir, d=64), and the
    one kernel napkin::attention's backward runs at FlashAttention-3's setting (d=128, 16k
    tokens, 16 heads; without a mask and causal), with this machine's ptxas and count the
    Hopper instructions their SASS holds (HGMMA: wgmma; UTMALDG / UTMASTG: TMA loads and
    stores; STSM: stmatrix; SYNCS: mbarriers), and that no HMMA (mma.sync) is left; with
    ptxas's registers and spills."""
    cuda = Path("/usr/local/cuda/bin")
    ptxas, cuobjdump = shutil.which("ptxas") or cuda / "ptxas", shutil.which("cuobjdump") or cuda / "cuobjdump"
    if not (Path(ptxas).exists() and Path(cuobjdump).exists()):
        return [("sm90 SASS", "skip", "no ptxas or cuobjdump here")]
    OUT.mkdir(parents=True, exist_ok=True)
    rows = []
    gradient = 'ncd-grad{residuals=true},ncd-fold-casts,ncd-extract{function="attention_grad" results="0,1,2" cut="delta"},' \
               'ncd-widen-results{result=0},'
    kernels = [("gemm", "matmul", "", ("HGMMA", "UTMALDG", "UTMASTG", "STSM")),
               ("attention", "attention", "", ("HGMMA", "UTMALDG", "SYNCS")),
               ("attention-backward", "attention", gradient, ("HGMMA", "UTMALDG", "SYNCS")),
               *((f"attention-backward-16k-d128{'-causal' if kind == 'causal' else ''}", kind, None, ("HGMMA", "UTMALDG", "SYNCS"))
                 for kind in ("softmax", "causal"))]
    for name, example, passes, needed in kernels:
        ptx, cubin = OUT / f"napkin_sm90_{name}.ptx", OUT / f"napkin_sm90_{name}.cubin"
        if passes is None:  # napkin::attention's backward kernel as the op compiles it (`example` is the kind)
            write = (f"import napkin_ir.torch as nt; open({str(ptx)!r}, 'w').write(nt.attention_grad_kernel("
                     f"'qkv', {example!r}, None, 1, 16, 16384, 16384, 128, 'bf16', (9, 0)).ptx)")
            code = run([sys.executable, "-c", write], f"sm90-{name}-ptx.log", env)
        else:
            code = run([sys.executable, "-m", "napkin_ir.cli.opt", f"examples/{example}.mlir", "-p", passes + "napkin-sm90", "-t",
                        "ptx", "-o", str(ptx)], f"sm90-{name}-ptx.log", env)
        code = code or run([str(ptxas), "-arch=sm_90a", "-v", str(ptx), "-o", str(cubin)], f"sm90-{name}-ptxas.log", env)
        if code:
            rows.append((f"sm90 SASS ({name})", f"rc={code}", f"see sm90-{name}-ptx.log / sm90-{name}-ptxas.log"))
            continue
        sass = subprocess.run([str(cuobjdump), "-sass", str(cubin)], capture_output=True, text=True).stdout
        (OUT / f"napkin_sm90_{name}.sass").write_text(sass)
        counts = {op: len(re.findall(rf"\b{op}\b", sass)) for op in ("HGMMA", "UTMALDG", "UTMASTG", "STSM", "SYNCS", "HMMA")}
        ok = all(counts[op] > 0 for op in needed) and counts["HMMA"] == 0
        report = (OUT / f"sm90-{name}-ptxas.log").read_text()
        used = re.search(r"Used (\d+) registers", report)
        spills = re.search(r"(\d+) bytes spill stores", report)
        rows.append((f"sm90 SASS ({name})", "pass" if ok else "FAIL", ", ".join(f"{k} x{v}" for k, v in counts.items())
                     + f"; {used.group(1) if used else '?'} registers, {spills.group(1) if spills else '?'} bytes spilled"))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("paths", nargs="*", default=["tests/gpu"], help="test files or directories (default: tests/gpu)")
    ap.add_argument("-k", dest="select", default="", help="a pytest -k expression")
    ap.add_argument("--no-sanitizer", action="store_true", help="skip compute-sanitizer")
    ap.add_argument("--no-sass", action="store_true", help="skip the SASS instruction counts")
    ap.add_argument("--bench", action="store_true", help="then run the quick benchmarks (GEMM, attention forward and "
                                                         "backward, peers in the same rounds) and print their tables")
    args = ap.parse_args()
    select = ["-k", args.select] if args.select else []
    env = {**os.environ, "PYTHONPATH": f"{ROOT}:{os.environ.get('PYTHONPATH', '')}", "PYTHONUNBUFFERED": "1"}
    rows: list[tuple[str, str, str]] = []
    junit = OUT / "gpu-tests.xml"
    rc = run([sys.executable, "-m", "pytest", *args.paths, "-m", "gpu", *select, "-v", "-rs", f"--junitxml={junit}", "-p", "no:cacheprovider"],
             "gpu-tests.log", env)
    if junit.exists():
        for case in ET.parse(junit).getroot().iter("testcase"):
            name = f"{Path(case.get('classname', '')).name}::{case.get('name')}"
            status, detail = "pass", ""
            for tag in ("failure", "error", "skipped"):
                el = case.find(tag)
                if el is not None:
                    status = {"failure": "FAIL", "error": "ERROR", "skipped": "skip"}[tag]
                    detail = (el.get("message") or "").splitlines()[0][:80] if el.get("message") else ""
            rows.append((name, status, detail))
    sanitizer = shutil.which("compute-sanitizer") or next(iter(Path("/usr/local/cuda/bin").glob("compute-sanitizer")), None)
    if args.no_sanitizer:
        pass
    elif sanitizer:
        for tool in ("memcheck", "racecheck", "synccheck"):
            # API errors are not reported: the runtime checks every driver result itself and
            # probes cuFuncGetParamInfo past the last parameter on drivers without a count
            code = run([str(sanitizer), "--tool", tool, "--error-exitcode", "9", "--target-processes", "all", "--report-api-errors", "no",
                        sys.executable, "-m", "pytest", *args.paths, "-m", "gpu and sanitize", *select, "-q", "-p", "no:cacheprovider"],
                       f"sanitizer-{tool}.log", env)
            text = (OUT / f"sanitizer-{tool}.log").read_text(errors="replace")
            summary = re.findall(r"ERROR SUMMARY: \d+ errors?", text)
            rows.append((f"compute-sanitizer {tool}", "pass" if code == 0 else f"rc={code}", summary[-1] if summary else ""))
    else:
        rows.append(("compute-sanitizer", "skip", "not on this machine"))
    if not args.no_sass:
        rows += sass_rows(env)
    if args.bench:
        tables, bench_rows = bench_tables(env)
        rows += bench_rows
        print("\n".join(tables))
        rc = rc or int(any(status != "ran" for _, status, _ in bench_rows))
    print(f"\ndevice: {device_line()}")
    width = max((len(r[0]) for r in rows), default=10)
    for name, status, detail in rows:
        print(f"{name:<{width}}  {status:<6} {detail}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
