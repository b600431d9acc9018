"""Registers per thread, estimated from the fragments of the `reg` level.

A fragment of `n` values per lane takes `n` 32-bit registers when it holds f32 and n / 2
when it holds bf16 or f16 (two halves to a register). In each block of the kernel (the
body, each loop body) the live fragments are those it uses but did not define (the
accumulators carried by a loop, operands loaded before it) plus those it defines; an
mma's result reuses its accumulators' registers, a loop's results those it carried. Of
the A and B operands loaded for the mma steps of one block, ptxas keeps about two steps'
worth live (the step it computes and the one it prefetches), so the estimate counts the
two largest. On top of the
fragments, `OVERHEAD` registers hold addresses, loop counters and predicates, and one more
for each extra ldmatrix base a swizzled buffer needs: reg-to-ptx keeps a chunk's place
within its 128-byte line in the base register (XOR does not add), so each distinct 32-byte
column within a line that a warp's fragments start at has its own (4 for A with 64-deep
stream tiles, 4 for B with 64-column warp tiles, where a padded buffer needs one each).

Calibrated against `ptxas -v` on napkin-sm80's GEMM (sm_80, reg-to-ptx with base +
immediate addresses and fragments a step ahead, commit 65427c4): 64x64 warp tiles: 212
estimated, 212-214 by ptxas (32- and 64-deep stream tiles); 64x32: 132 and 128-132;
32x32: 84 and 86 (GEMMs of 2048 and 4096 cubed; with only a few stream tiles ptxas keeps
fewer live, 168 for 64x64 at K = 256). No spills. Code that keeps more addresses live
needs a larger `OVERHEAD`: `napkin-model --ptxas` shows both figures.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Block, Operation, SSAValue

from napkin_ir.dialects import hbm, reg, smem

OVERHEAD = 20
PREFETCHED_STEPS = 2


@dataclass(frozen=True)
class RegisterEstimate:
    fragments: int
    overhead: int = OVERHEAD

    @property
    def total(self) -> int:
        return self.fragments + self.overhead


def fragment_registers(t: reg.FragType) -> int:
    per_register = 1 if t.dtype == "f32" else 2
    return -(-t.values_per_lane() // per_register)


def _regs(v: SSAValue) -> int:
    return fragment_registers(v.type) if isinstance(v.type, reg.FragType) else 0  # type: ignore[arg-type]


def _inside(op: Operation | None, block: Block) -> bool:
    while op is not None:
        if op.parent_block() is block:
            return True
        op = op.parent_op()
    return False


def _accumulates(op: Operation) -> bool:
    """An op whose fragment result has the type of a fragment it takes (mma, wgmma)."""
    frags = {o.type for o in op.operands if isinstance(o.type, reg.FragType)}
    return bool(op.results) and all(r.type in frags for r in op.results)


def _block_fragments(block: Block) -> int:
    live_in: set[SSAValue] = {a for a in block.args if isinstance(a.type, reg.FragType)}
    for op in block.walk():
        for v in op.operands:
            owner = v.owner if isinstance(v.owner, Operation) else v.owner.parent_op()  # type: ignore[union-attr]
            if isinstance(v.type, reg.FragType) and not _inside(owner, block) and v not in block.args:
                live_in.add(v)
    mma_steps, operands = [], set()
    for op in block.ops:
        if isinstance(op, reg.MmaOp):
            mine = [v for v in (op.a, op.b) if v not in live_in]
            operands.update(mine)
            mma_steps.append(sum(_regs(v) for v in mine))
    # an accumulating op's result reuses its accumulators, a loop's results its carried values
    defined = [r for op in block.ops if not _accumulates(op) and not op.regions for r in op.results if r not in operands]
    window = sum(sorted(mma_steps, reverse=True)[:PREFETCHED_STEPS])
    return sum(_regs(v) for v in live_in) + sum(_regs(v) for v in defined) + window


def _swizzle_bases(kernel: hbm.KernelOp) -> int:
    """The ldmatrix base registers swizzled buffers need beyond one each."""
    warps = kernel.warp_grid
    columns: dict[SSAValue, set[int]] = {}
    for op in kernel.walk():
        if not isinstance(op, reg.LdmatrixOp):
            continue
        buf, t = op.source.type, op.result.type
        if not isinstance(buf, smem.BufferType) or buf.layout.data != "swizzle" or not isinstance(t, reg.FragType):
            continue
        col_axis = t.axis_names[-1]
        c0 = 0 if col_axis in warps else hbm.parse_labels(op.at).get(col_axis, 0)
        starts = [2 * c0] if t.role.data == "a" else [2 * c0 + 32 * j for j in range(max(1, t.dims[-1] // 16))]
        row_bytes = 2 * buf.dims[-1]
        columns.setdefault(op.source, set()).update(c % 128 if row_bytes > 128 else c for c in starts)
    return sum(len(c) - 1 for c in columns.values())


def estimate_registers(kernel: hbm.KernelOp) -> RegisterEstimate | None:
    """The estimate for a kernel at the `reg` level; None above it (no fragments yet)."""
    blocks = [b for op in kernel.walk() for r in op.regions for b in r.blocks]
    if not any(isinstance(op.results[0].type, reg.FragType) for op in kernel.walk() if op.results):
        return None
    return RegisterEstimate(max(_block_fragments(b) for b in blocks), OVERHEAD + _swizzle_bases(kernel))
