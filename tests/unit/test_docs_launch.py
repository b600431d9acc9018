"""docs/launch.md shows the program that tests/gpu launches, and names every field of the
contract that napkin-opt writes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "launch.md").read_text()


def test_the_program_in_the_doc_is_the_example_file():
    blocks = re.findall(r"```python\n(.*?)```", DOC, re.S)
    assert blocks == [(ROOT / "examples" / "launch_from_files.py").read_text()]


def test_the_program_needs_no_napkin_ir():
    source = (ROOT / "examples" / "launch_from_files.py").read_text()
    assert "napkin_ir" not in source
    assert len(source.splitlines()) < 100


def test_every_field_is_explained(tmp_path):
    out = tmp_path / "k.json"
    subprocess.run([sys.executable, "-m", "napkin_ir.cli.opt", str(ROOT / "examples" / "matmul.mlir"), "-p", "napkin-sm90",
                    "-t", "ptx", "-o", str(tmp_path / "k.ptx"), "--launch-json", str(out)], check=True)
    contract = json.loads(out.read_text())
    rows = set(re.findall(r"^\| `([a-z_]+)`", DOC, re.M)) | {f for r in re.findall(r"^\| `params\[\]\.(.*?) \|", DOC, re.M)
                                                              for f in re.findall(r"([a-z_]+)`", r)}
    missing = [k for k in contract if k not in rows]
    assert not missing, f"docs/launch.md does not explain {missing}"
    assert not [k for k in contract["params"][0] if k not in rows], "a parameter field is not explained"
    documented = json.loads(re.search(r"```json\n(.*?)```", DOC, re.S).group(1).replace("    ...\n", "").replace("},\n  ]", "}\n  ]"))
    assert documented["params"][0] == contract["params"][0]
    assert {k: v for k, v in documented.items() if k != "params"} == {k: v for k, v in contract.items() if k != "params"}
