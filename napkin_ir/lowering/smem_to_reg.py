"""`smem-to-reg`: split the block's tiles over warps and compute them with mma.sync fragments.

Every f32 tile the block computes becomes each warp's fragment of it (`!reg.frag<c, ...>`
for rows by columns, `!reg.frag<row, ...>` for one value per row), loops carrying them
included. A product `contract(read A, read B)` becomes, for each 16-wide slice of the
contracted axis, `reg.ldmatrix` of this warp's A and B fragments and a `reg.mma`, onto
zeros, or onto `acc` when the product is only added to it (`acc + contract`); the
elementwise maps, the reductions along a fragment's columns and the masks that attention
computes between its two products become the `reg` fragment math; an f32 tile rounded to
bf16 or f16 for a product becomes `reg.to_a` slices (attention's P, reused in registers;
a product whose rows only the warps' second axis splits is computed transposed so that the
tile is its first operand); a staged bf16 or f16 tile cast to f32 for that math becomes a `reg.read` of each warp's `c`
fragment of it, the accumulators' lanes (a gradient's dC, times the recomputed exp(A B));
the cast and store at the end become one `reg.store`, and so does the store of a row
vector computed in registers (attention's log-sum-exp, a `row` fragment). A vector that `hbm-to-smem` left in
global memory (a bias) becomes a `reg.load` of this warp's `row` or `col` fragment (a
cast of it to f32 is the load's own widening), where the math that adds it to a tile of
rows and columns first needs it. `warps="m:2,n:2"` says how many warps share each axis
(attention: the query rows only, `warps="i:8"`, so that a row reduction stays within a
warp); each warp's part must be a whole number of m16n8 tiles and a contracted tile a
multiple of 16. An operand read before its loop (attention's Q)
is loaded into fragments once (`hoist=true`, the default) or at each product. Warps may
hold a place each of an axis beyond the rows and columns: grouped-query attention's block
packs a group's query heads r by query positions i, and `warps="r:4,i:2"` gives every
head of 4 two warps of its own, so its tiles' fragments lack r (`!reg.frag<c, i=16,
j=64 : f32>`) and each warp's place along r is its index there.

With `mma=wgmma` (sm_90a, after `hbm-to-smem{copy=tma}`) the tensor cores read both
operands from the swizzled stages themselves: each 16-wide slice is one `reg.wgmma` per
warpgroup, the block's rows split over warpgroups of 64 (so `reg.warps` is the row axis
over all consumer warps, 16 rows each, and each warp's accumulators are 16 rows by the
whole tile's columns; where the rows are two axes, r x i, `r=4, i=2`: 16 rows of one
head a warp); the slices of one stage form a group that is committed; one group
stays in flight: iteration i waits until only its own group runs, then releases the stage
iteration i - 1 read (its products are complete), and after the loop all are awaited.
The accumulators go out as `reg.store`, or, where `hbm-to-smem{store=tma}` writes the
tile into shared memory for TMA stores, as one `reg.stmatrix` per `smem.write` (an f32
tile written for a TMA reduce-add, `reg.write`); an
epilogue between (maps on the accumulators) becomes the fragment math below. A GEMM with
`rows="n"` (the result's second tiled axis) is computed swapped: wgmma's rows run over n,
in warpgroups of 64, and its N over the first axis, whose tile may then be any multiple of
8 up to 256 (B's [k, n] stage is wgmma's A, A's [m, k] stage its B); the fragments are n x
m, and `reg.stmatrix` writes them transposed into the output's panels (`stmatrix.trans`).

Any other kernel (attention) takes the fragment math with `mma=wgmma` too: its products
are one `reg.wgmma` per 16-wide slice from the stages, or, where the first operand is an
f32 tile rounded to bf16 or f16 (attention's P), `reg.to_a` of each slice (all before
the group's first product) and `reg.wgmma_rs` with A from registers; each product's group
is committed and waited for where it stands, so the math after it reads finished
accumulators and the stages are released after their last product. With
`a_registers=true` a first operand read before its loop (attention's Q) is loaded into
`a` fragments once, right after its read (`reg.ldmatrix`, 16 rows a warp), and its
products are `reg.wgmma_rs` from them: the tensor cores then read only B from shared
memory, for 4 registers a thread a 16-wide slice.

A kernel with no product and no stream loop (a row softmax, an L2 norm or a sum along
the rows of a tile the block holds whole) takes `line` fragments: `warps="i:4"` gives each
of 4 warps a quarter of the block's rows, whole (a row's reductions stay within its warp:
its lanes, then shuffles); each lane holds 8 columns of every 256, read from the staged
tile as one 16-byte chunk (`reg.read`, where the tile is cast to f32). A row shorter than
256 columns (the attention backward's D over a head dim of 64 or 128) lies across
length / 8 lanes, 8 columns a lane, the warp holding 256 / length rows at a time (the
fragment's span is the length: `!reg.frag<line, i=4, d=64 : f32, span=64>`), and its
reductions shuffle within those lanes. `ncd.softmax` becomes a row max, `exp2` of the
scaled difference, a row sum and a division; `ncd.l2norm` a row sum of squares, `sqrt`
and a division; `ncd.reduce` a `reg.row_reduce`, its result a `line` fragment of the
rows alone. The rows must be 8, 16, 32, 64, 128 or a multiple of 256 columns long, each
warp's rows a multiple of those it holds at a time, and a lane holds at most
`LINE_VALUES` values of a tile.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

from xdsl.context import Context
from xdsl.dialects import arith, builtin, scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from napkin_ir.dialects import hbm, loop_facts, ncd, reg, smem
from napkin_ir.lowering.hbm_to_smem import accumulating_add, read_in_registers
from napkin_ir.passes.relabel import parse_label_option
from napkin_ir.target import dtype

LINE_VALUES = 128  # the f32 values a lane may hold of one tile in `line` fragments (registers, without spills)


def _fail(kernel: hbm.KernelOp, msg: str) -> PassFailedException:
    return PassFailedException(f"smem-to-reg: @{kernel.sym_name.data}: {msg}")


@dataclass(frozen=True)
class SmemToRegPass(ModulePass):
    name = "smem-to-reg"
    warps: str = "m:2,n:2"
    mma: str = "mma.sync"
    hoist: bool = True
    a_registers: bool = False
    rows: str = ""  # a GEMM's accumulator rows (wgmma's M): its result's first tiled axis where not given

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        if self.mma not in ("mma.sync", "wgmma"):
            raise PassFailedException(f"smem-to-reg: mma must be mma.sync or wgmma, got '{self.mma}'")
        if self.a_registers and self.mma != "wgmma":
            raise PassFailedException("smem-to-reg: a_registers=true chooses where wgmma reads A; mma.sync always reads its "
                                      "operands from registers (hoist=true loads an operand read before its loop once)")
        warps = parse_label_option("warps", self.warps) if self.mma == "mma.sync" else {}
        kernels = [k for k in op.walk() if isinstance(k, hbm.KernelOp)]
        if not kernels:
            raise PassFailedException("smem-to-reg: the module has no hbm.kernel; run ncd-to-hbm and hbm-to-smem first")
        for kernel in kernels:
            loops = loop_facts.pipelined_loops(kernel)
            if self.mma == "wgmma":
                if not loops and not any(isinstance(o, ncd.ContractOp) for o in kernel.walk()):
                    raise _fail(kernel, "has no product for wgmma to compute; a kernel with no product reduces its rows in "
                                        "'line' fragments on any target: leave mma at its default (mma.sync)")
                if not loops:
                    raise _fail(kernel, "expects a pipelined stream loop (from hbm-to-smem), found none")
                if any(loop_facts.copy_engine(loop) != loop_facts.CopyEngine.TMA for loop in loops):
                    raise _fail(kernel, "mma=wgmma reads TMA-filled swizzled stages; run hbm-to-smem{copy=tma} first")
                matched = self._match(kernel, loops[0]) if len(loops) == 1 else None
                # one product accumulated over the stream: its groups overlap the next stage's
                warps = self._lower_wgmma(kernel, loops[0], matched) if matched else _wgmma_warps(kernel)
                _Fragments(kernel, warps, mma="wgmma", a_registers=self.a_registers).lower()
            else:
                lines = not any(isinstance(o, ncd.ContractOp) for o in kernel.walk())
                columns = {o.result.type.axis_names[-1] for o in kernel.walk() if isinstance(o, smem.AllocOp)}  # type: ignore[attr-defined]
                streamed = [a for a in map(loop_facts.stream_axis, loops) if a in columns]
                if lines and streamed:
                    raise _fail(kernel, f"a kernel with no product holds its rows whole in registers; it has a stream loop over "
                                        f"their columns ('{streamed[0]}') (drop stream= from ncd-relabel, or stream the rows: "
                                        "a reduction down the columns)")
                if not loops and not lines:
                    raise _fail(kernel, "expects a pipelined stream loop (from hbm-to-smem), found none")
                _Fragments(kernel, warps, self.hoist, lines=lines).lower()
            kernel.properties["reg.warps"] = hbm.format_labels(warps)

    def _match(self, kernel: hbm.KernelOp, loop: scf.ForOp):
        """The accumulation `acc + contract(read A, read B)`, where it is all the stream loop's
        body computes (a GEMM's); None for any other body."""
        body = loop.body.block
        yield_op = body.last_op
        if len(body.args) != 2 or not isinstance(yield_op, scf.YieldOp):
            return None
        acc_arg, add = body.args[1], yield_op.operands[0].owner
        contract = add.operands[1].owner if isinstance(add, ncd.MapOp) and add.fn.data == "add" and add.operands[0] is acc_arg else None
        if not isinstance(contract, ncd.ContractOp) or any(isinstance(o, ncd.NcdOp) and o not in (add, contract) for o in body.ops):
            return None
        reads = [o.owner for o in contract.operands]
        if not all(isinstance(r, smem.ReadOp) for r in reads):
            raise _fail(kernel, "the contraction's operands must come from shared memory (run hbm-to-smem first)")
        acc_t: ncd.TensorType = acc_arg.type  # type: ignore[assignment]
        rows = self.rows or acc_t.axis_names[0]
        if rows not in acc_t.axis_names:
            raise _fail(kernel, f"rows='{rows}' names no axis of the accumulator {acc_t}")
        ra, rb = reads if rows in reads[0].result.type.axis_names else reads[::-1]  # type: ignore[union-attr]
        if not dtype(ra.result.type.dtype).is_half:
            raise _fail(kernel, f"{self.mma} takes bf16 or f16 operands, got {ra.result.type.dtype}")
        return acc_arg, yield_op, add, contract, ra, rb

    def _lower_wgmma(self, kernel: hbm.KernelOp, loop: scf.ForOp, matched) -> dict[str, int]:
        acc_arg, yield_op, add, contract, ra, rb = matched
        acc_t: ncd.TensorType = acc_arg.type  # type: ignore[assignment]
        tiled = [a for a, n in acc_t.shape.items() if n > 1]  # a batch axis has one place
        if len(tiled) != 2:
            raise _fail(kernel, f"the accumulator is a tile of rows and columns, got {acc_t}")
        rows, cols = tiled
        if self.rows == cols:  # the product computed transposed: wgmma's M over the result's columns
            rows, cols = cols, rows
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
        stages = loop_facts.stages(loop)
        assert stages is not None  # a loop of pipelined_loops
        c_prev, c_stages = arith.ConstantOp.from_int_and_width(stages - 1, IndexType()), arith.ConstantOp.from_int_and_width(stages, IndexType())
        prev = arith.RemUIOp(arith.AddiOp(arrive.stage, c_prev.result).result, c_stages.result)
        add = prev.operands[0].owner
        first = arith.CmpiOp(body.args[0], loop.lb, "ne")
        release = scf.IfOp(first.result, [], [smem.ArriveOp(arrive.bars, prev.result), scf.YieldOp()])
        last_stage = arrive.stage
        Rewriter.replace_op(arrive, [c_prev, c_stages, add, prev, first, release])  # type: ignore[list-item]
        done = reg.WgmmaWaitOp(0)
        Rewriter.insert_op([done], InsertPoint.after(loop))
        kernel = hbm.enclosing_kernel(loop)
        if kernel is not None and kernel.persistent is not None:
            # the next tile's producer waits for the stage of this tile's last step too
            Rewriter.insert_op(self._stage_at_last_step(loop, last_stage, arrive.bars), InsertPoint.after(done))

    @staticmethod
    def _stage_at_last_step(loop: scf.ForOp, stage: SSAValue, bars: SSAValue) -> list[Operation]:
        """`smem.arrive bars[stage]` after the loop, with `stage` as the last iteration
        computes it (the ops it depends on cloned, the counter a constant)."""
        body = loop.body.block
        lb, ub, step = (v.owner.value.value.data for v in (loop.lb, loop.ub, loop.step))  # type: ignore[union-attr]
        last = arith.ConstantOp.from_int_and_width(lb + (-(-(ub - lb) // step) - 1) * step, IndexType())
        needed: set[Operation] = set()
        todo = [stage]
        while todo:
            owner = todo.pop().owner
            if isinstance(owner, Operation) and owner.parent_block() is body and owner not in needed:
                needed.add(owner)
                todo += owner.operands
        mapping: dict[SSAValue, SSAValue] = {body.args[0]: last.result}
        clones: list[Operation] = [last]
        for o in body.ops:
            if o in needed:
                clones.append(o.clone(value_mapper=mapping))
        return [*clones, smem.ArriveOp(bars, mapping.get(stage, stage))]

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
            return  # an epilogue: the fragment math after the loop lowers it (_Fragments)
        user = users[0]
        cast = None
        if isinstance(user, ncd.MapOp) and user.fn.data == "cast":
            cast = user
            stores = [u.operation for u in user.result.uses]
            if stores and all(isinstance(w, smem.WriteOp) for w in stores):  # out through shared memory (store=tma)
                for w in stores:
                    Rewriter.replace_op(w, reg.StmatrixOp(result, w.dest, w.stage, hbm.parse_labels(w.at)))  # type: ignore[attr-defined]
                Rewriter.erase_op(cast)
                return
            user = stores[0] if len(stores) == 1 else None
        if not isinstance(user, hbm.StoreOp):
            return  # an epilogue: the fragment math after the loop lowers it (_Fragments)
        Rewriter.replace_op(user, reg.StoreOp(result, user.dest, list(user.offsets), accumulate=user.accumulate is not None))
        if cast is not None:
            Rewriter.erase_op(cast)


def _wgmma_warps(kernel: hbm.KernelOp) -> dict[str, int]:
    """The consumer warps of a wgmma kernel: 16 of the block's rows each (warpgroups of 64),
    the rows being those of the tiles its products compute. Where the rows are two axes or
    more (grouped-query attention's query heads r by query positions i: the block's rows
    are r x i, r outermost), every place of the outer ones has warps of its own, which hold
    one place of it and 16 rows of the last: `r=4, i=2` for 4 heads by 32 positions."""
    contracts = [o for o in kernel.walk() if isinstance(o, ncd.ContractOp)]
    if not contracts:
        raise _fail(kernel, "has no product for wgmma to compute")
    t: ncd.TensorType = contracts[0].result.type  # type: ignore[assignment]
    tiled = [(a, n) for a, n in t.shape.items() if n > 1]
    if len(tiled) < 2:
        raise _fail(kernel, f"a product's tile has rows and columns, got {t}")
    *outer, (rows, bm), _ = tiled
    block_rows = bm * math.prod(n for _, n in outer)
    if block_rows % 64 or not 1 <= block_rows // 64 <= 4:
        what = " x ".join(f"{n} ({a})" for a, n in [*outer, (rows, bm)]) if outer else str(bm)
        raise _fail(kernel, f"wgmma splits the tile's {what} rows over warpgroups of 64; the rows must be 64, 128, 192 or 256")
    if bm % 16:
        raise _fail(kernel, f"the block's rows are {' x '.join(a for a, _ in outer)} x {rows}: each warp holds 16 rows of one place "
                            f"of {', '.join(a for a, _ in outer)}, so the tile's {bm} along '{rows}' must be a multiple of 16")
    return {**dict(outer), rows: bm // 16}


@dataclass
class _Cast:
    """A `c` fragment rounded to bf16 or f16: not computed by itself, but where it is used
    (as the `a` operand of a product, `reg.to_a`; stored, `reg.store`)."""

    frag: SSAValue
    element_type: Attribute


@dataclass
class _Constant:
    """A tile of one value (`ncd.constant`: the zero that `ncd-grad` broadcasts a row's
    cotangent with): not computed by itself, but filled where a map uses it, as a fragment
    of the map's result."""

    value: float


@dataclass
class _Vector:
    """A vector left in global memory (a bias), or staged in shared memory by the TMA with
    the tiles of its stream (`read`: the attention gradient's log-sum-exp and D): not read
    by itself, but where math with a tile of rows and columns needs it, as the `row` or
    `col` fragment that tile's lanes read."""

    load: hbm.LoadOp | smem.ReadOp

    @property
    def tensor(self) -> ncd.TensorType:
        return self.load.result.type  # type: ignore[return-value]


@dataclass
class _VectorMap:
    """A map of vectors read from global memory or staged (the attention gradient's
    log-sum-exp in base 2, where no row kernel wrote it beside D): not computed by itself,
    but where math with a tile of rows and columns needs it, on the `row` or `col`
    fragments of the vectors it reads, once a block."""

    op: ncd.MapOp

    @property
    def tensor(self) -> ncd.TensorType:
        return self.op.result.type  # type: ignore[return-value]


class _Fragments:
    """Every tile the block computes in f32 becomes each warp's fragment of it: a tile with
    the rows that `warps` splits and one other axis a `c` fragment, a tile with those rows
    alone a `row` fragment (axes of one place, like a batch or a head, drop out). Shared
    memory tiles stay where they are and are read by `reg.ldmatrix` where a product needs
    them: an operand read outside the loop (attention's Q) is loaded into `a` fragments
    once, right after its read, or, with `hoist=false`, at each product (fewer registers,
    more shared-memory reads)."""

    def __init__(self, kernel: hbm.KernelOp, warps: dict[str, int], hoist: bool = True, mma: str = "mma.sync",
                 a_registers: bool = False, lines: bool = False):
        self.kernel, self.warps, self.hoist, self.mma, self.a_registers = kernel, warps, hoist, mma, a_registers
        self.lines = lines  # no product: tiles are `line` fragments, whole rows a warp
        self.vals: dict[SSAValue, SSAValue | _Cast | _Vector | _VectorMap | _Constant | smem.ReadOp] = {}
        # a vector's fragment (or a map of vectors'), per block it is used in
        self.loaded: dict[tuple[Operation, Block | None], SSAValue] = {}
        self.dead: list[Operation] = []
        self.fused: dict[Operation, ncd.ContractOp] = {}  # an add that accumulates a product -> the product
        self.hoisted: dict[tuple[smem.ReadOp, int], SSAValue] = {}
        self.hoisted_after: dict[smem.ReadOp, Operation] = {}  # where the next hoisted load goes
        self.axes: set[str] = set()  # the axes of the tiles computed in registers

    def fail(self, msg: str) -> PassFailedException:
        return _fail(self.kernel, msg)

    # -- types -----------------------------------------------------------------------------
    def frag_type(self, t: ncd.TensorType) -> reg.FragType:
        """Each warp's part of an f32 tile. An axis whose every place has warps of its own
        (a group's query heads, `warps="r:4,i:2"` over 4 heads) drops out: a warp holds one
        place of it."""
        if t.dtype != "f32":
            raise self.fail(f"tiles computed in registers are f32 (accumulators), got {t}")
        if self.lines:
            return self.line_type(t)
        axes = self.fragment_axes(t)
        if len(axes) == 1:
            ((rows, n),) = axes.items()
            w = self.warps.get(rows, 1)
            if n % w or (n // w) % 16:
                raise self.fail(f"a {n}-row tile over {w} warps leaves each warp {n / w:g} rows; mma.sync m16n8k16 needs a multiple of 16")
            return reg.FragType("row", {rows: n // w}, builtin.f32)
        if len(axes) != 2:
            raise self.fail(f"a tile computed in registers has one or two axes of more than one place, got {t}")
        (rows, bm), (cols, bn) = axes.items()
        if cols in self.warps and rows not in self.warps:
            # the fragment's rows are those the warps split: a product onto it is computed
            # transposed (C^T = B^T A^T), so that a tile computed in registers with those
            # rows (the MLP's dW1 = dH^T X: dH [h, m], rows h) is its A, as attention's P is
            (rows, bm), (cols, bn) = (cols, bn), (rows, bm)
        warps = math.prod(self.warps.values())
        row_warps = bm // 16  # of a `split` fragment: the warps that take its rows, 16 each
        groups = warps // row_warps if row_warps and warps % row_warps == 0 else 0  # and the column groups they repeat over
        if self.mma == "wgmma" and rows not in self.warps and cols not in self.warps and warps > 1 and bm % 64 == 0 \
                and groups and bn % groups == 0 and (bn // groups) % 8 == 0:
            # rows along no warps axis (dQ^T = K^T dS^T, rows the head dim, where the warps
            # split the keys): the warps take 16 each all the same, one wgmma row block a
            # warpgroup; fewer rows than the warps' 16 each (64 of them, two warpgroups), each
            # warpgroup the same rows of its own columns
            return reg.FragType("c", {rows: 16, cols: bn // groups}, builtin.f32, split=row_warps)
        wm, wn = self.warps.get(rows, 1), self.warps.get(cols, 1)
        if bm % wm or (bm // wm) % 16 or bn % wn or (bn // wn) % 8:
            raise self.fail(f"a {bm} x {bn} tile over {wm} x {wn} warps leaves each warp {bm / wm:g} x {bn / wn:g}; "
                            "each warp's part must be a multiple of 16 x 8 (mma.sync m16n8k16)")
        return reg.FragType("c", {rows: bm // wm, cols: bn // wn}, builtin.f32)

    def line_type(self, t: ncd.TensorType) -> reg.FragType:
        """Each warp's `line` fragment of a tile: rows by the columns the staged tiles lie
        along (their innermost axis), or one value per row (`line`) or per column
        (`line_col`). Axes of one place drop out, unless warps share them (the rows of a
        one-row block). Warps split the rows, or the columns of a kernel that reduces down
        them, never an axis a reduction runs along: it stays within the warp."""
        axes = {a: n for a, n in t.shape.items() if n > 1 or a in self.warps}
        self.axes.update(axes)
        if len(axes) not in (1, 2):
            raise self.fail(f"a tile computed in registers has rows and at most one other axis of more than one place, got {t}")
        cols = self.columns[0] if self.columns else None
        if len(axes) == 2 and cols in axes:  # rows, then the columns as they lie in memory
            rows = next(a for a in axes if a != cols)
            axes = {rows: axes[rows], cols: axes[cols]}  # type: ignore[index]
        (rows, n), *rest = axes.items()
        if len(axes) == 1 and rows == cols:  # one value per column
            wc = self.warps.get(rows, 1)
            if n % wc:
                raise self.fail(f"the block's {n} columns ('{rows}') do not split over {wc} warps; expected a multiple of {wc}")
            return reg.FragType("line_col", {rows: n // wc}, builtin.f32, self.line_span(n // wc, rows))
        for a in axes:
            if a in self.warps and a in self.reduced:
                other = next((b for b in axes if b != a), a)
                what = "rows" if a != rows else "columns"  # those the reduction along `a` runs over
                raise self.fail(f"warps may share only the {what} ('{other}') of a kernel with no product: a warp holds its "
                                f"{'rows' if what == 'rows' else 'columns'} whole, and a reduction along '{a}' stays within it; got warps=\""
                                + ",".join(f"{b}:{c}" for b, c in self.warps.items()) + '"')
        w = self.warps.get(rows, 1)
        if n % w:
            raise self.fail(f"the block's {n} rows ('{rows}') do not split over {w} warps; expected a multiple of {w}")
        if not rest:  # one value per row of the kernel's rows
            length = self.row_length
            return reg.FragType("line", {rows: self.line_rows(rows, n // w, length)}, builtin.f32, self.line_span(length))
        cols, m = rest[0]
        wc = self.warps.get(cols, 1)
        if m % wc:
            raise self.fail(f"the block's {m} columns ('{cols}') do not split over {wc} warps; expected a multiple of {wc}")
        m //= wc
        if (n // w) * m // 32 > LINE_VALUES:
            raise self.fail(f"each warp holds {n // w} row(s) of {m}: {(n // w) * m // 32} values a lane, over the {LINE_VALUES} "
                            f"that fit in registers; expected rows a warp x {m} <= {LINE_VALUES * 32} (more warps, or fewer rows a block)")
        return reg.FragType("line", {rows: self.line_rows(rows, n // w, m, cols), cols: m}, builtin.f32, self.line_span(m, cols))

    @cached_property
    def columns(self) -> tuple[str, int] | None:
        """The axis the staged tiles lie along (their innermost) and its length in the
        block's tile; None where nothing is staged."""
        for op in self.kernel.walk():
            if isinstance(op, smem.AllocOp):
                t: smem.BufferType = op.result.type  # type: ignore[assignment]
                return t.axis_names[-1], t.shape[t.axis_names[-1]]
        return None

    @cached_property
    def reduced(self) -> set[str]:
        """The axes the kernel's reductions and normalisations run along."""
        axes: set[str] = set()
        for op in self.kernel.walk():
            if isinstance(op, ncd.ReduceOp):
                axes.update(op.along_axes)
            elif isinstance(op, ncd.AlongOneAxisOp):
                axes.add(op.axis.data)
        return axes

    @cached_property
    def row_length(self) -> int:
        """The columns of each warp's rows: the staged tiles' innermost length, over the warps
        that split it; where nothing is staged, the length of the axis the reductions and
        normalisations run along (a kernel of maps alone: rows of 256)."""
        if self.columns:
            cols, m = self.columns
            return m // self.warps.get(cols, 1)
        for op in self.kernel.walk():
            if isinstance(op, ncd.ReduceOp | ncd.AlongOneAxisOp):
                along = op.along_axes[0] if isinstance(op, ncd.ReduceOp) else op.axis.data
                return op.input.type.shape[along]  # type: ignore[attr-defined]
        return reg.LINE_SPAN

    def line_span(self, m: int, cols: str | None = None) -> int:
        """The span of the `line` fragments of rows of `m` columns: 256 (8 columns a lane of
        every 256), or a shorter row whole, 8 columns a lane of m / 8 lanes."""
        if m % reg.LINE_SPAN == 0:
            return reg.LINE_SPAN
        if m in reg.LINE_SPANS:
            return m
        fit = min([s for s in reg.LINE_SPANS if s > m] or [-(-m // reg.LINE_SPAN) * reg.LINE_SPAN])
        along = f" along '{cols}'" if cols else ""
        raise self.fail(f"the rows{along} are {m} columns long, which a warp cannot hold: each lane holds 8 adjacent columns (16 "
                        f"bytes of bf16) of a row that lies across 1, 2, 4, 8, 16 or 32 lanes, so a row is "
                        f"{', '.join(map(str, reg.LINE_SPANS[:-1]))} or a multiple of {reg.LINE_SPAN} columns long; "
                        f"pad the rows to {fit}")

    def line_rows(self, rows: str, k: int, m: int, cols: str | None = None) -> int:
        """`k`, a warp's rows of `m` columns, where they are a whole number of the rows the
        warp holds at a time (256 / m of rows shorter than 256)."""
        step = 32 // (self.line_span(m, cols) // reg.LINE_CHUNK)
        if k % step:
            w = self.warps.get(rows, 1)
            fewer = [v for v in range(w - 1, 0, -1) if k * w % (v * step) == 0]
            raise self.fail(f"rows of {m} columns lie across {32 // step} lanes, a warp holding {step} at a time, so each warp's "
                            f"rows ('{rows}') must be a multiple of {step}; {k * w} rows a block over {w} warp(s) give each {k}: "
                            f"use a multiple of {step * w} rows a block" + (f", or {fewer[0]} warp(s)" if fewer else ""))
        return k

    def fragment_axes(self, t: ncd.TensorType) -> dict[str, int]:
        """The axes of a tile that its fragments keep: all of more than one place (or shared
        by warps) but those whose every place has warps of its own, at most two."""
        held = {a for a, n in t.shape.items() if n > 1 and self.warps.get(a) == n}
        axes = {a: n for a, n in t.shape.items() if a not in held and (n > 1 or a in self.warps)}
        self.axes.update(axes, held)
        if len(axes) > 2:
            outer = list(axes)[:-2]
            raise self.fail(f"a tile computed in registers has one or two axes of more than one place, got {t}; warps that "
                            f"hold a place each of {', '.join(outer)} take it out of the fragments (warps=\""
                            + ",".join(f"{a}:{t.shape[a]}" for a in outer) + ",...\")")
        return axes

    def frag(self, v: SSAValue, what: str) -> SSAValue:
        """The fragment standing for a tile computed in registers."""
        if isinstance(v.type, reg.FragType):
            return v
        f = self.vals.get(v)
        if not isinstance(f, SSAValue):
            raise self.fail(f"{what} must be a tile computed in registers, got {v.type}")
        return f

    # -- the walk --------------------------------------------------------------------------
    def lower(self) -> None:
        for product in self.kernel.walk():  # the products' tiles first: they say best what the warps cannot split
            if isinstance(product, ncd.ContractOp):
                self.fragment_axes(product.result.type)  # type: ignore[arg-type]
        self.lower_block(self.kernel.body.block)
        for op in reversed(self.dead):
            Rewriter.erase_op(op, safe_erase=False)
        if self.a_registers:
            for read, last in self.hoisted_after.items():
                self.release_after_loads(read, last)
        for axis in self.warps if self.mma == "mma.sync" else ():  # wgmma's warps are the rows of its products
            if axis not in self.axes:
                raise self.fail(f"warps can share only the axes of the tiles computed in registers "
                                f"({', '.join(sorted(self.axes))}), not '{axis}'")

    def release_after_loads(self, read: smem.ReadOp, last: Operation) -> None:
        """A persistent block's tile read only by the fragments loaded once (Q, with
        `a_registers`) is released right after the last of those loads, not after the
        stream: the producer, waiting on that release (the empty barrier it waits on before
        its copy into the buffer), then loads the next query tile's Q while this tile's
        stream runs, and the next tile starts without waiting for it."""
        buf = read.source
        loads = set(self.hoisted.values())
        if any(not isinstance(u.operation, smem.TmaCopyOp | smem.ReadOp) and not (
                isinstance(u.operation, reg.LdmatrixOp) and u.operation.result in loads) for u in buf.uses):
            return
        # the empty ring the producer waits on before filling it (none on a plain grid: the
        # tile is loaded once and never released)
        empties = {w.bars for w in self.kernel.walk() if isinstance(w, smem.MbarrierWaitOp) and buf in smem.filled_after(w)}
        if len(empties) != 1:
            return
        arrives = [u.operation for u in empties.pop().uses
                   if isinstance(u.operation, smem.ArriveOp) and u.operation.parent_block() is last.parent_block()]
        if len(arrives) == 1:
            arrives[0].detach()
            Rewriter.insert_op(arrives[0], InsertPoint.after(last))

    def lower_block(self, block: Block) -> None:
        for op in list(block.ops):
            self.lower_op(op)

    def emit(self, ops: list[Operation], before: Operation) -> None:
        Rewriter.insert_op(ops, InsertPoint.before(before))

    def lower_op(self, op: Operation) -> None:
        if isinstance(op, hbm.FillOp):
            t = self.frag_type(op.result.type)  # type: ignore[arg-type]
            new = reg.ZerosOp(t) if t.role.data == "c" and op.value.value.data == 0.0 else reg.FillOp(op.value.value.data, t)
            self.replace(op, [new])
        elif isinstance(op, smem.ReadOp):
            buf: smem.BufferType = op.source.type  # type: ignore[assignment]
            if self.lines and buf.dtype == "f32" and not buf.vector:  # f32 rows staged: read as they lie, no widening
                self.replace(op, [reg.ReadOp(op.source, op.stage, self.frag_type(op.result.type))])  # type: ignore[arg-type]
                return
            self.vals[op.result] = _Vector(op) if buf.vector and not self.lines else op  # a staged statistic: read where math needs it
            self.dead.append(op)
        elif isinstance(op, ncd.ConstantOp):
            self.vals[op.result] = _Constant(op.value.value.data)
            self.dead.append(op)
        elif isinstance(op, ncd.ContractOp):
            self.contract(op)
        elif isinstance(op, ncd.MapOp):
            self.map(op)
        elif isinstance(op, ncd.ReduceOp):
            x = self.frag(op.input, f"the input of {op.name}")
            t: reg.FragType = x.type  # type: ignore[assignment]
            if self.lines and reg.is_tile(t) and op.along_axes == (t.axis_names[0],):  # down the columns
                if t.axis_names[0] in self.warps:
                    raise self.fail(f"warps share '{t.axis_names[0]}': a reduction along it would cross warps (through shared memory)")
                self.replace(op, [reg.ColReduceOp(op.kind.data, x)])
                return
            if not reg.is_tile(t) or op.along_axes != (t.axis_names[1],):
                raise self.fail(f"{op.name} reduces a tile along its columns ({t.axis_names[-1]}) in registers, got along {list(op.along_axes)} of {t}")
            if t.axis_names[1] in self.warps:
                raise self.fail(f"warps share '{t.axis_names[1]}': a reduction along it would cross warps (through shared memory)")
            self.replace(op, [reg.RowReduceOp(op.kind.data, x)])
        elif isinstance(op, ncd.SoftmaxOp | ncd.L2NormOp):
            self.normalise(op)
        elif isinstance(op, ncd.MaskOp):
            x = self.frag(op.input, f"the input of {op.name}")
            self.replace(op, [reg.MaskOp(x, op.row.data, op.col.data, op.fill.value.data, list(op.offsets))])
        elif isinstance(op, ncd.MaskBoundOp):
            x = self.frag(op.input, f"the input of {op.name}")
            self.replace(op, [reg.MaskBoundOp(x, op.axis.data, op.bound.data, op.fill.value.data, list(op.offsets))])
        elif isinstance(op, scf.ForOp):
            self.loop(op)
        elif isinstance(op, scf.YieldOp):
            for n, v in enumerate(op.operands):
                if isinstance(v.type, ncd.TensorType):
                    op.operands[n] = self.frag(v, "a value the loop carries")
        elif isinstance(op, hbm.StoreOp):
            self.store(op)
        elif isinstance(op, smem.WriteOp) and op.value in self.vals:
            v = self.vals[op.value]
            if isinstance(v, SSAValue) and isinstance(v.type, reg.FragType) and op.dest.type.dtype == "f32":  # type: ignore[attr-defined]
                self.emit([reg.WriteOp(v, op.dest, op.stage, hbm.parse_labels(op.at))], op)  # f32 out for a TMA reduce-add
                self.dead.append(op)
                return
            if not isinstance(v, _Cast):
                raise self.fail("a tile written to shared memory for a TMA store is a fragment rounded to bf16 or f16")
            rows = v.frag.type.axis_names[0]  # type: ignore[attr-defined]
            # a tile staged for a product (the attention gradient's dS at 80 queries a tile, its
            # keys innermost) is written transposed by stmatrix.trans; an output's panels are not
            staged = any(isinstance(u.operation, smem.ReadOp) for u in op.dest.uses)
            if op.dest.type.axis_names[-1] == rows and not staged:  # type: ignore[attr-defined]
                raise self.fail(f"stmatrix writes a fragment's rows as rows of the panel; the rows of {v.frag.type} ('{rows}') are "
                                f"the columns of {op.dest.type} (a product computed transposed): it leaves from registers "
                                "(hbm-to-smem{store=direct})")
            self.emit([reg.StmatrixOp(v.frag, op.dest, op.stage, hbm.parse_labels(op.at))], op)
            self.dead.append(op)
        elif isinstance(op, hbm.LoadOp) and read_in_registers(op):
            self.vals[op.result] = _Vector(op)
            self.dead.append(op)
        elif isinstance(op, hbm.LoadOp):
            raise self.fail("hbm.load left outside a stream loop; run hbm-to-smem first")
        elif isinstance(op, ncd.NcdOp):
            raise self.fail(f"{op.name} has no lowering to registers")

    def replace(self, op: Operation, new: list[Operation]) -> None:
        self.emit(new, op)
        self.vals[op.results[0]] = new[-1].results[0]
        self.dead.append(op)

    # -- products ----------------------------------------------------------------------------
    def contract(self, op: ncd.ContractOp) -> None:
        t = self.frag_type(op.result.type)  # type: ignore[arg-type]
        if t.role.data != "c":
            raise self.fail(f"a product in registers has rows and columns, got {op.result.type}")
        self.dead.append(op)
        add = accumulating_add(op)
        if add is not None:
            self.fused[add] = op  # emitted at the add, onto its other operand
            return
        zeros = reg.ZerosOp(t)
        self.emit([zeros], op)
        self.vals[op.result] = self.products(op, zeros.result, op)

    def products(self, op: ncd.ContractOp, acc: SSAValue, before: Operation) -> SSAValue:
        """acc + lhs . rhs as mma.sync steps, one per 16-wide slice of the contracted axis."""
        t: reg.FragType = acc.type  # type: ignore[assignment]
        rows, cols = t.axis_names
        # an axis of one place in the block's tiles (a query head of a group, split over the grid) sums nothing here
        over = [a for a in op.over_axes if op.lhs.type.shape[a] > 1] or list(op.over_axes[-1:])  # type: ignore[attr-defined]
        if len(over) != 1:
            raise self.fail(f"a product in registers contracts one axis, got {list(op.over_axes)}")
        (k,) = over
        lhs, rhs = (self.vals.get(v) for v in (op.lhs, op.rhs))
        a, b = (lhs, rhs) if rows in op.lhs.type.shape else (rhs, lhs)  # type: ignore[attr-defined]
        if isinstance(b, smem.ReadOp):
            tk, et = b.result.type.shape[k], b.result.type.element_type
        elif isinstance(b, _Cast):
            raise self.fail(f"the second operand of a product ({cols} x {k}) is a tile computed in registers; a product takes "
                            "one from registers as its first operand only: split the warps along the output's columns alone "
                            "(the product is then computed transposed)")
        else:
            raise self.fail(f"the second operand of a product ({cols} x {k}) must come from shared memory")
        if tk % 16:
            raise self.fail(f"the contracted tile along '{k}' is {tk}; mma.sync m16n8k16 needs a multiple of 16")
        if not dtype(ncd.element_type_name(et)).is_half:
            raise self.fail(f"mma.sync takes bf16 or f16 operands, got {ncd.element_type_name(et)}")
        if self.mma == "wgmma":
            steps, acc = self.wgmma_steps(a, b, acc, k, tk, b.result.type, before)
            self.emit(steps, before)
            return acc
        frag_b = reg.FragType("b", {k: 16, cols: t.shape[cols]}, et)
        steps: list[Operation] = []
        for kk in range(0, tk, 16):
            if isinstance(a, smem.ReadOp):
                fa = self.a_from_shared(a, k, kk, rows, t.shape[rows], before, steps)
            elif isinstance(a, _Cast):
                if a.element_type != et:
                    raise self.fail(f"the operands of a product differ in type ({a.element_type} and {et})")
                to_a = reg.ToAOp(a.frag, kk, a.element_type)
                steps.append(to_a)
                fa = to_a.result
            else:
                raise self.fail("the first operand of a product must come from shared memory or be an f32 tile rounded to bf16 or f16")
            lb = reg.LdmatrixOp(b.source, b.stage, {k: kk}, frag_b)
            mma = reg.MmaOp(fa, lb.result, acc)
            steps += [lb, mma]
            acc = mma.result
        self.emit(steps, before)
        return acc

    def wgmma_steps(self, a, b: smem.ReadOp, acc: SSAValue, k: str, tk: int, bt: ncd.TensorType,
                    before: Operation) -> tuple[list[Operation], SSAValue]:
        """acc + a . b as one wgmma per 16-wide slice (A read from its stage by the tensor
        cores; with `a_registers`, A read before the loop from fragments loaded once after
        its read; or an f32 tile rounded for it, from registers), committed as a group and
        waited for, so that its result may be read and its stages released."""
        t: reg.FragType = acc.type  # type: ignore[assignment]
        if t.dims[1] > 256:
            raise self.fail(f"wgmma computes up to 256 columns per warpgroup; the tile has {t.dims[1]}")
        # A's registers are all ready before the first product of the group (one fence)
        operands: list[Operation] = []
        steps: list[Operation] = []
        for kk in range(0, tk, 16):
            if isinstance(a, smem.ReadOp) and self.a_registers and a.parent is not before.parent:
                rows = t.axis_names[0]
                fa = self.a_from_shared(a, k, kk, rows, t.shape[rows], before, operands)
                step: Operation = reg.WgmmaRsOp(fa, b.source, b.stage, acc, {k: kk})
            elif isinstance(a, smem.ReadOp):
                step = reg.WgmmaOp(a.source, a.stage, b.source, b.stage, acc, {k: kk})
            elif isinstance(a, _Cast):
                if a.element_type != bt.element_type:
                    raise self.fail(f"the operands of a product differ in type ({a.element_type} and {bt.element_type})")
                to_a = reg.ToAOp(a.frag, kk, a.element_type)
                operands.append(to_a)
                step = reg.WgmmaRsOp(to_a.result, b.source, b.stage, acc, {k: kk})
            else:
                raise self.fail("the first operand of a product must come from shared memory or be an f32 tile rounded to bf16 or f16")
            steps.append(step)
            acc = step.results[0]
        return [*operands, *steps, reg.WgmmaCommitOp(), reg.WgmmaWaitOp(0)], acc

    def a_from_shared(self, read: smem.ReadOp, k: str, kk: int, rows: str, n: int, before: Operation, steps: list[Operation]) -> SSAValue:
        """The `a` fragment of one 16-wide slice: loaded at the product, or, for a tile read
        outside the product's loop, once after the read."""
        t = reg.FragType("a", {rows: n, k: 16}, read.result.type.element_type)  # type: ignore[attr-defined]
        if read.parent is before.parent or not self.hoist:
            load = reg.LdmatrixOp(read.source, read.stage, {k: kk}, t)
            steps.append(load)
            return load.result
        key = (read, kk)
        if key not in self.hoisted:  # (made only here: an op left unplaced would still use the buffer)
            load = reg.LdmatrixOp(read.source, read.stage, {k: kk}, t)
            Rewriter.insert_op([load], InsertPoint.after(self.hoisted_after.get(read, read)))
            self.hoisted_after[read] = load
            self.hoisted[key] = load.result
        return self.hoisted[key]

    # -- elementwise -------------------------------------------------------------------------
    def map(self, op: ncd.MapOp) -> None:
        fn = op.fn.data
        if op in self.fused:
            product = self.fused.pop(op)
            other = op.inputs[1] if op.inputs[0] is product.result else op.inputs[0]
            acc = self.frag(other, "the accumulator of a product")
            if acc.type != self.frag_type(op.result.type):  # type: ignore[arg-type]
                raise self.fail(f"a product accumulates onto a fragment of its own type, got {acc.type}")
            self.vals[op.result] = self.products(product, acc, op)
            self.dead.append(op)
            return
        if fn == "cast":
            et = op.result.type.element_type  # type: ignore[attr-defined]
            v = self.vals.get(op.inputs[0])
            if isinstance(v, _Vector):  # reg.load widens what it reads to f32
                if et != builtin.f32:
                    raise self.fail(f"a vector read from global memory into registers is f32 there; a cast of it to {et} has no form")
                self.vals[op.result] = v
                self.dead.append(op)
                return
            if self.lines and isinstance(v, smem.ReadOp) and et == builtin.f32:  # the staged tile, widened as it is read
                layout = v.source.type.layout.data  # type: ignore[attr-defined]
                if layout == "swizzle":
                    raise self.fail(f"a kernel with no product reads its staged rows as they lie (layout=row or pad8), got "
                                    f"layout={layout}; stage them with hbm-to-smem's cp.async (copy=cp.async, legal on sm_90a too)")
                self.replace(op, [reg.ReadOp(v.source, v.stage, self.frag_type(op.result.type))])  # type: ignore[arg-type]
                return
            if isinstance(v, smem.ReadOp) and et == builtin.f32:  # a staged tile entering math with the accumulators
                self.replace(op, [self.read_tile(v, op.result.type)])  # type: ignore[arg-type]
                return
            x = self.frag(op.inputs[0], "a cast's input")
            self.vals[op.result] = x if et == builtin.f32 else _Cast(x, et)
            self.dead.append(op)
            return
        if fn == "exp":  # e^x = 2^(x log2 e): the special-function unit computes exp2
            x = self.frag(op.inputs[0], "the input of ncd.map exp")
            scaled = reg.MapOp("scale", [x], math.log2(math.e))
            self.replace(op, [scaled, reg.MapOp("exp2", [scaled.result])])
            return
        if fn not in reg.MAP_UNARY + reg.MAP_BINARY:
            raise self.fail(f"ncd.map {fn} has no form in registers; expected one of {', '.join(reg.MAP_UNARY + reg.MAP_BINARY)}")
        ins = [self.vals.get(v) for v in op.inputs]
        if not self.lines and all(isinstance(x, _Vector | _VectorMap) for x in ins) \
                and sum(n > 1 for n in op.result.type.shape.values()) <= 1:  # type: ignore[attr-defined]
            self.vals[op.result] = _VectorMap(op)  # a vector still: computed where a tile's math reads it
            self.dead.append(op)
            return
        for v, x in zip(op.inputs, ins):
            if isinstance(x, smem.ReadOp):  # a staged tile used as it is read: only a 16-bit one, widened by a cast, has a form
                raise self.fail(f"ncd.map {fn} reads a tile staged in shared memory as it is ({x.result.type}); a tile read "
                                "into registers beside the accumulators is bf16 or f16, cast to f32 in the diagram "
                                "(`ncd.map cast`): give the tensor in 16 bits")
        xs = [self.vector(x, op) if isinstance(x, _Vector | _VectorMap) else self.constant(x, op) if isinstance(x, _Constant)
              else self.frag(v, f"operand #{n} of ncd.map {fn}") for n, (v, x) in enumerate(zip(op.inputs, ins))]
        self.replace(op, [reg.MapOp(fn, xs, op.by.value.data if op.by is not None else None)])

    def read_tile(self, read: smem.ReadOp, t: ncd.TensorType) -> reg.ReadOp:
        """A staged 16-bit tile widened to f32 as each warp's `c` fragment of it, in the lanes
        of the accumulators of the same rows and columns (a gradient's dC, multiplied by the
        recomputed exp(A B)): read where the cast stands, so before its stage is released."""
        frag = self.frag_type(t)
        if frag.role.data != "c":
            raise self.fail(f"a tile read from shared memory into registers is a tile of rows and columns, like the "
                            f"accumulators it meets; got {t}")
        bt: ncd.TensorType = read.result.type  # type: ignore[assignment]
        if not dtype(bt.dtype).is_half:
            raise self.fail(f"a tile read from shared memory into registers is widened from bf16 or f16, got {bt}")
        return reg.ReadOp(read.source, read.stage, frag)

    def constant(self, c: _Constant, op: ncd.MapOp) -> SSAValue:
        """A constant operand of `op`, filled as a fragment of `op`'s result (a constant
        lacks no axis that matters: the map broadcasts it over the result's)."""
        t = self.frag_type(op.result.type)  # type: ignore[arg-type]
        fill = reg.ZerosOp(t) if t.role.data == "c" and c.value == 0.0 else reg.FillOp(c.value, t)
        self.emit([fill], op)
        return fill.results[0]

    def vector(self, vec: _Vector | _VectorMap, op: ncd.MapOp) -> SSAValue:
        """The `row` or `col` fragment of a vector left in global memory, for `op`'s math with
        a tile of rows and columns: loaded just before its first such use in each block (a
        map of vectors: computed there, on the fragments of the vectors it reads)."""
        t = vec.tensor
        around = self.frag_type(op.result.type)  # type: ignore[arg-type]
        # an axis whose every place has warps of its own (a group's query heads) is held, as in the tile
        # (a `line` fragment keeps its rows where each warp holds one)
        axes = [a for a, n in t.shape.items() if (n > 1 or a in self.warps if self.lines else n > 1 and self.warps.get(a) != n)]
        if len(axes) != 1:
            raise self.fail(f"a vector read from global memory ({t}) enters registers as one axis of a tile's rows or "
                            f"columns, beside axes whose every place has warps of its own; got {t}")
        (axis,) = axes
        # in a kernel with no product, a map may also give a row vector of its own (the
        # attention gradient's log-sum-exp in base 2, written beside D)
        row_map = self.lines and around.role.data == "line" and tuple(around.shape) == (axis,)
        if not (reg.is_tile(around) or row_map) or axis not in around.shape:
            raise self.fail(f"a vector read from global memory ({t}) enters registers only as an operand broadcast along a "
                            f"tile of rows and columns (a bias added to the accumulators, a statistic of the rows), or in a "
                            f"kernel with no product as a row vector; ncd.map {op.fn.data} gives {op.result.type}")
        if t.shape[axis] != around.shape[axis] * self.warps.get(axis, 1):
            raise self.fail(f"the vector {t} is not the block's tile of '{axis}' ({around.shape[axis] * self.warps.get(axis, 1)})")
        key = (vec.op if isinstance(vec, _VectorMap) else vec.load, op.parent)
        if isinstance(vec, _VectorMap) and key not in self.loaded:
            m = vec.op
            xs = [self.vector(self.vals[v], op) for v in m.inputs]  # type: ignore[arg-type]
            mapped = reg.MapOp(m.fn.data, xs, m.by.value.data if m.by is not None else None)
            self.emit([mapped], op)
            self.loaded[key] = mapped.result
        if key not in self.loaded:
            if around.role.data == "line" and axis != around.rows_axis:
                raise self.fail(f"a vector read from global memory ({t}) enters a kernel with no product as one value a row "
                                f"('{around.rows_axis}'); one along its columns ('{axis}') has no reg.load of its own yet")
            if around.role.data == "line":  # one value a row of the lines, in the lanes that hold the row
                vt = reg.FragType("line", {axis: around.shape[axis]}, builtin.f32, around.span.data)
            else:
                vt = reg.FragType("row" if axis == around.axis_names[0] else "col", {axis: around.shape[axis]}, builtin.f32)
            src = vec.load
            load = reg.ReadOp(src.source, src.stage, vt) if isinstance(src, smem.ReadOp) else reg.LoadOp(src.source, list(src.offsets), vt)
            self.emit([load], op)
            self.loaded[key] = load.result
        return self.loaded[key]

    def normalise(self, op: ncd.SoftmaxOp | ncd.L2NormOp) -> None:
        """A softmax or L2 norm along a fragment's columns, the tile held whole: the row
        max and sum, or the row sum of squares, reduced in registers."""
        x = self.frag(op.input, f"the input of {op.name}")
        t: reg.FragType = x.type  # type: ignore[assignment]
        if not reg.is_tile(t) or op.axis.data != t.axis_names[1]:
            raise self.fail(f"{op.name} normalises a tile along its columns ({t.axis_names[-1]}) in registers, got along "
                            f"'{op.axis.data}' of {t}")
        if t.axis_names[1] in self.warps:
            raise self.fail(f"warps share '{t.axis_names[1]}': a reduction along it would cross warps (through shared memory)")
        if isinstance(op, ncd.SoftmaxOp):  # e^(c x - max c x) = 2^(c log2(e) x - max ...)
            y = reg.MapOp("scale", [x], op.scale_value * math.log2(math.e))
            m = reg.RowReduceOp("max", y.result)
            d = reg.MapOp("sub", [y.result, m.result])
            e = reg.MapOp("exp2", [d.result])
            s = reg.RowReduceOp("sum", e.result)
            self.replace(op, [y, m, d, e, s, reg.MapOp("div", [e.result, s.result])])
        else:
            sq = reg.MapOp("mul", [x, x])
            s = reg.RowReduceOp("sum", sq.result)
            n = reg.MapOp("sqrt", [s.result])
            self.replace(op, [sq, s, n, reg.MapOp("div", [x, n.result])])

    # -- loops and the end -------------------------------------------------------------------
    def loop(self, loop: scf.ForOp) -> None:
        body = loop.body.block
        first_init = len(loop.operands) - len(loop.iter_args)
        for n, (arg, init) in enumerate(zip(body.args[1:], loop.iter_args)):
            if isinstance(arg.type, ncd.TensorType):
                frag = self.frag(init, "a value the loop carries")
                loop.operands[first_init + n] = frag
                Rewriter.replace_value_with_new_type(arg, frag.type)
        self.lower_block(body)
        yielded = body.last_op
        assert isinstance(yielded, scf.YieldOp)
        for res, v in zip(list(loop.results), yielded.operands):
            if isinstance(res.type, ncd.TensorType):
                Rewriter.replace_value_with_new_type(res, v.type)

    def store(self, op: hbm.StoreOp) -> None:
        v = self.vals.get(op.value, op.value)
        frag = v.frag if isinstance(v, _Cast) else v
        if not isinstance(frag, SSAValue) or not isinstance(frag.type, reg.FragType) or frag.type.role.data not in ("c", "line", "line_col", "row"):
            raise self.fail("what is stored must be a tile computed in registers (after at most a cast)")
        self.emit([reg.StoreOp(frag, op.dest, list(op.offsets), accumulate=op.accumulate is not None)], op)
        self.dead.append(op)
