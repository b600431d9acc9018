"""research/half_kv.py's probe: halving a kernel's K/V fills drops one load of each fill
and halves its byte count, leaves Q's loads alone, and still assembles."""

import subprocess
import sys
from pathlib import Path

import pytest

import napkin_ir
from napkin_ir.attention_diagrams import attention_diagram
from napkin_ir.model.ptxas import find_ptxas

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # research/
import half_kv  # noqa: E402


@pytest.mark.parametrize("kind", ["softmax", "spherical"])
def test_each_kv_fill_keeps_its_first_panel(kind, tmp_path):
    kern = napkin_ir.compile(attention_diagram(kind, 1, 2, 512, 128, "bf16"), target="sm90", cache=False)
    half, dropped = half_kv.halve_kv(kern.ptx, kern.name)
    loads = lambda ptx: [m.group(1) for m in map(half_kv.LOAD.search, ptx.split("\n")) if m]  # noqa: E731
    before, after = loads(kern.ptx), loads(half)
    assert dropped >= 2 and len(before) - len(after) == dropped
    q_map = before[0]  # Q's tile is the first loaded; each of its fills keeps both panels
    assert after.count(q_map) == before.count(q_map)
    assert half.count("mov.u32") == kern.ptx.count("mov.u32")
    assert half.count(", 16384;") - kern.ptx.count(", 16384;") == dropped  # 32 KB fills now expect 16 KB
    ptxas = find_ptxas()
    if ptxas is None:
        pytest.skip("ptxas not found")
    src = tmp_path / "half.ptx"
    src.write_text(half)
    run = subprocess.run([ptxas, "-arch=sm_90a", str(src), "-o", str(tmp_path / "half.cubin")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_a_kernel_without_kv_maps_is_refused():
    with pytest.raises(ValueError, match="no tensor map"):
        half_kv.halve_kv(".entry matmul()\n{\n}\n", "matmul")
