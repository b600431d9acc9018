"""research/block_trace.py's probe: the kernels it times must still assemble, take one more
parameter, and store the end time on every path out."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from napkin_ir.attention_diagrams import attention_diagram

from napkin_ir.compiler import compile_attention
from napkin_ir.diagrams import gemm
from napkin_ir.model.ptxas import find_ptxas
from napkin_ir.passmanager import compile_to_ptx
from napkin_ir.pipelines import sm80_gemm_pipeline, sm90_gemm_pipeline

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # research/
import block_trace  # noqa: E402


def _kernels() -> list[tuple[str, str, str]]:
    sm80 = compile_to_ptx(gemm(512, 384, 256, "bf16"), sm80_gemm_pipeline((128, 128, 32), (2, 2), 3))
    sm90 = compile_to_ptx(gemm(512, 384, 256, "bf16"), sm90_gemm_pipeline((128, 256, 64), 4, group=8))
    attn, cfg = compile_attention(attention_diagram("softmax", 1, 2, 256, 128, "bf16"), block=128, stream=64, warps=8,
                                  stages=3, q_in_registers=True, blocks_per_sm=1)
    return [("sm80", sm80, "matmul"), ("sm90", sm90, "matmul"), ("attention", attn, cfg["name"])]


@pytest.mark.parametrize("which,ptx,name", _kernels(), ids=["sm80", "sm90", "attention"])
def test_the_block_timer_keeps_the_kernel_whole(which, ptx, name, tmp_path):
    timed = block_trace.instrument(ptx, name)
    params = lambda text: re.search(rf"\.entry {name}\((.*?)\)", text, re.S).group(1).count(".param")  # noqa: E731
    assert params(timed) == params(ptx) + 1
    assert f".param .u64 {block_trace.TRACE_PARAM}" in timed
    # the start time once, the end time before each way out
    rets = len(re.findall(r"(?m)^\t(?:@!?%\w+ )?ret;", ptx))
    assert rets >= 1
    assert timed.count("%globaltimer") == 1 + rets
    assert len(re.findall(r"st\.global\.u64 \[%ntk1\+8\], %ntk4;\n\t(?:@!?%\w+ )?ret;", timed)) == rets
    exe = find_ptxas()
    if exe is None:
        pytest.skip("ptxas not installed")
    (tmp_path / "timed.ptx").write_text(timed)
    done = subprocess.run([exe, "-arch=sm_90a", str(tmp_path / "timed.ptx"), "-o", str(tmp_path / "timed.cubin")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_missing_entry_is_named():
    with pytest.raises(ValueError, match="no .entry nothing"):
        block_trace.instrument(".visible .entry matmul(\n\t.param .u64 a\n)\n{\n\tret;\n}\n", "nothing")


def test_the_gaps_between_starts_on_an_sm_show_the_stagger():
    import numpy as np

    # two SMs, blocks of 10 time units: SM 0 staggers its two slots (starts 5 apart), SM 1
    # runs one block at a time (starts 10 apart); rows (start, end, SM, unused)
    staggered = [(t, t + 10, 0, 0) for t in (0, 5, 10, 15)]
    serial = [(t, t + 10, 1, 0) for t in (0, 10, 20)]
    gaps = block_trace.sm_gaps(np.array(staggered + serial))
    assert sorted(gaps.tolist()) == [0.5, 0.5, 0.5, 1.0, 1.0]
    # two blocks on each SM at first
    together = np.array([(t, t + 10, q, 0) for q in (0, 1) for t in (0, 0, 10, 10)])
    assert "2 an SM at first" in block_trace.describe(together)
