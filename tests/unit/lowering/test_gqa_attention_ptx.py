"""The sm_80 grouped-query attention kernels keep the numbers: the PTX that reg-to-ptx emits
runs on the CPU in the warp-level emulator of `napkin_ir.interpreters.ptx` on ragged
shapes and matches float64: with one query head a block (a grid of four axes, two of
them sharing %ctaid.z), and with a group's query heads packed into a block (its rows
heads by positions: each copied row split into its head and position, the warps holding
a head each, the causal mask and the stores by each row's own position)."""

from __future__ import annotations

import numpy as np
import pytest

from napkin_ir import reference
from napkin_ir.attention_diagrams import GQA_NAMES, gqa_attention_diagram
from napkin_ir.interpreters.ptx import HALF, run_kernel
from napkin_ir.passmanager import run_pipeline


def emulate(kind: str, b: int, g: int, r: int, n: int, d: int, pipeline: str, dtype: str = "bf16", seed: int = 0):
    module = run_pipeline(gqa_attention_diagram(kind, b, g, r, n, d, dtype), pipeline)
    module.verify()
    rng = np.random.default_rng(seed)
    half = HALF[dtype]
    q = rng.standard_normal((b, g, r, n, d)).astype(half)
    k, v = (rng.standard_normal((b, g, n, d)).astype(half) for _ in range(2))
    out = np.full((b, g, r, n, d), 0xFFFF, np.uint16).view(half)  # poisoned: NaN
    run_kernel(module, [q, k, v, out], lazy=False, reverse=False)
    return (q, k, v), out


def _check(kind, inputs, out, dtype="bf16"):
    got = out.astype(np.float64)
    assert np.isfinite(got).all(), "some output was not written"
    assert reference.relative_error(got, reference.REFERENCES[GQA_NAMES[kind]](*inputs)) <= reference.TOLERANCE[dtype]


@pytest.mark.parametrize("kind", ["softmax", "causal"])
def test_a_grid_of_four_axes(kind):
    # b, g, r and i each over more than one block: i on %ctaid.x, r on .y, g and b share .z
    pipeline = ('ncd-relabel{grid="b,g,r,i:16" stream="j:16"},ncd-to-hbm,hbm-launch{order=last},'
                'hbm-to-smem{stages=2 layout=pad8},smem-to-reg{warps="i:1"},reg-to-ptx')
    inputs, out = emulate(kind, 2, 2, 2, 20, 16, pipeline)
    _check(kind, inputs, out)


# (kind, query heads a group, n, d, heads a block, positions a block, keys a tile, stages, warps)
PACKED = [
    ("causal", 4, 77, 64, 4, 32, 64, 2, "r:4,i:2"),
    ("softmax", 8, 50, 64, 8, 16, 32, 3, "r:8,i:1"),
    ("spherical", 2, 70, 128, 2, 32, 64, 2, "r:2,i:2"),
    ("causal", 8, 40, 64, 4, 16, 16, 2, "r:4,i:1"),
]


@pytest.mark.parametrize("kind,r,n,d,rt,it,tj,stages,warps", PACKED)
def test_query_heads_packed_into_a_block(kind, r, n, d, rt, it, tj, stages, warps):
    pipeline = (f'ncd-relabel{{grid="b,g,r:{rt},i:{it}" stream="j:{tj}"}},ncd-to-hbm,hbm-launch{{order=last}},'
                f'hbm-to-smem{{stages={stages} layout=pad8}},smem-to-reg{{warps="{warps}"}},reg-to-ptx')
    inputs, out = emulate(kind, 1, 1, r, n, d, pipeline)
    _check(kind, inputs, out)


@pytest.mark.parametrize("kind,r,n,d", [("causal", 4, 77, 64), ("softmax", 8, 33, 64), ("spherical", 4, 20, 64)])
def test_napkin_sm80_packs_the_group(kind, r, n, d):
    # the tiles napkin-sm80 chooses (sm80_passes): the group's heads in a block
    from napkin_ir.plan.recipes.attention import sm80_passes
    from napkin_ir.passmanager import spec

    passes = spec(sm80_passes(run_pipeline(gqa_attention_diagram(kind, 1, 1, r, n, d))))
    assert f'grid="b,g,r:{r},' in passes
    inputs, out = emulate(kind, 1, 1, r, n, d, passes)
    _check(kind, inputs, out)
