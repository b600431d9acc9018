"""A contraction split over the grid (`split=S`): each block streams its part of k and adds
its sum into the f32 output. The numbers survive every level: the hbm and reg levels of
both pipelines on the CPU interpreter, napkin-sm80's PTX in the warp-level emulator (the
output zeroed as the launch contract says), against float64, on ragged shapes."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from napkin_ir import reference
from napkin_ir.diagrams import gemm
from napkin_ir.interpreters.ptx import HALF, Memory, run_kernel
from napkin_ir.interpreters.run import find_entry
from napkin_ir.passmanager import run_pipeline
from napkin_ir.pipelines import NapkinSm80Pass, NapkinSm90Pass, spec
from napkin_ir.runtime.contract import launch_contract

CASES = [(136, 72, 520, 3), (64, 64, 1000, 4), (200, 128, 192, 2)]  # m, n, k (ragged), parts


def _inputs(m: int, n: int, k: int) -> list[np.ndarray]:
    rng = np.random.default_rng(m + n + k)
    return [rng.standard_normal(s).astype(HALF["bf16"]) for s in ((m, k), (k, n))]


def _want(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return reference.matmul(a.astype(np.float64), b.astype(np.float64))


@pytest.mark.parametrize("pipeline", [NapkinSm80Pass, NapkinSm90Pass])
@pytest.mark.parametrize("m, n, k, split", CASES)
def test_each_level_adds_up_the_parts(pipeline, m, n, k, split):
    text = gemm(m, n, k, "bf16", out_dtype="f32")
    block = "64,64,32" if pipeline is NapkinSm80Pass else "64,64,64"
    plan = pipeline(split=split, block=block).plan(run_pipeline(text))
    a, b = _inputs(m, n, k)
    for level in ("hbm", "reg"):
        got = find_entry(run_pipeline(text, spec(plan.passes(level)))).run([a, b])[0]
        assert not np.isnan(got).any()
        assert reference.relative_error(got, _want(a, b)) <= 1e-5, level


@pytest.mark.parametrize("m, n, k, split", CASES)
def test_the_sm80_kernel_adds_its_parts_in_the_emulator(m, n, k, split):
    module = run_pipeline(gemm(m, n, k, "bf16", out_dtype="f32"), f'napkin-sm80{{split={split} block="64,64,32"}}')
    contract = launch_contract(module)
    assert [p.arg for p in contract.params if p.role == "accumulate"] == ["out"]
    assert contract.grid[2] == split  # the parts of k on %ctaid.z
    a, b = _inputs(m, n, k)
    out = np.zeros((m, n), np.float32)  # the launch zeroes an accumulated output
    run_kernel(module, [a, b, out], lazy=True, reverse=True)
    assert reference.relative_error(out, _want(a, b)) <= 1e-5


def test_a_split_that_leaves_a_part_empty_is_refused():
    with pytest.raises(Exception, match="more parts than axis 'k' has stream tiles"):
        run_pipeline(gemm(64, 64, 96, "bf16", out_dtype="f32"), 'napkin-sm80{split=4 block="64,64,32"}')


def test_an_unsplit_kernel_zeroes_nothing():
    module: ModuleOp = run_pipeline(gemm(64, 64, 96, "bf16", out_dtype="f32"), "napkin-sm80")
    assert "accumulate" not in {p.role for p in launch_contract(module).params}


@pytest.mark.parametrize("m, n, k, split", CASES)
def test_ordered_parts_write_then_add_in_the_emulator(m, n, k, split):
    """deterministic=true: the first part of each tile writes (into a NaN-poisoned output,
    which nothing zeroes), each next part adds when its turn comes, and the last passes the
    turn back to zero: a second launch gives the same bits."""
    module = run_pipeline(gemm(m, n, k, "bf16", out_dtype="f32"), f'napkin-sm80{{split={split} block="64,64,32" deterministic=true}}')
    assert "accumulate" not in {p.role for p in launch_contract(module).params}
    a, b = _inputs(m, n, k)
    mem = Memory()
    runs = []
    for _ in range(2):
        out = np.full((m, n), np.nan, np.float32)
        run_kernel(module, [a, b, out], lazy=True, reverse=True, mem=mem)
        runs.append(out)
    assert reference.relative_error(runs[0], _want(a, b)) <= 1e-5
    np.testing.assert_array_equal(runs[0], runs[1])


def test_ordered_sums_need_the_split_launched_last():
    from xdsl.utils.exceptions import PassFailedException

    text = gemm(64, 64, 256, "bf16", out_dtype="f32")
    with pytest.raises(PassFailedException, match=r"its split axes \['k'\] must be the grid's last"):
        run_pipeline(text, 'ncd-relabel{grid="k:128,m:32,n:32" stream="k:32"},ncd-to-hbm,hbm-launch{ordered=true}')
    with pytest.raises(PassFailedException, match="needs a plain launch"):
        run_pipeline(text, 'ncd-relabel{grid="m:32,n:32,k:128" stream="k:32"},ncd-to-hbm,hbm-launch{ordered=true order="last"}')


@pytest.mark.parametrize("m, n, k, split", CASES)
def test_a_bf16_output_is_rounded_by_the_last_part(m, n, k, split):
    """A bf16 output split over the grid: the parts sum in f32 (the hbm and reg levels of both
    pipelines on the interpreter), and in napkin-sm80's PTX in the emulator they take turns
    in the kernel's f32 scratch, the last rounding the whole sum into the output (NaN-poisoned,
    nothing zeroed), the same bits on a second launch; equal to float64's sum rounded once."""
    text = gemm(m, n, k, "bf16")
    a, b = _inputs(m, n, k)
    want = _want(a, b)
    once = want.astype(np.float32).astype(HALF["bf16"]).astype(np.float64)  # the sum rounded to bf16 once
    for pipeline in (NapkinSm80Pass, NapkinSm90Pass):
        block = "64,64,32" if pipeline is NapkinSm80Pass else "64,64,64"
        plan = pipeline(split=split, block=block).plan(run_pipeline(text))
        for level in ("hbm", "reg"):
            got = find_entry(run_pipeline(text, spec(plan.passes(level)))).run([a, b])[0]
            assert reference.relative_error(got, once) <= 1e-3 and reference.relative_error(got, want) <= 8e-3, (pipeline.name, level)
    module = run_pipeline(text, f'napkin-sm80{{split={split} block="64,64,32"}}')
    assert "accumulate" not in {p.role for p in launch_contract(module).params}  # nothing zeroed
    mem = Memory()
    runs = []
    for _ in range(2):
        out = np.full((m, n), np.nan, HALF["bf16"])
        run_kernel(module, [a, b, out], lazy=True, reverse=True, mem=mem)
        runs.append(out.astype(np.float64))
    assert reference.relative_error(runs[0], once) <= 1e-3
    np.testing.assert_array_equal(runs[0], runs[1])


@pytest.mark.parametrize("parts", [2, 4])
def test_the_last_part_loads_every_parts_values_together(parts):
    """The last part to finish reads the parts' f32 values back LOADS_IN_FLIGHT pairs at a
    time, every part's for a few pairs, before it adds any: its reads wait on the L2's
    latency, not on each other (napkin-sm90's PTX, a 128 x 128 tile of two warpgroups)."""
    from napkin_ir import compile as compile_kernel
    from napkin_ir.lowering.ptx_rules.stores import LOADS_IN_FLIGHT

    lines = compile_kernel(gemm(256, 512, 1024, "bf16"), "sm90", block=(128, 128, 64), split=parts, cache=False).ptx.splitlines()
    start = next(i for i, line in enumerate(lines) if "atom" in line and "acq_rel" in line)  # the count of arrivals
    runs, loads = [], 0
    for line in lines[start:]:
        if "ld.global.cg.v2.f32" in line:
            loads += 1
        elif "add.f32" in line and loads:
            runs.append(loads)
            loads = 0
    assert runs and sum(runs) == 32 * parts  # 32 pairs a thread, from each part
    assert max(runs) == LOADS_IN_FLIGHT == 32


@pytest.mark.parametrize("m, n, k, split", CASES)
def test_parts_in_a_cluster_add_up_at_each_level(m, n, k, split):
    """napkin-sm90{split=S cluster=S}: the plan's levels (hbm, reg) on the interpreter sum the
    parts of a bf16 output in f32 and round once, as without the cluster."""
    text = gemm(m, n, k, "bf16")
    a, b = _inputs(m, n, k)
    want = _want(a, b)
    once = want.astype(np.float32).astype(HALF["bf16"]).astype(np.float64)
    plan = NapkinSm90Pass(split=split, cluster=split, block="64,64,64").plan(run_pipeline(text))
    assert plan.launch.cluster == split
    for level in ("hbm", "reg"):
        module = run_pipeline(text, spec(plan.passes(level)))
        kernel = next(o for o in module.walk() if o.name == "hbm.kernel")
        assert kernel.cluster_blocks == split
        got = find_entry(module).run([a, b])[0]
        assert reference.relative_error(got, once) <= 1e-3 and reference.relative_error(got, want) <= 8e-3, level


@pytest.mark.parametrize("parts, rows", [(2, 64), (3, 128), (4, 64)])
def test_each_pair_goes_to_the_part_that_adds_it_once(parts, rows):
    """The cluster's exchange in napkin-sm90's PTX: each of a thread's pairs of f32 sums is
    sent once (guarded: not to the sender itself) to a slot of the part that adds it, the
    slots of one receiver side by side; that part reads each other part's pair once, adds
    the parts in order and stores each pair once; the cluster meets at the start, at the
    exchange and at the producers' exit, and no global scratch or counter is left."""
    import re

    from napkin_ir import compile as compile_kernel

    kernel = compile_kernel(gemm(256, 256, 2048, "bf16"), "sm90", block=(rows, 128, 64), split=parts, cluster=parts, cache=False)
    ptx = kernel.ptx
    threads = 128 * (rows // 64)
    pairs = rows * 128 // 2 // threads
    share = -(-pairs // parts)
    sends = re.findall(r"@%p\d+ st\.shared::cluster\.v2\.f32 \[(%r\d+)(?:\+(\d+))?\]", ptx)
    reads = re.findall(r"@%p\d+ ld\.shared\.v2\.f32 \{%f\d+, %f\d+\}, \[%r\d+(?:\+(\d+))?\]", ptx)
    assert len(sends) == pairs and len(set(sends)) == pairs  # each pair to its own place
    assert len(reads) == pairs * (parts - 1) and len(set(reads)) == share * (parts - 1)  # each slot of each sender read once
    assert {int(r or 0) for r in reads} == {s * share * threads * 8 + q * threads * 8 for s in range(parts - 1) for q in range(share)}
    assert ptx.count("mapa.shared::cluster.u32") == parts and ptx.count("cvt.rn.bf16x2.f32") == pairs
    assert ptx.count("barrier.cluster.arrive.release;") == 3 and ptx.count("barrier.cluster.wait.acquire;") == 3
    assert "_parts" not in ptx and "atom." not in ptx and "fence.acq_rel.gpu" not in ptx
    assert kernel.contract.cluster == (1, 1, parts) and kernel.contract.grid[2] == parts


def test_a_cluster_of_parts_is_refused_for_a_batched_product_by_name():
    """A batched product splits (its parts through the scratch), but its parts do not form
    clusters (the split's launch axis is shared with a tile axis): refused, naming the
    split and the batch axes."""
    from napkin_ir import compile as compile_kernel

    kernel = compile_kernel(gemm(64, 256, 2048, batch=2), "sm90", block=(64, 128, 64), split=2, cache=False)
    assert kernel.contract.cluster is None and kernel.stateful
    with pytest.raises(Exception, match=r"split=2 with cluster=2 clusters the parts of a 2-D grid's tiles; this one has batch "
                                        r"axes \['b'\]: leave cluster=1"):
        compile_kernel(gemm(64, 256, 2048, batch=2), "sm90", block=(64, 128, 64), split=2, cluster=2, cache=False)
