"""The command lines docs/guide.md shows run as it says (those that need no GPU)."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDE = (ROOT / "docs" / "guide.md").read_text()
COMMANDS = [line for block in re.findall(r"```sh\n(.*?)```", GUIDE, re.S) for line in block.splitlines() if line.strip()]


def test_the_guide_shows_commands():
    assert len(COMMANDS) >= 10


@pytest.mark.parametrize("command", COMMANDS)
def test_command_runs(command, tmp_path):
    assert command.split()[0] in ("napkin-opt", "napkin-run", "napkin-model", "xdsl-opt"), command
    command = command.replace("-o matmul.ptx --launch-json matmul.json", f"-o {tmp_path}/m.ptx --launch-json {tmp_path}/m.json")
    run = subprocess.run(command, shell=True, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"{command}\n{run.stderr}"
    assert run.stdout.strip() or list(tmp_path.iterdir()), shlex.quote(command)
