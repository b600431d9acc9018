"""docs/launch.md's program launches kernels from the .ptx and .json files napkin-opt wrote,
with no napkin-ir in the launch: GEMMs (sm_80; sm_90a with TMA, a persistent grid, a
cluster) and attention, on a non-default stream, against torch on fresh random inputs."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]


def _program():
    spec = importlib.util.spec_from_file_location("launch_from_files", ROOT / "examples" / "launch_from_files.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _files(tmp_path: Path, text: str, pipeline: str) -> tuple[Path, Path]:
    source, ptx, contract = tmp_path / "k.mlir", tmp_path / "k.ptx", tmp_path / "k.json"
    source.write_text(text)
    subprocess.run([sys.executable, "-m", "napkin_ir.cli.opt", str(source), "-p", pipeline, "-t", "ptx", "-o", str(ptx),
                    "--launch-json", str(contract)], check=True)
    return ptx, contract


@pytest.mark.parametrize("pipeline, sm90", [("napkin-sm80", False), ("napkin-sm90", True), ("napkin-sm90{cluster=2}", True)])
def test_gemm_from_files(tmp_path, pipeline, sm90):
    torch = pytest.importorskip("torch")
    if sm90 and torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a needs a Hopper GPU")
    from napkin_ir.diagrams import gemm

    m, n, k = 1000, 744, 520
    ptx, contract = _files(tmp_path, gemm(m, n, k), pipeline)
    torch.cuda.init()
    a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    b = torch.randn(k, n, device="cuda").to(torch.bfloat16)
    out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        _program().launch(str(ptx), str(contract), {"a": a.data_ptr(), "b": b.data_ptr(), "out": out.data_ptr()},
                          stream=stream.cuda_stream)
    stream.synchronize()
    ref = a.double() @ b.double()
    assert not out.isnan().any()
    assert ((out.double() - ref).norm() / ref.norm()).item() < 1e-2


def test_attention_from_files(tmp_path):
    torch = pytest.importorskip("torch")
    from napkin_ir.attention_diagrams import attention_diagram

    b, h, n, d = 2, 4, 300, 64
    ptx, contract = _files(tmp_path, attention_diagram("causal", b, h, n, d), "napkin-sm80")
    q, k, v = (torch.randn(b, h, n, d, device="cuda").to(torch.bfloat16) for _ in range(3))
    out = torch.full_like(q, float("nan"))
    _program().launch(str(ptx), str(contract), {"q": q.data_ptr(), "k": k.data_ptr(), "v": v.data_ptr(), "out": out.data_ptr()},
                      stream=torch.cuda.current_stream().cuda_stream)
    ref = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True)
    assert ((out.double() - ref).norm() / ref.norm()).item() < 2e-2


def test_the_program_runs_alone(tmp_path):
    from napkin_ir.diagrams import gemm

    ptx, contract = _files(tmp_path, gemm(512, 384, 256), "napkin-sm80")
    run = subprocess.run([sys.executable, str(ROOT / "examples" / "launch_from_files.py"), str(ptx), str(contract)],
                         capture_output=True, text=True, check=True)
    assert run.stdout.startswith("out: bf16[512, 384] sum of |x| = ")
    assert float(run.stdout.split("=")[1]) > 0
