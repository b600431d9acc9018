"""Sizes no GPU holds are refused up front, naming the size, by the tile search and
napkin-draw (issue 37: they ran out of memory, or ran for ever)."""

from __future__ import annotations

import pytest

from napkin_ir.cli import draw as draw_cli
from napkin_ir.cli import opt as opt_cli
from napkin_ir.diagrams import gemm

HUGE = gemm(2**22, 2**22, 2**20)


def _exit(main, args) -> int:
    try:
        main(args)
    except SystemExit as e:
        return int(e.code or 0)
    return 0


@pytest.mark.parametrize("pipeline", ["napkin-sm90{autotile=true}", "napkin-sm80{autotile=true}", "ncd-autotile"])
def test_autotile_refuses_tensors_larger_than_any_gpu(tmp_path, capsys, pipeline):
    src = tmp_path / "huge.mlir"
    src.write_text(HUGE)
    assert _exit(opt_cli.main, [str(src), "-p", pipeline, "-t", "mlir", "-o", str(tmp_path / "out.mlir")]) == 1
    err = capsys.readouterr().err
    assert "tensors need 48.0 TiB" in err and "internal error" not in err
    assert not (tmp_path / "out.mlir").exists()


def test_napkin_draw_refuses_them_too(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    src = tmp_path / "huge.mlir"
    src.write_text(HUGE)
    assert _exit(draw_cli.main, [str(src), "--level", "hbm", "-o", str(tmp_path / "h.svg")]) == 1
    assert "tensors need 48.0 TiB" in capsys.readouterr().err
