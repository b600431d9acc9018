"""A contraction shorter than a stream tile (K of 8 to 40, 16-byte rows): the one tile's copies
read zeros past K's end, on both pipelines, with the tiles `napkin_ir.torch.matmul` takes
(`gemm_candidates`): the hbm and reg levels on the interpreter, napkin-sm80's PTX in the
warp-level emulator, against float64."""

from __future__ import annotations

import numpy as np
import pytest

from napkin_ir import reference
from napkin_ir.diagrams import gemm
from napkin_ir.interpreters.ptx import HALF, run_kernel
from napkin_ir.interpreters.run import find_entry
from napkin_ir.passmanager import run_pipeline
from napkin_ir.pipelines import NapkinSm80Pass, NapkinSm90Pass, spec
from napkin_ir.plan.recipes.product_targets import gemm_candidates

SHAPES = [(7, 256, 8), (1, 16, 8), (100, 128, 40), (3, 24, 24)]


def _inputs(m: int, n: int, k: int) -> list[np.ndarray]:
    rng = np.random.default_rng(m * n + k)
    return [rng.standard_normal(s).astype(HALF["bf16"]) for s in ((m, k), (k, n))]


def _options(m: int, n: int, k: int, target: str) -> dict:
    cap = (9, 0) if target == "sm90" else (8, 0)
    options = next(o for t, o in gemm_candidates(m, n, k, cap) if t == target)
    return {key: (",".join(map(str, v)) if isinstance(v, tuple) else v) for key, v in options.items()}


@pytest.mark.parametrize("m, n, k", SHAPES)
@pytest.mark.parametrize("pipeline", [NapkinSm80Pass, NapkinSm90Pass])
def test_a_short_contraction_keeps_the_numbers(pipeline, m, n, k):
    text = gemm(m, n, k, "bf16")
    plan = pipeline(**_options(m, n, k, "sm80" if pipeline is NapkinSm80Pass else "sm90")).plan(run_pipeline(text))
    a, b = _inputs(m, n, k)
    want = reference.matmul(a.astype(np.float64), b.astype(np.float64))
    for level in ("hbm", "reg"):
        got = find_entry(run_pipeline(text, spec(plan.passes(level)))).run([a, b])[0]
        assert not np.isnan(got).any() and reference.relative_error(got, want) <= reference.TOLERANCE["bf16"], level


@pytest.mark.parametrize("m, n, k", SHAPES)
def test_the_sm80_kernel_of_a_short_contraction_in_the_emulator(m, n, k):
    options = _options(m, n, k, "sm80")
    module = run_pipeline(gemm(m, n, k, "bf16"), "napkin-sm80{" + " ".join(f'{key}="{v}"' for key, v in options.items()) + "}")
    a, b = _inputs(m, n, k)
    out = np.full((m, n), np.nan, HALF["bf16"])
    run_kernel(module, [a, b, out], lazy=True, reverse=True)
    want = reference.matmul(a.astype(np.float64), b.astype(np.float64))
    assert reference.relative_error(out.astype(np.float64), want) <= reference.TOLERANCE["bf16"]


def test_every_shape_with_16_byte_rows_has_candidates_and_a_shorter_row_is_refused_by_name():
    """K and N of 8 (16-byte rows) are offered on both targets; K of 4 is refused for its rows."""
    assert [t for t, _ in gemm_candidates(1, 8, 8, (9, 0))] == ["sm90", "sm80"]
    assert [t for t, _ in gemm_candidates(1, 8, 8, (8, 0))] == ["sm80"]
    import napkin_ir.torch as nt

    with pytest.raises(ValueError, match="must be a multiple of 8 elements"):
        nt.matmul_kernel(3, 8, 4, "bf16", (8, 0))
