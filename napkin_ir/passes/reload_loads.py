"""`reg-reload-loads`: a vector read from global memory that is read again after the
warpgroup waits for its products is loaded again there, and one first read there is loaded
there, not held across the products.

smem-to-reg reads a statistic of the rows (`reg.load`) once, where it is first used. Where
the same vector is used again later in the block, past a `reg.wgmma_wait`, its registers
stay live across every product issued in between: spherical attention's gradient divides
both its scores (P = S / n) and dS (dS = (dP - P D) / n) by the streamed queries' norms,
and the dK and dV kernel at d=64 held those 32 values a lane across dP's and dV's products
(200 bytes of spills a thread on sm_90a; the softmax's kernel, whose log-sum-exp and D are
read once each, none). A load from a global the kernel only reads (its every use is a
`reg.load`) and already used is cloned right before the first op past each wait that
uses it; the uses from there on read the clone. The vector comes again from L1 (a few
loads a lane); the registers are free in between.

    %n = reg.load %norm[%b0, %h0, %i0] ...
    %p = reg.map div %s, %n ...
    reg.wgmma_wait {pending = 0 : i32}
    %ds = reg.map div %x, %n ...
becomes
    %n = reg.load %norm[%b0, %h0, %i0] ...
    %p = reg.map div %s, %n ...
    reg.wgmma_wait {pending = 0 : i32}
    %n_1 = reg.load %norm[%b0, %h0, %i0] ...
    %ds = reg.map div %x, %n_1 ...

A load whose first use lies past a wait, with only waits and register math between, is
moved there instead: the attention gradient's D, read for dS = P (dP - D) before the wait
for dP, held 20 registers a lane (at 80 queries a tile) while dP's product ran.

A use inside a nested region counts at the op of the block that holds it. Loads hoisted
out of a loop (`reg-hoist-loads`) are used inside the loop's op: no wait lies between, and
they stay as they are. A statistic staged in shared memory with its stream's tiles
(`reg.read` of a `row` or `col` fragment) is read again the same way, from its stage.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from napkin_ir.dialects import reg
from napkin_ir.passes.hoist_loads import only_read
from napkin_ir.passes.wgmma_overlap import PURE


def reload(block: Block) -> None:
    """Give each load of `block` that is used past a wgmma wait a fresh load there."""
    for load in [o for o in block.ops if isinstance(o, reg.LoadOp) or (isinstance(o, reg.ReadOp) and o.vector)]:
        if isinstance(load, reg.LoadOp) and not only_read(load):
            continue  # the kernel writes this global: a later read may see other values
        users = {}
        for use in load.result.uses:
            holder = block.find_ancestor_op_in_block(use.operation)
            if holder is not None:
                users.setdefault(holder, []).append(use)
        _sink(block, load, users)
        current, used, waited = load, False, False
        op = load.next_op
        while op is not None:
            if isinstance(op, reg.WgmmaWaitOp):
                waited = used
            elif op in users:
                if waited:
                    current = load.clone()
                    Rewriter.insert_op(current, InsertPoint.before(op))
                    waited = False
                for use in users[op]:
                    use.operation.operands[use.index] = current.result
                used = True
            op = op.next_op


def _sink(block: Block, load: Operation, users: dict) -> None:
    """Move `load` to just before its first user where a wgmma wait lies between them, past
    only waits and register math: the attention gradient's D, read for dS = P (dP - D)
    before the wait for dP, held 20 registers a lane (at 80 queries a tile) across it."""
    op, waited = load.next_op, False
    while op is not None and op not in users:
        if isinstance(op, reg.WgmmaWaitOp):
            waited = True
        elif not isinstance(op, PURE) and not (isinstance(op, reg.ReadOp) and op.vector):
            return
        op = op.next_op
    if op is not None and waited:
        load.detach()
        Rewriter.insert_op(load, InsertPoint.before(op))


@dataclass(frozen=True)
class RegReloadLoadsPass(ModulePass):
    name = "reg-reload-loads"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        blocks = dict.fromkeys(o.parent_block() for o in op.walk() if isinstance(o, reg.LoadOp) or (isinstance(o, reg.ReadOp) and o.vector))
        for block in blocks:
            if block is not None:
                reload(block)
