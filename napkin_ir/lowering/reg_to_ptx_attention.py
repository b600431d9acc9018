"""`reg-to-ptx` for kernels that compute on fragments between products (attention): a
`reg`-level kernel becomes a `ptx.kernel` of sm_80 instructions, op by op.

Unlike the GEMM emitter, which recognises its one stream loop and emits it as a whole,
this one walks the kernel as it is: every index computation becomes its instruction,
every `scf.for` a loop of three PTX blocks (a head that tests the counter, the body, the
exit; the carried fragments are block arguments), every `scf.if` around copies a guard
predicate on them. What it relies on from the levels above:
- global tensors are row-major, of any rank; with `hbm.order = "last"` (what napkin-sm80
  asks for) grid axes map to %ctaid.x, .y, .z from the last (the tiled one, so that the
  blocks of one head run together) to the first, and the last is walked from its end (a
  causal stream's longest blocks start first); without it, from the first;
- a buffer is a tile of its global with one axis of more than one place (its rows) and
  the global's last axis (its columns, whole, a multiple of 8 elements), in 16-byte
  chunks: `layout=pad8` pads each row by 16 bytes so that the 8 rows an ldmatrix reads
  fall in different banks;
- `smem.copy`: thread t copies chunk t mod C of rows t / C, t / C + T / C ... (C chunks a
  row, T threads); rows past the global's edge are zero-filled (a source size of 0, from
  the tensor's first element), a tile that starts past the edge is not copied at all
  (its stage is never read), and a copy under `scf.if` takes its condition as a guard;
- `reg.ldmatrix`: `ldmatrix.x4` per 16 rows of an `a` fragment; per two 8-column tiles of
  a `b` fragment, `.trans` when the buffer's rows are the contracted axis (V) and plain
  when they are the fragment's columns (K);
- `reg.row_reduce`: within the lane, then `shfl.sync.bfly` 1 and 2 across its quad;
  `reg.map exp2` is `ex2.approx.ftz.f32`; a division by a `row` fragment multiplies by
  its reciprocal (`rcp.rn`); `reg.to_a` packs pairs with `cvt.rn.bf16x2.f32`; a scaling
  by a positive constant is left pending, so that a row max scales its result instead of
  every value and `scaled - max` is one `fma` (the online softmax's exp2(s c - m));
- `reg.mask` and `reg.mask_bound`: one comparison and one select per value, against a
  difference computed once per lane;
- `reg.store`: pairs of values as `cvt.rn.bf16x2.f32` and `st.global.b32`, predicated by
  row where the rows do not end a tile.
Index arithmetic is 32-bit (`convert-arith-to-ptx`'s rules); addresses widen.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import arith, builtin, scf
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import PassFailedException

from napkin_ir.dialects import hbm, reg, smem
from napkin_ir.dialects.ptx import ops as P
from napkin_ir.dialects.ptx import tensor_ops as T
from napkin_ir.dialects.ptx.registers import RegType
from napkin_ir.lowering.reg_to_ptx import PtxBuilder

B32, B64, F32, PRED = RegType("b32"), RegType("b64"), RegType("f32"), RegType("pred")
SHARED = "napkin_smem"
FRAGMENT_MATH = (reg.FillOp, reg.MapOp, reg.RowReduceOp, reg.MaskOp, reg.MaskBoundOp, reg.ToAOp)
INDEX_OPS = (arith.ConstantOp, arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.DivUIOp, arith.RemUIOp, arith.MinUIOp,
             arith.MaxUIOp, arith.CmpiOp)


def uses_fragment_math(kernel: hbm.KernelOp) -> bool:
    """Whether `kernel` is one for this emitter: it computes on fragments between products,
    or its tensors are not 2-D (the GEMM emitter's)."""
    return any(isinstance(op, FRAGMENT_MATH) for op in kernel.walk()) or any(len(g.type.dims) != 2 for g in kernel.globals)  # type: ignore[attr-defined]


@dataclass
class _Global:
    ptr: SSAValue  # generic address of element 0 (b64)
    type: hbm.GlobalType

    @property
    def strides(self) -> dict[str, int]:
        out, s = {}, 1
        for a, n in reversed(list(self.type.shape.items())):
            out[a] = s
            s *= n
        return out

    @property
    def esize(self) -> int:
        return 4 if self.type.dtype == "f32" else 2


@dataclass
class _Scaled:
    """A `c` fragment times a positive constant, not yet multiplied out."""

    regs: list[SSAValue]
    by: float


@dataclass
class _Buffer:
    base: SSAValue  # shared address of stage 0 (b32)
    type: smem.BufferType
    rows_axis: str
    cols_axis: str
    rows: int
    cols: int
    row_bytes: int
    stage_bytes: int


class AttentionEmitter(PtxBuilder):
    """Emits one kernel; `build()` returns its `ptx.kernel`."""

    def __init__(self, kernel: hbm.KernelOp):
        super().__init__(kernel)
        self.entry = self.blocks[0]
        self.smem_bytes = 0
        self.smem_base: SSAValue | None = None
        self.warps = hbm.parse_labels(kernel.attributes.get("reg.warps"))  # type: ignore[arg-type]
        self.nthreads = 32
        for n in self.warps.values():
            self.nthreads *= n
        self.grid_args: dict[SSAValue, str] = {}
        self.cache: dict[tuple, SSAValue] = {}  # per-thread values, made once in the entry block

    # -- small builders ----------------------------------------------------------------------
    def r(self, op: Operation) -> SSAValue:
        return self.emit(op).results[0]

    def s32(self, v: int) -> SSAValue:
        return self.r(P.ConstOp("s32", v, B32))

    def f32(self, v: float) -> SSAValue:
        return self.r(P.ConstOp("f32", v, F32))

    def add64(self, a: SSAValue, b: int) -> SSAValue:
        return a if b == 0 else self.r(P.AddOp("s64", a, self.r(P.ConstOp("s64", b, B64)), result=B64))

    def setp(self, cmp: str, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return self.r(P.SetpOp(cmp, "s32", a, self.s32(b) if isinstance(b, int) else b))

    def both(self, p: SSAValue | None, q: SSAValue | None) -> SSAValue | None:
        if p is None or q is None:
            return p or q
        return self.r(P.AndOp("pred", p, q, result=PRED))

    def once(self, key: tuple, make: Callable[[], SSAValue]) -> SSAValue:
        """A per-thread value computed once, in the entry block (which dominates every use)."""
        if key not in self.cache:
            saved, self.cur = self.cur, self.entry
            term = self.entry.last_op if isinstance(self.entry.last_op, P.BraOp) else None
            if term is not None:
                self.entry.detach_op(term)
            self.cache[key] = make()
            if term is not None:
                self.entry.add_op(term)
            self.cur = saved
        return self.cache[key]

    def index(self, v: SSAValue) -> SSAValue:
        return self.arith.get(v)

    # -- the kernel --------------------------------------------------------------------------
    def build(self) -> P.KernelOp:
        args = self.kernel.body.block.args
        globs = self.kernel.globals
        params = [(f"{self.name}_{g.name_hint or f'arg{n}'}", "u64") for n, g in enumerate(globs)]
        for (pname, _), g in zip(params, globs):
            t: hbm.GlobalType = g.type  # type: ignore[assignment]
            total = 1
            for n in t.dims:
                total *= n
            if total >= 1 << 31:
                raise self.fail(f"{t} has 2^31 elements or more; indices are 32-bit")
            raw = self.r(P.LdParamOp(pname, "u64", B64))
            self.vals[g] = _Global(self.r(P.CvtaOp("global", raw)), t)
        grid = self.kernel.grid_tiles
        if len(grid) > 3:
            raise self.fail(f"at most 3 grid axes, got {len(grid)}")
        blocks = self.kernel.grid_shape()
        attr = self.kernel.attributes.get("hbm.order")
        last = isinstance(attr, builtin.StringAttr) and attr.data == "last"
        order = list(reversed(grid)) if last else list(grid)  # the axis on %ctaid.x varies fastest
        firsts = dict(zip(grid, args[len(globs):]))
        for n, axis in enumerate(order):
            cta = self.r(P.SregOp(f"ctaid.{'xyz'[n]}"))
            if last and n == 0 and blocks[axis] > 1:  # the last blocks first: a causal stream's longest
                cta = self.op2(P.SubOp, "u32", self.u32(blocks[axis] - 1), cta)
            arg = firsts[axis]
            self.grid_args[arg] = axis
            self.arith.values[arg] = self.mul(cta, grid[axis])
        self.tid = self.r(P.SregOp("tid.x"))
        self.lane = self.op2(P.AndOp, "b32", self.tid, 31)
        self.group = self.op2(P.ShrOp, "u32", self.lane, 2)  # g: the lane's row in an m16n8 tile
        self.quad = self.op2(P.AndOp, "b32", self.lane, 3)  # t: its pair of columns
        rest = self.op2(P.ShrOp, "u32", self.tid, 5)
        self.warp_index: dict[str, SSAValue] = {}
        for axis, count in reversed(list(self.warps.items())):  # the first axis varies slowest
            self.warp_index[axis] = self.op2(P.RemOp, "u32", rest, count)
            rest = self.op2(P.DivOp, "u32", rest, count)
        self.lower_block(self.kernel.body.block)
        # `hbm-launch{blocks_per_sm=n}`: ptxas keeps to the registers that n blocks leave each
        per_sm = self.kernel.attributes.get("hbm.blocks_per_sm")
        per_sm_n = per_sm.value.data if isinstance(per_sm, builtin.IntegerAttr) else 1
        kernel = P.KernelOp(self.name, params, Region(self.blocks), dynamic_shared=SHARED if self.smem_bytes else None,
                            reqntid=[self.nthreads], minnctapersm=per_sm_n if per_sm_n > 1 else None)
        kernel.attributes["napkin.grid"] = builtin.ArrayAttr([builtin.IntegerAttr(blocks[a], 32) for a in order])
        kernel.attributes["napkin.smem_bytes"] = builtin.IntegerAttr(self.smem_bytes, 32)
        return kernel

    def lower_block(self, block: Block) -> None:
        for op in block.ops:
            self.lower(op)

    def lower(self, op: Operation) -> None:
        if isinstance(op, INDEX_OPS):
            for new in self.arith.lower_op(op):
                self.emit(new)
        elif isinstance(op, smem.AllocOp):
            self.alloc(op)
        elif isinstance(op, smem.CopyOp):
            self.copy(op, None)
        elif isinstance(op, scf.IfOp):
            self.guarded(op)
        elif isinstance(op, smem.CommitOp):
            self.emit(T.CpAsyncCommitGroupOp())
        elif isinstance(op, smem.WaitOp):
            self.emit(T.CpAsyncWaitGroupOp(op.pending.value.data))
        elif isinstance(op, smem.BarrierOp):
            self.emit(P.BarSyncOp(0))
        elif isinstance(op, reg.ZerosOp | reg.FillOp):
            value = op.value.value.data if isinstance(op, reg.FillOp) else 0.0
            self.vals[op.result] = [self.f32(value)] * op.result.type.values_per_lane()  # type: ignore[attr-defined]
        elif isinstance(op, reg.LdmatrixOp):
            self.vals[op.result] = self.ldmatrix(op)
        elif isinstance(op, reg.MmaOp):
            self.vals[op.result] = self.mma(op)
        elif isinstance(op, reg.MapOp):
            self.vals[op.result] = self.map(op)
        elif isinstance(op, reg.RowReduceOp):
            self.vals[op.result] = self.row_reduce(op)
        elif isinstance(op, reg.MaskOp | reg.MaskBoundOp):
            self.vals[op.result] = self.mask(op)
        elif isinstance(op, reg.ToAOp):
            self.vals[op.result] = self.to_a(op)
        elif isinstance(op, reg.StoreOp):
            self.store(op)
        elif isinstance(op, scf.ForOp):
            self.loop(op)
        elif isinstance(op, hbm.ReturnOp):
            self.emit(P.RetOp())
        else:
            raise self.fail(f"{op.name} is not emitted at the register level; lower it first (smem-to-reg)")

    # -- loops -------------------------------------------------------------------------------
    def loop(self, loop: scf.ForOp) -> None:
        """head(iv, state): iv < ub ? body : exit; body: ... ; bra head(iv + step, state')."""
        lb, ub, step = (self.index(v) for v in (loop.lb, loop.ub, loop.step))
        inits = [self.frag(v) for v in loop.iter_args]
        flat = [r for v in inits for r in v]
        head = Block(arg_types=[B32] + [v.type for v in flat])
        body, exit_ = Block(), Block()
        self.emit(P.BraOp(head, lb, *flat))
        self.blocks += [head, body, exit_]
        self.cur = head
        iv, state = head.args[0], self.unflatten(list(head.args[1:]), inits)
        self.emit(P.CondBraOp(self.setp("lt", iv, ub), body, [], exit_, []))
        self.cur = body
        self.arith.values[loop.body.block.args[0]] = iv
        for arg, v in zip(loop.body.block.args[1:], state):
            self.vals[arg] = v
        for op in loop.body.block.ops:
            if not isinstance(op, scf.YieldOp):
                self.lower(op)
        yielded = loop.body.block.last_op
        assert isinstance(yielded, scf.YieldOp)
        nxt = [r for v in yielded.operands for r in self.frag(v)]
        self.emit(P.BraOp(head, self.add(iv, step), *nxt))
        self.cur = exit_
        for res, v in zip(loop.results, state):
            self.vals[res] = v

    @staticmethod
    def unflatten(values: list[SSAValue], like: list[list[SSAValue]]) -> list[list[SSAValue]]:
        out, k = [], 0
        for v in like:
            out.append(values[k : k + len(v)])
            k += len(v)
        return out

    # -- shared memory -----------------------------------------------------------------------
    def alloc(self, op: smem.AllocOp) -> None:
        t: smem.BufferType = op.result.type  # type: ignore[assignment]
        if t.dtype not in ("bf16", "f16") or t.layout.data == "swizzle":
            raise self.fail(f"shared buffers are bf16 or f16 with layout=row or pad8 here, got {t}")
        *lead, cols_axis = t.axis_names
        big = [a for a in lead if t.shape[a] > 1]
        if len(big) > 1:
            raise self.fail(f"a buffer has one axis of rows (and its columns), got {t}")
        rows_axis = big[0] if big else lead[-1]
        rows, cols = t.shape[rows_axis], t.shape[cols_axis]
        if cols % 8:
            raise self.fail(f"a buffer's rows must be a multiple of 8 elements (16 bytes), got {cols}")
        row_bytes = 2 * cols + (16 if t.layout.data == "pad8" else 0)
        offset = -(-self.smem_bytes // 128) * 128
        self.smem_bytes = offset + t.stages.data * rows * row_bytes
        if self.smem_base is None:
            self.smem_base = self.r(P.AddrOfOp(SHARED, B32))
        self.vals[op.result] = _Buffer(self.add(self.smem_base, offset), t, rows_axis, cols_axis, rows, cols, row_bytes, rows * row_bytes)

    def stage_addr(self, buf: _Buffer, stage: SSAValue) -> SSAValue:
        return self.add(buf.base, self.mul(self.index(stage), buf.stage_bytes)) if buf.type.stages.data > 1 else buf.base

    def guarded(self, op: scf.IfOp) -> None:
        if op.false_region.blocks and any(not isinstance(o, scf.YieldOp) for o in op.false_region.block.ops):
            raise self.fail("scf.if with an else branch is not emitted")
        guard = self.index(op.cond)
        for inner in op.true_region.block.ops:
            if isinstance(inner, smem.CopyOp):
                self.copy(inner, guard)
            elif not isinstance(inner, scf.YieldOp):
                raise self.fail(f"scf.if guards copies here, found {inner.name}")

    def provably_inside(self, v: SSAValue, extent: int) -> bool:
        """Whether an offset lies before `extent` in every block: a grid offset or a constant."""
        if v in self.grid_args:
            return True
        owner = v.owner
        return isinstance(owner, arith.ConstantOp) and owner.value.value.data < extent  # type: ignore[union-attr]

    def copy(self, op: smem.CopyOp, guard: SSAValue | None) -> None:
        g: _Global = self.vals[op.source]
        buf: _Buffer = self.vals[op.dest]
        gt = g.type
        last = gt.axis_names[-1]
        col_off = op.offsets[-1].owner
        if buf.cols_axis != last or buf.cols != gt.shape[last] or not (isinstance(col_off, arith.ConstantOp) and col_off.value.value.data == 0):  # type: ignore[union-attr]
            raise self.fail(f"a copy into {buf.type} takes whole rows of {gt} (its last axis from 0)")
        chunks = buf.cols // 8
        if self.nthreads % chunks:
            raise self.fail(f"{self.nthreads} threads cannot share rows of {chunks} 16-byte chunks")
        per_pass = self.nthreads // chunks
        passes = -(-buf.rows // per_pass)
        row_t = self.once(("row_t", chunks), lambda: self.op2(P.DivOp, "u32", self.tid, chunks))
        chunk_t = self.once(("chunk_t", chunks), lambda: self.op2(P.RemOp, "u32", self.tid, chunks))
        strides = g.strides
        d_rows = gt.axis_names.index(buf.rows_axis)
        # this thread's first element: the tile's origin plus its row and chunk
        lin = None
        for a, o in zip(gt.axis_names, op.offsets):
            if a == last:
                continue
            term = self.mul(self.index(o), strides[a])
            lin = term if lin is None else self.add(lin, term)
        thread = self.once(("copy_elem", id(g), chunks), lambda: self.add(self.mul(row_t, strides[buf.rows_axis]), self.mul(chunk_t, 8)))
        elem = thread if lin is None else self.add(lin, thread)
        src = self.r(P.AddOp("u64", g.ptr, self.op2(P.MulOp, "u32", elem, g.esize, mods="wide", result=B64), result=B64))
        dst_lane = self.once(("copy_dst", buf.row_bytes, chunks), lambda: self.add(self.mul(row_t, buf.row_bytes), self.mul(chunk_t, 16)))
        dst = self.add(self.stage_addr(buf, op.stage), dst_lane)
        # rows past the global's edge read nothing (zeros); a tile wholly past it is not copied
        extent = gt.dims[d_rows]
        row_off = op.offsets[d_rows]
        if not self.provably_inside(row_off, extent):
            guard = self.both(guard, self.setp("lt", self.index(row_off), extent))
        row_pos = self.add(self.index(row_off), row_t) if extent % buf.rows else None
        for p in range(passes):
            pred = guard
            if (p + 1) * per_pass > buf.rows:  # a last pass that not every thread has a row in
                pred = self.both(pred, self.setp("lt", row_t, buf.rows - p * per_pass))
            src_off = p * per_pass * strides[buf.rows_axis] * g.esize
            dst_off = p * per_pass * buf.row_bytes
            if row_pos is None:
                self.emit(T.CpAsyncOp(dst, src, 16, dst_offset=dst_off, src_offset=src_off, guard=pred))
                continue
            inside = self.setp("lt", row_pos, extent - p * per_pass)
            size = self.r(P.SelpOp("b32", self.u32(16), self.u32(0), inside))
            at = self.r(P.SelpOp("b64", self.add64(src, src_off), g.ptr, inside))
            self.emit(T.CpAsyncOp(dst, at, 16, dst_offset=dst_off, src_size=size, guard=pred))

    # -- fragments from shared memory and products --------------------------------------------
    def ldmatrix(self, op: reg.LdmatrixOp) -> list[SSAValue]:
        buf: _Buffer = self.vals[op.source]
        t: reg.FragType = op.result.type  # type: ignore[assignment]
        at = hbm.parse_labels(op.at)
        role = t.role.data
        r_axis, c_axis = t.axis_names
        rows, cols = t.dims
        if role == "a" and (r_axis, c_axis) == (buf.rows_axis, buf.cols_axis):
            kind = "a"
        elif role == "b" and (r_axis, c_axis) == (buf.rows_axis, buf.cols_axis):
            kind = "b_trans"  # k-major: the buffer's rows are the contracted axis (V, a GEMM's B)
        elif role == "b" and (c_axis, r_axis) == (buf.rows_axis, buf.cols_axis):
            kind = "b"  # n-major: the buffer's rows are the fragment's columns (K)
        else:
            raise self.fail(f"ldmatrix of {t} from {buf.type} is not emitted")
        base = self.add(self.stage_addr(buf, op.stage), self.lane_base(buf, kind, t))
        # where this warp's slice starts in the tile, in bytes
        off = 0
        for axis in (r_axis, c_axis):
            if axis in self.warps:
                continue
            o = at.get(axis, 0)
            off += o * buf.row_bytes if axis == buf.rows_axis else 2 * o
        regs: list[SSAValue] = []
        if kind == "a":
            for tm in range(rows // 16):
                regs += self.emit(T.LdmatrixOp(base, 4, offset=off + 16 * tm * buf.row_bytes)).results
            return regs
        for tn in range(0, cols // 8, 2):
            num = 4 if tn + 1 < cols // 8 else 2
            step = 16 * tn if kind == "b_trans" else 8 * tn * buf.row_bytes
            regs += self.emit(T.LdmatrixOp(base, num, trans=kind == "b_trans", offset=off + step)).results
        return regs

    def lane_base(self, buf: _Buffer, kind: str, t: reg.FragType) -> SSAValue:
        """The byte offset of the row this lane gives ldmatrix, its warp's place included.
        x4 reads matrices 0-3 from the rows of lanes 0-7, 8-15, 16-23, 24-31."""
        r_axis, c_axis = t.axis_names

        def make() -> SSAValue:
            lane = self.lane
            if kind == "b":  # matrices (n 0-7, k lo), (n 0-7, k hi), (n 8-15, k lo), (n 8-15, k hi)
                row = self.add(self.op2(P.AndOp, "b32", lane, 7), self.op2(P.ShlOp, "b32", self.op2(P.ShrOp, "u32", lane, 4), 3))
                col = self.mul(self.op2(P.AndOp, "b32", self.op2(P.ShrOp, "u32", lane, 3), 1), 8)
            else:  # a: (rows 0-7 | 8-15) x (k lo | hi); b_trans: (k 0-7 | 8-15) x (n 0-7 | 8-15)
                row = self.op2(P.AndOp, "b32", lane, 15)
                col = self.mul(self.op2(P.ShrOp, "u32", lane, 4), 8)
            for axis in (r_axis, c_axis):
                if axis in self.warp_index:
                    w = self.mul(self.warp_index[axis], t.shape[axis])
                    if axis == buf.rows_axis:
                        row = self.add(row, w)
                    else:
                        col = self.add(col, w)
            return self.add(self.mul(row, buf.row_bytes), self.mul(col, 2))

        return self.once(("lane_base", buf.row_bytes, kind, r_axis, t.shape[r_axis], c_axis, t.shape[c_axis]), make)

    def mma(self, op: reg.MmaOp) -> list[SSAValue]:
        ta: reg.FragType = op.a.type  # type: ignore[assignment]
        tb: reg.FragType = op.b.type  # type: ignore[assignment]
        a, b, c = self.frag(op.a), self.frag(op.b), self.frag(op.c)
        mt, nt = ta.dims[0] // 16, tb.dims[1] // 8
        out = list(c)
        for tm in range(mt):
            for tn in range(nt) if tm % 2 == 0 else reversed(range(nt)):
                k = 4 * (tm * nt + tn)
                m = self.emit(T.MmaSyncOp("m16n8k16", ta.dtype, a[4 * tm : 4 * tm + 4], b[2 * tn : 2 * tn + 2], c[k : k + 4]))
                out[k : k + 4] = m.results
        return out

    # -- fragment math -----------------------------------------------------------------------
    @staticmethod
    def row_of(t: reg.FragType, v: int) -> int:
        """The `row` fragment value that holds the row of value v of a `c` fragment."""
        nt = t.dims[1] // 8
        return 2 * (v // 4 // nt) + (v % 4) // 2

    def frag(self, v: SSAValue) -> list[SSAValue]:
        """The registers of a fragment, a scaling left pending done now."""
        x = self.vals[v]
        if isinstance(x, _Scaled):
            k = self.f32(x.by)
            x = self.vals[v] = [self.r(P.MulOp("f32", r, k)) for r in x.regs]
        return x

    def map(self, op: reg.MapOp) -> list[SSAValue] | _Scaled:
        fn = op.fn.data
        t: reg.FragType = op.result.type  # type: ignore[assignment]
        if fn == "scale" and op.by.value.data > 0 and t.role.data == "c":  # type: ignore[union-attr]
            # left pending: a row max takes it after the reduction, x - m becomes fma(x, c, -m)
            return _Scaled(self.frag(op.inputs[0]), op.by.value.data)  # type: ignore[union-attr]
        first = self.vals[op.inputs[0]]
        if fn == "sub" and isinstance(first, _Scaled) and op.inputs[1].type.role.data == "row":  # type: ignore[attr-defined]
            negs = [self.r(P.NegOp("f32", m)) for m in self.frag(op.inputs[1])]
            k = self.f32(first.by)
            return [self.r(P.FmaOp("f32", first.regs[v], k, negs[self.row_of(t, v)], mods="rn")) for v in range(t.values_per_lane())]
        ins = [(self.frag(v), v.type) for v in op.inputs]

        def arg(k: int, v: int) -> SSAValue:
            regs, it = ins[k]
            return regs[self.row_of(t, v)] if it.role.data == "row" and t.role.data == "c" else regs[v]  # type: ignore[attr-defined]

        n = t.values_per_lane()
        if fn == "div" and ins[1][1].role.data == "row":  # type: ignore[attr-defined]
            inv = [self.r(P.RcpOp("f32", x, mods="rn")) for x in ins[1][0]]
            ins[1] = (inv, ins[1][1])
            fn = "mul"
        if fn == "scale":
            k = self.f32(op.by.value.data)  # type: ignore[union-attr]
            return [self.r(P.MulOp("f32", arg(0, v), k)) for v in range(n)]
        unary = {"exp2": (P.Ex2Op, "approx.ftz"), "sqrt": (P.SqrtOp, "rn"), "neg": (P.NegOp, None)}
        if fn in unary:
            cls, mods = unary[fn]
            return [self.r(cls("f32", arg(0, v), mods=mods)) for v in range(n)]
        binary = {"add": (P.AddOp, None), "sub": (P.SubOp, None), "mul": (P.MulOp, None), "div": (P.DivOp, "rn"), "max": (P.MaxOp, None)}
        cls, mods = binary[fn]
        return [self.r(cls("f32", arg(0, v), arg(1, v), mods=mods)) for v in range(n)]

    def row_reduce(self, op: reg.RowReduceOp) -> list[SSAValue]:
        t: reg.FragType = op.input.type  # type: ignore[assignment]
        x = self.vals[op.input]
        if isinstance(x, _Scaled):  # max(c x) = c max(x) for c > 0, sum(c x) = c sum(x)
            return [self.r(P.MulOp("f32", m, self.f32(x.by))) for m in self.row_reduce_of(op.kind.data, t, x.regs)]
        return self.row_reduce_of(op.kind.data, t, x)

    def row_reduce_of(self, kind: str, t: reg.FragType, x: list[SSAValue]) -> list[SSAValue]:
        cls = P.MaxOp if kind == "max" else P.AddOp
        nt = t.dims[1] // 8
        out = []
        for tm in range(t.dims[0] // 16):
            for h in range(2):  # rows g and g + 8
                vals = [x[4 * (tm * nt + tn) + 2 * h + q] for tn in range(nt) for q in range(2)]
                while len(vals) > 1:  # a tree within the lane
                    vals = [self.r(cls("f32", vals[i], vals[i + 1])) if i + 1 < len(vals) else vals[i] for i in range(0, len(vals), 2)]
                acc = vals[0]
                for lanes in (1, 2):  # across the quad of lanes that hold the row
                    acc = self.r(cls("f32", acc, self.r(P.ShflSyncOp("bfly", acc, lanes))))
                out.append(acc)
        return out

    def mask(self, op: reg.MaskOp | reg.MaskBoundOp) -> list[SSAValue]:
        """keep(value) compares a per-lane difference with a constant per value."""
        t: reg.FragType = op.input.type  # type: ignore[assignment]
        x = self.frag(op.input)
        r_axis, c_axis = t.axis_names
        nt = t.dims[1] // 8
        offs = [self.index(o) for o in op.offsets]

        def place(axis: str) -> SSAValue:
            """This lane's first position along `axis` in the block's tile."""
            p = self.group if axis == r_axis else self.mul(self.quad, 2)
            if axis in self.warp_index:
                p = self.add(p, self.mul(self.warp_index[axis], t.shape[axis]))
            return p

        def within(v: int) -> tuple[int, int]:
            """Value v's row and column past this lane's first ones."""
            tile, q = divmod(v, 4)
            tm, tn = divmod(tile, nt)
            return 16 * tm + 8 * (q // 2), 8 * tn + q % 2

        fill = self.f32(op.fill.value.data)
        out = []
        if isinstance(op, reg.MaskOp):  # keep row >= col: (r0 + row) - (c0 + col) >= dc - dr
            diff = self.op2(P.SubOp, "s32", self.add(offs[0], place(r_axis)), self.add(offs[1], place(c_axis)))
            for v in range(t.values_per_lane()):
                dr, dc = within(v)
                out.append(self.r(P.SelpOp("f32", x[v], fill, self.setp("ge", diff, dc - dr))))
            return out
        axis = op.axis.data  # keep pos < bound: bound - (o + place) > d
        room = self.op2(P.SubOp, "s32", self.s32(op.bound.data), self.add(offs[0], place(axis)))
        for v in range(t.values_per_lane()):
            d = within(v)[0 if axis == r_axis else 1]
            out.append(self.r(P.SelpOp("f32", x[v], fill, self.setp("gt", room, d))))
        return out

    def to_a(self, op: reg.ToAOp) -> list[SSAValue]:
        """Columns at..at+15 are the c tiles 2s and 2s + 1: their (c0 c1), (c2 c3) pairs are
        the a registers 0 and 1, then 2 and 3, of each 16 rows."""
        t: reg.FragType = op.input.type  # type: ignore[assignment]
        a: reg.FragType = op.result.type  # type: ignore[assignment]
        x = self.frag(op.input)
        nt, s = t.dims[1] // 8, op.start // 16
        dt = a.dtype
        out = []
        for tm in range(t.dims[0] // 16):
            for tn in (2 * s, 2 * s + 1):
                k = 4 * (tm * nt + tn)
                for h in range(2):
                    out.append(self.r(P.CvtOp(f"{dt}x2", "f32", [x[k + 2 * h + 1], x[k + 2 * h]], RegType(f"{dt}x2"), mods="rn")))
        return out

    # -- the store ---------------------------------------------------------------------------
    def store(self, op: reg.StoreOp) -> None:
        t: reg.FragType = op.value.type  # type: ignore[assignment]
        g: _Global = self.vals[op.dest]
        gt = g.type
        x = self.frag(op.value)
        r_axis, c_axis = t.axis_names
        strides = g.strides
        if strides[c_axis] != 1:
            raise self.fail(f"the fragment's columns ({c_axis}) must be the last axis of {gt}")
        offsets = dict(zip(gt.axis_names, op.offsets))
        tiles = {a: t.shape[a] * self.warps.get(a, 1) for a in (r_axis, c_axis)}
        col_off = offsets[c_axis]
        if gt.shape[c_axis] % tiles[c_axis] or not self.provably_inside(col_off, gt.shape[c_axis]):
            raise self.fail(f"the stored columns must end a tile of {gt} along '{c_axis}'")
        if gt.shape[c_axis] % 2:
            raise self.fail(f"the output's rows must have an even length, got {gt.shape[c_axis]}")
        lin = None
        for a, o in offsets.items():
            term = self.mul(self.index(o), strides[a])
            lin = term if lin is None else self.add(lin, term)
        row = self.group
        col = self.mul(self.quad, 2)
        if r_axis in self.warp_index:
            row = self.add(row, self.mul(self.warp_index[r_axis], t.shape[r_axis]))
        if c_axis in self.warp_index:
            col = self.add(col, self.mul(self.warp_index[c_axis], t.shape[c_axis]))
        elem = self.add(lin, self.add(self.mul(row, strides[r_axis]), col))  # type: ignore[arg-type]
        base = self.r(P.AddOp("u64", g.ptr, self.op2(P.MulOp, "u32", elem, g.esize, mods="wide", result=B64), result=B64))
        extent = gt.shape[r_axis]
        room = None
        if extent % tiles[r_axis]:  # rows past the edge are not stored
            room = self.op2(P.SubOp, "s32", self.s32(extent), self.add(self.index(offsets[r_axis]), row))
        nt = t.dims[1] // 8
        dt = gt.dtype
        for tm in range(t.dims[0] // 16):
            for h in range(2):
                dr = 16 * tm + 8 * h
                inside = self.setp("gt", room, dr) if room is not None else None
                for tn in range(nt):
                    k = 4 * (tm * nt + tn) + 2 * h
                    off = (dr * strides[r_axis] + 8 * tn) * g.esize
                    if dt == "f32":
                        self.emit(P.StOp("global", "f32", base, [x[k], x[k + 1]], offset=off, guard=inside))
                    else:
                        packed = self.r(P.CvtOp(f"{dt}x2", "f32", [x[k + 1], x[k]], RegType(f"{dt}x2"), mods="rn"))
                        self.emit(P.StOp("global", "b32", base, [packed], offset=off, guard=inside))




def lower_kernels(module: builtin.ModuleOp) -> None:
    """Replace every `hbm.kernel` at the register level by its sm_80 `ptx.kernel` (what
    `reg-to-ptx` does for the kernels `uses_fragment_math` picks)."""
    from xdsl.rewriter import Rewriter

    for k in [k for k in module.walk() if isinstance(k, hbm.KernelOp)]:
        if "reg.warps" not in k.attributes:
            raise PassFailedException(f"reg-to-ptx: @{k.sym_name.data} has no reg.warps; run smem-to-reg first")
        Rewriter.replace_op(k, AttentionEmitter(k).build())
    module.attributes["ptx.target"] = builtin.StringAttr("sm_80")


__all__ = ["AttentionEmitter", "lower_kernels", "uses_fragment_math"]
