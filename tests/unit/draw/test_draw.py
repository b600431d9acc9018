"""napkin-draw's pictures: well-formed SVG holding every axis label and op of the diagram
(read back as XML: matplotlib keeps text as <text>), at every level, for every example and
for relabelled modules; PNGs that are not blank; the level machinery."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from xdsl.dialects import func

from napkin_ir.dialects import ncd
from napkin_ir.draw.figure import draw_lowered
from napkin_ir.draw.levels import module_level, prepare, run_to_level
from napkin_ir.passes.relabel import function_axes
from napkin_ir.passmanager import run_pipeline

EXAMPLES = Path(__file__).parents[3] / "examples"
NAMES = ("matmul", "attention", "causal_attention", "spherical_attention")
SVG = "{http://www.w3.org/2000/svg}"

GEMM_LABELS = 'ncd-relabel{grid="m:128,n:128" stream="k:32"}'
ATTENTION_LABELS = 'ncd-relabel{grid="b,h,i:128" stream="j:64"}'
GEMM_REG = f'{GEMM_LABELS},ncd-to-hbm,hbm-to-smem{{stages=3}},smem-to-reg{{warps="m:2,n:2"}}'
ATTENTION_REG = f'{ATTENTION_LABELS},ncd-to-hbm,hbm-to-smem{{stages=3 layout=pad8}},smem-to-reg{{warps="i:8"}}'


def labels_for(name: str) -> str:
    return GEMM_LABELS if name == "matmul" else ATTENTION_LABELS


def source(name: str) -> str:
    return (EXAMPLES / f"{name}.mlir").read_text()


def svg_texts(path: Path) -> list[str]:
    """Every <text> of a well-formed SVG (ET.parse raises on a malformed one)."""
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG}svg"
    return ["".join(e.itertext()) for e in root.iter(f"{SVG}text")]


def expected_ops(module) -> list[str]:
    """What the picture names each ncd op, written out here apart from the drawing code."""
    names = []
    for op in module.walk():
        if isinstance(op, ncd.ContractOp):
            names.append("contract")
        elif isinstance(op, ncd.SoftmaxOp):
            names.append("softmax")
        elif isinstance(op, ncd.L2NormOp):
            names.append("L2 norm")
        elif isinstance(op, ncd.MaskOp):
            names.append(f"mask {op.kind.data}")
        elif isinstance(op, ncd.ReduceOp):
            names.append(op.kind.data)
        elif isinstance(op, ncd.MapOp):
            names.append(op.fn.data)
    return names


def the_function(module) -> func.FuncOp:
    (f,) = [op for op in module.walk() if isinstance(op, func.FuncOp) and op.body.blocks]
    return f


def draw(text: str, tmp_path: Path, spec: str | None = None, level: str | None = None, suffix: str = "svg") -> Path:
    out = tmp_path / f"picture.{suffix}"
    draw_lowered(prepare(run_pipeline(text), spec, level), str(out))
    return out


def assert_diagram(texts: list[str], diagram_module) -> None:
    f = the_function(diagram_module)
    for axis, size in function_axes(f).items():
        assert any(t.startswith(f"{axis}={size}") for t in texts), f"no label for axis {axis}={size}"
    for op in expected_ops(diagram_module):
        assert op in texts, f"no box named {op!r}"
    for arg in f.body.block.args:
        assert arg.name_hint in texts


@pytest.mark.parametrize("name", NAMES)
def test_every_example_at_the_ncd_level(name, tmp_path):
    module = run_pipeline(source(name))
    texts = svg_texts(draw(source(name), tmp_path))
    assert_diagram(texts, module)
    assert f"@{name} at the ncd level" in texts
    assert "each op a kernel: bytes · FLOPs · bound" in texts and "fused floor" in texts  # the model's numbers beside it
    assert "Σ" in texts  # a contraction's summed wires meet


@pytest.mark.parametrize("name", NAMES)
def test_relabelled_examples_mark_where_each_axis_lives(name, tmp_path):
    labelled = run_pipeline(source(name), labels_for(name))
    texts = svg_texts(draw(source(name), tmp_path, labels_for(name)))
    assert_diagram(texts, labelled)
    grid, stream = ("m", "n"), "k"
    if name != "matmul":
        grid, stream = ("i",), "j"
    for axis in grid:
        assert any(t.startswith(f"{axis}=") and "grid 128" in t for t in texts)
    assert any(t.startswith(f"{stream}=") and "stream" in t for t in texts)
    assert any(t.startswith("streaming loop:") for t in texts)


@pytest.mark.parametrize("name", NAMES)
def test_the_hbm_level_shows_the_state_a_streamed_reduction_carries(name, tmp_path):
    texts = svg_texts(draw(source(name), tmp_path, f"{labels_for(name)},ncd-to-hbm"))
    assert_diagram(texts, run_pipeline(source(name)))
    assert f"@{name} at the hbm level" in texts
    assert any(t.startswith("streaming loop:") for t in texts)
    (loop,) = [t for t in texts if t.startswith("carries from tile to tile:")]
    carried = {"matmul": ["acc"], "attention": ["row_max", "row_sum", "acc"],
               "causal_attention": ["row_max", "row_sum", "acc"], "spherical_attention": ["sum_sq", "acc"]}[name]
    for state in carried:
        assert f"{state} (" in loop, loop
    assert any(t.startswith("bound by") or ", bound by " in t for t in texts)


@pytest.mark.parametrize("name, spec", [("matmul", GEMM_REG), ("attention", ATTENTION_REG)])
def test_the_reg_level_shows_stages_roles_and_warps(name, spec, tmp_path):
    texts = svg_texts(draw(source(name), tmp_path, spec))
    assert_diagram(texts, run_pipeline(source(name)))
    assert {"HBM", "shared memory", "registers"} <= set(texts)
    assert "3×" in texts  # the stages of a streamed buffer
    assert any(t.endswith("copy and compute") for t in texts)  # every warp copies (cp.async)
    warps = 4 if name == "matmul" else 8
    assert {f"w{n}" for n in range(warps)} <= set(texts)
    assert "mma.sync.m16n8k16" in texts
    assert "fragments of each warp" in texts


def test_sm90_pipeline_stopped_at_the_reg_level_shows_producer_and_consumers(tmp_path):
    texts = svg_texts(draw(source("matmul"), tmp_path, "napkin-sm90", "reg"))
    assert "producer: 4 warps" in texts
    # the model's tile for the 512 x 384 example is 64 x 64 (48 blocks): one consumer warpgroup
    assert any(t.startswith("consumers: 4 warps") for t in texts)
    assert any(t.startswith("wgmma.m64n") for t in texts)


def test_the_smem_level_leaves_the_warps_undecided(tmp_path):
    texts = svg_texts(draw(source("matmul"), tmp_path, f"{GEMM_LABELS},ncd-to-hbm,hbm-to-smem{{stages=2}}"))
    assert "@matmul at the smem level" in texts and "2×" in texts
    assert "warps not" in texts and "decided yet" in texts


def test_a_kernel_without_its_diagram_is_drawn_from_its_signature(tmp_path):
    kernel = str(run_pipeline(source("attention"), f"{ATTENTION_LABELS},ncd-to-hbm"))
    texts = svg_texts(draw(kernel, tmp_path))
    assert "hbm.kernel" in texts and "@attention" in texts
    assert any(t.startswith("j=256") and "stream 64" in t for t in texts)


def is_blank(path: Path) -> bool:
    import matplotlib.image as mpimg

    pixels = mpimg.imread(path)[..., :3]
    ink = (pixels.mean(axis=2) < 0.9).mean()  # the share of pixels that are not near white
    return pixels.std() < 0.02 or ink < 0.01


@pytest.mark.parametrize("spec, level", [(None, None), (GEMM_REG, None)])
def test_png_is_rendered_and_not_blank(spec, level, tmp_path):
    out = draw(source("matmul"), tmp_path, spec, level, suffix="png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not is_blank(out)


def test_pdf_is_written(tmp_path):
    out = draw(source("matmul"), tmp_path, suffix="pdf")
    assert out.read_bytes()[:5] == b"%PDF-"


# --------------------------------------------------------------------------------------
# levels
# --------------------------------------------------------------------------------------


def test_a_pipeline_stops_at_the_level_asked_inside_an_umbrella_pass():
    from napkin_ir.lowering.reg_to_ptx import RegToPtxPass

    before = RegToPtxPass.apply
    lowered = run_to_level(run_pipeline(source("matmul")), "napkin-sm80", "smem")
    assert lowered.level == "smem" and module_level(lowered.module) == "smem"
    assert lowered.diagram is not None and "ncd.grid" in the_function(lowered.diagram).attributes  # the labelled diagram
    assert RegToPtxPass.apply is before  # the passes are left as they were


def test_without_a_level_the_pipeline_runs_to_its_end():
    lowered = run_to_level(run_pipeline(source("matmul")), f"{GEMM_LABELS},ncd-to-hbm", None)
    assert lowered.level == "hbm" and lowered.kernel_module is not None


def test_the_model_chooses_the_tiles_when_only_a_level_is_given(tmp_path):
    lowered = prepare(run_pipeline(source("matmul")), None, "hbm")
    assert lowered.level == "hbm" and lowered.how.startswith("tiles chosen by the napkin model")
    draw_lowered(lowered, str(tmp_path / "x.svg"))
    assert "tiles chosen by the napkin model" in " ".join(svg_texts(tmp_path / "x.svg"))


def test_a_diagram_stopped_at_the_ncd_level_shows_no_loop_state(tmp_path):
    texts = svg_texts(draw(source("attention"), tmp_path, "napkin-sm80", "ncd"))
    assert any(t.startswith("streaming loop:") for t in texts)  # relabelled: j is streamed
    assert not any(t.startswith("carries from tile to tile") for t in texts)  # decided by ncd-to-hbm, below
