"""What the attention backward's one kernel spends on, by subtraction: napkin's fused dQ/dK/dV
kernel at 16k, and copies of its PTX with one kind of instruction taken out, timed side by
side. The copies compute wrong values; their times bound what removing that work could give.

    python3 research/backward_subtraction.py make DIR [--d 128] [--queries N] [--n 16384]   # here (no GPU): the PTX copies
    python3 research/backward_subtraction.py time DIR             # on the GPU (carry DIR)

Variants, for the kernel without a mask (`n_`) and under a causal one (`c_`): `nodq`
(dQ's `cp.reduce.async.bulk`), `v4` (the stage written as FA4 writes it: a thread's fragment,
four values a `st.shared.v4.f32`, thread-major, the same bytes; the sums land permuted),
`v4once` (the same, the lane's part of those addresses made once where the kernel starts),
`offsts` (the consumers' `st.shared.f32` of dQ's partial
sums into its stage predicated off by a predicate false at run time that ptxas cannot fold:
issued, but moving nothing; taken out instead, ptxas drops dQ^T's wgmmas, whose results
nothing else reads), `nowait` (the consumers' wait for that stage to be empty: they
write over a stage the store role may still be reading) and `noepi` (dK's and dV's
global stores after the loop predicated off the same way: what the epilogue's stores
cost). Session 60's table (with dS's scale, since moved out by
`ncd-sink-scales`, and a variant `nolog2e` without the multiply by log2 e before `ex2`,
since folded into the scale and the statistic by `ncd-fold-log2e`): research/benchmarks.md."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import kernel_copies  # research/

KINDS = {"n": "softmax", "c": "causal"}
# the consumers' wait for dQ's stage, just before dQ^T's wgmma is waited for
STAGE_WAIT = re.compile(r"(\tmbarrier\.try_wait\.parity\.shared::cta\.b64 (%p\d+), \[%r\d+\], %r\d+;\n)\t@\2 bra (\$L__BB\d+_\d+);\n"
                        r"(\tbra\.uni \$L__BB\d+_\d+;\n\3:\n\twgmma\.wait_group\.sync\.aligned 1;\n)")


def _stores_off(ptx: str, store: str = "st.shared.f32 ") -> str:
    """`ptx` with every unpredicated `store` (an opcode with its trailing space, or a
    prefix of opcodes: `st.global.`) under a predicate that is false at run time (the
    grid's z extent, 1, compared with 7777) and that ptxas cannot fold."""
    regs = ptx.index("\t.reg .b32")
    ptx = ptx[:regs] + "\t.reg .pred %poff;\n\t.reg .b32 %roff;\n" + ptx[regs:]
    first = ptx.index("\tld.param")
    ptx = ptx[:first] + "\tmov.u32 %roff, %nctaid.z;\n\tsetp.eq.u32 %poff, %roff, 7777;\n" + ptx[first:]
    return ptx.replace(f"\t{store}", f"\t@%poff {store}")


STAGE_STORE = re.compile(r"^\tst\.shared\.f32 \[(%r\d+)(?:\+(\d+))?\], %f(\d+);$")


def _stores_v4(ptx: str, once: bool = False) -> str:
    """`ptx` with each loop's `st.shared.f32` of dQ's partial sums replaced by FA4's writes:
    a thread's fragment, four neighbouring values a `st.shared.v4.f32`, thread-major in its
    warpgroup's half of the stage (the same bytes, conflict-free; the values land permuted,
    so the reduce adds them in the wrong places)."""
    lines = ptx.split("\n")
    at = [n for n, ln in enumerate(lines) if STAGE_STORE.match(ln)]
    runs, run = [], [at[0]]
    for n in at[1:]:
        if n - run[-1] > 100:  # the next loop's stores
            runs.append(run)
            run = []
        run.append(n)
    runs.append(run)
    out = list(lines)
    regs: list[str] = []
    entry: list[str] = []
    for r, run in enumerate(runs):
        # the stage's address: the first store's is `add.u32 %rA, %rSTAGE, %rPLACE` (the
        # lane's place in a stage computed once, where the consumers start)
        address = STAGE_STORE.match(lines[run[0]]).group(1)  # type: ignore[union-attr]
        m = re.match(rf"^\tadd\.u32 {address}, (%r\d+), %r\d+;$", lines[run[0] - 1])
        assert m, lines[run[0] - 2 : run[0] + 1]
        base = m.group(1)
        vals = sorted(int(STAGE_STORE.match(lines[n]).group(3)) for n in run)
        assert len(vals) % 4 == 0 and vals == list(range(vals[0], vals[0] + len(vals)))
        region = len(vals) * 128 * 4
        t, a = f"%rv4t{r}", f"%rv4a{r}"
        regs += [t, a, f"%rv4w{r}"]
        lane = [f"\tmov.u32 {t}, %tid.x;", f"\tshr.u32 %rv4w{r}, {t}, 7;", f"\tand.b32 %rv4w{r}, %rv4w{r}, 1;",
                f"\tmul.lo.u32 %rv4w{r}, %rv4w{r}, {region};", f"\tand.b32 {t}, {t}, 127;", f"\tshl.b32 {t}, {t}, 4;",
                f"\tadd.u32 {t}, {t}, %rv4w{r};"]
        if once:  # the lane's part where the kernel starts, a tile adds the stage's address
            entry += lane
            code = [f"\tadd.u32 {a}, {base}, {t};"]
        else:
            code = lane + [f"\tadd.u32 {a}, {base}, {t};"]
        for k in range(len(vals) // 4):
            f = vals[4 * k:4 * k + 4]
            code.append(f"\tst.shared.v4.f32 [{a}+{k * 2048}], {{%f{f[0]}, %f{f[1]}, %f{f[2]}, %f{f[3]}}};")
        for n in run:
            out[n] = None
        out[run[-1]] = "\n".join(code)
    text = "\n".join(ln for ln in out if ln is not None)
    if entry:
        first = text.index("\tld.param")
        text = text[:first] + "\n".join(entry) + "\n" + text[first:]
    decl = text.index("\t.reg .b32")
    return text[:decl] + "".join(f"\t.reg .b32 {x};\n" for x in regs) + text[decl:]


def _variants(ptx: str) -> dict[str, str]:
    lines = ptx.split("\n")
    return {"base": ptx,
            "nodq": "\n".join(ln for ln in lines if not ln.strip().startswith("cp.reduce.async.bulk")),
            "offsts": _stores_off(ptx),
            "noepi": _stores_off(ptx, "st.global."),
            "v4": _stores_v4(ptx),
            "v4once": _stores_v4(ptx, once=True),
            "nowait": STAGE_WAIT.sub(lambda m: f"{m.group(1)}\tbra.uni {m.group(3)};\n{m.group(4)}", ptx)}


def make(out: Path, d: int, queries: int = 0, n: int = 16384) -> None:
    """The copies of the one kernel at head dim `d` over `n` tokens (16k in all: a batch of
    16384 / n); with `queries`, also the kernel compiled at that many queries a tile
    (`TAG_qN`, with its own launch contract: not a copy)."""
    import napkin_ir
    import napkin_ir.torch as nt
    from napkin_ir.passmanager import run_pipeline

    for tag, kind in KINDS.items():
        k = nt.attention_grad_kernel("qkv", kind, None, max(1, 16384 // n), 16, n, n, d, "bf16", (9, 0))
        kernel_copies.save(out, tag, k, _variants(k.ptx))
        if queries:
            derived = run_pipeline(nt.attention_text(kind, 1, 16, 16, 16384, 16384, d, "bf16", None), nt.gradient_passes(kind, "qkv", False))
            napkin_ir.compile(str(derived), "napkin-sm90", block=f"128,{queries}").save(str(out / f"{tag}_q{queries}"))
            print(f"{tag}_q{queries}: the one kernel at {queries} queries a tile")


def _launches(kernels: list, stream: int) -> list:
    """The one kernel's launches on shared random inputs (statistics in range), each into
    outputs of its own."""
    import torch

    shape = kernels[0].contract.param("q").shape
    q, k, v, do = (torch.randn(*shape, device="cuda", dtype=torch.bfloat16) for _ in range(4))
    lse_log2 = torch.randn(*shape[:-1], device="cuda").abs() + 5
    delta = torch.randn(*shape[:-1], device="cuda") * 0.1
    given = {"q": q, "k": k, "v": v, "d_o": do, "lse_log2": lse_log2, "delta": delta}
    fns = []
    for kern in kernels:
        dq, dk, dv = torch.zeros(*shape, device="cuda"), torch.empty_like(k), torch.empty_like(v)
        args = {p.arg: given[p.arg] for p in kern.contract.params if p.role == "in"}
        fns.append(lambda kern=kern, args=args, dq=dq, dk=dk, dv=dv: kern(**args, out0=dq, out1=dk, out2=dv, stream=stream))
    return fns


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=["make", "time"])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--queries", type=int, default=0, help="make: also the kernel compiled at this many queries a tile")
    ap.add_argument("--n", type=int, default=16384, help="make: tokens a sequence (16k in all)")
    a = ap.parse_args()
    make(a.dir, a.d, a.queries, a.n) if a.mode == "make" else kernel_copies.time(a.dir, KINDS, _launches, per_batch=3)


if __name__ == "__main__":
    main()
