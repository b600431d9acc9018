"""GEMM-shaped kernels lowered op by op keep the numbers.

After `smem-unroll-stages`, `reg-carry-fragments` and `reg-prefetch`, `reg-to-ptx` lowers
a GEMM with its op rules: the PTX runs in the warp-level emulator of
`napkin_ir.interpreters.ptx` on ragged shapes and matches float64, without shared-memory
bank conflicts in its swizzled stages. The same rules lower a batch axis on the grid, B
stored [n, k], an f32 output. The passes keep the numbers at the register level too (the
CPU interpreters), and leave every stage a constant.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from xdsl.dialects import arith

from napkin_ir import reference
from napkin_ir.dialects import reg, smem
from napkin_ir.dialects.ptx import ops as P
from napkin_ir.interpreters.run import find_entry
from napkin_ir.passmanager import run_pipeline
from napkin_ir.pipelines import sm80_gemm_pipeline
from napkin_ir.diagrams import gemm
from napkin_ir.interpreters.ptx import HALF, run_kernel
from test_reg_to_ptx import CASES
from tests.unit.lowering.levels import emulated


def emulate(m, n, k, dtype, block, warps, stages, *, lazy=True, reverse=True, layout="auto", seed=0):
    module = run_pipeline(gemm(m, n, k, dtype), sm80_gemm_pipeline(block, warps, stages, layout=layout, unroll=True))
    rng = np.random.default_rng(seed)
    half = HALF[dtype]
    a, b = rng.standard_normal((m, k)).astype(half), rng.standard_normal((k, n)).astype(half)
    out = np.full((m, n), 0xFFFF, np.uint16).view(half)  # poisoned: NaN
    conflicts = run_kernel(module, [a, b, out], lazy=lazy, reverse=reverse)
    return a, b, out, conflicts


@pytest.mark.parametrize("shape,block,warps,stages", CASES, ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else str(v))
def test_op_by_op_gemm_keeps_the_numbers(shape, block, warps, stages):
    a, b, out, _ = emulate(*shape, "bf16", block, warps, stages)
    assert np.isfinite(out.astype(np.float64)).all(), "some output was not written"
    assert reference.relative_error(out, reference.matmul(a, b)) <= reference.TOLERANCE["bf16"]


def test_op_by_op_gemm_f16_one_step_a_tile():
    a, b, out, _ = emulate(72, 80, 48, "f16", (64, 64, 16), (2, 2), 3, lazy=False, reverse=False)
    assert reference.relative_error(out, reference.matmul(a, b)) <= reference.TOLERANCE["f16"]


@pytest.mark.parametrize("block,warps", [((128, 128, 32), (2, 2)), ((128, 256, 64), (2, 4)), ((256, 128, 64), (4, 2))])
def test_op_by_op_gemm_is_free_of_bank_conflicts(block, warps):
    *_, conflicts = emulate(block[0], block[1], 2 * block[2], "bf16", block, warps, 3, lazy=False, reverse=False)
    assert conflicts == {"cp.async": 0, "ldmatrix": 0, "cp.async lines": 0, "st.shared": 0, "ld.shared": 0}


def _unrolled(text: str, passes: str):
    return run_pipeline(text, passes + ",smem-unroll-stages,reg-prefetch")


@pytest.mark.parametrize("m,n,k,tiles", [(130, 72, 200, (64, 64, 32)), (64, 64, 48, (64, 64, 16)), (96, 80, 40, (32, 80, 16))])
@pytest.mark.parametrize("stages", [2, 3, 4])
def test_unrolled_and_prefetched_keep_the_numbers(m, n, k, tiles, stages):
    bm, bn, tk = tiles
    passes = f'ncd-relabel{{grid="m:{bm},n:{bn}" stream="k:{tk}"}},ncd-to-hbm,hbm-to-smem{{stages={stages}}},smem-to-reg{{warps="m:2,n:1"}}'
    text = gemm(m, n, k, "bf16")
    before, after = find_entry(run_pipeline(text, passes)), find_entry(_unrolled(text, passes))
    inputs = before.random_inputs(m + n + k)
    np.testing.assert_array_equal(after.run(inputs)[0], before.run(inputs)[0])
    # every stage an unrolled or peeled body reads or fills is a constant
    module = _unrolled(text, passes)
    stages_read = [o.stage for o in module.walk() if isinstance(o, reg.LdmatrixOp | smem.CopyOp)]
    assert stages_read and all(isinstance(v.owner, arith.ConstantOp) for v in stages_read)


NEW_DIAGRAMS = {
    # name: (text, grid, inputs' shapes, the reference)
    "batched": (gemm(72, 80, 40, name="bmm", batch=3), "b,m:64,n:64", [(3, 72, 40), (3, 40, 80)], lambda a, b: np.einsum("bmk,bkn->bmn", a, b)),
    "b_nk": (gemm(72, 80, 40, name="gemm_bt", b_nk=True), "m:64,n:64", [(72, 40), (80, 40)], lambda a, b: a @ b.T),
    "f32_out": (gemm(72, 80, 40, name="gemm_f32", out_dtype="f32"), "m:64,n:64", [(72, 40), (40, 80)], lambda a, b: a @ b),
}


@pytest.mark.parametrize("name", sorted(NEW_DIAGRAMS))
@pytest.mark.parametrize("unroll", [False, True])
def test_more_gemm_diagrams_compile_and_keep_the_numbers(name, unroll):
    text, grid, shapes, ref = NEW_DIAGRAMS[name]
    passes = f'ncd-relabel{{grid="{grid}" stream="k:16"}},ncd-to-hbm,hbm-to-smem{{stages=3 layout=pad8}},smem-to-reg{{warps="m:2,n:2"}}'
    module = run_pipeline(text, passes + (",smem-unroll-stages,reg-prefetch" if unroll else "") + ",reg-to-ptx")
    rng = np.random.default_rng(7)
    half = HALF["bf16"]
    a, b = (rng.standard_normal(s).astype(half) for s in shapes)
    want = ref(a.astype(np.float64), b.astype(np.float64))
    out_dtype = np.float32 if name == "f32_out" else half
    out = np.full(want.shape, np.nan, out_dtype)
    run_kernel(module, [a, b, out], lazy=True, reverse=True)
    assert np.isfinite(out.astype(np.float64)).all(), "some output was not written"
    assert reference.relative_error(out, want) <= reference.TOLERANCE["bf16"]


def _example(name: str) -> str:
    from pathlib import Path

    return (Path(__file__).resolve().parents[3] / "examples" / f"{name}.mlir").read_text()


def _emulate_named(text: str, pipeline: str, inputs: list[np.ndarray], outputs: list[np.ndarray]) -> list[np.ndarray]:
    module = run_pipeline(text, pipeline)
    run_kernel(module, [*inputs, *outputs], lazy=True, reverse=True)
    return outputs


@pytest.mark.parametrize("pipeline", ["napkin-sm80", 'napkin-sm80{block="64,64,32" warps="2,2" stages=2}'])
def test_napkin_sm80_compiles_more_product_diagrams(pipeline):
    rng = np.random.default_rng(3)
    half = HALF["bf16"]
    # two products of one A
    a, b1, b2 = (rng.standard_normal(s).astype(half) for s in ((256, 128), (128, 192), (128, 192)))
    o1, o2 = (np.full((256, 192), np.nan, half) for _ in range(2))
    _emulate_named(_example("two_products"), pipeline, [a, b1, b2], [o1, o2])
    for o, b in ((o1, b1), (o2, b2)):
        assert reference.relative_error(o, a.astype(np.float64) @ b.astype(np.float64)) <= reference.TOLERANCE["bf16"]
    # a GEMM with an exp epilogue
    a, b = ((rng.standard_normal(s) * 0.1).astype(half) for s in ((256, 128), (128, 192)))
    (o,) = _emulate_named(_example("gemm_exp"), pipeline, [a, b], [np.full((256, 192), np.nan, half)])
    assert reference.relative_error(o, np.exp(0.5 * (a.astype(np.float64) @ b.astype(np.float64)))) <= reference.TOLERANCE["bf16"]
    # batched, B [n, k], f32 out at ragged shapes
    for name, (text, _, shapes, ref) in NEW_DIAGRAMS.items():
        ins = [rng.standard_normal(s).astype(half) for s in shapes]
        want = ref(*(x.astype(np.float64) for x in ins))
        (o,) = _emulate_named(text, pipeline, ins, [np.full(want.shape, np.nan, np.float32 if name == "f32_out" else half)])
        assert reference.relative_error(o, want) <= reference.TOLERANCE["bf16"], name


def test_napkin_sm80_compiles_the_fused_mlp():
    rng = np.random.default_rng(5)
    half = HALF["bf16"]
    x, w1, w2 = ((rng.standard_normal(s) * 0.3).astype(half) for s in ((256, 128), (128, 512), (512, 128)))
    (y,) = _emulate_named(_example("mlp"), "napkin-sm80", [x, w1, w2], [np.full((256, 128), np.nan, half)])
    h = np.maximum(x.astype(np.float64) @ w1.astype(np.float64), 0).astype(half).astype(np.float64)
    assert reference.relative_error(y, h @ w2.astype(np.float64)) <= reference.TOLERANCE["bf16"]


def _carried(module) -> list:
    """The fragments (not accumulators) the stream loops of a module carry."""
    from xdsl.dialects import scf

    return [t.role.data for o in module.walk() if isinstance(o, scf.ForOp) for t in (v.type for v in o.iter_args)
            if isinstance(t, reg.FragType) and t.role.data in ("a", "b")]


@pytest.mark.parametrize("m,n,k,tiles", [(130, 72, 520, (64, 64, 32)), (64, 64, 304, (64, 64, 16)), (96, 80, 232, (32, 80, 16))])
@pytest.mark.parametrize("stages", [2, 3, 4])
@pytest.mark.parametrize("trips", [1, 2])
def test_carried_fragments_keep_the_numbers(m, n, k, tiles, stages, trips):
    """reg-carry-fragments at the register level (the CPU interpreters): the same numbers as
    the unrolled loop it rotates, and the loop carries an a and a b fragment."""
    bm, bn, tk = tiles
    passes = (f'ncd-relabel{{grid="m:{bm},n:{bn}" stream="k:{tk}"}},ncd-to-hbm,hbm-to-smem{{stages={stages} layout=pad8}},'
              f'smem-to-reg{{warps="m:2,n:1"}},smem-unroll-stages{{trips={trips}}}')
    text = gemm(m, n, k, "bf16")
    before, after = run_pipeline(text, passes), run_pipeline(text, passes + ",reg-carry-fragments,reg-prefetch")
    inputs = find_entry(before).random_inputs(m + n + k)
    np.testing.assert_array_equal(find_entry(after).run(inputs)[0], find_entry(before).run(inputs)[0])
    assert _carried(after) == ["a", "b"]


# ragged shapes whose stream loops run two trips or more of two stage counts of tiles
CARRY_CASES = [((130, 72, 520), (64, 64, 32), (2, 2), 3), ((72, 136, 232), (64, 64, 16), (2, 1), 4),
               ((160, 264, 520), (128, 128, 32), (2, 2), 4), ((136, 136, 328), (128, 128, 32), (2, 2), 2)]


@pytest.mark.parametrize("shape,block,warps,stages", CARRY_CASES, ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else str(v))
@pytest.mark.parametrize("spread", [True, False])
def test_carried_fragments_keep_the_numbers_in_ptx(shape, block, warps, stages, spread):
    """The same in the PTX emulator (each warp alone through a barrier interval, copies
    landing as late as allowed), on ragged shapes: the fragments a trip loads for the next,
    and the peeled tile that takes the last trip's, match float64."""
    m, n, k = shape
    passes = sm80_gemm_pipeline(block, warps, stages, unroll=2, to="reg")
    passes = re.sub(r",reg-prefetch(\{[^}]*\})?", "", passes).replace(",reg-carry-fragments", "")
    passes += f",reg-carry-fragments,reg-prefetch{{spread={str(spread).lower()}}}"
    assert _carried(run_pipeline(gemm(m, n, k, "bf16"), passes)) == ["a", "b"]
    module = run_pipeline(gemm(m, n, k, "bf16"), passes + ",reg-to-ptx")
    rng = np.random.default_rng(11)
    half = HALF["bf16"]
    a, b = rng.standard_normal((m, k)).astype(half), rng.standard_normal((k, n)).astype(half)
    out = emulated(module, [a, b], (m, n))
    assert reference.relative_error(out, reference.matmul(a, b)) <= reference.TOLERANCE["bf16"]


@pytest.mark.parametrize("m,layout", [(256, "auto"), (200, "auto"), (200, "pad8")])
def test_napkin_sm80_lowers_every_plain_gemm_op_by_op(m, layout):
    """napkin-sm80 unrolls, carries and prefetches a plain GEMM's loop, whether its tiles
    divide its axes or not, on swizzled or padded stages, and the PTX keeps the numbers."""
    from napkin_ir.passmanager import spec
    from napkin_ir.pipelines import NapkinSm80Pass
    from napkin_ir.registry import make_context
    from xdsl.parser import Parser

    text = gemm(m, 256, 256, "bf16")
    chosen = spec(NapkinSm80Pass(layout=layout).passes(Parser(make_context(), text).parse_module()))
    assert "smem-unroll-stages" in chosen and "reg-carry-fragments" in chosen and "reg-prefetch" in chosen, chosen
    rng = np.random.default_rng(13)
    half = HALF["bf16"]
    a, b = rng.standard_normal((m, 256)).astype(half), rng.standard_normal((256, 256)).astype(half)
    (out,) = _emulate_named(text, f"napkin-sm80{{layout={layout}}}", [a, b], [np.full((m, 256), np.nan, half)])
    assert reference.relative_error(out, reference.matmul(a, b)) <= reference.TOLERANCE["bf16"]


def test_napkin_sm80_takes_a_tile_longer_than_its_axis():
    """A 128-row tile on 100 rows: the copies zero-fill the rows past the edge, the stores
    skip them."""
    rng = np.random.default_rng(17)
    half = HALF["bf16"]
    a, b = rng.standard_normal((100, 64)).astype(half), rng.standard_normal((64, 136)).astype(half)
    (out,) = _emulate_named(gemm(100, 136, 64, "bf16"), 'napkin-sm80{block="128,64,16" warps="2,2"}', [a, b],
                            [np.full((100, 136), np.nan, half)])
    assert np.isfinite(out.astype(np.float64)).all(), "some output was not written"
    assert reference.relative_error(out, reference.matmul(a, b)) <= reference.TOLERANCE["bf16"]
