"""`reg-pingpong`: the consumer warpgroups take turns issuing their products.

Two warpgroups that each issue a tile's products and then compute on the results (the
softmax) keep the tensor cores busy only if one issues while the other computes. This
pass makes each run of products a turn: `reg.turn_wait` before the run's first product,
`reg.turn_pass` after its last commit (a run ends where a `reg.wgmma_wait` follows), and
one `reg.turn_start` before the first turn, so that the warpgroups issue in a fixed
rotation, 0, 1, 0, 1, ..., and one's softmax runs under the other's products. Every
warpgroup of a block takes the same turns (the stream's bounds are the block's), so the
rotation never waits on a warpgroup that has left. A kernel of one warpgroup is left as
it is.

    %s = reg.wgmma ...; reg.wgmma_commit; reg.wgmma_wait {pending = 1}
becomes
    reg.turn_wait; %s = reg.wgmma ...; reg.wgmma_commit; reg.turn_pass; reg.wgmma_wait {pending = 1}
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from napkin_ir.dialects import hbm, reg, smem
from napkin_ir.lowering.hbm_to_smem import block_ancestor

PRODUCTS = (reg.WgmmaOp, reg.WgmmaRsOp)


def _runs(block: Block) -> list[tuple[Operation, Operation]]:
    """(first product, last commit) of each run of products in `block` and the blocks inside it."""
    out: list[tuple[Operation, Operation]] = []
    first: Operation | None = None
    last: Operation | None = None
    for op in block.ops:
        if isinstance(op, smem.ProducerOp):
            continue
        for region in op.regions:
            for b in region.blocks:
                out += _runs(b)
        if isinstance(op, PRODUCTS) and first is None:
            first = op
        elif isinstance(op, reg.WgmmaCommitOp) and first is not None:
            last = op
        elif isinstance(op, reg.WgmmaWaitOp) and first is not None and last is not None:
            out.append((first, last))
            first = last = None
    return out


@dataclass(frozen=True)
class RegPingpongPass(ModulePass):
    name = "reg-pingpong"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for kernel in [k for k in op.walk() if isinstance(k, hbm.KernelOp)]:
            consumers = math.prod(kernel.warp_grid.values())
            runs = _runs(kernel.body.block)
            if consumers < 8 or not runs:  # one warpgroup takes no turns
                continue
            waits = []
            for first, last in runs:
                waits.append(reg.TurnWaitOp())
                Rewriter.insert_op([waits[-1]], InsertPoint.before(first))
                Rewriter.insert_op([reg.TurnPassOp()], InsertPoint.after(last))
            starts = [block_ancestor(kernel.body.block, w) for w in waits]
            top = min(starts, key=kernel.body.block.get_operation_index)
            Rewriter.insert_op([reg.TurnStartOp()], InsertPoint.before(top))
