"""A warp-level emulator of the PTX napkin-ir emits, on the CPU: the `ptx` interpreter.

`run_kernel(module, arrays)` runs a module's one `ptx.kernel` block by block on numpy
arrays (inputs, then outputs, in the kernel's parameter order), each warp on its own
until it reaches `bar.sync` (so a warp can run a whole barrier interval ahead of the
others), and lands `cp.async` copies either at once ("eager") or as late as
`cp.async.wait_group` allows ("lazy"). A kernel that reads a stage before its copy is
waited for is wrong in the lazy mode; one that copies into a stage some warp still has to
read is wrong in the eager mode with that warp scheduled last. Global accesses must fall
inside a tensor, even those that read nothing (a zero-filling cp.async), and shared ones
inside the dynamic array; shared-memory bank conflicts are counted.

It knows the sm_80 instructions (integer and f32 arithmetic, cp.async, ldmatrix,
mma.sync, shuffles, ex2, rcp, sqrt, loads and stores, branches); kernels with TMA,
mbarriers or wgmma (sm_90a) are not emulated.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from napkin_ir.dialects.ptx import ops as P
from napkin_ir.dialects.ptx import tensor_ops as T
from napkin_ir.target import DTYPES

F32_OPS = {
    "max": lambda a: np.maximum(a[0], a[1]), "min": lambda a: np.minimum(a[0], a[1]), "div": lambda a: a[0] / a[1],
    "rcp": lambda a: np.float32(1) / a[0], "sqrt": lambda a: np.sqrt(a[0]), "ex2": lambda a: np.exp2(a[0]),
    "lg2": lambda a: np.log2(a[0]),
    "neg": lambda a: -a[0], "fma": lambda a: a[0] * a[1] + a[2],
}

UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
SINT = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
HALF = {d.name: d.numpy for d in DTYPES.values() if d.is_half}  # the 16-bit floats, as numpy types


def _prop(op, name: str, default=0):
    attr = op.properties.get(name)
    return default if attr is None else attr.value.data


def _bits(ty: str) -> int:
    return {"pred": 1, "f32": 32, "f64": 64, "bf16x2": 32, "f16x2": 32}.get(ty) or int(ty[1:])


def _as(ty: str, v: np.ndarray) -> np.ndarray:
    """The register bits of `v` read as PTX type `ty` (u32 -> uint32, s32 -> int32 ...)."""
    if ty == "pred":
        return v.astype(bool)
    if ty in ("f32", "f64"):
        return v
    n = _bits(ty)
    u = v.astype(UINT[n]) if v.dtype != UINT[n] else v
    return u.view(SINT[n]) if ty[0] == "s" else u


def _store(cls: str, v: np.ndarray) -> np.ndarray:
    """Register contents of class `cls` from a result computed in some numpy type."""
    if cls == "pred":
        return v.astype(bool)
    if cls == "f32":
        return v.astype(np.float32)
    n = 64 if cls == "b64" else 16 if cls in ("b16", "bf16", "f16") else 32
    if v.dtype.kind in "iu":
        return v.astype(SINT[64] if v.dtype.kind == "i" else UINT[64]).astype(UINT[n]) if v.dtype.itemsize * 8 != n else v.view(UINT[n])
    return v.astype(UINT[n])


class Memory:
    """Global memory: tensors at scattered 64-bit addresses; every access must fall inside one."""

    def __init__(self):
        self.blocks: list[tuple[int, np.ndarray]] = []
        self.next = 0x7F3A_0000_0000

    def alloc(self, data: np.ndarray) -> int:
        addr = self.next
        self.blocks.append((addr, data.view(np.uint8).reshape(-1)))
        self.next += -(-data.nbytes // 4096) * 4096 + 65536
        return addr

    def find(self, addr: int, size: int) -> tuple[np.ndarray, int]:
        for base, buf in self.blocks:
            if base <= addr and addr + size <= base + buf.size:
                return buf, addr - base
        raise AssertionError(f"global access of {size} bytes at {addr:#x} falls outside every tensor")

    def read(self, addr: int, size: int) -> bytes:
        buf, off = self.find(addr, size)
        return buf[off:off + size].tobytes()

    def write(self, addr: int, data: bytes) -> None:
        buf, off = self.find(addr, len(data))
        buf[off:off + len(data)] = np.frombuffer(data, np.uint8)


@dataclass
class Block:
    ctaid: tuple[int, int, int]
    smem: np.ndarray
    lazy: bool
    conflicts: dict[str, int] = field(default_factory=lambda: {"cp.async": 0, "ldmatrix": 0, "cp.async lines": 0, "st.shared": 0, "ld.shared": 0})

    def banks(self, what: str, addrs: list[int]) -> None:
        """16-byte shared accesses are served 8 lanes at a time: count the extra passes that
        8 lanes cost when two of them fall in the same 16-byte group of banks. For copies,
        also the extra 128-byte lines of shared memory that 8 lanes' chunks straddle (on an
        H200, ncu counts 10.5 shared wavefronts per cp.async instead of 4 where each 8 lanes
        write 128 contiguous bytes that start 16 bytes into a line, as padded rows do)."""
        groups = [(a // 16) % 8 for a in addrs]
        self.conflicts[what] += max(groups.count(g) for g in groups) - 1 if groups else 0
        if what == "cp.async" and addrs:
            self.conflicts["cp.async lines"] += len({a // 128 for a in addrs}) - 1

    def words(self, what: str, addrs: list[int], size: int) -> None:
        """A warp's shared access of `size` bytes a lane, served 128 / size lanes at a time:
        the extra passes where two lanes of one pass hit one bank in different words."""
        per = 128 // size
        for p in range(0, len(addrs), per):
            banks: dict[int, set[int]] = {}
            for a in addrs[p:p + per]:
                for w in range(a // 4, (a + size) // 4):
                    banks.setdefault(w % 32, set()).add(w)
            self.conflicts[what] = self.conflicts.get(what, 0) + max(len(v) for v in banks.values()) - 1


@dataclass
class Warp:
    index: int
    block: Block
    mem: Memory
    params: dict[str, int]
    regs: dict = field(default_factory=dict)
    open_group: list = field(default_factory=list)
    groups: list = field(default_factory=list)

    # -- memory ---------------------------------------------------------------------------
    def shared(self, addr: int, size: int) -> slice:
        assert 0 <= addr and addr + size <= self.block.smem.size, f"shared access of {size} bytes at {addr} outside the {self.block.smem.size}-byte array"
        return slice(addr, addr + size)

    def land(self, copies: list) -> None:
        for dst, src, size, src_size in copies:
            data = self.mem.read(src, src_size) if src_size else b""
            self.mem.find(src, 1)  # even a copy that reads nothing must name a tensor
            self.block.smem[self.shared(dst, size)] = np.frombuffer(data + bytes(size - src_size), np.uint8)

    def wait(self, pending: int) -> None:
        while len(self.groups) > pending:
            self.land(self.groups.pop(0))

    # -- execution ------------------------------------------------------------------------
    def get(self, v):
        return self.regs[v]

    def run(self, kernel: P.KernelOp) -> Iterator[str]:
        block = kernel.body.blocks.first
        while True:
            for op in block.ops:
                if isinstance(op, P.BraOp):
                    vals = [self.get(a) for a in op.args]
                    for a, v in zip(op.target.args, vals):
                        self.regs[a] = v
                    block = op.target
                    break
                if isinstance(op, P.CondBraOp):
                    c = self.get(op.cond)
                    assert c.all() or not c.any(), "a branch that diverges within a warp"
                    target, args = (op.then_block, op.then_args) if c[0] else (op.else_block, op.else_args)
                    vals = [self.get(a) for a in args]
                    for a, v in zip(target.args, vals):
                        self.regs[a] = v
                    block = target
                    break
                if isinstance(op, P.RetOp):
                    self.wait(0)
                    return
                if isinstance(op, P.BarSyncOp):
                    ident, threads = (a.value.data if a is not None else 0 for a in (op.id, op.threads))
                    yield ("bar", ident, threads)  # threads 0: the whole block
                    continue
                self.step(op)

    def step(self, op) -> None:
        if isinstance(op, P.ShflSyncOp):
            assert op.mode.data in ("bfly", "idx") and len(op.srcs) == 1, "only butterfly and index shuffles by a constant are emulated"
            b = op.b.value.data  # type: ignore[union-attr]
            lanes = np.arange(32) ^ b if op.mode.data == "bfly" else np.full(32, b)
            self.regs[op.results[0]] = self.get(op.srcs[0])[lanes]
            return
        if isinstance(op, P.ArithOp) and op.ty.data == "f32" and op.OPCODE in F32_OPS:
            with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
                self.regs[op.results[0]] = F32_OPS[op.OPCODE]([self.get(s) for s in op.srcs]).astype(np.float32)
            return
        self.step_core(op)

    def step_core(self, op) -> None:
        g = self.get
        lanes = np.arange(32, dtype=np.uint32)
        res = None
        if isinstance(op, P.ConstOp):
            ty = op.ty.data
            res = np.full(32, op.number, np.float32) if ty == "f32" else _store(op.dsts[0].type.cls.data, np.full(32, int(op.number) & ((1 << _bits(ty)) - 1), np.uint64))
        elif isinstance(op, P.LdParamOp):
            res = np.full(32, self.params[op.param.data], np.uint64)
        elif isinstance(op, P.CvtaOp):
            res = g(op.srcs[0])
        elif isinstance(op, P.AddrOfOp):  # a module-scope .global array's address, else the shared window's start
            sym = op.sym.data
            res = np.full(32, self.params[sym], np.uint64) if sym in self.params else np.zeros(32, np.uint32)
        elif isinstance(op, P.SregOp):
            r = op.reg.data
            if r == "tid.x":
                res = lanes + 32 * self.index
            elif r.startswith("ctaid."):
                res = np.full(32, self.block.ctaid["xyz".index(r[-1])], np.uint32)
            elif r == "laneid":
                res = lanes
            else:
                raise NotImplementedError(r)
        elif isinstance(op, P.ArithOp):
            res = self.arith(op)
        elif isinstance(op, P.SetpOp):
            a, b = (_as(op.ty.data, g(s)) for s in op.srcs)
            res = {"lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b, "eq": a == b, "ne": a != b}[op.cmp.data]
        elif isinstance(op, P.SelpOp):
            a, b, p = (g(s) for s in op.srcs)
            res = np.where(p, a, b)
        elif isinstance(op, P.MovOp) and len(op.dsts) > 1:  # unpack: the first result takes the low bits
            assert len(op.srcs) == 1 and op.ty.data == "b32" and len(op.dsts) == 2, "only a .b32 unpacked into two halves is emulated"
            x = g(op.srcs[0]).astype(np.uint32)
            res = [(x & 0xFFFF).astype(np.uint16), (x >> 16).astype(np.uint16)]
        elif isinstance(op, P.MovOp):
            assert len(op.srcs) == len(op.dsts) == 1
            res = g(op.srcs[0])
        elif isinstance(op, P.CvtOp):
            d, s = op.dty.data, op.sty.data
            if s in HALF and d == "f32":
                res = g(op.srcs[0]).astype(np.uint16).view(HALF[s]).astype(np.float32)
            elif d in HALF or d in ("bf16x2", "f16x2"):
                half = HALF[d.removesuffix("x2")]
                parts = [g(v).astype(np.float32).astype(half).view(np.uint16).astype(np.uint32) for v in op.srcs]
                res = (parts[0] << 16) | parts[1] if len(parts) == 2 else parts[0]
            else:
                res = _store(op.dsts[0].type.cls.data, _as(s, g(op.srcs[0])).astype(SINT[64] if s[0] == "s" else UINT[64]))
        elif isinstance(op, T.CpAsyncOp):
            self.cp_async(op)
        elif isinstance(op, T.CpAsyncCommitGroupOp):
            self.groups.append(self.open_group)
            self.open_group = []
        elif isinstance(op, T.CpAsyncWaitGroupOp):
            self.wait(_prop(op, "n"))
        elif isinstance(op, T.LdmatrixOp):
            res = self.ldmatrix(op)
        elif isinstance(op, T.MmaSyncOp):
            res = self.mma(op)
        elif isinstance(op, P.StOp):
            self.st(op)
        elif isinstance(op, P.RedOp):
            self.red(op)
        elif isinstance(op, P.AtomOp):
            res = self.atom(op)
        elif isinstance(op, T.FenceOp | P.BarWarpSyncOp):  # one warp at a time, its lanes in step: every write is already seen
            pass
        elif isinstance(op, P.LdOp) and op.space.data == "global":
            res = self.ld_global(op)
        elif isinstance(op, P.LdOp):
            res = self.ld_shared(op)
        else:
            raise NotImplementedError(f"the emulator does not know {op.name}")
        if res is not None:
            if isinstance(res, list):
                for r, v in zip(op.results, res):
                    self.regs[r] = v
            else:
                self.regs[op.results[0]] = _store(op.results[0].type.cls.data, res) if op.results[0].type.cls.data in ("b32", "b64", "pred") else res

    def arith(self, op) -> np.ndarray:
        ty, mods = op.ty.data, (op.mods.data.split(".") if op.mods else [])
        srcs = [self.get(s) for s in op.srcs]
        if ty == "f32":
            a = srcs
            return {"add": lambda: a[0] + a[1], "sub": lambda: a[0] - a[1], "mul": lambda: a[0] * a[1]}[op.OPCODE]().astype(np.float32)
        wide = "wide" in mods
        n = _bits(ty)
        big = (SINT if ty[0] == "s" else UINT)[64]
        vals = [_as(ty if not (isinstance(op, P.ShiftOp) and k == 1) else "u32", s).astype(big) for k, s in enumerate(srcs)]
        if isinstance(op, P.MadOp) and wide:
            vals[2] = _as(f"{ty[0]}{2 * n}", srcs[2]).astype(big)
        a = vals
        code = op.OPCODE
        if code in ("div", "rem"):
            assert (a[1] != 0).all(), "division by zero"
        with np.errstate(over="ignore"):
            out = {
                "add": lambda: a[0] + a[1], "sub": lambda: a[0] - a[1], "mul": lambda: a[0] * a[1],
                "mad": lambda: a[0] * a[1] + a[2], "div": lambda: a[0] // a[1], "rem": lambda: a[0] % a[1],
                "min": lambda: np.minimum(a[0], a[1]), "max": lambda: np.maximum(a[0], a[1]),
                "and": lambda: a[0] & a[1], "or": lambda: a[0] | a[1], "xor": lambda: a[0] ^ a[1], "not": lambda: ~a[0],
                "shl": lambda: a[0] << a[1], "shr": lambda: a[0] >> a[1],
            }[code]()
        if code == "mul" and "hi" in mods:
            assert n <= 32, f"mul.hi.{ty} is not emulated"
            out = out >> n
        if ty == "pred":
            return out.astype(bool)
        bits = 2 * n if wide else n
        return out.astype(big).view(UINT[64]) & np.uint64((1 << bits) - 1) if bits < 64 else out.astype(big).view(UINT[64])

    def cp_async(self, op) -> None:
        g = self.get
        srcs = list(op.srcs)
        guard = srcs.pop() if srcs[-1].type.cls.data == "pred" else None
        dst = g(srcs[0]).astype(np.int64) + _prop(op, "dst_offset")
        src = g(srcs[1]).astype(np.int64) + _prop(op, "src_offset")
        size = _prop(op, "size")
        src_size = g(srcs[2]) if len(srcs) == 3 else np.full(32, size)
        on = g(guard) if guard is not None else np.ones(32, bool)
        assert not (dst % size).any() and not (src % size).any(), "a misaligned cp.async"
        copies = [(int(dst[l]), int(src[l]), size, int(src_size[l])) for l in range(32) if on[l]]
        for phase in range(4):
            self.block.banks("cp.async", [int(dst[l]) for l in range(8 * phase, 8 * phase + 8) if on[l]])
        if self.block.lazy:
            self.open_group.extend(copies)
        else:
            self.land(copies)

    def ldmatrix(self, op) -> list[np.ndarray]:
        num = _prop(op, "num")
        addr = self.get(op.srcs[0]).astype(np.int64) + _prop(op, "offset")
        assert not (addr % 16).any(), "a misaligned ldmatrix row"
        mats = []
        for i in range(num):
            self.block.banks("ldmatrix", [int(addr[8 * i + r]) for r in range(8)])
            rows = [np.frombuffer(self.block.smem[self.shared(int(addr[8 * i + r]), 16)].tobytes(), np.uint16) for r in range(8)]
            m = np.stack(rows)
            mats.append(m.T if _prop(op, "trans") else m)
        out = []
        lanes = np.arange(32)
        for m in mats:
            lo = m[lanes >> 2, 2 * (lanes & 3)].astype(np.uint32)
            hi = m[lanes >> 2, 2 * (lanes & 3) + 1].astype(np.uint32)
            out.append(lo | (hi << 16))
        return out

    def mma(self, op) -> list[np.ndarray]:
        half = HALF[op.atype.data]
        lanes = np.arange(32)
        gi, ci = lanes >> 2, lanes & 3

        def unpack(r):
            v = self.get(r)
            return (v & 0xFFFF).astype(np.uint16).view(half).astype(np.float64), (v >> 16).astype(np.uint16).view(half).astype(np.float64)

        A, B, C = np.zeros((16, 16)), np.zeros((16, 8)), np.zeros((16, 8))
        for k, (dr, dc) in enumerate([(0, 0), (8, 0), (0, 8), (8, 8)]):
            lo, hi = unpack(op.a[k])
            A[gi + dr, 2 * ci + dc], A[gi + dr, 2 * ci + dc + 1] = lo, hi
        for k in range(2):
            lo, hi = unpack(op.b[k])
            B[2 * ci + 8 * k, gi], B[2 * ci + 8 * k + 1, gi] = lo, hi
        for k, (dr, dc) in enumerate([(0, 0), (0, 1), (8, 0), (8, 1)]):
            C[gi + dr, 2 * ci + dc] = self.get(op.c[k])
        D = (A @ B + C).astype(np.float32)
        return [D[gi + dr, 2 * ci + dc] for dr, dc in [(0, 0), (0, 1), (8, 0), (8, 1)]]

    def st(self, op) -> None:
        addr = self.get(op.addr).astype(np.int64) + _prop(op, "offset")
        on = self.get(op.guard) if op.guard is not None else np.ones(32, bool)
        vals = [self.get(v) for v in op.values]
        width = 2 if _bits(op.ty.data) == 16 else 4  # a 16-bit store writes the low half of its register
        size = width * len(vals)
        assert not (addr % size).any(), f"a misaligned {size}-byte store"
        if op.space.data == "shared":
            self.block.words("st.shared", [int(a) for a in addr], size)
        for l in range(32):
            if on[l]:
                data = b"".join(np.asarray(v[l]).tobytes()[:width] for v in vals)
                if op.space.data == "shared":
                    self.block.smem[self.shared(int(addr[l]), size)] = np.frombuffer(data, np.uint8)
                else:
                    assert op.space.data == "global"
                    self.mem.write(int(addr[l]), data)

    def red(self, op) -> None:
        """`red.global.add.f32` (`.v2`, `.v4`): each lane's values added to the f32s at its
        address, one after another."""
        assert op.space.data == "global" and op.ty.data == "f32", f"the emulator adds f32 values in global memory, not {op.ty.data}"
        addr = self.get(op.addr).astype(np.int64) + _prop(op, "offset")
        on = self.get(op.guard) if op.guard is not None else np.ones(32, bool)
        n = len(op.values)
        vals = [self.get(x) for x in op.values]
        assert not (addr[on] % (4 * n)).any(), f"a misaligned {4 * n}-byte red"
        for l in range(32):
            if on[l]:
                for i, v in enumerate(vals):
                    at = int(addr[l]) + 4 * i
                    old = np.frombuffer(self.mem.read(at, 4), np.float32)[0]
                    self.mem.write(at, np.float32(old + np.frombuffer(np.asarray(v[l]).tobytes(), np.float32)[0]).tobytes())

    def atom(self, op) -> np.ndarray:
        """`atom.global.add.u32`: each lane's value added to the word at its address, lane by
        lane; each gets the word as it found it."""
        assert op.space.data == "global" and op.ty.data == "u32", f"the emulator counts u32 words in global memory, not {op.ty.data}"
        addr = self.get(op.addr).astype(np.int64) + _prop(op, "offset")
        on = self.get(op.guard) if op.guard is not None else np.ones(32, bool)
        v = self.get(op.values[0]).astype(np.uint32)
        old = np.full(32, 0xFFFFFFFF, np.uint32)  # a lane the guard skips gets no value
        for l in range(32):
            if on[l]:
                old[l] = np.frombuffer(self.mem.read(int(addr[l]), 4), np.uint32)[0]
                self.mem.write(int(addr[l]), np.uint32(old[l] + v[l]).tobytes())
        return old

    def ld_global(self, op) -> list[np.ndarray]:
        """A guarded global load: the lanes it skips get zeros where the load says so
        (`zero`), else all-ones bits (a NaN of every float type), which a kernel must not use."""
        addr = self.get(op.addr).astype(np.int64) + _prop(op, "offset")
        on = self.get(op.guard) if op.guard is not None else np.ones(32, bool)
        bits = _bits(op.ty.data)
        n, size = len(op.dsts), bits // 8
        assert not (addr[on] % (size * n)).any(), f"a misaligned {size * n}-byte global load"
        words = np.full((32, n), 0 if op.zero is not None else (1 << bits) - 1, UINT[bits])
        for l in range(32):
            if on[l]:
                words[l] = np.frombuffer(self.mem.read(int(addr[l]), size * n), UINT[bits])
        return [words[:, i].view(np.float32) if op.ty.data == "f32" else words[:, i] for i in range(n)]

    def ld_shared(self, op) -> list[np.ndarray]:
        assert op.space.data == "shared" and op.guard is None
        addr = self.get(op.addr).astype(np.int64) + _prop(op, "offset")
        n = len(op.dsts)
        assert not (addr % (4 * n)).any(), "a misaligned shared load"
        self.block.words("ld.shared", [int(a) for a in addr], 4 * n)
        words = np.stack([np.frombuffer(self.block.smem[self.shared(int(a), 4 * n)].tobytes(), np.uint32) for a in addr])
        return [words[:, i].copy().view(np.float32) if op.ty.data == "f32" else words[:, i].copy() for i in range(n)]


def _meet(states: list) -> None:
    """The warps' states at a step: all at one barrier of the whole block (`("bar", id, 0)`)
    or all done; or, at a barrier of some of its threads (`("bar", id, threads)`: `bar.sync
    id, threads`, the consumers beside a producer warpgroup), that many warps there and the
    others done (a producer that has issued its copies and left)."""
    if len(set(states)) == 1:
        return
    waiting = {s for s in states if s != "done"}
    threads = next(iter(waiting))[2] if len(waiting) == 1 else 0
    assert threads and threads == 32 * sum(s != "done" for s in states), f"warps disagree at a barrier: {states}"


def run_kernel(module, args: list[np.ndarray], *, lazy: bool, reverse: bool, mem: Memory | None = None,
               only: list[tuple[int, int, int]] | None = None) -> dict[str, int]:
    """Run every block (or those of `only`, in that order); return the shared-memory bank
    conflicts counted over all of them."""
    (kernel,) = [op for op in module.walk() if isinstance(op, P.KernelOp)]
    assert kernel.launch_grid is not None and kernel.smem_bytes is not None, f"@{kernel.sym_name.data} has no launch configuration"
    threads = kernel.reqntid or kernel.maxntid
    mem = mem or Memory()
    params = {name: mem.alloc(a) for (name, _), a in zip(kernel.param_list(), args)}
    params |= {name: mem.alloc(np.zeros(size, np.uint8)) for name, size, _ in kernel.global_list()}  # zero at module load
    grid = [a.value.data for a in kernel.launch_grid.data]
    grid += [1] * (3 - len(grid))
    nwarps = (threads.data[0].value.data if threads else 1) // 32
    conflicts = {"cp.async": 0, "ldmatrix": 0, "cp.async lines": 0, "st.shared": 0, "ld.shared": 0}
    everyone = [(x, y, z) for z in range(grid[2]) for y in range(grid[1]) for x in range(grid[0])]
    for ctaid in everyone if only is None else only:
        block = Block(ctaid, np.full(kernel.smem_bytes.value.data, 0xFF, np.uint8), lazy)  # NaN-filled shared memory
        warps = [Warp(w, block, mem, params) for w in range(nwarps)]
        runs = [w.run(kernel) for w in warps]
        order = list(range(nwarps))[::-1] if reverse else list(range(nwarps))
        while order:
            states = [next(runs[w], "done") for w in order]
            _meet(states)
            order = [w for w, s in zip(order, states) if s != "done"]
        for k, v in block.conflicts.items():
            conflicts[k] += v
    return conflicts



