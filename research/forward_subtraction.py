"""What the attention forward's kernel spends on, by subtraction: napkin-sm90's default
forward at 16k tokens, and copies of its PTX with one piece of work taken out, timed side by
side. The copies compute wrong values; their times bound what removing that work could give.

    python3 research/forward_subtraction.py make DIR   # here (no GPU): the PTX copies
    python3 research/forward_subtraction.py time DIR   # on the GPU (carry DIR)

Variants, for d=128 and d=64, without a mask (`n`) and under a causal one (`c`):
`nosumshfl` (the row sum's two `shfl.sync.bfly` a row: the exchange across a quad that
FA4's forward leaves to the epilogue; each lane keeps its own partial sum. Since session 66
the default does so too, `reg-partial-row-sums`, and the copy drops only the exchanges
after the loops) and
`laterescale` (O's rescale moved from before the products to the end of the trip before;
not made where the default's running max is lazy, `reg-lazy-rescale`, its rescale then
under a branch the copy does not move);
and the kernel compiled with each place of the wait for V (`napkin-sm90{early_waits=...}`:
`waitsnone` where `reg-wgmma-overlap` leaves it, before P V's wait; `waitsscores` right
after the scores' wait; `waitsmax` after the row max; `waitsproducts` in the next trip,
before P V's products), those that differ from the default; and `fa4order`, FA4's whole
order: the wait before the products and O rescaled right after P V's wait
(`rescale_after_wait`, at the reg level; the numbers hold, tested on the CPU).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import kernel_copies  # research/

SHAPES = {"n128": ("softmax", 128), "c128": ("causal", 128), "n64": ("softmax", 64), "c64": ("causal", 64)}
# a quad's exchange of a row sum: the shuffle whose value the next instruction adds
SUM_SHFL = re.compile(r"\tshfl\.sync\.bfly\.b32 (%f\d+), (%f\d+), [12], 31, 0xffffffff;\n(\tadd\.f32 %f\d+, \2, \1;\n)")
RESCALE = re.compile(r"^\tmul\.f32 (%f\d+), (%f\d+), (%f\d+);$")
LABEL = re.compile(r"^(\$L__BB\d+_\d+):$")
BRANCH = re.compile(r"^\tbra\.uni (\$L__BB\d+_\d+);$")


def _late_rescale(ptx: str) -> str:
    """`ptx` with the accumulator's rescale (O times the correction factor, a `mul.f32` a value)
    moved from the top of each pipelined stream loop, where the products wait for it, to the
    end of the trip before, after the last group retires: FA4's order. The first trip's
    rescale is left out, so the output is wrong; the instructions are the same. A loop's
    rescale is the run of 32 or more multiplies right after the zero its trip starts with."""
    lines = ptx.split("\n")
    labels = {m.group(1): n for n, ln in enumerate(lines) if (m := LABEL.match(ln))}
    runs, n = [], 0
    while n < len(lines):
        start = n
        while n < len(lines) and RESCALE.match(lines[n]):
            n += 1
        if n - start >= 32 and lines[start - 1].startswith("\tmov.f32 ") and lines[start - 1].endswith("0f00000000;"):
            runs.append((start, n))
        n += 1 if n == start else 0
    moved: dict[int, list[str]] = {}
    for start, end in runs:
        trip = [RESCALE.match(lines[k]).groups() for k in range(start, end)]  # type: ignore[union-attr]
        # the loop's branch back: the first `bra.uni` after the run to a label before it
        back = next(k for k in range(end, len(lines)) if (m := BRANCH.match(lines[k])) and labels[m.group(1)] < start)
        for k, (x, a, _) in zip(range(start, end), trip):
            lines[k] = f"\tmov.f32 {x}, {a};"
        moved[back] = [f"\tmul.f32 {a}, {a}, {b};" for _, a, b in trip]
    return "\n".join(ln for k, line in enumerate(lines) for ln in (*moved.get(k, []), line))


def _variants(ptx: str) -> dict[str, str]:
    return {"base": ptx,
            "nosumshfl": SUM_SHFL.sub(lambda m: f"\tmov.f32 {m.group(1)}, 0f00000000;\n{m.group(3)}", ptx),
            "laterescale": _late_rescale(ptx)}


def rescale_after_wait(module) -> None:
    """FA4's rescale of O, at the reg level of an overlapped forward (`module`, after
    `reg-early-waits`): each trip's P V accumulates onto the O it was given, not onto O
    times the correction carried from the trip before, and O times this trip's correction
    is made right after P V's wait (`reg.wgmma_wait {pending = 0}`), once the softmax has
    made the correction; the products after the last loop take O as it is. The numbers are
    the same (O scaled to each trip's running max one trip earlier)."""
    from xdsl.dialects import scf
    from xdsl.rewriter import InsertPoint, Rewriter

    from napkin_ir.dialects import loop_facts, reg

    loops = [o for o in module.walk() if isinstance(o, scf.ForOp) and loop_facts.overlapped(o)]
    for loop in loops:
        body = loop.body.block
        args = set(body.args)
        # O times the carried correction: a multiply, or under a lazy max (`reg-lazy-rescale`) a rescale
        top = next(o for o in body.ops if (isinstance(o, reg.RescaleOp) or isinstance(o, reg.MapOp) and o.fn.data == "mul")
                   and set(o.operands) <= args)
        o_in, c_in = top.operands
        top.result.replace_all_uses_with(o_in)
        Rewriter.erase_op(top)
        yielded = body.last_op
        k_o, k_c = body.args.index(o_in) - 1, body.args.index(c_in) - 1
        wait = next(o for o in body.ops if isinstance(o, reg.WgmmaWaitOp) and o.pending.value.data == 0)
        scaled = reg.MapOp("mul", [yielded.operands[k_o], yielded.operands[k_c]])
        Rewriter.insert_op(scaled, InsertPoint.after(wait))
        yielded.operands = [scaled.result if n == k_o else v for n, v in enumerate(yielded.operands)]
        for op in list(loop.parent_block().ops):  # the products that end a chain: O is already at the last max
            if isinstance(op, reg.MapOp) and op.fn.data == "mul" and set(op.operands) <= set(loop.results):
                op.result.replace_all_uses_with(op.operands[0])
                Rewriter.erase_op(op)


def _rescaled_kernel(text: str, **options) -> Any:
    """The kernel `napkin_ir.compile(text, target="sm90", **options)` makes, with
    `rescale_after_wait` applied at the reg level."""
    def rescaled(module) -> str:
        rescale_after_wait(module)
        return str(module)

    return kernel_copies.compiled_changed(text, "reg", rescaled, **options)


def make(out: Path) -> None:
    import napkin_ir
    import napkin_ir.torch as nt
    from napkin_ir.attention_diagrams import attention_diagram

    for tag, (kind, d) in SHAPES.items():
        k = nt.attention_kernel(kind, None, 1, 2048 // d, 2048 // d, 16384, 16384, d, "bf16", (9, 0))
        copies = _variants(k.ptx)
        text = attention_diagram(kind, 1, 2048 // d, 16384, d, "bf16")  # the op's diagram: the same kernel, the same contract
        for place in ("none", "scores", "max", "products"):
            copies[f"waits{place}"] = napkin_ir.compile(text, target="sm90", cache=False, early_waits=place).ptx
        copies["fa4order"] = _rescaled_kernel(text, early_waits="products").ptx
        kernel_copies.save(out, tag, k, copies, lambda ptx: f", {ptx.count('shfl.sync.bfly')} shuffles")


def main() -> None:
    kernel_copies.main(__doc__, make, SHAPES, kernel_copies.forward_launches, per_batch=5)


if __name__ == "__main__":
    main()
