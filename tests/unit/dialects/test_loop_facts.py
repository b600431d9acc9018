"""The typed loop facts (napkin_ir/dialects/loop_facts.py): the passes' readers see what the
writers wrote, and a rewrite that drops or garbles a fact the IR still needs is refused by
the kernel's verifier instead of silently changing what the passes below do."""

from __future__ import annotations

import pytest
from xdsl.dialects import scf
from xdsl.dialects.builtin import IntegerAttr, StringAttr, i32
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from napkin_ir import registry
from napkin_ir.diagrams import gemm
from napkin_ir.dialects import loop_facts
from napkin_ir.dialects.loop_facts import CopyEngine, PipelineAttr, StreamAttr
from napkin_ir.passmanager import run_pipeline

LABELS = 'ncd-relabel{grid="m:32,n:32" stream="k:16"},ncd-to-hbm'


def _loop(module) -> scf.ForOp:
    (loop,) = loop_facts.pipelined_loops(module) or loop_facts.stream_loops(module)
    return loop


def test_each_pass_writes_its_fact_and_the_readers_see_it():
    text = gemm(64, 64, 128, "bf16")
    hbm_level = run_pipeline(text, LABELS)
    loop = _loop(hbm_level)
    assert (loop_facts.stream_axis(loop), loop_facts.stages(loop), loop_facts.copy_engine(loop)) == ("k", None, None)

    smem_level = run_pipeline(text, f"{LABELS},hbm-to-smem{{stages=3}}")
    loop = _loop(smem_level)
    assert (loop_facts.stream_axis(loop), loop_facts.stages(loop), loop_facts.copy_engine(loop), loop_facts.unrolled(loop)) == \
        ("k", 3, CopyEngine.CP_ASYNC, None)

    unrolled = run_pipeline(text, f'{LABELS},hbm-to-smem{{stages=3}},smem-to-reg{{warps="m:1,n:1"}},smem-unroll-stages')
    loop = _loop(unrolled)
    assert (loop_facts.stages(loop), loop_facts.unrolled(loop), loop_facts.overlapped(loop)) == (3, 3, False)


def test_a_rebuilt_loop_that_lost_its_pipeline_is_refused():
    module = run_pipeline(gemm(64, 64, 128, "bf16"), f"{LABELS},hbm-to-smem{{stages=3}}")
    loop = _loop(module)
    module.verify()
    # a generic rewrite that rebuilds the loop from its operands and body but not its attributes
    rebuilt = scf.ForOp(loop.lb, loop.ub, loop.step, list(loop.iter_args), loop.detach_region(loop.body))
    rebuilt.attributes["hbm.stream"] = loop.attributes["hbm.stream"]
    loop.parent_block().insert_op_before(rebuilt, loop)  # type: ignore[union-attr]
    for old, new in zip(loop.results, rebuilt.results):
        old.replace_all_uses_with(new)
    loop.detach()
    loop.erase()
    with pytest.raises(VerifyException, match=r"the scf.for %k0 streaming 'k' reads a 3-stage shared-memory buffer \(smem.read\) "
                                              r"but has no smem.pipeline"):
        module.verify()


@pytest.mark.parametrize("key, value, expected", [
    ("hbm.stream", StringAttr("k"), r"hbm.stream must be #hbm.stream<axis>, got \"k\""),
    ("smem.pipeline", IntegerAttr(3, i32), r"smem.pipeline must be #smem.pipeline<stages=N, copy=cp_async\|tma>, got 3 : i32"),
    ("smem.stages", IntegerAttr(3, i32), r"smem.stages = 3 : i32 is no longer a loop fact"),
])
def test_a_garbled_fact_is_refused_by_the_verifier_and_the_readers(key, value, expected):
    module = run_pipeline(gemm(64, 64, 128, "bf16"), f"{LABELS},hbm-to-smem{{stages=3}}")
    loop = _loop(module)
    loop.attributes[key] = value
    with pytest.raises(VerifyException, match=expected):
        module.verify()
    if key != "smem.stages":
        with pytest.raises(VerifyException, match=expected):
            loop_facts.stream_axis(loop) if key == "hbm.stream" else loop_facts.stages(loop)


def test_a_pipeline_through_other_stages_than_its_buffers_is_refused():
    module = run_pipeline(gemm(64, 64, 128, "bf16"), f"{LABELS},hbm-to-smem{{stages=3}}")
    loop_facts.set_pipeline(_loop(module), 2, CopyEngine.CP_ASYNC)
    with pytest.raises(VerifyException, match="pipelined through 2 stages .* but reads a 3-stage buffer"):
        module.verify()


@pytest.mark.parametrize("attr", [StreamAttr("x_1"), PipelineAttr(3, CopyEngine.CP_ASYNC), PipelineAttr(2, CopyEngine.TMA, 4),
                                  PipelineAttr(16, CopyEngine.TMA), loop_facts.CopyEngineAttr(CopyEngine.TMA)])
def test_the_facts_print_and_parse_back(attr):
    assert Parser(registry.make_context(), str(attr)).parse_attribute() == attr


@pytest.mark.parametrize("stages, unrolled", [(0, 0), (17, 0), (3, 4), (2, -2)])
def test_pipeline_ranges(stages, unrolled):
    with pytest.raises(VerifyException):
        PipelineAttr(stages, CopyEngine.CP_ASYNC, unrolled)
