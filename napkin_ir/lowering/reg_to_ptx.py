"""`reg-to-ptx`: a kernel at the register level becomes a `ptx.kernel`, one op at a time.

Every op of the `reg` and `smem` levels (and the index arithmetic, loops and conditions
between them) has its own rule in `napkin_ir/lowering/ptx_rules/`, one module per op
family: `kernel` (parameters, grid origins, producer and consumer roles), `control`
(arith, scf.for, scf.if), `copies` (buffers, cp.async), `tma` (mbarriers, TMA loads and
stores), `products` (ldmatrix, mma.sync, wgmma), `fragments` (the math between products),
`stores` (accumulators out). The rules share one `KernelLowering` context: the values
lowered so far, the blocks being built, the thread's lane and warp indices, and the facts
the kernel carries (its grid, launch order, roles and shared memory). What a rule does
follows from its op and the types and properties it sees, never from the order of the
ops around it.

What makes a kernel fast is decided above this lowering and shows in the IR it reads:
a stream loop unrolled by its stages (`smem-unroll-stages`: constant stages, places that
differ by constants), fragments carried across a loop's back edge or loaded a step ahead
(`reg-carry-fragments`, `reg-prefetch`), producer and consumer roles (`smem.producer`),
products overlapped or taken in turns (`reg-wgmma-overlap`, `reg-pingpong`).

The module's target is `arch` where given (the plan's target), else sm_90a where a kernel
uses wgmma or the TMA, else sm_80.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from napkin_ir.dialects import hbm, reg, smem
from napkin_ir.dialects.ptx import ops as P
from napkin_ir.lowering.ptx_rules import control, copies, fragments, products, stores, tma  # noqa: F401  (they register their rules)
from napkin_ir.lowering.ptx_rules.context import KernelLowering
from napkin_ir.lowering.ptx_rules.kernel import build_kernel


def lower_kernel(kernel: hbm.KernelOp) -> P.KernelOp:
    """The `ptx.kernel` of one register-level kernel."""
    if kernel.warps is None:
        raise PassFailedException(f"reg-to-ptx: @{kernel.sym_name.data} has no reg.warps; run smem-to-reg first")
    return build_kernel(KernelLowering(kernel))


def hopper(kernel: hbm.KernelOp) -> bool:
    """Whether a kernel needs sm_90a (wgmma, the TMA, mbarrier rings)."""
    return any(isinstance(o, reg.WgmmaOp | smem.ProducerOp | smem.TmaCopyOp | smem.TmaStoreOp) for o in kernel.walk())


@dataclass(frozen=True)
class RegToPtxPass(ModulePass):
    name = "reg-to-ptx"
    # the module's .target: sm_80 or sm_90a; "" for the least its kernels need
    arch: str = ""

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        kernels = [k for k in op.walk() if isinstance(k, hbm.KernelOp)]
        if not kernels:
            raise PassFailedException("reg-to-ptx: the module has no hbm.kernel at the register level")
        if self.arch not in ("", "sm_80", "sm_90a"):
            raise PassFailedException(f"reg-to-ptx: arch must be sm_80 or sm_90a, got '{self.arch}'")
        needed = "sm_90a" if any(hopper(k) for k in kernels) else "sm_80"
        if self.arch == "sm_80" and needed == "sm_90a":
            raise PassFailedException("reg-to-ptx: arch=sm_80 cannot run wgmma, the TMA or mbarrier rings, which these kernels use")
        target = self.arch or needed
        for k in kernels:
            Rewriter.replace_op(k, lower_kernel(k))
        op.attributes["ptx.target"] = builtin.StringAttr(target)
