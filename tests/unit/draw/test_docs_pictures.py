"""The pictures the README and docs/drawing.md show are the ones tools/draw_examples.py makes."""

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _tool():
    spec = importlib.util.spec_from_file_location("draw_examples", ROOT / "tools" / "draw_examples.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _shown(doc: Path) -> set[Path]:
    return {(doc.parent / m).resolve() for m in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", doc.read_text())}


def test_every_picture_shown_is_committed_and_made_by_the_tool():
    tool = _tool()
    made = {(ROOT / "docs" / "img" / f"{p[0]}.png").resolve() for p in [*tool.PICTURES, *tool.ROOFLINES]}
    shown = _shown(ROOT / "README.md") | _shown(ROOT / "docs" / "drawing.md")
    assert shown <= made
    for path in made:
        assert path.exists(), f"{path.relative_to(ROOT)}: run python tools/draw_examples.py"
    assert made <= _shown(ROOT / "docs" / "drawing.md")  # the guide shows every one
