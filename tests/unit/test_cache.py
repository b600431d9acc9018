"""The compile cache: in memory, on disk across cache objects (as across processes), keyed
by the diagram, the pipeline with its options, the target and napkin-ir itself."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import napkin_ir
from napkin_ir import cache as cachemod
from napkin_ir.cache import CompileCache, cache_key, default_directory
from napkin_ir.diagrams import gemm

TEXT = gemm(128, 256, 64)


def test_a_second_compile_hits_memory(tmp_path):
    c = CompileCache(tmp_path)
    first = napkin_ir.compile(TEXT, "sm90", cache=c)
    again = napkin_ir.compile(TEXT, "sm90", cache=c)
    assert again is first and c.stats == {"compiled": 1, "memory": 1}


def test_a_changed_option_or_target_misses(tmp_path):
    c = CompileCache(tmp_path)
    base = napkin_ir.compile(TEXT, "sm90", cache=c, stages=4)
    other = napkin_ir.compile(TEXT, "sm90", cache=c, stages=3)
    sm80 = napkin_ir.compile(TEXT, "sm80", cache=c, stages=4)
    shape = napkin_ir.compile(gemm(128, 256, 128), "sm90", cache=c, stages=4)
    assert c.stats == {"compiled": 4}
    assert len({k.ptx for k in (base, other, sm80, shape)}) == 4
    assert other.contract.extra["pipeline"] == "napkin-sm90{stages=3}"


def test_a_fresh_cache_object_reads_the_disk(tmp_path):
    first = napkin_ir.compile(TEXT, "sm80", cache=CompileCache(tmp_path), block=(128, 128, 32))
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".json", ".ptx"]
    fresh = CompileCache(tmp_path)
    again = napkin_ir.compile(TEXT, "sm80", cache=fresh, block=(128, 128, 32))
    assert fresh.stats == {"disk": 1}
    assert again.ptx == first.ptx and again.contract == first.contract and again is not first
    napkin_ir.compile(TEXT, "sm80", cache=fresh, block=(128, 128, 32))
    assert fresh.stats == {"disk": 1, "memory": 1}


def test_a_second_process_does_not_compile(tmp_path):
    """The default cache, found through NAPKIN_CACHE_DIR, shared by two processes."""
    script = ("import napkin_ir; from napkin_ir.cache import default_cache; "
              "napkin_ir.compile(napkin_ir.gemm(128, 256, 64), 'sm90'); print(dict(default_cache().stats))")
    env = {**os.environ, "NAPKIN_CACHE_DIR": str(tmp_path / "cache")}
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True).stdout.strip()
            for _ in range(2)]
    assert runs == ["{'compiled': 1}", "{'disk': 1}"]


def test_memory_only_and_uncached(tmp_path):
    c = CompileCache(tmp_path / "never", disk=False)
    napkin_ir.compile(TEXT, "sm90", cache=c)
    assert not (tmp_path / "never").exists()
    assert napkin_ir.compile(TEXT, "sm90", cache=False) is not napkin_ir.compile(TEXT, "sm90", cache=False)


def test_a_damaged_entry_is_compiled_again(tmp_path):
    c = CompileCache(tmp_path)
    napkin_ir.compile(TEXT, "sm90", cache=c)
    (json_file,) = tmp_path.glob("*.json")
    json_file.write_text("{ half written")
    fresh = CompileCache(tmp_path)
    napkin_ir.compile(TEXT, "sm90", cache=fresh)
    assert fresh.stats == {"compiled": 1} and json_file.read_text().startswith("{\n")


def test_an_unwritable_folder_warns_and_keeps_memory(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    c = CompileCache(blocker / "cache")
    with pytest.warns(UserWarning, match="kernels are kept in memory only"):
        napkin_ir.compile(TEXT, "sm90", cache=c)
    napkin_ir.compile(TEXT, "sm90", cache=c)
    assert c.stats == {"compiled": 1, "memory": 1}


def test_the_key_holds_the_version_and_the_sources(monkeypatch):
    key = cache_key(TEXT, "napkin-sm90", "sm_90a")
    assert key != cache_key(TEXT, "napkin-sm90", "sm_80") != cache_key(TEXT + " ", "napkin-sm90", "sm_90a")
    monkeypatch.setattr(cachemod, "napkin_version", lambda: "9.9.9")
    assert cache_key(TEXT, "napkin-sm90", "sm_90a") != key
    monkeypatch.undo()
    monkeypatch.setattr(cachemod, "source_fingerprint", lambda: "another")
    assert cache_key(TEXT, "napkin-sm90", "sm_90a") != key


def test_the_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("NAPKIN_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_directory() == tmp_path / "xdg" / "napkin-ir"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_directory() == Path.home() / ".cache" / "napkin-ir"
    monkeypatch.setenv("NAPKIN_CACHE_DIR", str(tmp_path / "mine"))
    assert default_directory() == tmp_path / "mine"
