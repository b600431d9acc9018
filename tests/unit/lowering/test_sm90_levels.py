"""The sm_90a levels keep the numbers, and the interpreters check the mbarrier protocol.

hbm-to-smem{copy=tma} runs its producer role on a thread of its own that meets the
consumers only at mbarriers; smem-to-reg{mma=wgmma} computes each warp's 16 rows with
reg.wgmma. Both must give the hbm kernel's result; broken protocols must be refused.
"""

import re

import numpy as np
import pytest
from xdsl.utils.exceptions import InterpretationError

from napkin_ir import reference
from napkin_ir.diagrams import gemm
from napkin_ir.interpreters.run import find_entry
from napkin_ir.passmanager import run_pipeline

CASES = [  # (m, n, k), (block m, n, k), stages: ragged M, N and K, more tiles than stages
    ((200, 264, 120), (128, 256, 64), 2),
    ((130, 136, 200), (64, 64, 64), 3),
    ((256, 128, 320), (128, 64, 64), 2),
    ((70, 64, 64), (64, 64, 64), 4),
    ((16, 256, 128), (64, 64, 64), 2),  # a tile past M's end (a decode's rows): zeros loaded, nothing stored there
    ((40, 96, 128), (64, 128, 64), 2),  # past M's and N's
]


def _labels(block) -> str:
    bm, bn, bk = block
    return f'ncd-relabel{{grid="m:{bm},n:{bn}" stream="k:{bk}"}},ncd-to-hbm'


@pytest.mark.parametrize("store", ["direct", "tma"])
@pytest.mark.parametrize("shape, block, stages", CASES)
def test_tma_and_wgmma_levels_match_the_hbm_kernel(shape, block, stages, store):
    text = gemm(*shape, "bf16")
    hbm_level = find_entry(run_pipeline(text, _labels(block)))
    inputs = hbm_level.random_inputs(sum(shape))
    want = hbm_level.run(inputs)[0]
    tma = f"{_labels(block)},hbm-to-smem{{stages={stages} copy=tma store={store}}}"
    smem_out = find_entry(run_pipeline(text, tma)).run(inputs)[0]
    np.testing.assert_array_equal(smem_out, want)  # the same tiles, summed in the same order
    reg_out = find_entry(run_pipeline(text, f"{tma},smem-to-reg{{mma=wgmma}}")).run(inputs)[0]
    assert not np.isnan(reg_out).any()
    assert reference.relative_error(reg_out, want) < 1e-2  # bf16 outputs, other summation order
    ref = reference.matmul(*(np.asarray(x, np.float64) for x in inputs))
    assert reference.relative_error(reg_out, ref) < 1e-2


def _module_text(stages: int = 2, through: str = "hbm-to-smem") -> str:
    spec = f"{_labels((64, 64, 64))},hbm-to-smem{{stages={stages} copy=tma}}"
    if through == "smem-to-reg":
        spec += ",smem-to-reg{mma=wgmma}"
    return str(run_pipeline(gemm(64, 64, 320, "bf16"), spec))


def test_the_printed_pipeline_runs(run_printed):
    out = run_printed(_module_text())[0]
    assert not np.isnan(out).any()


def test_a_producer_that_does_not_wait_for_a_free_stage_is_refused(run_printed):
    text = _module_text()
    broken = re.sub(r"\n *smem.mbarrier_wait %\d+\[%\d+\] parity %\d+ : !smem.mbarrier<[^>]*>(?=\n *smem.arrive_expect)", "", text, count=1)
    assert broken != text
    with pytest.raises(InterpretationError, match="still hold it"):
        run_printed(broken)


def test_a_wrong_parity_is_a_deadlock(run_printed):
    text = _module_text()
    # the consumers wait for the parity the producer waits for: phase 0 is never awaited right
    broken = re.sub(r"(smem.mbarrier_wait %\d+\[%(\d+)\] parity )%(\d+)( : [^\n]*\n(?:(?!scf.yield)[^\n]*\n)*? *%\w+ = smem.read)",
                    lambda m: m.group(1) + "%c0" + m.group(4), text, count=1)
    assert broken != text
    with pytest.raises(InterpretationError, match="deadlock|parity"):
        run_printed(broken)


def test_bytes_not_announced_are_refused(run_printed):
    text = _module_text()
    broken = re.sub(r"bytes = \d+", "bytes = 8192", text, count=1)
    assert broken != text
    with pytest.raises(InterpretationError, match="announced"):
        run_printed(broken)


def test_releasing_a_stage_a_wgmma_still_reads_is_refused(run_printed):
    text = _module_text(through="smem-to-reg")
    broken = text.replace("reg.wgmma_wait {pending = 1 : i32}", "reg.wgmma_wait {pending = 2 : i32}")
    assert broken != text
    with pytest.raises(InterpretationError, match="wgmma still reads"):
        run_printed(broken)
    # released from the first iteration on: the next stage is freed before it is read (from
    # the kernel whose waits are right, so that this is the only fault the warps may meet).
    # Which role meets it first is the threads' race: the consumers reading a stage after
    # they released it, or the producer copying into it while they still hold it (CI, 2026-11-29)
    broken = re.sub(r"arith.cmpi ne, %k0, %c0", "arith.cmpi eq, %k0, %k0", text)
    assert broken != text
    with pytest.raises(InterpretationError, match="after the consumers released it|while the consumers still hold it"):
        run_printed(broken)


@pytest.mark.parametrize("through", ["hbm-to-smem", "smem-to-reg"])
def test_writing_a_stage_a_tma_store_still_reads_is_refused(through, run_printed):
    spec = f"{_labels((64, 256, 64))},hbm-to-smem{{stages=2 copy=tma store=tma}}"
    if through == "smem-to-reg":
        spec += ",smem-to-reg{mma=wgmma}"
    text = str(run_pipeline(gemm(64, 256, 128, "bf16"), spec))
    assert text.count("smem.tma_store_wait {pending = 1 : i32}") == 4  # one per 64-column panel, two stages
    run_printed(text)  # as lowered, every write finds its stage retired
    # drop the third wait: panel 2 goes into stage 0 while panel 0's store may still read it
    waits = [m.start() for m in re.finditer(r"\n *smem.tma_store_wait \{pending = 1 : i32\}", text)]
    end = text.index("\n", waits[2] + 1)
    broken = text[: waits[2]] + text[end:]
    with pytest.raises(InterpretationError, match="TMA store still reads"):
        run_printed(broken)
