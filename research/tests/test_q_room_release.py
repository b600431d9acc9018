"""research/q_room_release.py: the `early` copy releases Q before the output is written
into its room (after it in the default), and every copy differs from the default and
launches by its own contract."""

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # research/
import q_room_release  # noqa: E402

from napkin_ir.attention_diagrams import attention_diagram  # noqa: E402
from napkin_ir.passmanager import run_pipeline, spec  # noqa: E402
from napkin_ir.plan.planner import plan_kernel  # noqa: E402
from napkin_ir.plan.request import request  # noqa: E402
from napkin_ir.target import SM90  # noqa: E402

RELEASE = re.compile(r"smem.arrive %\d+\[%\d+\] : !smem.mbarrier<stages=1, arrivals=1>")


def test_the_early_copy_releases_q_before_the_output_is_written():
    text = attention_diagram("causal", 1, 2, 4096, 256, "bf16")
    plan = plan_kernel(run_pipeline(text), SM90, request("napkin-sm90", {}, {}))
    smem = str(run_pipeline(text, spec(plan.passes("smem"))))
    early = q_room_release.early_release(smem)
    for made, before_write in ((smem, False), (early, True)):
        lines = [line.strip() for line in made.splitlines()]
        release = next(n for n, line in enumerate(lines) if RELEASE.fullmatch(line))
        write = next(n for n, line in enumerate(lines) if line.startswith("smem.write"))
        assert (release < write) == before_write
    # the same ops, less the wait that kept the release behind the store
    wait = "    smem.tma_store_wait {pending = 0 : i32}"
    assert early.splitlines().count(wait) == smem.splitlines().count(wait) - 1
    assert sorted(ln for ln in early.splitlines() if ln != wait) == sorted(ln for ln in smem.splitlines() if ln != wait)


def test_the_copies_are_made(tmp_path, monkeypatch):
    monkeypatch.setattr(q_room_release, "SHAPES", {"c256": ("causal", 1, 2, 4096, 256)})
    q_room_release.make(tmp_path)
    base = (tmp_path / "c256_base.ptx").read_text()
    for name in ("early", "keys64", "direct"):
        assert (tmp_path / f"c256_{name}.ptx").read_text() != base
    assert "m64n80k16" in base and "m64n64k16" in (tmp_path / "c256_keys64.ptx").read_text()
    # a copy compiled from another plan launches by its own contract: 64-key boxes for K, the
    # output stored from registers through a pointer
    contract = {name: json.loads((tmp_path / f"c256_{name}.json").read_text()) for name in ("base", "early", "keys64", "direct")}
    kinds = {name: {p["arg"]: (p["kind"], p.get("tma", {}).get("box")) for p in c["params"]} for name, c in contract.items()}
    assert kinds["early"] == kinds["base"] and kinds["base"]["out"][0] == "tensormap"
    assert kinds["direct"]["out"][0] != "tensormap" and kinds["keys64"]["k"][1] == [1, 1, 64, 64]
