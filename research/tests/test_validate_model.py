"""research/validate_model.py's choice of the model's pick among measured configurations: the
fastest prediction, near-ties broken as autotile breaks them."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # research/
import validate_model  # noqa: E402


@pytest.mark.parametrize("label,stages", [("128x256x32 w2x4 s3", 3), ("128x256x64 s4", 4), ("b128s64w8st3-qsmem", 3),
                                          ("b128s64w8st2-x2", 2), ("b64s64w4st2", 2)])
def test_stages_are_read_off_every_family_s_label(label, stages):
    assert validate_model.stages_of(label) == stages


def test_a_label_without_stages_is_refused():
    with pytest.raises(ValueError, match="no stages"):
        validate_model.stages_of("128x256x32 w2x4")


def _row(label, predicted, hbm, measured):
    return dict(label=label, predicted_us=predicted, hbm_bytes=hbm, measured_us=measured)


def test_the_pick_breaks_near_ties_by_hbm_bytes_then_stages():
    # three predicted alike (within 1%): the two of fewer napkin HBM bytes beat the third,
    # and of those the one of more stages; a clearly slower prediction never wins
    rows = [_row("a s3", 430.0, 3.0e9, 630.0), _row("b s4", 431.0, 3.0e9, 587.0), _row("c s5", 432.0, 4.0e9, 500.0),
            _row("d s6", 480.0, 1.0e9, 400.0)]
    assert validate_model.model_pick(rows)["label"] == "b s4"
    # outside the tolerance the faster prediction wins whatever its bytes or stages
    rows[1]["predicted_us"] = 440.0
    assert validate_model.model_pick(rows)["label"] == "a s3"


def test_readings_are_looked_up_by_the_gpu_they_were_taken_on():
    # 4096^3 was read on both GPUs, each its own readings (128x256x64 s4: 186.7 + 26.0 MB on
    # the H100, 186.6 + 28.3 on the H200); a GPU or shape with none recorded gets none
    key = ("gemm sm90", "128x256x64 s4")
    h100, h200 = (validate_model.recorded(hw, (4096, 4096, 4096))[key] for hw in ("h100", "h200"))
    assert h100 == validate_model.NCU_RECORDED_H100[(4096, 4096, 4096)][key]
    assert h200 == validate_model.NCU_RECORDED[(4096, 4096, 4096)][key]
    assert h100 != h200
    assert validate_model.recorded("a100", (4096, 4096, 4096)) == {}
    assert validate_model.recorded("h200", (1, 2, 3)) == {}


def test_grouped_readings_join_the_plain_ones_of_their_gpu_and_shape():
    # the sm_80 kernels in bands of 16 block rows are a family of their own beside the plain
    # ones: 128x128x32 s3 at 8192x8192x2048 read 168.5 + 119.4 MB grouped on the H200
    got = validate_model.recorded("h200", (8192, 8192, 2048))
    assert got[("gemm sm80 g16", "128x128x32 w2x2 s3")] == (168.5, 119.4)
    assert ("gemm sm80", "128x128x32 w2x2 s3") in got
    assert ("gemm sm80 g16", "128x128x32 w2x2 s3") in validate_model.recorded("h100", (8192, 8192, 2048))
    assert not any(f == "gemm sm80 g16" for f, _ in validate_model.recorded("h200", (8192, 8192, 8192)))


def test_sm80_launch_orders_and_the_configuration_filter(monkeypatch):
    monkeypatch.setattr(validate_model, "SM80_GROUPS", (0, 4))
    monkeypatch.setattr(validate_model, "CONFIGS", r"sm80.*128x128x32 w2x2 s3")
    assert [(f, label) for f, label, _ in validate_model.gemm_configs()] == [("sm80", "128x128x32 w2x2 s3"),
                                                                              ("sm80 g4", "128x128x32 w2x2 s3")]
    spec = validate_model.gemm_configs()[1][2]
    assert "hbm-launch{group=4}" in spec
    assert validate_model.parse_groups("0,8,16") == (0, 8, 16)
    with pytest.raises(Exception, match="band heights"):
        validate_model.parse_groups("8,-1")
