"""`smem-to-reg`: split the block's tile over warps and compute it with mma.sync fragments.

In the pipelined stream loop that `hbm-to-smem` built, the tile product
`acc + contract(read A, read B)` becomes, for each 16-wide slice of the streamed axis,
`reg.ldmatrix` of this warp's A and B fragments and a `reg.mma` into its accumulators;
the f32 accumulator tile becomes a `!reg.frag<c, ...>` (zeros to start), and the cast and
store after the loop become one `reg.store`. `warps="m:2,n:2"` says how many warps share
each axis of the output tile; each warp's part must be a whole number of m16n8 tiles and
the stream tile a multiple of 16.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, scf
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

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        warps = parse_label_option("warps", self.warps)
        kernels = [k for k in op.walk() if isinstance(k, hbm.KernelOp)]
        if not kernels:
            raise PassFailedException("smem-to-reg: the module has no hbm.kernel; run ncd-to-hbm and hbm-to-smem first")
        for kernel in kernels:
            loops = [o for o in kernel.walk() if isinstance(o, scf.ForOp) and "smem.stages" in o.attributes]
            if len(loops) != 1:
                raise _fail(kernel, f"expects one pipelined stream loop (from hbm-to-smem), found {len(loops)}")
            self._lower(kernel, loops[0], warps)
            kernel.attributes["reg.warps"] = hbm.format_labels(warps)

    def _lower(self, kernel: hbm.KernelOp, loop: scf.ForOp, warps: dict[str, int]) -> None:
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
        (k,) = contract.over_axes
        ra, rb = reads if rows in reads[0].result.type.axis_names else reads[::-1]  # type: ignore[union-attr]
        a_t, b_t = ra.result.type, rb.result.type
        if a_t.dtype not in ("bf16", "f16"):
            raise _fail(kernel, f"mma.sync takes bf16 or f16 operands, got {a_t.dtype}")
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

        # the accumulator: zeros before the loop, a fragment through it
        init = loop.iter_args[0].owner
        if not isinstance(init, hbm.FillOp) or init.value.value.data != 0.0:
            raise _fail(kernel, "the accumulator must start at zero (hbm.fill 0.0)")
        zeros = reg.ZerosOp(frag_c)
        Rewriter.replace_op(init, zeros)
        new_acc = Rewriter.replace_value_with_new_type(acc_arg, frag_c)
        steps: list[Operation] = []
        acc = new_acc
        for kk in range(0, tk, 16):
            la = reg.LdmatrixOp(ra.source, ra.stage, {k: kk}, frag_a)
            lb = reg.LdmatrixOp(rb.source, rb.stage, {k: kk}, frag_b)
            mma = reg.MmaOp(la.result, lb.result, acc)
            steps += [la, lb, mma]
            acc = mma.result
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
