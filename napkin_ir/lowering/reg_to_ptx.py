"""`reg-to-ptx`: a kernel at the register level becomes a `ptx.kernel` (sm_80 instructions).

Each global tensor is a `.u64` parameter; grid axes map in order to %ctaid.x, .y, .z;
warps are numbered along the `reg.warps` axes, the first slowest. The pieces:
- `smem.alloc`: a part of the dynamic shared array (the kernel's `napkin.smem_bytes`); rows
  are padded by 16 bytes with `layout=pad8` (the 8 rows an ldmatrix reads then fall in
  different banks).
- `smem.copy`: the tile in 16-byte chunks spread evenly over the block's threads, each a
  `cp.async.cg` whose source size is 0 past the global's edge (zero fill); so the
  global's rows must be a multiple of 8 elements long.
- `reg.ldmatrix`: `ldmatrix.x4` per 16 rows of an `a` fragment, `ldmatrix.x4.trans` per
  two 8-column tiles of a `b` fragment (its buffer is k-major); `reg.mma`: one
  `mma.sync.m16n8k16` per (16, 8) tile; `reg.store`: `cvt.rn.bf16x2.f32` pairs and
  predicated `st.global.b32`.
- the stream loop: a header block whose arguments are the counter and every accumulator
  register, a body that branches back, an exit.
Index arithmetic goes through `convert-arith-to-ptx`'s rules (32-bit); addresses widen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xdsl.context import Context
from xdsl.dialects import arith, builtin, scf
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from napkin_ir.dialects import hbm, reg, smem
from napkin_ir.dialects.ptx import ops as P
from napkin_ir.dialects.ptx import tensor_ops as T
from napkin_ir.dialects.ptx.registers import RegType
from napkin_ir.lowering.arith_to_ptx import ArithLowering

B32, B64, F32, PRED = RegType("b32"), RegType("b64"), RegType("f32"), RegType("pred")
SHARED = "napkin_smem"


@dataclass
class _Buffer:
    base: SSAValue  # shared address (b32)
    type: smem.BufferType
    row_bytes: int  # the stride between rows, padding included
    stage_bytes: int


@dataclass
class _Global:
    ptr: SSAValue  # generic address of element 0 (b64)
    type: hbm.GlobalType


class _Emitter:
    def __init__(self, kernel: hbm.KernelOp):
        self.kernel = kernel
        self.name = kernel.sym_name.data
        self.blocks: list[Block] = [Block()]
        self.cur = self.blocks[0]
        self.arith = ArithLowering()
        self.vals: dict[SSAValue, Any] = self.arith.values  # one map for index values and the rest
        self.smem_bytes = 0
        self.smem_base: SSAValue | None = None
        self.warps = hbm.parse_labels(kernel.attributes.get("reg.warps"))  # type: ignore[arg-type]
        self.nthreads = 32 * _prod(self.warps.values())
        self._consts: dict[tuple[str, int | float], SSAValue] = {}

    def fail(self, msg: str) -> PassFailedException:
        return PassFailedException(f"reg-to-ptx: @{self.name}: {msg}")

    # -- small builders ------------------------------------------------------------------
    def emit(self, op: Operation) -> Operation:
        self.cur.add_op(op)
        return op

    def u32(self, v: int) -> SSAValue:
        return self.emit(P.ConstOp("u32", v, B32)).results[0]

    def f32_zero(self) -> SSAValue:
        return self.emit(P.ConstOp("f32", 0.0, F32)).results[0]

    def op2(self, cls, ty: str, a: SSAValue, b: SSAValue | int, mods: str | None = None, result=B32) -> SSAValue:
        bv = self.u32(b) if isinstance(b, int) else b
        return self.emit(cls(ty, a, bv, result=result, mods=mods)).results[0]

    def add(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return self.op2(P.AddOp, "u32", a, b)

    def mul(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return self.op2(P.MulOp, "u32", a, b, mods="lo")

    def element_address(self, g: _Global, row: SSAValue, col: SSAValue) -> SSAValue:
        """&g[row, col] for a 2-D global (row-major)."""
        rows, cols = g.type.dims
        idx = self.add(self.mul(row, cols), col)
        size = 4 if g.type.dtype == "f32" else 2
        off = self.op2(P.MulOp, "u32", idx, size, mods="wide", result=B64)
        return self.emit(P.AddOp("u64", g.ptr, off, result=B64)).results[0]

    def lt(self, a: SSAValue, b: int) -> SSAValue:
        return self.emit(P.SetpOp("lt", "u32", a, self.u32(b))).results[0]

    # -- the kernel ------------------------------------------------------------------------
    def build(self) -> P.KernelOp:
        args = self.kernel.body.block.args
        globs = self.kernel.globals
        params = [(f"{self.name}_{g.name_hint or f'arg{n}'}", "u64") for n, g in enumerate(globs)]
        for (pname, _), g in zip(params, globs):
            t: hbm.GlobalType = g.type  # type: ignore[assignment]
            if len(t.dims) != 2:
                raise self.fail(f"global tensors must be 2-D for now, got {t}")
            raw = self.emit(P.LdParamOp(pname, "u64", B64)).results[0]
            self.vals[g] = _Global(self.emit(P.CvtaOp("global", raw)).results[0], t)
        grid = self.kernel.grid_tiles
        if len(grid) > 3:
            raise self.fail("at most 3 grid axes")
        for n, (axis, tile) in enumerate(grid.items()):
            cta = self.emit(P.SregOp(f"ctaid.{'xyz'[n]}")).results[0]
            self.vals[args[len(globs) + n]] = self.mul(cta, tile)
        tid = self.emit(P.SregOp("tid.x")).results[0]
        self.tid = tid
        self.lane = self.op2(P.AndOp, "b32", tid, 31)
        warp = self.op2(P.ShrOp, "u32", tid, 5)
        self.warp_index: dict[str, SSAValue] = {}
        rest = warp
        for axis, count in reversed(list(self.warps.items())):  # the first axis varies slowest
            self.warp_index[axis] = self.op2(P.RemOp, "u32", rest, count)
            rest = self.op2(P.DivOp, "u32", rest, count)
        for op in self.kernel.body.block.ops:
            self.lower(op)
        kernel = P.KernelOp(self.name, params, Region(self.blocks), dynamic_shared=SHARED if self.smem_bytes else None,
                            reqntid=[self.nthreads])
        blocks = self.kernel.grid_shape()
        # what a launch needs: blocks along x, y, z and the dynamic shared memory
        kernel.attributes["napkin.grid"] = builtin.ArrayAttr([builtin.IntegerAttr(blocks[a], 32) for a in grid])
        kernel.attributes["napkin.smem_bytes"] = builtin.IntegerAttr(self.smem_bytes, 32)
        return kernel

    def lower(self, op: Operation) -> None:
        if isinstance(op, arith.ConstantOp | arith.AddiOp | arith.MuliOp | arith.DivUIOp | arith.RemUIOp | arith.SubiOp):
            for new in self.arith.lower_op(op):
                self.emit(new)
        elif isinstance(op, smem.AllocOp):
            self.alloc(op)
        elif isinstance(op, smem.CopyOp):
            self.copy(op)
        elif isinstance(op, smem.CommitOp):
            self.emit(T.CpAsyncCommitGroupOp())
        elif isinstance(op, smem.WaitOp):
            self.emit(T.CpAsyncWaitGroupOp(op.pending.value.data))
        elif isinstance(op, smem.BarrierOp):
            self.emit(P.BarSyncOp(0))
        elif isinstance(op, reg.ZerosOp):
            z = self.f32_zero()
            self.vals[op.result] = [z] * op.result.type.values_per_lane()  # type: ignore[attr-defined]
        elif isinstance(op, reg.LdmatrixOp):
            self.ldmatrix(op)
        elif isinstance(op, reg.MmaOp):
            self.mma(op)
        elif isinstance(op, reg.StoreOp):
            self.store(op)
        elif isinstance(op, scf.ForOp):
            self.loop(op)
        elif isinstance(op, hbm.ReturnOp):
            self.emit(P.RetOp())
        else:
            raise self.fail(f"{op.name} is not at the register level; lower it first (smem-to-reg)")

    # -- shared memory ---------------------------------------------------------------------
    def alloc(self, op: smem.AllocOp) -> None:
        t: smem.BufferType = op.result.type  # type: ignore[assignment]
        if len(t.dims) != 2 or t.dtype not in ("bf16", "f16"):
            raise self.fail(f"shared buffers are 2-D bf16 or f16 for now, got {t}")
        if t.layout.data == "swizzle":
            raise self.fail("the swizzled layout is not emitted yet; use layout=pad8 or row")
        rows, cols = t.dims
        if cols % 8:
            raise self.fail(f"a buffer's rows must be a multiple of 8 elements (16 bytes), got {cols}")
        row_bytes = 2 * cols + (16 if t.layout.data == "pad8" else 0)
        # buffers share the dynamic shared array (a block may use more than 48 KiB of it)
        offset = -(-self.smem_bytes // 128) * 128
        self.smem_bytes = offset + t.stages.data * rows * row_bytes
        if self.smem_base is None:
            self.smem_base = self.emit(P.AddrOfOp(SHARED, B32)).results[0]
        base = self.add(self.smem_base, offset) if offset else self.smem_base
        self.vals[op.result] = _Buffer(base, t, row_bytes, rows * row_bytes)

    def stage_base(self, buf: _Buffer, stage: SSAValue) -> SSAValue:
        return self.add(buf.base, self.mul(self.vals[stage], buf.stage_bytes))

    def copy(self, op: smem.CopyOp) -> None:
        g: _Global = self.vals[op.source]
        buf: _Buffer = self.vals[op.dest]
        rows, cols = buf.type.dims
        grows, gcols = g.type.dims
        if gcols % 8:
            raise self.fail(f"cp.async copies 16 bytes: the rows of {g.type} must be a multiple of 8 elements")
        per_row = cols // 8
        chunks = rows * per_row
        if chunks % self.nthreads:
            raise self.fail(f"a {rows} x {cols} tile is {chunks} chunks of 16 bytes, not a multiple of the {self.nthreads} threads")
        o_r, o_c = (self.vals[o] for o in op.offsets)
        base = self.stage_base(buf, op.stage)
        for i in range(chunks // self.nthreads):
            c = self.add(self.tid, i * self.nthreads)
            row = self.op2(P.DivOp, "u32", c, per_row)
            chunk = self.op2(P.RemOp, "u32", c, per_row)
            col = self.mul(chunk, 8)
            grow, gcol = self.add(o_r, row), self.add(o_c, col)
            inside = self.emit(P.AndOp("pred", self.lt(grow, grows), self.lt(gcol, gcols), result=PRED)).results[0]
            size = self.emit(P.SelpOp("b32", self.u32(16), self.u32(0), inside)).results[0]
            # past the edge the address is the tensor's start: valid, and nothing is read
            zero = self.u32(0)
            src = self.element_address(g, self.emit(P.SelpOp("b32", grow, zero, inside)).results[0],
                                       self.emit(P.SelpOp("b32", gcol, zero, inside)).results[0])
            dst = self.add(base, self.add(self.mul(row, buf.row_bytes), self.mul(chunk, 16)))
            self.emit(T.CpAsyncOp(dst, src, 16, cache="cg", src_size=size))

    # -- registers -------------------------------------------------------------------------
    def warp_origin(self, t: reg.FragType, axis: str, at: dict[str, int]) -> SSAValue:
        if axis in self.warp_index:
            return self.mul(self.warp_index[axis], t.shape[axis])
        return self.u32(at.get(axis, 0))

    def ldmatrix(self, op: reg.LdmatrixOp) -> None:
        buf: _Buffer = self.vals[op.source]
        t: reg.FragType = op.result.type  # type: ignore[assignment]
        at = hbm.parse_labels(op.at)
        if buf.type.axis_names != t.axis_names:
            raise self.fail(f"ldmatrix from a buffer laid out as {list(buf.type.axis_names)} into {t} is not emitted yet")
        base = self.stage_base(buf, op.stage)
        r_axis, c_axis = t.axis_names
        r0, c0 = self.warp_origin(t, r_axis, at), self.warp_origin(t, c_axis, at)
        lane16 = self.op2(P.AndOp, "b32", self.lane, 15)
        half8 = self.mul(self.op2(P.ShrOp, "u32", self.lane, 4), 8)
        regs: list[SSAValue] = []
        rows, cols = t.dims
        if t.role.data == "a":  # per 16 rows: matrices (rows 0-7 | 8-15) x (k 0-7 | 8-15)
            for tm in range(rows // 16):
                row = self.add(self.add(r0, 16 * tm), lane16)
                col = self.add(c0, half8)
                regs += self.emit(T.LdmatrixOp(self.smem_addr(base, buf, row, col), 4)).results
        else:  # b, k-major in shared memory: transposed loads, two 8-column tiles at a time
            for tn in range(0, cols // 8, 2):
                row = self.add(r0, lane16)
                col = self.add(self.add(c0, 8 * tn), half8)
                num = 4 if tn + 1 < cols // 8 else 2
                regs += self.emit(T.LdmatrixOp(self.smem_addr(base, buf, row, col), num, trans=True)).results
        self.vals[op.result] = list(regs)

    def smem_addr(self, base: SSAValue, buf: _Buffer, row: SSAValue, col: SSAValue) -> SSAValue:
        return self.add(base, self.add(self.mul(row, buf.row_bytes), self.mul(col, 2)))

    def mma(self, op: reg.MmaOp) -> None:
        ta: reg.FragType = op.a.type  # type: ignore[assignment]
        tb: reg.FragType = op.b.type  # type: ignore[assignment]
        a, b, c = self.vals[op.a], self.vals[op.b], self.vals[op.c]
        mt, nt = ta.dims[0] // 16, tb.dims[1] // 8
        out: list[SSAValue] = []
        for tm in range(mt):
            for tn in range(nt):
                k = tm * nt + tn
                m = self.emit(T.MmaSyncOp("m16n8k16", ta.dtype, a[4 * tm : 4 * tm + 4], b[2 * tn : 2 * tn + 2], c[4 * k : 4 * k + 4]))
                out += m.results
        self.vals[op.result] = out

    def store(self, op: reg.StoreOp) -> None:
        t: reg.FragType = op.value.type  # type: ignore[assignment]
        g: _Global = self.vals[op.dest]
        regs = self.vals[op.value]
        grows, gcols = g.type.dims
        dt = g.type.dtype
        if gcols % 2:
            raise self.fail(f"the output's rows must have an even length, got {gcols}")
        r_axis, c_axis = t.axis_names
        o_r, o_c = (self.vals[o] for o in op.offsets)
        r0 = self.add(o_r, self.warp_origin(t, r_axis, {}))
        c0 = self.add(o_c, self.warp_origin(t, c_axis, {}))
        g4 = self.op2(P.ShrOp, "u32", self.lane, 2)
        t2 = self.mul(self.op2(P.AndOp, "b32", self.lane, 3), 2)
        rows, cols = t.dims
        nt = cols // 8
        for tm in range(rows // 16):
            for tn in range(nt):
                k = 4 * (tm * nt + tn)
                col = self.add(self.add(c0, 8 * tn), t2)
                for h in (0, 1):
                    row = self.add(self.add(r0, 16 * tm + 8 * h), g4)
                    inside = self.emit(P.AndOp("pred", self.lt(row, grows), self.lt(col, gcols), result=PRED)).results[0]
                    addr = self.element_address(g, row, col)
                    lo, hi = regs[k + 2 * h], regs[k + 2 * h + 1]
                    if dt == "f32":
                        self.emit(P.StOp("global", "f32", addr, [lo, hi], guard=inside))
                    else:
                        packed = self.emit(P.CvtOp(f"{dt}x2", "f32", [hi, lo], RegType(f"{dt}x2"), mods="rn")).results[0]
                        self.emit(P.StOp("global", "b32", addr, [packed], guard=inside))

    # -- the stream loop ---------------------------------------------------------------------
    def loop(self, op: scf.ForOp) -> None:
        lb, ub, step = (self.vals[v] for v in (op.lb, op.ub, op.step))
        inits = [self.vals[v] for v in op.iter_args]
        flat_init = [r for regs in inits for r in (regs if isinstance(regs, list) else [regs])]
        sizes = [len(regs) if isinstance(regs, list) else 1 for regs in inits]
        header = Block(arg_types=[B32] + [r.type for r in flat_init])
        body, exit_ = Block(), Block()
        self.emit(P.BraOp(header, lb, *flat_init))
        self.blocks += [header, body, exit_]
        iv, *accs = header.args
        carried, k = [], 0
        for n, size in zip(inits, sizes):
            carried.append(list(accs[k : k + size]) if isinstance(n, list) else accs[k])
            k += size
        self.cur = header
        more = self.emit(P.SetpOp("lt", "s32", iv, ub)).results[0]
        self.emit(P.CondBraOp(more, body, [], exit_, []))
        self.cur = body
        block = op.body.block
        self.vals[block.args[0]] = iv
        for arg, v in zip(block.args[1:], carried):
            self.vals[arg] = v
        for inner in block.ops:
            if isinstance(inner, scf.YieldOp):
                nxt = self.emit(P.AddOp("s32", iv, step, result=B32)).results[0]
                flat = [r for v in inner.operands for r in (self.vals[v] if isinstance(self.vals[v], list) else [self.vals[v]])]
                self.emit(P.BraOp(header, nxt, *flat))
            else:
                self.lower(inner)
        self.cur = exit_
        for res, v in zip(op.results, carried):
            self.vals[res] = v


def _prod(xs) -> int:
    out = 1
    for x in xs:
        out *= x
    return out


@dataclass(frozen=True)
class RegToPtxPass(ModulePass):
    name = "reg-to-ptx"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        kernels = [k for k in op.walk() if isinstance(k, hbm.KernelOp)]
        if not kernels:
            raise PassFailedException("reg-to-ptx: the module has no hbm.kernel at the register level")
        from napkin_ir.lowering.reg_to_ptx_sm90 import Sm90Emitter, uses_wgmma

        hopper = False
        for k in kernels:
            if "reg.warps" not in k.attributes:
                raise PassFailedException(f"reg-to-ptx: @{k.sym_name.data} has no reg.warps; run smem-to-reg first")
            hopper |= uses_wgmma(k)
            Rewriter.replace_op(k, (Sm90Emitter if uses_wgmma(k) else _Emitter)(k).build())
        op.attributes["ptx.target"] = StringAttr("sm_90a" if hopper else "sm_80")
