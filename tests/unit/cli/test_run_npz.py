"""`napkin-run --inputs FILE.npz --outputs FILE.npz`: a gradient checked from outside.

The attention example's gradient (`ncd-grad`, f32 copy) runs on arrays given by argument
name and position; its results, saved as result0, result1, ..., match torch.autograd.
"""

from __future__ import annotations

import re
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import torch

from napkin_ir.cli import run as napkin_run
from napkin_ir.passmanager import run_pipeline

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _napkin_run(argv, capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_:
        napkin_run.main([str(a) for a in argv])
    out = capsys.readouterr()
    return exit_.value.code, out.out, out.err


@pytest.fixture(scope="module")
def grad_file(tmp_path_factory) -> Path:
    text = (EXAMPLES / "attention.mlir").read_text().replace(": bf16>", ": f32>")
    for axis, size in (("b", 1), ("h", 2), ("i", 32), ("j", 48), ("d", 16)):  # small, and N_keys != N
        text = re.sub(rf"\b{axis}=\d+", f"{axis}={size}", text)
    path = tmp_path_factory.mktemp("grad") / "attention_grad.mlir"
    path.write_text(str(run_pipeline(text, "ncd-grad")))
    return path


def test_gradient_through_npz_files(grad_file, tmp_path, capsys):
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in ((1, 2, 32, 16), (1, 2, 48, 16), (1, 2, 48, 16)))
    do = rng.standard_normal((1, 2, 32, 16)).astype(np.float32)
    np.savez(tmp_path / "in.npz", q=q, k=k, arg2=v, d_o=do)  # by name, or by position
    code, out, err = _napkin_run([grad_file, "--function", "attention_grad", "--inputs", tmp_path / "in.npz",
                                  "--outputs", tmp_path / "out.npz"], capsys)
    assert code == 0, err
    assert "@attention_grad output #2: <b=1, h=2, j=48, d=16> f32" in out
    with np.load(tmp_path / "out.npz") as saved:
        assert saved.files == ["result0", "result1", "result2"]
        got = [saved[f"result{n}"] for n in range(3)]
    tq, tk, tv = (torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in (q, k, v))
    o = torch.softmax(0.125 * tq @ tk.transpose(-1, -2), dim=-1) @ tv
    want = torch.autograd.grad((o * torch.tensor(do, dtype=torch.float64)).sum(), (tq, tk, tv))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-4, atol=1e-5)


def test_bf16_arrays_are_read(tmp_path, capsys):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((512, 256)).astype(ml_dtypes.bfloat16)  # np.savez keeps it as raw 2-byte values
    np.savez(tmp_path / "in.npz", a=a, b=rng.standard_normal((256, 384)))
    code, out, err = _napkin_run([EXAMPLES / "matmul.mlir", "--inputs", tmp_path / "in.npz", "--check",
                                  "--outputs", tmp_path / "out.npz"], capsys)
    assert code == 0, err
    assert out.splitlines()[-1].endswith(": ok")


@pytest.mark.parametrize("arrays, message", [
    ({"a": np.zeros((512, 256))}, "no array for argument #1 of @matmul (b); the file has a, @matmul takes a (or arg0), b (or arg1)"),
    ({"a": np.zeros((512, 256)), "b": np.zeros((256, 384)), "c": np.zeros(3)}, "c names no argument of @matmul, which takes a (or arg0), b (or arg1)"),
    ({"a": np.zeros((512, 256)), "arg0": np.zeros((512, 256)), "b": np.zeros((256, 384))},
     "argument #0 of @matmul is given twice, as a and arg0"),
    ({"a": np.zeros((256, 512)), "b": np.zeros((256, 384))},
     "a has shape (256, 512), but argument #0 of @matmul is <m=512, k=256>, shape (512, 256)"),
    ({"a": np.zeros((512, 256), complex), "b": np.zeros((256, 384))}, "a holds complex128 values; arguments take real numbers"),
])
def test_bad_inputs_are_one_diagnostic(tmp_path, capsys, arrays, message):
    np.savez(tmp_path / "in.npz", **arrays)
    code, out, err = _napkin_run([EXAMPLES / "matmul.mlir", "--inputs", tmp_path / "in.npz"], capsys)
    assert code == 1
    assert err == f"napkin-run: error: --inputs {tmp_path / 'in.npz'}: {message}\n"


def test_inputs_and_outputs_are_refused_sensibly(tmp_path, capsys):
    (tmp_path / "x.npz").write_text("not an archive")
    code, _, err = _napkin_run([EXAMPLES / "matmul.mlir", "--inputs", tmp_path / "x.npz"], capsys)
    assert code == 1 and "not a numpy .npz archive" in err
    code, _, err = _napkin_run([EXAMPLES / "matmul.mlir", "--inputs", tmp_path / "x.npz", "--random-inputs"], capsys)
    assert code == 1 and "--random-inputs and --inputs both give the inputs; pass one" in err
    code, _, err = _napkin_run([EXAMPLES / "matmul.mlir", "--random-inputs", "--outputs", EXAMPLES / "matmul.mlir"], capsys)
    assert code == 1 and "is the input file" in err
    assert not list(tmp_path.glob("*.tmp*"))
