"""Printing `ptx` kernels as a PTX module: the `-t ptx` target.

The printer names every register value per class in definition order (`%r1`, `%f3`,
`%p2` ...), declares them up front, labels blocks, and turns branches that carry block
arguments into register copies: copies go through fresh temporaries (a parallel copy),
so a loop that swaps its carried values stays correct; ptxas removes the extra moves.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp as BuiltinModuleOp
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.target import Target

from napkin_ir.dialects.ptx import tensor_ops as tops
from napkin_ir.dialects.ptx.ops import BraOp, CondBraOp, KernelOp, ModuleOp, PtxOp, RedOp
from napkin_ir.dialects.ptx.registers import REG_CLASSES, RegType

DEFAULT_VERSION = "8.0"
VECTOR_RED_VERSION = "8.1"  # red.global.add.v2.f32 / .v4.f32
# ops that only sm_90a (Hopper with its architecture-specific features) assembles
SM90A_OPS = (tops.WgmmaMmaAsyncOp, tops.WgmmaFenceOp, tops.WgmmaCommitGroupOp, tops.WgmmaWaitGroupOp, tops.SetmaxnregOp)
SM90_OPS = (tops.CpAsyncBulkTensorLoadOp, tops.CpAsyncBulkTensorStoreOp, tops.MbarrierExpectTxOp, tops.StmatrixOp,
            tops.CpAsyncBulkTensorLoadMulticastOp, tops.MapaOp, tops.MbarrierArriveClusterOp, tops.BarrierClusterOp,
            tops.PrefetchTensormapOp)
MOV_TYPE = {"pred": "pred", "b16": "b16", "b32": "b32", "b64": "b64", "f16": "b16", "f16x2": "b32", "bf16": "b16", "bf16x2": "b32", "f32": "f32", "f64": "f64"}


class PtxEmissionError(DiagnosticException):
    """The module cannot be printed as PTX (ops left unlowered, unknown target ...)."""


class _Names:
    """Register names per class for one kernel, and block labels."""

    def __init__(self, kernel_index: int):
        self.pre_copies: dict[Operation, list[str]] = {}
        self.counts: dict[str, int] = defaultdict(int)
        self.names: dict[SSAValue, str] = {}
        self.labels: dict[Block, str] = {}
        self.kernel_index = kernel_index

    def fresh(self, cls: str) -> str:
        self.counts[cls] += 1
        return f"{REG_CLASSES[cls].prefix}{self.counts[cls]}"

    def define(self, v: SSAValue, name: str | None = None) -> None:
        if not isinstance(v.type, RegType):
            raise PtxEmissionError(f"value of type {v.type} is not a PTX register; lower it to ptx first")
        self.names[v] = name or self.fresh(v.type.cls.data)

    def __call__(self, v: SSAValue) -> str:
        try:
            return self.names[v]
        except KeyError:
            raise PtxEmissionError(f"register value used before it is defined: {v}") from None

    def label(self, block: Block) -> str:
        if block not in self.labels:
            self.labels[block] = f"$L__BB{self.kernel_index}_{len(self.labels)}"
        return self.labels[block]


def _copies(names: _Names, dests: Iterable[SSAValue], srcs: Iterable[SSAValue], guard: str = "") -> list[str]:
    pairs = [(d, s) for d, s in zip(dests, srcs) if names(d) != names(s)]
    temps = [(names.fresh(d.type.cls.data), d, s) for d, s in pairs]  # type: ignore[attr-defined]
    lines = [f"{guard}mov.{MOV_TYPE[d.type.cls.data]} {t}, {names(s)};" for t, d, s in temps]  # type: ignore[attr-defined]
    lines += [f"{guard}mov.{MOV_TYPE[d.type.cls.data]} {names(d)}, {t};" for t, d, s in temps]  # type: ignore[attr-defined]
    return lines


def _successors(block: Block) -> list[Block]:
    last = block.last_op
    if isinstance(last, BraOp):
        return [last.target]
    if isinstance(last, CondBraOp):
        return [last.then_block, last.else_block]
    return []


def _overwritable(acc: SSAValue, op: Operation) -> bool:
    """Whether wgmma `op` may write its accumulator `acc` in place: `acc` is used only
    there, or it is a loop's carried value (an argument of the loop's head block) whose
    other uses lie where no path from `op` reaches without passing the head again (after
    the loop: a causal stream's next loop, the epilogue), which rebinds it to the value
    `op` made. Else every trip would copy the accumulators first (two sets live: the
    gradient's causal kernels spilled 0.8-1.4 KB a thread)."""
    others = [u.operation for u in acc.uses if u.operation is not op]
    if not others:
        return True
    block = op.parent_block()
    if not isinstance(acc, BlockArgument) or block is None or acc.block is block:
        return False
    uses = {o.parent_block() for o in others}
    if block in uses:
        return False
    seen, stack = {block}, [block]
    while stack:
        for nxt in _successors(stack.pop()):
            if nxt is acc.block or nxt in seen:
                continue
            if nxt in uses:
                return False
            seen.add(nxt)
            stack.append(nxt)
    return True


def _tie_accumulators(op: tops.WgmmaMmaAsyncOp, names: _Names) -> None:
    """wgmma writes its accumulators in place. An accumulator it may overwrite (used only
    here, or a loop's carried value read after the loop alone: `_overwritable`) lends its
    register to the result; any other is first copied to a fresh register, and the copies
    are fenced, as PTX asks for registers written between wgmma.fence and wgmma."""
    copies = []
    for r, acc in zip(op.d, op.acc):
        sole_use = list(op.acc).count(acc) == 1 and _overwritable(acc, op)
        if sole_use:
            names.define(r, names(acc))
        else:
            names.define(r)
            copies.append(f"mov.f32 {names(r)}, {names(acc)};")
    if copies:
        names.pre_copies[op] = copies + ["wgmma.fence.sync.aligned;"]


def _op_lines(op: Operation, names: _Names) -> list[str]:
    if isinstance(op, BraOp):
        return _copies(names, op.target.args, op.args) + [f"bra.uni {names.label(op.target)};"]
    if isinstance(op, CondBraOp):
        p = names(op.cond)
        lines = _copies(names, op.then_block.args, op.then_args, f"@{p} ")
        lines += _copies(names, op.else_block.args, op.else_args, f"@!{p} ")
        return lines + [f"@{p} bra {names.label(op.then_block)};", f"bra.uni {names.label(op.else_block)};"]
    if isinstance(op, PtxOp):
        return names.pre_copies.get(op, []) + op.ptx_lines(names)
    raise PtxEmissionError(f"op {op.name} has no PTX form: lower it to the ptx dialect first")


def _kernel_text(kernel: KernelOp, index: int) -> str:
    names = _Names(index)
    blocks = list(kernel.body.blocks)
    for b in blocks:
        names.label(b)
    # name values in program order; wgmma's results take their accumulators' registers
    for b in blocks:
        for a in b.args:
            names.define(a)
        for op in b.ops:
            if isinstance(op, tops.WgmmaMmaAsyncOp):
                _tie_accumulators(op, names)
                continue
            for r in op.results:
                names.define(r)
    body: list[str] = []
    for n, b in enumerate(blocks):
        if n > 0 or any(isinstance(u.operation, BraOp | CondBraOp) for u in b.uses):
            body.append(f"{names.label(b)}:")
        for op in b.ops:
            body.extend("\t" + line for line in _op_lines(op, names))

    params = []
    for p, t in kernel.param_list():
        params.append(f"\t.param .align 64 .b8 {p}[128]" if t == "tensormap" else f"\t.param .{t} {p}")
    head = [f".visible .entry {kernel.sym_name.data}(", ",\n".join(params), ")"]
    for k in ("maxntid", "reqntid"):
        v = getattr(kernel, k)
        if v is not None:
            head.append(f".{k} " + ", ".join(str(x.value.data) for x in v.data))
    if kernel.minnctapersm is not None:
        head.append(f".minnctapersm {kernel.minnctapersm.value.data}")
    decls = [f"\t.reg {REG_CLASSES[c].decl} {REG_CLASSES[c].prefix}<{names.counts[c] + 1}>;" for c in REG_CLASSES if names.counts[c]]
    decls += [f"\t.shared .align {a} .b8 {n}[{size}];" for n, size, a in kernel.shared_list()]
    # the dynamic shared array is declared at module scope, before its kernel
    extern = [f".extern .shared .align 128 .b8 {kernel.dynamic_shared.data}[];\n"] if kernel.dynamic_shared is not None else []
    extern += [f".global .align {a} .b8 {n}[{size}];\n" for n, size, a in kernel.global_list()]  # zero at module load
    return "\n".join(extern + head + ["{"] + decls + [""] + body + ["}"]) + "\n"


def choose_target(module: Operation, requested: str | None = None) -> str:
    """The target: the option, else the module's `ptx.module`, else what the ops need."""
    if requested:
        return requested
    for op in module.walk():
        if isinstance(op, ModuleOp):
            return op.target.data
    attr = module.attributes.get("ptx.target")
    if isinstance(attr, StringAttr):
        return attr.data
    return "sm_90a" if any(isinstance(op, SM90A_OPS + SM90_OPS) for op in module.walk()) else "sm_80"


def _isa(version: str) -> tuple[int, int]:
    """A PTX ISA version ("8.1") as (major, minor), or a PtxEmissionError naming it."""
    major, dot, minor = version.partition(".")
    if not (major.isdigit() and dot and minor.isdigit()):
        raise PtxEmissionError(f"unknown PTX ISA version '{version}'; expected major.minor, such as 8.1")
    return int(major), int(minor)


def print_ptx(module: Operation, out: IO[str], target: str | None = None, version: str | None = None) -> None:
    tgt = choose_target(module, target)
    if tgt not in ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"):
        raise PtxEmissionError(f"unknown PTX target '{tgt}'; expected sm_80, sm_86, sm_89, sm_90 or sm_90a")
    kernels = [op for op in module.walk() if isinstance(op, KernelOp)]
    if not kernels:
        raise PtxEmissionError("the module has no ptx.kernel to print; lower it to the ptx dialect first")
    least = DEFAULT_VERSION
    for k in kernels:
        for op in k.walk():
            vector_red = isinstance(op, RedOp) and op.vector
            needs = "sm_90a" if isinstance(op, SM90A_OPS) else "sm_90" if isinstance(op, SM90_OPS) or vector_red else None
            if needs and not tgt.startswith("sm_90") or (needs == "sm_90a" and tgt != "sm_90a"):
                raise PtxEmissionError(f"{op.name} in @{k.sym_name.data} needs {needs}, but the target is {tgt}")
            if vector_red:
                least = VECTOR_RED_VERSION
    if version is not None and _isa(version) < _isa(least):
        raise PtxEmissionError(f"the module adds vectors atomically (red.global.add.v2.f32), which PTX ISA {least} has, not {version}")
    out.write(f"//\n// Generated by napkin-ir\n//\n\n.version {version or least}\n.target {tgt}\n.address_size 64\n\n")
    out.write("\n".join(_kernel_text(k, n) for n, k in enumerate(kernels)))


@dataclass(frozen=True)
class PtxTarget(Target):
    """`-t ptx` (or `-t ptx{arch=sm_90a}`, `-t ptx{version=8.3}`): print the module as PTX.
    The version may be written as a number or quoted."""

    name = "ptx"
    arch: str = ""
    version: str | float | int = ""

    def emit(self, ctx: Context, module: BuiltinModuleOp, output: IO[str]) -> None:
        print_ptx(module, output, self.arch or None, str(self.version) if self.version else None)
