"""`napkin-opt --dump-pass-pipeline`: the spec it prints reruns to the same PTX."""

from __future__ import annotations

from pathlib import Path

import pytest

from napkin_ir.cli.opt import main

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _opt(capsys, *args: str) -> tuple[str, str]:
    try:
        main(list(args))
    except SystemExit as e:
        assert e.code in (0, None), capsys.readouterr().err
    out = capsys.readouterr()
    return out.out, out.err


@pytest.mark.parametrize("pipeline", ["napkin-sm80", "napkin-sm90"])
@pytest.mark.parametrize("example", ["matmul", "causal_attention", "gqa_attention", "gemm_bias", "row_softmax"])
def test_the_dumped_pipeline_reruns_to_the_same_ptx(capsys, tmp_path, example, pipeline):
    src = str(EXAMPLES / f"{example}.mlir")
    first, second = tmp_path / "first.ptx", tmp_path / "second.ptx"
    _, err = _opt(capsys, src, "-p", pipeline, "-t", "ptx", "--dump-pass-pipeline", "-o", str(first))
    spec = err.strip().splitlines()[-1]
    assert pipeline not in spec and spec.startswith("ncd-relabel{") and spec.split(",")[-1].startswith("reg-to-ptx")
    _opt(capsys, src, "-p", spec, "-t", "ptx", "-o", str(second))
    assert first.read_text() == second.read_text()
