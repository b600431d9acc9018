"""`kernel.save` keeps the stem's own dots and writes the pair whole or not at all (issue 37:
`save("k.v2")` wrote `k.ptx`, and a failure could leave half a file)."""

from __future__ import annotations

import errno
import os

import pytest

from napkin_ir.build import compile_kernel
from napkin_ir.diagrams import gemm
from napkin_ir.runtime.compiled import CompiledKernel


@pytest.fixture(scope="module")
def kernel() -> CompiledKernel:
    return compile_kernel(gemm(128, 128, 64, "f16"), "napkin-sm80")


def test_a_dotted_stem_keeps_its_dots(kernel, tmp_path):
    ptx, js = kernel.save(tmp_path / "k.v2")
    assert (ptx.name, js.name) == ("k.v2.ptx", "k.v2.json")
    assert not (tmp_path / "k.ptx").exists()
    again = CompiledKernel.load(tmp_path / "k.v2")
    assert again.ptx == kernel.ptx and again.contract == kernel.contract
    assert kernel.save(tmp_path / "k.ptx")[0].name == "k.ptx"  # a .ptx on the stem is not doubled


def test_a_failed_save_keeps_the_old_pair(kernel, tmp_path, monkeypatch):
    (tmp_path / "k.ptx").write_text("old ptx")
    (tmp_path / "k.json").write_text("old json")
    real = os.replace

    def replace(src, dst, *a, **k):
        if str(dst).endswith(".json"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(src, dst, *a, **k)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(Exception, match="cannot write"):
        kernel.save(tmp_path / "k")
    assert (tmp_path / "k.json").read_text() == "old json"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.json", "k.ptx"]  # no temporary file left
