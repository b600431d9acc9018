"""The sm_80 attention kernels keep the numbers: the PTX that reg-to-ptx emits
for softmax, causal and spherical attention runs on the CPU in the warp-level emulator of
`napkin_ir.interpreters.ptx` (with the instructions fragment math uses: shuffles, ex2,
max, reciprocals, square roots) on ragged shapes and matches float64; and the claim
reg.to_a rests on, that two adjacent 8-column accumulator tiles are in the lanes and order
of a 16-wide a operand, holds for the layouts the PTX ISA gives."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from napkin_ir import reference
from napkin_ir.attention_diagrams import NAMES, attention_diagram
from napkin_ir.plan.recipes.attention import sm80_attention_pipeline
from napkin_ir.dialects.ptx import ops as P
from napkin_ir.interpreters.ptx import HALF, run_kernel
from napkin_ir.dialects.reg import lane_layout
from napkin_ir.passmanager import run_pipeline

def emulate(kind: str, b: int, h: int, n: int, d: int, dtype: str, *, n_keys: int | None = None, lazy: bool = False,
            reverse: bool = False, seed: int = 0, **config):
    module = run_pipeline(attention_diagram(kind, b, h, n, d, dtype, n_keys=n_keys), sm80_attention_pipeline(**config) + ",reg-to-ptx")
    module.verify()
    rng = np.random.default_rng(seed)
    half = HALF[dtype]
    nj = n if n_keys is None else n_keys
    q, k, v = (rng.standard_normal((b, h, m, d)).astype(half) for m in (n, nj, nj))
    out = np.full((b, h, n, d), 0xFFFF, np.uint16).view(half)  # poisoned: NaN
    conflicts = run_kernel(module, [q, k, v, out], lazy=lazy, reverse=reverse)
    return (q, k, v), out, conflicts


CASES = [
    # kind, b, h, n, n_keys, d, config: tiles that divide, ragged queries and keys, a causal
    # block whose rows end inside a key tile, fewer key tiles than stages
    ("softmax", 1, 2, 128, None, 64, {"block": 64, "stream": 64, "stages": 3}),
    ("softmax", 1, 1, 100, 77, 64, {"block": 64, "stream": 32, "stages": 2}),
    ("causal", 1, 1, 200, None, 64, {"block": 64, "stream": 64, "stages": 3}),
    ("causal", 1, 1, 96, None, 128, {"block": 64, "stream": 32, "stages": 4}),
    ("spherical", 1, 1, 70, 130, 128, {"block": 64, "stream": 64, "stages": 3}),
    ("softmax", 1, 1, 64, 40, 128, {"block": 64, "stream": 32, "stages": 4, "warps": 2}),
    ("causal", 1, 1, 150, None, 64, {"block": 128, "stream": 64, "stages": 2, "warps": 4, "q_in_registers": False}),
]


@pytest.mark.parametrize("kind,b,h,n,nj,d,config", CASES)
@pytest.mark.parametrize("mode", ["eager", "lazy-reversed"])
def test_emulated_attention_matches_float64(kind, b, h, n, nj, d, config, mode):
    lazy = reverse = mode == "lazy-reversed"
    (q, k, v), out, _ = emulate(kind, b, h, n, d, "bf16", n_keys=nj, lazy=lazy, reverse=reverse, **config)
    ref = reference.REFERENCES[NAMES[kind]](q, k, v)
    got = out.astype(np.float64)
    assert np.isfinite(got).all(), "some output was not written"
    assert reference.relative_error(got, ref) <= reference.TOLERANCE["bf16"]


@pytest.mark.parametrize("kind", ["softmax", "causal", "spherical"])
def test_emulated_attention_f16(kind):
    (q, k, v), out, _ = emulate(kind, 1, 1, 80, 64, "f16", block=64, stream=32, stages=2, lazy=True)
    ref = reference.REFERENCES[NAMES[kind]](q, k, v)
    assert reference.relative_error(out, ref) <= reference.TOLERANCE["f16"]


def test_ldmatrix_reads_are_free_of_bank_conflicts():
    # padded rows keep the 8 rows of each ldmatrix matrix (Q, K and V alike) in different banks
    *_, conflicts = emulate("softmax", 1, 1, 128, 64, "bf16", block=64, stream=64, stages=2)
    assert conflicts["ldmatrix"] == 0


@pytest.mark.parametrize("rows,cols", [(16, 16), (16, 64), (32, 64)])
def test_two_accumulator_tiles_are_an_a_operand(rows, cols):
    # value v of the a fragment of columns 16 s .. 16 s + 15 is the c value reg.to_a packs there
    cr, cc = lane_layout("c", rows, cols)
    ar, ac = lane_layout("a", rows, 16)
    nt = cols // 8
    for s in range(cols // 16):
        for tm in range(rows // 16):
            for i in range(4):  # a register i, halves j = 0, 1
                tn = 2 * s + i // 2
                for j in range(2):
                    v = 4 * (tm * nt + tn) + 2 * (i % 2) + j
                    a = 8 * tm + 2 * i + j
                    assert (cr[:, v] == ar[:, a]).all() and (cc[:, v] == ac[:, a] + 16 * s).all()


def test_bf16_pairs_pack_low_column_first():
    # cvt.rn.bf16x2.f32 d, hi, lo puts lo in bits 0-15: the lower column, as mma.sync reads a0
    lo, hi = np.float32(1.5), np.float32(-2.0)
    bits = (np.array([hi]).astype(ml_dtypes.bfloat16).view(np.uint16).astype(np.uint32) << 16) | np.array([lo]).astype(ml_dtypes.bfloat16).view(np.uint16)
    assert np.uint16(bits[0] & 0xFFFF).view(ml_dtypes.bfloat16) == lo
