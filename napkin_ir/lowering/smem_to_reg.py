"""`smem-to-reg`: split the block's tile over warps and compute it with mma.sync fragments.

In the pipelined stream loop that `hbm-to-smem` built, the tile product
`acc + contract(read A, read B)` becomes, for each 16-wide slice of the streamed axis,
`reg.ldmatrix` of this warp's A and B fragments and a `reg.mma` into its accumulators;
the f32 accumulator tile becomes a `!reg.frag<c, ...>` (zeros to start), and the cast and
store after the loop become one `reg.store`. `warps="m:2,n:2"` says how many warps share
each axis of the output tile; each warp's part must be a whole number of m16n8 tiles and
the stream tile a multiple of 16.

With `mma=wgmma` (sm_90a, after `hbm-to-smem{copy=tma}`) the tensor cores read both
operands from the swizzled stages themselves: each 16-wide slice is one `reg.wgmma` per
warpgroup, the block's rows split over warpgroups of 64 (so `reg.warps` is the row axis
over all consumer warps, 16 rows each, and each warp's accumulators are 16 rows by the
whole tile's columns); the slices of one stage form a group that is committed; one group
stays in flight: iteration i waits until only its own group runs, then releases the stage
iteration i - 1 read (its products are complete), and after the loop all are awaited.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, builtin, scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from napkin_ir.dialects import hbm, ncd, reg, smem
from napkin_ir.passes.relabel import parse_label_option


def _fail(kernel: hbm.KernelOp, msg: str) -> PassFailedException:
    return PassFailedException(f"smem-to-reg: @{kernel.sym_name.data}: {msg}")


@dataclass(frozen=True)
class SmemToRegPass(ModulePass):
    name = "smem-to-reg"
    warps: str = "m:2,n:2"
    mma: str = "mma.sync"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        if self.mma not in ("mma.sync", "wgmma"):
            raise PassFailedException(f"smem-to-reg: mma must be mma.sync or wgmma, got '{self.mma}'")
        warps = parse_label_option("warps", self.warps) if self.mma == "mma.sync" else {}
        kernels = [k for k in op.walk() if isinstance(k, hbm.KernelOp)]
        if not kernels:
            raise PassFailedException("smem-to-reg: the module has no hbm.kernel; run ncd-to-hbm and hbm-to-smem first")
        for kernel in kernels:
            loops = [o for o in kernel.walk() if isinstance(o, scf.ForOp) and "smem.stages" in o.attributes]
            if len(loops) != 1:
                raise _fail(kernel, f"expects one pipelined stream loop (from hbm-to-smem), found {len(loops)}")
            if self.mma == "wgmma":
                warps = self._lower_wgmma(kernel, loops[0])
            else:
                self._lower(kernel, loops[0], warps)
            kernel.attributes["reg.warps"] = hbm.format_labels(warps)

    def _match(self, kernel: hbm.KernelOp, loop: scf.ForOp):
        """The accumulation `acc + contract(read A, read B)` in the stream loop's body."""
        body = loop.body.block
        acc_arg = body.args[1] if len(body.args) == 2 else None
        yield_op = body.last_op
        if acc_arg is None or not isinstance(yield_op, scf.YieldOp):
            raise _fail(kernel, "the stream loop must carry one accumulator")
        add = yield_op.operands[0].owner
        contract = add.operands[1].owner if isinstance(add, ncd.MapOp) and add.fn.data == "add" and add.operands[0] is acc_arg else None
        if not isinstance(contract, ncd.ContractOp):
            raise _fail(kernel, "the stream loop must accumulate one contraction (acc + contract(a, b))")
        reads = [o.owner for o in contract.operands]
        if not all(isinstance(r, smem.ReadOp) for r in reads):
            raise _fail(kernel, "the contraction's operands must come from shared memory (run hbm-to-smem first)")
        acc_t: ncd.TensorType = acc_arg.type  # type: ignore[assignment]
        rows, cols = acc_t.axis_names
        ra, rb = reads if rows in reads[0].result.type.axis_names else reads[::-1]  # type: ignore[union-attr]
        if ra.result.type.dtype not in ("bf16", "f16"):
            raise _fail(kernel, f"{self.mma} takes bf16 or f16 operands, got {ra.result.type.dtype}")
        return acc_arg, yield_op, add, contract, ra, rb

    def _lower(self, kernel: hbm.KernelOp, loop: scf.ForOp, warps: dict[str, int]) -> None:
        acc_arg, yield_op, add, contract, ra, rb = self._match(kernel, loop)
        acc_t: ncd.TensorType = acc_arg.type  # type: ignore[assignment]
        rows, cols = acc_t.axis_names
        (k,) = contract.over_axes
        a_t, b_t = ra.result.type, rb.result.type
        for axis in warps:
            if axis not in (rows, cols):
                raise _fail(kernel, f"warps can share only the output tile's axes {rows} and {cols}, not '{axis}'")
        wm, wn = warps.get(rows, 1), warps.get(cols, 1)
        bm, bn, tk = acc_t.shape[rows], acc_t.shape[cols], a_t.shape[k]
        if bm % wm or (bm // wm) % 16 or bn % wn or (bn // wn) % 8:
            raise _fail(kernel, f"a {bm} x {bn} tile over {wm} x {wn} warps leaves each warp {bm / wm:g} x {bn / wn:g}; "
                                "each warp's part must be a multiple of 16 x 8 (mma.sync m16n8k16)")
        if tk % 16:
            raise _fail(kernel, f"the stream tile along '{k}' is {tk}; mma.sync m16n8k16 needs a multiple of 16")
        frag_c = reg.FragType("c", {rows: bm // wm, cols: bn // wn}, builtin.f32)
        frag_a = reg.FragType("a", {rows: bm // wm, k: 16}, a_t.element_type)
        frag_b = reg.FragType("b", {k: 16, cols: bn // wn}, b_t.element_type)
        new_acc = self._accumulator(kernel, loop, acc_arg, frag_c)
        steps: list[Operation] = []
        acc = new_acc
        for kk in range(0, tk, 16):
            la = reg.LdmatrixOp(ra.source, ra.stage, {k: kk}, frag_a)
            lb = reg.LdmatrixOp(rb.source, rb.stage, {k: kk}, frag_b)
            mma = reg.MmaOp(la.result, lb.result, acc)
            steps += [la, lb, mma]
            acc = mma.result
        self._finish(kernel, loop, steps, acc, (yield_op, add, contract, ra, rb), frag_c)

    def _lower_wgmma(self, kernel: hbm.KernelOp, loop: scf.ForOp) -> dict[str, int]:
        if loop.attributes.get("smem.copy") != builtin.StringAttr("tma"):
            raise _fail(kernel, "mma=wgmma reads TMA-filled swizzled stages; run hbm-to-smem{copy=tma} first")
        acc_arg, yield_op, add, contract, ra, rb = self._match(kernel, loop)
        acc_t: ncd.TensorType = acc_arg.type  # type: ignore[assignment]
        rows, cols = acc_t.axis_names
        (k,) = contract.over_axes
        bm, bn, tk = acc_t.shape[rows], acc_t.shape[cols], ra.result.type.shape[k]
        if bm % 64 or not 1 <= bm // 64 <= 4:
            raise _fail(kernel, f"wgmma splits the tile's {bm} rows over warpgroups of 64; the rows must be 64, 128, 192 or 256")
        if bn % 8 or bn > 256:
            raise _fail(kernel, f"wgmma computes up to 256 columns (a multiple of 8) per warpgroup; the tile has {bn}")
        if tk % 16:
            raise _fail(kernel, f"the stream tile along '{k}' is {tk}; wgmma k16 needs a multiple of 16")
        frag_c = reg.FragType("c", {rows: 16, cols: bn}, builtin.f32)
        acc = self._accumulator(kernel, loop, acc_arg, frag_c)
        steps: list[Operation] = []
        for kk in range(0, tk, 16):
            step = reg.WgmmaOp(ra.source, ra.stage, rb.source, rb.stage, acc, {k: kk})
            steps.append(step)
            acc = step.result
        steps += [reg.WgmmaCommitOp(), reg.WgmmaWaitOp(1)]
        self._finish(kernel, loop, steps, acc, (yield_op, add, contract, ra, rb), frag_c)
        self._release_one_late(loop)
        return {rows: bm // 16}

    def _release_one_late(self, loop: scf.ForOp) -> None:
        """Move the stage's release one iteration later: iteration i > 0 releases the stage
        of i - 1; the last stage is released after the loop, once every group is done."""
        body = loop.body.block
        (arrive,) = [o for o in body.ops if isinstance(o, smem.ArriveOp)]
        stages = loop.attributes["smem.stages"].value.data  # type: ignore[union-attr]
        c_prev, c_stages = arith.ConstantOp.from_int_and_width(stages - 1, IndexType()), arith.ConstantOp.from_int_and_width(stages, IndexType())
        prev = arith.RemUIOp(arith.AddiOp(arrive.stage, c_prev.result).result, c_stages.result)
        add = prev.operands[0].owner
        first = arith.CmpiOp(body.args[0], loop.lb, "ne")
        release = scf.IfOp(first.result, [], [smem.ArriveOp(arrive.bars, prev.result), scf.YieldOp()])
        Rewriter.replace_op(arrive, [c_prev, c_stages, add, prev, first, release])  # type: ignore[list-item]
        Rewriter.insert_op([reg.WgmmaWaitOp(0)], InsertPoint.after(loop))

    def _accumulator(self, kernel: hbm.KernelOp, loop: scf.ForOp, acc_arg, frag_c: reg.FragType):
        """Zeros before the loop, a fragment through it."""
        init = loop.iter_args[0].owner
        if not isinstance(init, hbm.FillOp) or init.value.value.data != 0.0:
            raise _fail(kernel, "the accumulator must start at zero (hbm.fill 0.0)")
        Rewriter.replace_op(init, reg.ZerosOp(frag_c))
        return Rewriter.replace_value_with_new_type(acc_arg, frag_c)

    def _finish(self, kernel: hbm.KernelOp, loop: scf.ForOp, steps: list[Operation], acc, matched, frag_c: reg.FragType) -> None:
        """Put the steps in place of the tile product, and the loop's result into one reg.store."""
        yield_op, add, contract, ra, rb = matched
        Rewriter.insert_op(steps, InsertPoint.before(add))
        yield_op.operands[0] = acc
        for dead in (add, contract, ra, rb):
            Rewriter.erase_op(dead)
        result = Rewriter.replace_value_with_new_type(loop.results[0], frag_c)

        # after the loop: (cast and) store become one reg.store
        users = [u.operation for u in result.uses if not isinstance(u.operation, smem.WaitOp)]
        if len(users) != 1:
            raise _fail(kernel, "the accumulator must be stored (after at most a cast) and used nowhere else")
        user = users[0]
        cast = None
        if isinstance(user, ncd.MapOp) and user.fn.data == "cast":
            cast = user
            stores = [u.operation for u in user.result.uses]
            user = stores[0] if len(stores) == 1 else None
        if not isinstance(user, hbm.StoreOp):
            raise _fail(kernel, "only a cast may follow the accumulation for now; epilogues come later")
        Rewriter.replace_op(user, reg.StoreOp(result, user.dest, list(user.offsets)))
        if cast is not None:
            Rewriter.erase_op(cast)
