"""The README's test command is what CI runs."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)\n```", readme, re.S)
    test_cmds = [b for b in blocks if "pytest" in b]
    assert len(test_cmds) == 1, "the README should show one test command"
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test_cmds[0].strip() in [line.strip() for line in ci]
