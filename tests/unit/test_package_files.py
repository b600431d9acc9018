"""The distribution carries its license and says it is typed (issue 37: pyproject said
Apache-2.0 with no LICENSE file, and there was no py.typed); the README's paths exist."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_license_is_the_apache_text_pyproject_names():
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["license"] == {"text": "Apache-2.0"}


def test_the_package_is_typed_and_ships_the_marker():
    assert (ROOT / "napkin_ir" / "py.typed").exists()
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "py.typed" in data["napkin_ir"]


def test_every_repository_path_the_readme_and_guide_name_exists():
    for doc in ("README.md", "docs/guide.md"):
        text = (ROOT / doc).read_text()
        paths = set(re.findall(r"(?<![\w./-])((?:examples|tests|docs|research|tools|napkin_ir)/[\w./-]+\.(?:mlir|md|py|toml|png))", text))
        assert paths, doc
        missing = sorted(p for p in paths if not (ROOT / p).exists())
        assert not missing, f"{doc} names {missing}"


def test_the_benchmark_notebooks_live_in_research():
    """The dated lab notebooks are research/'s; docs/benchmarks.md holds only the current
    tables, each with its device, date and command, and points to the notebook."""
    assert (ROOT / "research" / "benchmarks.md").exists()
    assert not (ROOT / "docs" / "gpu-tests.md").exists() and (ROOT / "research" / "gpu-tests.md").exists()
    for doc in ("README.md", "docs/guide.md", "docs/model.md", "research/model-validation.md"):
        assert "docs/gpu-tests.md" not in (ROOT / doc).read_text()
    current = (ROOT / "docs" / "benchmarks.md").read_text()
    assert "research/benchmarks.md" in current
    for table in re.split(r"\n## ", current)[1:]:
        assert re.search(r"20\d\d-\d\d-\d\d", table) and "python3 tools/" in table and ("H100" in table or "H200" in table), table[:80]
    assert "DESIGN.md" not in (ROOT / "docs" / "guide.md").read_text() or (ROOT / "DESIGN.md").exists()
