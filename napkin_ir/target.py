"""Targets and element types: the facts every level asks of the machine and of a dtype.

A `Target` is an instruction set the pipelines compile for (sm_80, sm_90a) with the
resources of the GPU its figures come from (`model/hardware.py`): shared memory a block
may take, the register file, and which engines exist (cp.async, TMA, wgmma, setmaxnreg,
clusters). A `Dtype` is an element type with what the lowerings need of it: its bytes,
the k step of mma.sync and wgmma, the TMA data-type code and the numpy type. Planners,
passes, lowerings and the model ask these objects instead of writing `227 * 1024` or
`2` (bytes of a bf16) where they need them.

This module sits below everything that plans or lowers: it imports the hardware table
and nothing else of the package.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from napkin_ir.errors import UserError
from napkin_ir.model.hardware import A100, H100, Hardware

KB = 1024


class Engine(enum.Enum):
    """A hardware unit or instruction family a kernel may be planned around."""

    CP_ASYNC = "cp.async"  # asynchronous global -> shared copies (sm_80+)
    LDMATRIX = "ldmatrix"
    MMA_SYNC = "mma.sync"
    TMA = "tma"  # cp.async.bulk.tensor with tensor maps (sm_90)
    WGMMA = "wgmma"  # warpgroup products from shared memory (sm_90a)
    STMATRIX = "stmatrix"
    SETMAXNREG = "setmaxnreg"  # registers moved between warpgroups (sm_90a)
    CLUSTER = "cluster"  # thread-block clusters and multicast (sm_90)


@dataclass(frozen=True)
class Dtype:
    """An element type as the lowerings see it."""

    name: str  # as the ncd dialect spells it
    bytes: int
    numpy: np.dtype
    tma_code: int | None  # CUtensorMapDataType, None where TMA cannot move it
    mma_k: int | None  # k of one mma.sync with these inputs (m16n8k16 for 16-bit), None: not an mma input
    wgmma_k: int | None  # k of one wgmma with these inputs from shared memory

    @property
    def bits(self) -> int:
        return 8 * self.bytes

    def elements(self, nbytes: int) -> int:
        """How many elements fill `nbytes` (a 16-byte copy, a 128-byte swizzle row)."""
        return nbytes // self.bytes

    def size(self, elements: int) -> int:
        """Bytes of `elements` elements."""
        return elements * self.bytes

    @property
    def is_half(self) -> bool:
        """A 16-bit float: what ldmatrix, stmatrix, mma.sync and wgmma move as pairs."""
        return self.bytes == 2 and self.mma_k is not None


# CUtensorMapDataType: FLOAT16 = 6, FLOAT32 = 7, BFLOAT16 = 9 (cuda.h)
BF16 = Dtype("bf16", 2, np.dtype(ml_dtypes.bfloat16), 9, 16, 16)
F16 = Dtype("f16", 2, np.dtype(np.float16), 6, 16, 16)
F32 = Dtype("f32", 4, np.dtype(np.float32), 7, None, None)
DTYPES: dict[str, Dtype] = {d.name: d for d in (BF16, F16, F32)}


def dtype(name: str) -> Dtype:
    """The `Dtype` an ncd element type names; an unknown one is the user's error."""
    try:
        return DTYPES[name]
    except KeyError:
        raise UserError(f"unknown element type '{name}'; expected one of {', '.join(DTYPES)}") from None


@dataclass(frozen=True)
class Target:
    """An instruction set the pipelines compile for, with its machine's resources."""

    name: str  # sm80, sm90 (the short name of the pipelines: napkin-sm80, napkin-sm90)
    arch: str  # the PTX .target
    hardware: Hardware  # the GPU whose resources bound a kernel
    engines: frozenset[Engine]
    # registers the producer warpgroup keeps after setmaxnreg.dec: its code (TMA copies,
    # barrier waits, a persistent tile loop's index math) fits in 24 (ptxas uses 16, no
    # spills, in every kernel the pipelines make); the consumers get 240 at 128 rows a block
    producer_registers: int = 24

    def has(self, engine: Engine) -> bool:
        return engine in self.engines

    @property
    def register_file(self) -> int:
        """32-bit registers a multiprocessor holds."""
        return self.hardware.regs_per_sm

    def smem_per_block(self, blocks_per_sm: int = 1) -> int:
        """Bytes of shared memory each of `blocks_per_sm` blocks on a multiprocessor may
        take: the multiprocessor's, less what the runtime keeps for each block, shared out,
        and no more than one block may opt in to."""
        hw = self.hardware
        return min(hw.smem_per_block, hw.smem_per_sm // blocks_per_sm - hw.smem_reserved_per_block)

    def registers_at_entry(self, threads: int, blocks_per_sm: int = 1) -> int:
        """Registers a thread holds at entry where `blocks_per_sm` blocks of `threads`
        threads share a multiprocessor: what `.maxntid` and `.minnctapersm` cap ptxas at
        (the register file over the threads, in steps of 8, at most 255)."""
        return min(self.hardware.regs_per_thread, self.register_file // blocks_per_sm // threads) // 8 * 8

    def consumer_registers(self, threads: int, blocks_per_sm: int = 1) -> int:
        """Registers per consumer thread of a warp-specialised block once its producer
        warpgroup drops to `producer_registers`: `setmaxnreg` moves registers within the
        block's pool (`threads` times the count at entry); the consumers share what the
        producer frees, in steps of 8, at most 256."""
        pool = threads * self.registers_at_entry(threads, blocks_per_sm) - 128 * self.producer_registers
        return min(256, pool // (threads - 128) // 8 * 8)


SM80 = Target("sm80", "sm_80", A100, frozenset({Engine.CP_ASYNC, Engine.LDMATRIX, Engine.MMA_SYNC}))
# sm_90a keeps sm_80's engines (napkin-sm80's kernels run on Hopper) and adds its own
SM90 = Target("sm90", "sm_90a", H100, frozenset({*SM80.engines, Engine.TMA, Engine.WGMMA, Engine.STMATRIX, Engine.SETMAXNREG,
                                                 Engine.CLUSTER}))
TARGETS: dict[str, Target] = {t.name: t for t in (SM80, SM90)}


def target(name: str) -> Target:
    """The `Target` a short name (sm80, sm90) or a PTX arch (sm_80, sm_90a) names."""
    for t in TARGETS.values():
        if name in (t.name, t.arch):
            return t
    raise UserError(f"unknown target '{name}'; expected one of {', '.join(TARGETS)}")
