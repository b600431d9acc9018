"""The part of `reg-to-ptx` not yet lowered op by op: a plain sm_80 GEMM, emitted whole.

`reg-to-ptx` lowers every other kernel with the rules of `napkin_ir/lowering/ptx_rules`.
This emitter keeps what makes the sm_80 GEMM fast (stage-count unrolling, base +
immediate addresses, fragments loaded a step ahead, blocks moved in at the edges) until
those are passes whose result the IR shows; it then goes.

Each global tensor is a `.u64` parameter; grid axes map in order to %ctaid.x, .y, .z;
warps are numbered along the `reg.warps` axes, the first slowest. The stream loop that
`hbm-to-smem` pipelined is emitted as a whole, so that its body is the mma.sync work and
little else:
- addresses are a base register plus an immediate. Each thread computes once where its
  chunks of each tile and its ldmatrix rows lie; the loop is unrolled by the stage count,
  so that every stage offset is a constant, and a global pointer moves by one add (once a
  trip where the tile step fits the 12-bit immediate of a copy, else once a tile). A tile
  count the stage count does not divide enters the unrolled loop part way through (tile 0
  in the sub-iteration that makes the last tile end a trip); the last trip, whose later
  tiles have nothing left to copy, follows the loop unrolled.
- no bounds checks in the loop. Along a grid axis the tile does not divide, the last block
  moves in to end at the edge (its rows overlap its neighbour's, which it does not store
  again); along the streamed axis the tiles are placed to end at the edge, so that only the
  first one, copied before the loop, reaches before 0 and is zero-filled there (`cp.async`
  with a source size of 0).
- fragments are double-buffered: each 16-wide step's ldmatrix loads are issued before the
  previous step's mma.sync, and the next tile's first step is loaded (after its wait and
  barrier) before the last step of this one.
- `smem.alloc`: a part of the dynamic shared array (the kernel's `napkin.smem_bytes`); rows
  are padded by 16 bytes with `layout=pad8` (the 8 rows an ldmatrix reads then fall in
  different banks).
- `smem.copy`: the tile in 16-byte chunks, each thread taking a few rows and, in each,
  every g-th chunk (g threads read at least 32 contiguous bytes), the rows ordered so that
  each 8 threads write to different banks; the global's rows must be a multiple of 8
  elements long.
- `reg.ldmatrix`: `ldmatrix.x4` per 16 rows of an `a` fragment, `ldmatrix.x4.trans` per
  two 8-column tiles of a `b` fragment (its buffer is k-major); `reg.mma`: one
  `mma.sync.m16n8k16` per (16, 8) tile; `reg.store`: `cvt.rn.bf16x2.f32` pairs and
  `st.global.b32`, predicated only in a block that moved in.
Index arithmetic goes through `convert-arith-to-ptx`'s rules (32-bit); addresses widen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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
from napkin_ir.lowering.ptx_rules.copies import _phase_rows

B32, B64, F32, PRED = RegType("b32"), RegType("b64"), RegType("f32"), RegType("pred")
SHARED = "napkin_smem"


class PtxBuilder:
    """Emits into `self.cur`, a block of the kernel's `self.blocks`; `self.vals` maps the
    register-level values (index values through `convert-arith-to-ptx`'s rules) to theirs."""

    def __init__(self, kernel: hbm.KernelOp):
        self.kernel = kernel
        self.name = kernel.sym_name.data
        self.blocks: list[Block] = [Block()]
        self.cur = self.blocks[0]
        self.arith = ArithLowering()
        self.vals: dict[SSAValue, Any] = self.arith.values  # one map for index values and the rest

    def fail(self, msg: str) -> PassFailedException:
        return PassFailedException(f"reg-to-ptx: @{self.name}: {msg}")

    def emit(self, op: Operation) -> Operation:
        self.cur.add_op(op)
        return op

    def u32(self, v: int) -> SSAValue:
        return self.emit(P.ConstOp("u32", v, B32)).results[0]

    def op2(self, cls, ty: str, a: SSAValue, b: SSAValue | int, mods: str | None = None, result=B32) -> SSAValue:
        bv = self.u32(b) if isinstance(b, int) else b
        return self.emit(cls(ty, a, bv, result=result, mods=mods)).results[0]

    def add(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return a if isinstance(b, int) and b == 0 else self.op2(P.AddOp, "u32", a, b)

    def mul(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return self.op2(P.MulOp, "u32", a, b, mods="lo")

    def grouped_tile(self, rows: int, cols: int, group: int, p: SSAValue) -> tuple[SSAValue, SSAValue]:
        """(row block, column block) of linear block p of a `rows` x `cols` grid launched in
        groups (`hbm.group`): bands of `group` row blocks (the last band may be shorter), each
        swept column by column, `group` rows at a time."""
        band_blocks = group * cols
        band = self.op2(P.DivOp, "u32", p, band_blocks)
        first = self.mul(band, group)
        height = self.emit(P.MinOp("u32", self.u32(group), self.op2(P.SubOp, "u32", self.u32(rows), first), result=B32)).results[0]
        within = self.op2(P.RemOp, "u32", p, band_blocks)
        row = self.add(first, self.op2(P.RemOp, "u32", within, height))
        col = self.op2(P.DivOp, "u32", within, height)
        return row, col


LINE_CHUNKS = 8  # 16-byte chunks in a 128-byte L2 line
COPY_IMMEDIATE = 2047  # the reach of the global address immediate of a cp.async in SASS (LDGSTS: 12 bits, signed)


@dataclass
class _Buffer:
    base: SSAValue  # shared address (b32)
    type: smem.BufferType
    row_bytes: int  # the stride between rows, padding included
    stage_bytes: int

    @property
    def swizzled(self) -> bool:
        return self.type.layout.data == "swizzle"

    @property
    def key_rows(self) -> int:
        """Rows that share a swizzle key: those of one 128-byte line (2 for 64-byte rows)."""
        return max(1, 128 // self.row_bytes)

    def place(self, row: int, col_bytes: int) -> int:
        """Where byte `col_bytes` of row `row` lies in a stage."""
        plain = row * self.row_bytes + col_bytes
        return plain ^ (_swizzle_key(row, self.key_rows) << 4) if self.swizzled else plain


def _swizzle_key(row: int, key_rows: int) -> int:
    """`layout=swizzle`: the 16-byte chunks of each 128-byte line are permuted by XOR with
    the line's row (its pair of rows, for 64-byte rows) mod 8, so that the 8 rows an
    ldmatrix reads at one column lie in 8 different bank groups, and a line copied whole
    stays in one 128-byte line of shared memory (one wavefront: no padding to straddle)."""
    return (row // key_rows) % 8


@dataclass
class _Global:
    ptr: SSAValue  # generic address of element 0 (b64)
    type: hbm.GlobalType

    @property
    def esize(self) -> int:
        return 4 if self.type.dtype == "f32" else 2


class _NotAffine(Exception):
    pass


@dataclass(frozen=True)
class _Affine:
    """An index as `const + sum(coeff * symbol)`; the symbols are the block's grid offsets."""

    const: int = 0
    terms: tuple[tuple[SSAValue, int], ...] = ()

    def __add__(self, other: _Affine) -> _Affine:
        terms = dict(self.terms)
        for s, c in other.terms:
            terms[s] = terms.get(s, 0) + c
        return _Affine(self.const + other.const, tuple(sorted(((s, c) for s, c in terms.items() if c), key=lambda t: id(t[0]))))

    def scale(self, k: int) -> _Affine:
        return _Affine(self.const * k, tuple((s, c * k) for s, c in self.terms if c * k))

    def upper(self, emitter: _Emitter) -> int | None:
        """The largest value over the grid, or None when a symbol is no grid offset or counts down."""
        if any(s not in emitter.grid_args or k < 0 for s, k in self.terms):
            return None
        return self.const + sum(k * emitter.last_offset(s) for s, k in self.terms)

    def __sub__(self, other: _Affine) -> _Affine:
        return self + other.scale(-1)


def _affine(v: SSAValue, env: dict[SSAValue, _Affine]) -> _Affine:
    """Evaluate index arithmetic (arith constants, +, -, *, and / or % of constants)."""
    if v in env:
        return env[v]
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, builtin.IntegerAttr):
        out = _Affine(op.value.value.data)
    elif isinstance(op, arith.AddiOp | arith.SubiOp | arith.MuliOp | arith.DivUIOp | arith.RemUIOp):
        a, b = _affine(op.lhs, env), _affine(op.rhs, env)
        if isinstance(op, arith.AddiOp):
            out = a + b
        elif isinstance(op, arith.SubiOp):
            out = a - b
        elif isinstance(op, arith.MuliOp) and (not a.terms or not b.terms):
            out = b.scale(a.const) if not a.terms else a.scale(b.const)
        elif not a.terms and not b.terms and b.const > 0 and not isinstance(op, arith.MuliOp):
            out = _Affine(a.const // b.const if isinstance(op, arith.DivUIOp) else a.const % b.const)
        else:
            raise _NotAffine(op.name)
    else:
        raise _NotAffine(op.name if isinstance(op, Operation) else "a block argument")
    env[v] = out
    return out


@dataclass
class _Stream:
    """An operand streamed through a multi-stage buffer: tile u is `glob[origin + u * step]`,
    copied into stage `u mod stages`."""

    glob: SSAValue
    buf: SSAValue
    origin: list[_Affine]
    step: list[int]

    @property
    def dim(self) -> int:
        """The axis of the global that the stream moves along."""
        return next(d for d, s in enumerate(self.step) if s)


@dataclass
class _Pipeline:
    """A stream loop that hbm-to-smem pipelined and smem-to-reg filled with mma.sync steps."""

    loop: scf.ForOp
    stages: int
    tiles: int
    streams: list[_Stream]
    steps: list[tuple[list[reg.LdmatrixOp], list[reg.MmaOp]]]  # per 16-wide step: its loads, then its products
    prologue: list[Operation]  # the copies and commits before the loop, which the pipeline emits itself


@dataclass
class _StreamCopies:
    """How the block's threads copy one stream's tiles: thread t takes `rows` rows
    (`row_pass` apart, from t / g) and in each `width` chunks (`g` apart, from t mod g)."""

    stream: _Stream
    glob: _Global
    buf: _Buffer
    g: int
    row_pass: int
    rows: int
    width: int
    row_t: SSAValue  # this thread's first row in the tile
    chunk_t: SSAValue  # this thread's first chunk in a row
    dst: SSAValue  # shared address of this thread's first chunk in stage 0
    base: list[SSAValue] = field(default_factory=list)  # per row: global address of its first chunk in tile 0
    delta: int = 0  # bytes from one tile to the next
    in_immediate: bool = False  # tile steps ride in the copies' immediates within an unrolled trip

    def chunk_offsets(self) -> list[tuple[int, int, int]]:
        """(row index, shared offset, global offset) of each of this thread's chunks."""
        return [(p, p * self.row_pass * self.buf.row_bytes + 16 * i * self.g, 16 * i * self.g) for p in range(self.rows)
                for i in range(self.width)]

    def row_step(self) -> int:
        return self.row_pass * self.glob.type.dims[1] * self.glob.esize


class _Emitter(PtxBuilder):
    def __init__(self, kernel: hbm.KernelOp):
        super().__init__(kernel)
        self.smem_bytes = 0
        self.smem_base: SSAValue | None = None
        self.warps = kernel.warp_grid
        self.nthreads = 32 * _prod(self.warps.values())
        self.sizes = kernel.axis_sizes()
        self.moved_by: dict[SSAValue, SSAValue] = {}  # a grid offset that moved in -> by how much (b32)
        self.grid_args: dict[SSAValue, str] = {}  # grid offset block argument -> its axis
        self.pipelines: dict[Operation, _Pipeline] = {}
        self.absorbed: set[Operation] = set()
        self.ld_bases: dict[tuple, SSAValue] = {}

    def grid_symbols(self) -> dict[SSAValue, _Affine]:
        """The block's grid offsets as the symbols of index arithmetic."""
        return {a: _Affine(0, ((a, 1),)) for a in self.grid_args}

    def last_offset(self, grid_arg: SSAValue) -> int:
        """The largest value a grid offset takes: the last block's, moved in at the edge."""
        axis = self.grid_args[grid_arg]
        return self.sizes[axis] - self.kernel.grid_tiles[axis]

    # -- small builders ------------------------------------------------------------------
    def s32(self, v: int) -> SSAValue:
        return self.emit(P.ConstOp("s32", v, B32)).results[0]

    def add64(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        if isinstance(b, int):
            if b == 0:
                return a
            b = self.emit(P.ConstOp("s64", b, B64)).results[0]
        return self.emit(P.AddOp("s64", a, b, result=B64)).results[0]

    def wide(self, a: SSAValue, k: int) -> SSAValue:
        return self.op2(P.MulOp, "u32", a, k, mods="wide", result=B64)

    def setp(self, cmp: str, ty: str, a: SSAValue, b: int) -> SSAValue:
        return self.emit(P.SetpOp(cmp, ty, a, self.s32(b) if ty == "s32" else self.u32(b))).results[0]

    def both(self, p: SSAValue | None, q: SSAValue | None) -> SSAValue | None:
        if p is None or q is None:
            return p or q
        return self.emit(P.AndOp("pred", p, q, result=PRED)).results[0]

    def placed(self, row: SSAValue, col_bytes: SSAValue, row_bytes: int, swizzled: bool) -> SSAValue:
        """A register holding where byte `col_bytes` of row `row` lies in rows of `row_bytes`,
        swizzled or not (`_Buffer.place` with registers)."""
        plain = self.add(self.mul(row, row_bytes), col_bytes)
        if not swizzled:
            return plain
        key_rows = max(1, 128 // row_bytes)
        line = row if key_rows == 1 else self.op2(P.ShrOp, "u32", row, key_rows.bit_length() - 1)
        key = self.op2(P.ShlOp, "b32", self.op2(P.AndOp, "b32", line, 7), 4)
        return self.op2(P.XorOp, "b32", plain, key)

    def affine_reg(self, a: _Affine) -> SSAValue | None:
        """The symbolic part of an index (its grid offsets) in a register; None when there is none."""
        out = None
        for sym, coeff in a.terms:
            term = self.vals[sym] if coeff == 1 else self.mul(self.vals[sym], coeff)
            out = term if out is None else self.add(out, term)
        return out

    # -- the kernel ------------------------------------------------------------------------
    def build(self) -> P.KernelOp:
        args = self.kernel.body.block.args
        globs = self.kernel.globals
        params = [(f"{self.name}_{g.name_hint or f'arg{n}'}", "u64") for n, g in enumerate(globs)]
        for (pname, _), g in zip(params, globs):
            t: hbm.GlobalType = g.type  # type: ignore[assignment]
            if len(t.dims) != 2:
                raise self.fail(f"global tensors must be 2-D for now, got {t}")
            if t.dims[0] * t.dims[1] >= 1 << 32:
                raise self.fail(f"{t} has 2^32 elements or more; indices are 32-bit")
            raw = self.emit(P.LdParamOp(pname, "u64", B64)).results[0]
            self.vals[g] = _Global(self.emit(P.CvtaOp("global", raw)).results[0], t)
        grid = self.kernel.grid_tiles
        if len(grid) > 3:
            raise self.fail("at most 3 grid axes")
        for unsupported, given in (("persistent", self.kernel.persistent), ("cluster", self.kernel.cluster), ("order", self.kernel.order)):
            if given is not None:
                raise self.fail(f"this lowering launches a plain or grouped grid (hbm-launch{{group=G}}); "
                                f"'{unsupported}' launches are not taken here")
        group = self.kernel.group_rows
        blocks = self.kernel.grid_shape()
        if group:  # one grid axis; the tile's row and column blocks from its linear index
            rows, cols = (blocks[a] for a in grid)
            ctas = list(self.grouped_tile(rows, cols, group, self.emit(P.SregOp("ctaid.x")).results[0]))
        else:
            ctas = [self.emit(P.SregOp(f"ctaid.{'xyz'[n]}")).results[0] for n in range(len(grid))]
        for n, ((axis, tile), cta) in enumerate(zip(grid.items(), ctas)):
            start, extent = self.mul(cta, tile), self.sizes[axis]
            arg = args[len(globs) + n]
            self.grid_args[arg] = axis
            if extent < tile:
                raise self.fail(f"a tile of {tile} along '{axis}' is longer than the axis ({extent})")
            if extent % tile:  # the last block moves in to end at the edge
                moved = self.op2(P.MinOp, "u32", start, extent - tile)
                self.moved_by[moved] = self.op2(P.SubOp, "u32", start, moved)
                start = moved
            self.vals[arg] = start
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
            if isinstance(op, scf.ForOp) and "smem.stages" in op.attributes:
                pl = self.match_pipeline(op)
                self.pipelines[op] = pl
                self.absorbed.update(pl.prologue)
        for op in self.kernel.body.block.ops:
            self.lower(op)
        kernel = P.KernelOp(self.name, params, Region(self.blocks), dynamic_shared=SHARED if self.smem_bytes else None,
                            reqntid=[self.nthreads])
        # what a launch needs: blocks along x, y, z (grouped: all along x) and the dynamic shared memory
        launch = [_prod(blocks.values())] if group else [blocks[a] for a in grid]
        kernel.properties["napkin.grid"] = builtin.ArrayAttr([builtin.IntegerAttr(n, 32) for n in launch])
        kernel.properties["napkin.smem_bytes"] = builtin.IntegerAttr(self.smem_bytes, 32)
        return kernel

    def lower(self, op: Operation) -> None:
        if op in self.absorbed:
            return
        if isinstance(op, arith.ConstantOp | arith.AddiOp | arith.MuliOp | arith.DivUIOp | arith.RemUIOp | arith.SubiOp):
            for new in self.arith.lower_op(op):
                self.emit(new)
        elif isinstance(op, smem.AllocOp):
            self.alloc(op)
        elif isinstance(op, smem.WaitOp):
            self.emit(T.CpAsyncWaitGroupOp(op.pending.value.data))
        elif isinstance(op, smem.BarrierOp):
            self.emit(P.BarSyncOp(0))
        elif isinstance(op, reg.ZerosOp):
            z = self.emit(P.ConstOp("f32", 0.0, F32)).results[0]
            self.vals[op.result] = [z] * op.result.type.values_per_lane()  # type: ignore[attr-defined]
        elif isinstance(op, reg.LdmatrixOp):
            stage = _affine(op.stage, {})
            if stage.terms:
                raise self.fail("an ldmatrix outside the stream loop must read a constant stage")
            self.vals[op.result] = self.ldmatrix(op, stage.const)
        elif isinstance(op, reg.MmaOp):
            self.mma(op, self.vals[op.a], self.vals[op.b])
        elif isinstance(op, reg.StoreOp):
            self.store(op)
        elif isinstance(op, scf.ForOp) and op in self.pipelines:
            self.pipeline(self.pipelines[op])
        elif isinstance(op, hbm.ReturnOp):
            self.emit(P.RetOp())
        elif isinstance(op, smem.CopyOp | smem.CommitOp | scf.ForOp):
            raise self.fail(f"{op.name} outside a stream loop that hbm-to-smem pipelined (or its prologue) is not emitted yet")
        else:
            raise self.fail(f"{op.name} is not at the register level; lower it first (smem-to-reg)")

    # -- shared memory ---------------------------------------------------------------------
    def alloc(self, op: smem.AllocOp) -> None:
        t: smem.BufferType = op.result.type  # type: ignore[assignment]
        if len(t.dims) != 2 or t.dtype not in ("bf16", "f16"):
            raise self.fail(f"shared buffers are 2-D bf16 or f16 for now, got {t}")
        rows, cols = t.dims
        if cols % 8:
            raise self.fail(f"a buffer's rows must be a multiple of 8 elements (16 bytes), got {cols}")
        if t.layout.data == "swizzle" and not smem.swizzle_fits(2 * cols):
            raise self.fail(f"layout=swizzle permutes 16-byte chunks within 128-byte lines: a buffer's rows must be 64 bytes or "
                            f"a multiple of 128 bytes, got {2 * cols} ({t}); use layout=pad8")
        row_bytes = 2 * cols + (16 if t.layout.data == "pad8" else 0)
        # buffers share the dynamic shared array (a block may use more than 48 KiB of it)
        offset = -(-self.smem_bytes // 128) * 128
        self.smem_bytes = offset + t.stages.data * rows * row_bytes
        if self.smem_base is None:
            self.smem_base = self.emit(P.AddrOfOp(SHARED, B32)).results[0]
        base = self.add(self.smem_base, offset) if offset else self.smem_base
        self.vals[op.result] = _Buffer(base, t, row_bytes, rows * row_bytes)

    # -- the stream pipeline: what it is ------------------------------------------------------
    def match_pipeline(self, loop: scf.ForOp) -> _Pipeline:
        """Read the pipeline hbm-to-smem and smem-to-reg built: a prologue copying tiles
        0 .. stages-2, and a body that waits for tile i, meets at a barrier, copies tile
        i + stages - 1 into the stage tile i - 1 used and computes on stage i mod stages."""
        stages = loop.attributes["smem.stages"].value.data  # type: ignore[union-attr]
        try:
            lb, ub, step = (_affine(v, {}) for v in (loop.lb, loop.ub, loop.step))
        except _NotAffine:
            lb = ub = step = _Affine(1, ((loop.lb, 1),))
        if lb.terms or ub.terms or step.terms or lb.const != 0 or step.const <= 0 or ub.const <= 0:
            raise self.fail("the stream loop must run from 0 to a constant in constant steps")
        tiles = -(-ub.const // step.const)
        body = loop.body.block
        iv = body.args[0]
        kinds = [o for o in body.ops if not isinstance(o, arith.ConstantOp | arith.AddiOp | arith.SubiOp | arith.MuliOp | arith.DivUIOp | arith.RemUIOp)]
        copies = [o for o in kinds if isinstance(o, smem.CopyOp)]
        compute = [o for o in kinds if isinstance(o, reg.LdmatrixOp | reg.MmaOp)]
        head = [o.name for o in kinds[:len(kinds) - len(compute) - 1]]
        want = ["smem.wait", "smem.barrier"] + ["smem.copy"] * len(copies) + ["smem.commit"]
        if head != want or not isinstance(body.last_op, scf.YieldOp) or kinds[len(head):-1] != compute or not compute:
            raise self.fail("the stream loop must wait, meet at a barrier, copy and commit the next tiles, then load "
                            f"fragments and multiply (hbm-to-smem, smem-to-reg); found {', '.join(o.name for o in kinds)}")
        if kinds[0].pending.value.data != stages - 2:  # type: ignore[attr-defined]
            raise self.fail(f"the stream loop's wait must leave {stages - 2} groups pending")

        def at(v: SSAValue, t: int) -> _Affine:
            return _affine(v, {iv: _Affine(t * step.const), **self.grid_symbols()})

        streams: list[_Stream] = []
        try:
            for c in copies:
                first = [at(o, 0) for o in c.offsets]
                delta = [at(o, 1) - f for o, f in zip(c.offsets, first)]
                if any(d.terms for d in delta) or sum(1 for d in delta if d.const) != 1:
                    raise self.fail(f"a copy in the stream loop must move along one axis by a constant ({c.source.type})")
                origin = [f - _Affine(d.const * (stages - 1)) for f, d in zip(first, delta)]
                for t in range(tiles):
                    if at(c.stage, t) != _Affine((t + stages - 1) % stages) or [at(o, t) for o in c.offsets] != [
                            o + _Affine(d.const * (t + stages - 1)) for o, d in zip(origin, delta)]:
                        raise self.fail("the stream loop must copy tile i + stages - 1 into stage (i + stages - 1) mod stages")
                streams.append(_Stream(c.source, c.dest, origin, [d.const for d in delta]))
            for ld in compute:
                if isinstance(ld, reg.LdmatrixOp) and any(at(ld.stage, t) != _Affine(t % stages) for t in range(tiles)):
                    raise self.fail("the stream loop must read stage i mod stages")
        except _NotAffine as e:
            raise self.fail(f"the stream loop's offsets and stages must be affine index arithmetic ({e})") from None
        prologue = self.match_prologue(loop, streams, stages)
        steps: list[tuple[list[reg.LdmatrixOp], list[reg.MmaOp]]] = []
        for op in compute:
            if isinstance(op, reg.LdmatrixOp) and (not steps or steps[-1][1]):
                steps.append(([], []))
            if isinstance(op, reg.LdmatrixOp):
                steps[-1][0].append(op)
            else:
                if not steps or not all(isinstance(x.owner, reg.LdmatrixOp) and x.owner in steps[-1][0] for x in (op.a, op.b)):
                    raise self.fail("each reg.mma in the stream loop must multiply fragments loaded just before it")
                steps[-1][1].append(op)
        if len(body.args) != 1 + len(loop.iter_args):
            raise self.fail("the stream loop's body must take its counter and its carried values")
        return _Pipeline(loop, stages, tiles, streams, steps, prologue)

    def match_prologue(self, loop: scf.ForOp, streams: list[_Stream], stages: int) -> list[Operation]:
        bufs = {s.buf: s for s in streams}
        found: list[Operation] = []
        seen: dict[SSAValue, int] = {s.buf: 0 for s in streams}
        commits = 0
        for op in self.kernel.body.block.ops:
            if op is loop:
                break
            if isinstance(op, smem.CopyOp) and op.dest in bufs:
                s, u = bufs[op.dest], seen[op.dest]
                try:
                    ok = (_affine(op.stage, {}) == _Affine(u) and op.source == s.glob and
                          [_affine(o, self.grid_symbols()) for o in op.offsets] ==
                          [o + _Affine(d * u) for o, d in zip(s.origin, s.step)])
                except _NotAffine:
                    ok = False
                if not ok or u != commits:
                    raise self.fail(f"the prologue must copy tiles 0 .. {stages - 2} into stages 0 .. {stages - 2}, one group each")
                seen[op.dest] += 1
                found.append(op)
            elif isinstance(op, smem.CommitOp) and found:
                commits += 1
                found.append(op)
        if commits != stages - 1 or any(v != stages - 1 for v in seen.values()):
            raise self.fail(f"the prologue must copy tiles 0 .. {stages - 2} of each stream, one group each")
        return found

    # -- the stream pipeline: how it is emitted -----------------------------------------------
    def pipeline(self, pl: _Pipeline) -> None:
        S, n = pl.stages, pl.tiles
        j0 = (-n) % S  # tile 0 runs in sub-iteration j0 of the first trip, so tile n-1 ends a trip
        pad = self.stream_pad(pl)
        plans = [self.stream_copies(s, pl, j0, pad) for s in pl.streams]
        for u in range(S - 1):  # the prologue: tiles 0 .. S-2 into stages j0 .. j0+S-2
            if u < n:
                for c in plans:
                    self.prologue_tile(c, u, (u + j0) % S, pad if u == 0 else 0)
            self.emit(T.CpAsyncCommitGroupOp())
        self.emit(T.CpAsyncWaitGroupOp(S - 2))
        self.emit(P.BarSyncOp(0))
        for loads, _ in pl.steps:  # the ldmatrix base registers, before the loop
            for ld in loads:
                for row, col_bytes, _, _ in self.ld_pieces(ld):
                    self.ld_address(ld, row, col_bytes)
        first = self.load_step(pl.steps[0], j0)

        loop = pl.loop
        counter = self.s32(-j0)
        ptrs = [self.add64(b, 0 if c.in_immediate else (S - 1) * c.delta) for c in plans for b in c.base]
        state = (counter, ptrs, [self.vals[v] for v in loop.iter_args], first)
        # trips of S tiles; the last one, whose later sub-iterations copy nothing, is emitted
        # after the loop, so that the loop needs no guards
        trips = (n + j0) // S
        if trips > 1:
            flat = _flatten(state)
            head = Block(arg_types=[v.type for v in flat])
            entry = head if j0 == 0 else Block(arg_types=[v.type for v in flat])
            exit_ = Block()
            self.emit(P.BraOp(entry, *flat))
            self.blocks += [head] + ([entry] if entry is not head else []) + [exit_]
            for j in range(S):
                if j == 0:
                    self.cur = head
                    state = _unflatten(list(head.args), state)
                elif j == j0:
                    self.emit(P.BraOp(entry, *_flatten(state)))
                    self.cur = entry
                    state = _unflatten(list(entry.args), state)
                state = self.sub_iteration(pl, plans, j, state, copies=True, last=False)
            counter, ptrs, accs, frags = state
            counter = self.emit(P.AddOp("s32", counter, self.s32(S), result=B32)).results[0]
            more = self.emit(P.SetpOp("lt", "s32", counter, self.s32(n - S))).results[0]
            # the back edge passes the carried registers on an unconditional branch: copies
            # under a predicate would keep ptxas from giving both ends the same registers
            latch = Block()
            self.emit(P.CondBraOp(more, latch, [], exit_, []))
            self.blocks.insert(self.blocks.index(exit_), latch)
            self.cur = latch
            self.emit(P.BraOp(head, *_flatten((counter, ptrs, accs, frags))))
            self.cur = exit_
            state = (counter, ptrs, accs, frags)
        for j in range(0 if trips > 1 else j0, S):  # the last trip: only its first tile copies (tile n - 1)
            state = self.sub_iteration(pl, plans, j, state, copies=j == 0, last=j == S - 1)
        for res, v in zip(loop.results, state[2]):
            self.vals[res] = v

    def sub_iteration(self, pl: _Pipeline, plans: list[_StreamCopies], j: int, state, *, copies: bool, last: bool):
        """One tile in sub-iteration j of a trip: it reads stage j and copies the tile
        stages - 1 ahead into stage j - 1 (the one the previous tile read). The last tile
        loads no fragments of a next one."""
        S, n = pl.stages, pl.tiles
        counter, ptrs, accs, frags = state
        body = pl.loop.body.block
        for arg, v in zip(body.args[1:], accs):
            self.vals[arg] = v
        chunks = []
        k = 0
        for c in plans:
            tile_imm = (j + S - 1 - (-n) % S) * c.delta if c.in_immediate else 0
            for p, dst_off, src_off in c.chunk_offsets() if copies else []:
                chunks.append((c, ptrs[k + p], (j - 1) % S, dst_off, src_off + tile_imm))
            k += c.rows
        nsteps = len(pl.steps)
        for s, (_, mmas) in enumerate(pl.steps):
            final = s + 1 == nsteps
            nxt = self.load_step(pl.steps[s + 1], j) if not final else None
            for c, ptr, stage, dst_off, src_off in chunks[s * len(chunks) // nsteps:(s + 1) * len(chunks) // nsteps]:
                self.emit(T.CpAsyncOp(c.dst, ptr, 16, dst_offset=stage * c.buf.stage_bytes + dst_off, src_offset=src_off))
            if final and not last:
                self.emit(T.CpAsyncCommitGroupOp())
                self.emit(T.CpAsyncWaitGroupOp(S - 2))
                self.emit(P.BarSyncOp(0))
                nxt = self.load_step(pl.steps[0], (j + 1) % S)
            for mma in mmas:
                self.mma(mma, frags[mma.a], frags[mma.b])
            frags = nxt
        yielded = body.last_op
        assert isinstance(yielded, scf.YieldOp)
        accs = [self.vals[v] for v in yielded.operands]
        k, moved = 0, []
        for c in plans:
            for p in range(c.rows):
                step = c.delta if not c.in_immediate else S * c.delta if j == S - 1 else 0
                moved.append(self.add64(ptrs[k + p], step) if copies else ptrs[k + p])
            k += c.rows
        return counter, moved, accs, frags

    def stream_pad(self, pl: _Pipeline) -> int:
        """How far before 0 the first tile starts, so that the last one ends at the edge."""
        pads = set()
        for s in pl.streams:
            g: _Global = self.vals[s.glob]
            d, step = s.dim, s.step[s.dim]
            extent = g.type.dims[d]
            tile = self.vals[s.buf].type.dims[d]
            if s.origin[d] != _Affine(0) or step != tile or pl.tiles != -(-extent // tile):
                raise self.fail(f"the stream loop must cover axis '{g.type.axis_names[d]}' of {g.type} in whole "
                                f"tiles of {tile} from 0, got {pl.tiles} steps of {step}")
            pads.add(pl.tiles * tile - extent)
        if len(pads) != 1:
            raise self.fail(f"the streamed tensors disagree on the streamed axis' length ({sorted(pads)})")
        return pads.pop()

    def stream_copies(self, s: _Stream, pl: _Pipeline, j0: int, pad: int) -> _StreamCopies:
        g: _Global = self.vals[s.glob]
        buf: _Buffer = self.vals[s.buf]
        if buf.type.axis_names != g.type.axis_names:
            raise self.fail(f"a copy from {g.type} into {buf.type} transposes; not emitted yet")
        rows, cols = buf.type.dims
        gcols = g.type.dims[1]
        if gcols % 8:
            raise self.fail(f"cp.async copies 16 bytes: the rows of {g.type} must be a multiple of 8 elements")
        per_row, threads = cols // 8, self.nthreads
        # g threads share a row, each taking every g-th chunk. A warp's copy then reads runs of
        # 16 g bytes: g = 8 (whole 128-byte lines, or whole rows when they are shorter) asks the
        # L2 for the fewest lines, which is what binds a cp.async GEMM on sm_90 (its tag
        # lookups, not its bytes); a larger g would only cost more rows (pointers) per thread
        choices = [k for k in range(1, per_row + 1) if per_row % k == 0 and threads % k == 0 and (rows * k) % threads == 0]
        if not choices:
            raise self.fail(f"a {rows} x {cols} tile is {rows * per_row} chunks of 16 bytes, which {threads} threads cannot share evenly")
        line = min(per_row, LINE_CHUNKS)
        gk = min([k for k in choices if k >= line] or [max(choices)])
        row_t = self.op2(P.DivOp, "u32", self.tid, gk)
        chunk_t = self.op2(P.RemOp, "u32", self.tid, gk)
        perm = _phase_rows(gk, buf.row_bytes) if (threads // gk) % 8 == 0 and not buf.swizzled else None
        if perm is not None:  # row 8a + b is copied by the threads of row 8a + perm[b]
            table = self.u32(sum(r << (4 * b) for b, r in enumerate(perm)))
            shift = self.op2(P.ShlOp, "b32", self.op2(P.AndOp, "b32", row_t, 7), 2)
            picked = self.op2(P.AndOp, "b32", self.op2(P.ShrOp, "u32", table, shift), 7)
            row_t = self.op2(P.OrOp, "b32", self.op2(P.AndOp, "b32", row_t, ~7 & 0xFFFFFFFF), picked)
        dst = self.add(buf.base, self.placed(row_t, self.mul(chunk_t, 16), buf.row_bytes, buf.swizzled))
        c = _StreamCopies(s, g, buf, gk, threads // gk, rows * gk // threads, per_row // gk, row_t, chunk_t, dst)
        if buf.swizzled:  # each thread's chunks must lie at fixed distances from its first
            for t in range(threads):
                r, k = divmod(t, gk)
                first = buf.place(r, 16 * k)
                if any(buf.place(r + p * c.row_pass, 16 * (k + i * gk)) - first != p * c.row_pass * buf.row_bytes + 16 * i * gk
                       for p in range(c.rows) for i in range(c.width)):
                    raise self.fail(f"a {rows} x {cols} tile copied by {threads} threads, {gk} a row, does not keep its "
                                    f"swizzle at fixed offsets; use layout=pad8")
        # the rows the tile does not stream along stay inside: grid offsets moved in at the edges
        origin = list(s.origin)
        origin[s.dim] = _Affine(-pad)
        for d, (o, size) in enumerate(zip(origin, (rows, cols))):
            hi, lo = o.upper(self), o.const if d != s.dim else 0
            if hi is None or lo < 0 or (d != s.dim and hi + size > g.type.dims[d]):
                raise self.fail(f"a tile of {buf.type} at {_show(o)} along '{g.type.axis_names[d]}' may fall outside {g.type}")
        o_r, o_c = (self.affine_reg(o) for o in origin)
        row = row_t if o_r is None else self.add(o_r, row_t)
        index = self.add(self.mul(row, gcols), self.mul(chunk_t, 8))
        if o_c is not None:
            index = self.add(index, o_c)
        first = self.emit(P.AddOp("u64", g.ptr, self.wide(index, g.esize), result=B64)).results[0]
        first = self.add64(first, (origin[0].const * gcols + origin[1].const) * g.esize)
        c.base = [self.add64(first, p * c.row_step()) for p in range(c.rows)]
        c.delta = (s.step[0] * gcols + s.step[1]) * g.esize
        reach = (2 * pl.stages - 2 - j0) * abs(c.delta) + max(off for _, _, off in c.chunk_offsets())
        c.in_immediate = reach <= COPY_IMMEDIATE
        return c

    def prologue_tile(self, c: _StreamCopies, u: int, stage: int, pad: int) -> None:
        """Copy tile u; the first `pad` elements along the stream (before 0) read nothing."""
        d = c.stream.dim
        ptrs = [self.add64(b, u * c.delta) for b in c.base]
        for p, dst_off, src_off in c.chunk_offsets():
            ptr = ptrs[p]
            dst_off += stage * c.buf.stage_bytes
            # this chunk's place along the stream: a row (row_t + ...) or 8 elements of a row (8 chunk_t + ...)
            who, first, unit = (c.row_t, p * c.row_pass, 1) if d == 0 else (c.chunk_t, src_off // 16, 8)
            need = -(-(pad - first * unit) // unit)  # the smallest row_t or chunk_t that lies at or after 0
            if need <= 0:
                self.emit(T.CpAsyncOp(c.dst, ptr, 16, dst_offset=dst_off, src_offset=src_off))
                continue
            inside = self.setp("ge", "u32", who, need)
            size = self.emit(P.SelpOp("b32", self.u32(16), self.u32(0), inside)).results[0]
            # a chunk before the start reads nothing from the tensor's first element
            src = self.emit(P.SelpOp("b64", self.add64(ptr, src_off), c.glob.ptr, inside)).results[0]
            self.emit(T.CpAsyncOp(c.dst, src, 16, dst_offset=dst_off, src_size=size))

    # -- registers -------------------------------------------------------------------------
    def load_step(self, step: tuple[list[reg.LdmatrixOp], list[reg.MmaOp]], stage: int) -> dict[SSAValue, list[SSAValue]]:
        return {ld.result: self.ldmatrix(ld, stage) for ld in step[0]}

    def ldmatrix(self, op: reg.LdmatrixOp, stage: int) -> list[SSAValue]:
        """A warp's fragment from one stage: base register (this lane's row, this warp's
        place) plus immediates (the stage, the 16-row or 8-column tile, `at`)."""
        buf: _Buffer = self.vals[op.source]
        regs: list[SSAValue] = []
        for row, col_bytes, num, trans in self.ld_pieces(op):
            base, imm = self.ld_address(op, row, col_bytes)
            regs += self.emit(T.LdmatrixOp(base, num, trans=trans, offset=stage * buf.stage_bytes + imm)).results
        return regs

    def ld_pieces(self, op: reg.LdmatrixOp) -> list[tuple[int, int, int, bool]]:
        """(row, byte in the row, matrices, transposed) of each ldmatrix a fragment takes,
        relative to the warp's lane base."""
        buf: _Buffer = self.vals[op.source]
        t: reg.FragType = op.result.type  # type: ignore[assignment]
        at = hbm.parse_labels(op.at)
        if buf.type.axis_names != t.axis_names:
            raise self.fail(f"ldmatrix from a buffer laid out as {list(buf.type.axis_names)} into {t} is not emitted yet")
        r_axis, c_axis = t.axis_names
        r0 = 0 if r_axis in self.warp_index else at.get(r_axis, 0)
        c0 = 0 if c_axis in self.warp_index else at.get(c_axis, 0)
        rows, cols = t.dims
        if t.role.data == "a":  # per 16 rows: matrices (rows 0-7 | 8-15) x (k 0-7 | 8-15)
            return [(r0 + 16 * tm, 2 * c0, 4, False) for tm in range(rows // 16)]
        # b, k-major in shared memory: transposed loads, two 8-column tiles at a time
        return [(r0, 2 * c0 + 16 * tn, 4 if tn + 1 < cols // 8 else 2, True) for tn in range(0, cols // 8, 2)]

    def ld_address(self, op: reg.LdmatrixOp, row: int, col_bytes: int) -> tuple[SSAValue, int]:
        """Base register and immediate of an ldmatrix `row` rows and `col_bytes` bytes from
        the lane's place. In a swizzled buffer only whole swizzle periods (8 key rows down,
        128 bytes along) move as immediates; what lies within one is in the base register."""
        buf: _Buffer = self.vals[op.source]
        if not buf.swizzled:
            return self.ld_base(op), row * buf.row_bytes + col_bytes
        period = 8 * buf.key_rows
        r_in, c_in = row % period, col_bytes % 128 if buf.row_bytes > 128 else col_bytes
        return self.ld_base(op, r_in, c_in), (row - r_in) * buf.row_bytes + col_bytes - c_in

    def ld_base(self, op: reg.LdmatrixOp, row_in: int = 0, col_in: int = 0) -> SSAValue:
        """This lane's row address for a warp's fragments of one buffer (one per buffer and
        fragment shape, and in a swizzled buffer per place within a swizzle period; the
        pipeline makes them before its loop)."""
        buf: _Buffer = self.vals[op.source]
        t: reg.FragType = op.result.type  # type: ignore[assignment]
        r_axis, c_axis = t.axis_names
        key = (op.source, r_axis, t.shape[r_axis], c_axis, t.shape[c_axis], row_in, col_in)
        if key not in self.ld_bases:
            # lanes 0-15 give rows 0-15, lanes 16-31 the same rows 8 columns on
            row = self.op2(P.AndOp, "b32", self.lane, 15)
            col = self.mul(self.op2(P.ShrOp, "u32", self.lane, 4), 16)
            if r_axis in self.warp_index:
                row = self.add(row, self.mul(self.warp_index[r_axis], t.shape[r_axis]))
            if c_axis in self.warp_index:
                col = self.add(col, self.mul(self.warp_index[c_axis], 2 * t.shape[c_axis]))
            self.ld_bases[key] = self.add(buf.base, self.placed(self.add(row, row_in), self.add(col, col_in), buf.row_bytes, buf.swizzled))
        return self.ld_bases[key]

    def mma(self, op: reg.MmaOp, a: list[SSAValue], b: list[SSAValue]) -> None:
        ta: reg.FragType = op.a.type  # type: ignore[assignment]
        tb: reg.FragType = op.b.type  # type: ignore[assignment]
        c = self.vals[op.c]
        mt, nt = ta.dims[0] // 16, tb.dims[1] // 8
        out: list[SSAValue] = list(c)
        for tm in range(mt):
            # a serpentine order: the next product shares an operand with the last one
            for tn in range(nt) if tm % 2 == 0 else reversed(range(nt)):
                k = tm * nt + tn
                m = self.emit(T.MmaSyncOp("m16n8k16", ta.dtype, a[4 * tm : 4 * tm + 4], b[2 * tn : 2 * tn + 2], c[4 * k : 4 * k + 4]))
                out[4 * k : 4 * k + 4] = m.results
        self.vals[op.result] = out

    def store(self, op: reg.StoreOp) -> None:
        """Pairs of accumulators to global memory from one base register; a block that moved
        in at an edge stores only the rows (columns) its neighbour does not."""
        t: reg.FragType = op.value.type  # type: ignore[assignment]
        g: _Global = self.vals[op.dest]
        regs = self.vals[op.value]
        gcols = g.type.dims[1]
        dt = g.type.dtype
        if gcols % 2:
            raise self.fail(f"the output's rows must have an even length, got {gcols}")
        rows, cols = t.dims
        lane_at = [self.op2(P.ShrOp, "u32", self.lane, 2), self.mul(self.op2(P.AndOp, "b32", self.lane, 3), 2)]
        at: list[SSAValue] = []  # this lane's first row and column within the block's tile
        skips: list[SSAValue | None] = []  # how far this block moved in, along each axis
        for d, (axis, offset) in enumerate(zip(t.axis_names, op.offsets)):
            try:
                origin = _affine(offset, self.grid_symbols())
            except _NotAffine:
                raise self.fail("reg.store's offsets must be the block's grid offsets or constants") from None
            tile = t.shape[axis] * self.warps.get(axis, 1)
            hi = origin.upper(self)
            if hi is None or origin.const < 0 or hi + tile > g.type.dims[d]:
                raise self.fail(f"a {tile}-long tile at {_show(origin)} along '{axis}' may fall outside {g.type}")
            local = lane_at[d]
            if axis in self.warp_index:
                local = self.add(local, self.mul(self.warp_index[axis], t.shape[axis]))
            at.append(local)
            skips.append(self.moved_by.get(self.vals[offset]))
        if dt != "f32" and gcols % 8 == 0 and (2 * cols) % 128 == 0:  # 16-byte chunks of whole lines
            self.stage_output(op, regs, skips)
            return
        o_r, o_c = (self.vals[o] for o in op.offsets)
        index = self.add(self.mul(self.add(o_r, at[0]), gcols), self.add(o_c, at[1]))
        base = self.emit(P.AddOp("u64", g.ptr, self.wide(index, g.esize), result=B64)).results[0]
        # a lane's place relative to the first row (column) this block stores: >= 0 to store
        rel = [self.op2(P.SubOp, "s32", a, s) if s is not None else None for a, s in zip(at, skips)]
        row_ok = {dr: self.setp("ge", "s32", rel[0], -dr) for dr in range(0, rows, 8)} if rel[0] is not None else {}
        col_ok = {dc: self.setp("ge", "s32", rel[1], -dc) for dc in range(0, cols, 8)} if rel[1] is not None else {}
        nt = cols // 8
        for tm in range(rows // 16):
            for tn in range(nt):
                k = 4 * (tm * nt + tn)
                for h in (0, 1):
                    dr, dc = 16 * tm + 8 * h, 8 * tn
                    inside = self.both(row_ok.get(dr), col_ok.get(dc))
                    off = (dr * gcols + dc) * g.esize
                    lo, hi = regs[k + 2 * h], regs[k + 2 * h + 1]
                    if dt == "f32":
                        self.emit(P.StOp("global", "f32", base, [lo, hi], offset=off, guard=inside))
                    else:
                        packed = self.emit(P.CvtOp(f"{dt}x2", "f32", [hi, lo], RegType(f"{dt}x2"), mods="rn")).results[0]
                        self.emit(P.StOp("global", "b32", base, [packed], offset=off, guard=inside))

    def stage_output(self, op: reg.StoreOp, regs: list[SSAValue], skips: list[SSAValue | None]) -> None:
        """The tile through shared memory, so that it leaves in whole lines: each warp writes
        its rounded accumulators into its own swizzled region (the drained stages: after the
        pipeline, once every warp is past its last ldmatrix), then each 8 (or 16) lanes read a
        row's 128 (256) bytes back 16 at a time and store them with one `st.global.v4`, where
        from registers a warp writes 16 bytes of each of 8 rows (half sectors) per store.
        The tile's rows must be whole 128-byte lines (`store` checks)."""
        t: reg.FragType = op.value.type  # type: ignore[assignment]
        g: _Global = self.vals[op.dest]
        rows, cols = t.dims
        row_bytes = 2 * cols
        region = rows * row_bytes
        if self.smem_base is None:
            self.smem_base = self.emit(P.AddrOfOp(SHARED, B32)).results[0]
        self.smem_bytes = max(self.smem_bytes, self.nthreads // 32 * region)
        dt, gcols = g.type.dtype, g.type.dims[1]
        self.emit(P.BarSyncOp(0))  # every warp has read its last stage
        mine = self.add(self.smem_base, self.mul(self.op2(P.ShrOp, "u32", self.tid, 5), region))
        # a lane holds rows quad + 8h + 16tm (one swizzle key: rows 8 apart share it) at bytes
        # 16tn + 4 (lane mod 4): one register per 8-column tile tn, the rows in immediates
        quad = self.op2(P.ShrOp, "u32", self.lane, 2)
        pair = self.mul(self.op2(P.AndOp, "b32", self.lane, 3), 4)
        nt = cols // 8
        chunk = [self.add(mine, self.placed(quad, self.add(pair, 16 * tn), row_bytes, True)) for tn in range(nt)]
        for tm in range(rows // 16):
            for tn in range(nt):
                k = 4 * (tm * nt + tn)
                for h in (0, 1):
                    lo, hi = regs[k + 2 * h], regs[k + 2 * h + 1]
                    packed = self.emit(P.CvtOp(f"{dt}x2", "f32", [hi, lo], RegType(f"{dt}x2"), mods="rn")).results[0]
                    self.emit(P.StOp("shared", "b32", chunk[tn], [packed], offset=(16 * tm + 8 * h) * row_bytes))
        self.emit(P.BarSyncOp(0))
        # read back: lane l takes chunk l mod L of row l / L, L = the lanes a row needs; reads
        # rows_per rows apart differ in their key until 8 rows on, so each of the first few
        # has its own base register and the rest are immediates from them
        lanes_row = min(row_bytes // 16, 32)
        rows_per = 32 // lanes_row
        r_l = self.op2(P.DivOp, "u32", self.lane, lanes_row)
        c_l = self.op2(P.RemOp, "u32", self.lane, lanes_row)
        variants = max(1, 8 // rows_per)
        bases = [self.add(mine, self.placed(self.add(r_l, v * rows_per), self.mul(c_l, 16), row_bytes, True)) for v in range(variants)]
        # where each lane's chunk goes, and whether it is this block's to store
        local = [r_l, self.mul(c_l, 8)]
        for d, (axis, size) in enumerate(zip(t.axis_names, (rows, cols))):
            if axis in self.warp_index:
                local[d] = self.add(local[d], self.mul(self.warp_index[axis], size))
        o_r, o_c = (self.vals[o] for o in op.offsets)
        index = self.add(self.mul(self.add(o_r, local[0]), gcols), self.add(o_c, local[1]))
        gptr = self.emit(P.AddOp("u64", g.ptr, self.wide(index, g.esize), result=B64)).results[0]
        rel = [self.op2(P.SubOp, "s32", a, sk) if sk is not None else None for a, sk in zip(local, skips)]
        col_ok = self.setp("ge", "s32", rel[1], 0) if rel[1] is not None else None
        for it in range(rows // rows_per):
            v = it % variants
            vals = self.emit(P.LdOp("shared", "b32", bases[v], [B32] * 4, offset=(it - v) * rows_per * row_bytes)).results
            row_ok = self.setp("ge", "s32", rel[0], -it * rows_per) if rel[0] is not None else None
            self.emit(P.StOp("global", "b32", gptr, list(vals), offset=it * rows_per * gcols * g.esize, guard=self.both(row_ok, col_ok)))


def _flatten(state) -> list[SSAValue]:
    counter, ptrs, accs, frags = state
    out = [counter, *ptrs]
    for v in accs:
        out += v if isinstance(v, list) else [v]
    for regs in frags.values():
        out += regs
    return out


def _unflatten(values: list[SSAValue], like):
    """The loop state from block arguments, shaped like `like`."""
    _, ptrs, accs, frags = like
    it = iter(values)
    counter = next(it)
    new_ptrs = [next(it) for _ in ptrs]
    new_accs = [[next(it) for _ in v] if isinstance(v, list) else next(it) for v in accs]
    new_frags = {k: [next(it) for _ in regs] for k, regs in frags.items()}
    return counter, new_ptrs, new_accs, new_frags


def _show(a: _Affine) -> str:
    parts = [f"{k} * %{s.name_hint or '?'}" if k != 1 else f"%{s.name_hint or '?'}" for s, k in a.terms]
    return " + ".join(parts + ([str(a.const)] if a.const or not parts else []))


def _prod(xs) -> int:
    out = 1
    for x in xs:
        out *= x
    return out


def takes(kernel: hbm.KernelOp) -> bool:
    """Whether `kernel` is a plain sm_80 GEMM, which this emitter still lowers whole: 2-D
    globals, mma.sync products and no math between them, no producer warps, fragments
    laid out as their buffers (B stored [k, n]), its stream loop as `hbm-to-smem` built it
    (not unrolled by `smem-unroll-stages`)."""
    from napkin_ir.lowering.ptx_rules.fragments import FRAGMENT_MATH

    ops = list(kernel.walk())
    return (not any(isinstance(o, FRAGMENT_MATH + (reg.WgmmaOp, smem.ProducerOp)) or "smem.unrolled" in o.attributes for o in ops)
            and any(isinstance(o, scf.ForOp) and "smem.stages" in o.attributes for o in ops)
            and all(len(g.type.dims) == 2 for g in kernel.globals)  # type: ignore[attr-defined]
            and all(o.source.type.axis_names == o.result.type.axis_names for o in ops if isinstance(o, reg.LdmatrixOp)))  # type: ignore[attr-defined]


def lower_gemm(kernel: hbm.KernelOp) -> P.KernelOp:
    return _Emitter(kernel).build()
