"""The compile cache: in memory, on disk across cache objects (as across processes), keyed
by the diagram, the pipeline with its options, the target, napkin-ir, xDSL and any pass from
outside; every entry checked when read (a damaged one compiled again, never served or
raised); cubins assembled once by the wheel's ptxas; one compile for many processes."""

from __future__ import annotations

import hashlib
import json
import logging
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import napkin_ir
from napkin_ir import cache as cachemod
from napkin_ir.cache import CompileCache, cache_key, default_directory
from napkin_ir.compiler import pipeline_spec
from napkin_ir.diagrams import gemm
from napkin_ir.errors import UserError
from napkin_ir.runtime.compiled import CompiledKernel

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
    entry = [p.suffix for p in tmp_path.iterdir() if p.name != "source-fingerprints.json"]  # that one: the key's memo
    assert sorted(entry) == [".json", ".lock", ".ptx"]  # no GPU here: no cubin
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
    (json_file,) = [p for p in tmp_path.glob("*.json") if p.name != "source-fingerprints.json"]
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
    monkeypatch.setattr(cachemod, "source_fingerprint", lambda memo=None: "another")
    assert cache_key(TEXT, "napkin-sm90", "sm_90a") != key


def test_the_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("NAPKIN_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_directory() == tmp_path / "xdg" / "napkin-ir"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_directory() == Path.home() / ".cache" / "napkin-ir"
    monkeypatch.setenv("NAPKIN_CACHE_DIR", str(tmp_path / "mine"))
    assert default_directory() == tmp_path / "mine"


# --- the key: xDSL and passes from outside ---------------------------------------------------

def test_the_key_holds_xdsls_version(monkeypatch):
    key = cache_key(TEXT, "napkin-sm90", "sm_90a")
    monkeypatch.setattr(cachemod, "xdsl_version", lambda: "0.0.1")
    assert cache_key(TEXT, "napkin-sm90", "sm_90a") != key


PLUGIN = '''
from dataclasses import dataclass

from xdsl.passes import ModulePass
from xdsl.universe import Universe


@dataclass(frozen=True)
class NothingPass(ModulePass):
    name = "napkin-test-nothing"

    def apply(self, ctx, op):
        pass


UNIVERSE = Universe(all_passes={"napkin-test-nothing": lambda: NothingPass})
'''


@pytest.fixture
def outside_pass(tmp_path, monkeypatch):
    """A pass of the user's own, registered as an `xdsl.universe` entry point of an
    installed distribution (a package and its dist-info on sys.path); its source file."""
    site = tmp_path / "site"
    (site / "napkin_test_plugin").mkdir(parents=True)
    source = site / "napkin_test_plugin" / "__init__.py"
    source.write_text(PLUGIN)
    info = site / "napkin_test_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: napkin-test-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[xdsl.universe]\nnapkin_test_plugin = napkin_test_plugin:UNIVERSE\n")
    monkeypatch.syspath_prepend(str(site))
    cachemod._outside_pass_file.cache_clear()
    yield source
    cachemod._outside_pass_file.cache_clear()
    sys.modules.pop("napkin_test_plugin", None)


def test_editing_an_outside_pass_compiles_again(tmp_path, outside_pass):
    pipeline = "napkin-test-nothing,napkin-sm90"
    key = cache_key(TEXT, pipeline, "sm_90a")
    assert cache_key(TEXT, "canonicalize,napkin-sm90", "sm_90a") != key
    napkin_ir.compile(TEXT, pipeline=pipeline, cache=CompileCache(tmp_path / "c"))
    again = CompileCache(tmp_path / "c")
    napkin_ir.compile(TEXT, pipeline=pipeline, cache=again)
    assert again.stats == {"disk": 1}
    outside_pass.write_text(PLUGIN + "\n# the user changed the pass\n")
    assert cache_key(TEXT, pipeline, "sm_90a") != key
    edited = CompileCache(tmp_path / "c")
    napkin_ir.compile(TEXT, pipeline=pipeline, cache=edited)
    assert edited.stats == {"compiled": 1}


def test_pass_identities():
    assert cachemod.pass_identities('napkin-sm90{block="128,256,64"},canonicalize') == ["napkin-sm90", "canonicalize"]
    assert cachemod.pass_identities("napkin-sm80{") == ["<unparsed>"]


# --- machine code -------------------------------------------------------------------------

def test_machine_arch():
    arch = cachemod.machine_arch
    assert arch("sm_80", "sm_90") == "sm_90"  # a cubin runs on one architecture: the GPU's
    assert arch("sm_80", "sm_80") == "sm_80" and arch("sm_80", "sm_86") == "sm_86"
    assert arch("sm_90a", "sm_90") == "sm_90a" and arch("sm_90a", "sm_90a") == "sm_90a"
    assert arch("sm_90a", "sm_80") is None and arch("sm_90a", "sm_100") is None
    assert arch("sm_90", "sm_80") is None and arch(None, "sm_90") is None and arch("sm_80", None) is None


def _ptxas():
    path = cachemod.find_ptxas()
    if path is None:
        pytest.skip("no ptxas (pip install -e '.[test]' brings the nvidia-cuda-nvcc wheel's)")
    return path


def _record(json_path):
    return json.loads(json_path.read_text())["cache"]


def _entries(folder):
    """The entries' JSON files (`KEY.json`), not the ptxas version memo beside them."""
    return [p for p in folder.glob("*.json") if re.fullmatch(r"[0-9a-f]{64}", p.stem)]


@pytest.mark.parametrize("target, arch, cubin_arch", [("sm90", "sm_90", "sm_90a"), ("sm80", "sm_90", "sm_90"), ("sm80", "sm_80", "sm_80")])
def test_the_cubin_is_assembled_once_and_checked(tmp_path, target, arch, cubin_arch):
    ptxas = _ptxas()
    c = CompileCache(tmp_path, arch=arch)
    kernel = napkin_ir.compile(TEXT, target, cache=c)
    assert c.stats == {"compiled": 1, "assembled": 1}
    assert kernel.cubin is not None and kernel.cubin[:4] == b"\x7fELF"
    (json_path,) = _entries(tmp_path)
    key = json_path.stem
    record = _record(json_path)
    cubin_file = tmp_path / f"{key}.{cubin_arch}.cubin"
    assert cubin_file.read_bytes() == kernel.cubin
    assert record["cubins"][cubin_arch] == {"sha256": hashlib.sha256(kernel.cubin).hexdigest(),
                                             "ptxas": cachemod.ptxas_version(ptxas),
                                             "ptx_sha256": hashlib.sha256(kernel.ptx.encode()).hexdigest()}
    assert record["ptx_sha256"] == hashlib.sha256((tmp_path / f"{key}.ptx").read_bytes()).hexdigest()
    assert re.fullmatch(r"\d+\.\d+(\.\d+)*", cachemod.ptxas_version(ptxas))
    fresh = CompileCache(tmp_path, arch=arch)
    again = napkin_ir.compile(TEXT, target, cache=fresh)
    assert fresh.stats == {"disk": 1} and again.cubin == kernel.cubin


def test_each_architecture_gets_its_own_cubin(tmp_path):
    _ptxas()
    first = napkin_ir.compile(TEXT, "sm80", cache=CompileCache(tmp_path, arch="sm_80"))
    c = CompileCache(tmp_path, arch="sm_90")
    second = napkin_ir.compile(TEXT, "sm80", cache=c)
    assert c.stats == {"disk": 1, "assembled": 1} and first.ptx == second.ptx and first.cubin != second.cubin
    (json_path,) = _entries(tmp_path)
    assert sorted(_record(json_path)["cubins"]) == ["sm_80", "sm_90"]
    assert sorted(p.name.split(".")[1] for p in tmp_path.glob("*.cubin")) == ["sm_80", "sm_90"]


def test_another_ptxas_assembles_again(tmp_path):
    _ptxas()
    napkin_ir.compile(TEXT, "sm90", cache=CompileCache(tmp_path, arch="sm_90"))
    (json_path,) = _entries(tmp_path)
    d = json.loads(json_path.read_text())
    d["cache"]["cubins"]["sm_90a"]["ptxas"] = "12.0.0"  # made by another ptxas
    json_path.write_text(json.dumps(d))
    c = CompileCache(tmp_path, arch="sm_90")
    napkin_ir.compile(TEXT, "sm90", cache=c)
    assert c.stats == {"disk": 1, "assembled": 1}


def test_without_ptxas_the_driver_jit_gets_ptx_and_it_is_said_once(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(cachemod, "find_ptxas", lambda: None)
    monkeypatch.setattr(cachemod, "_said_no_ptxas", False)
    with caplog.at_level(logging.WARNING, logger="napkin_ir"):
        a = napkin_ir.compile(TEXT, "sm90", cache=CompileCache(tmp_path, arch="sm_90"))
        b = napkin_ir.compile(gemm(128, 128, 64), "sm90", cache=CompileCache(tmp_path, arch="sm_90"))
    assert a.cubin is None and b.cubin is None and not list(tmp_path.glob("*.cubin"))
    said = [r for r in caplog.records if "no ptxas" in r.getMessage()]
    assert len(said) == 1 and said[0].name == "napkin_ir"


def test_no_gpu_no_cubin(tmp_path, monkeypatch):
    """Without a GPU (this machine) and no architecture named, nothing is assembled."""
    monkeypatch.setattr(cachemod, "gpu_arch", lambda device=0: None)
    c = CompileCache(tmp_path)
    assert napkin_ir.compile(TEXT, "sm90", cache=c).cubin is None and c.stats == {"compiled": 1}


def test_a_gpu_here_picks_the_architecture(tmp_path, monkeypatch):
    _ptxas()
    monkeypatch.setattr(cachemod, "gpu_arch", lambda device=0: "sm_90")
    c = CompileCache(tmp_path)
    napkin_ir.compile(TEXT, "sm80", cache=c)
    assert [p.name.split(".")[1] for p in tmp_path.glob("*.cubin")] == ["sm_90"]


def test_a_bad_arch_is_refused():
    with pytest.raises(UserError, match="arch must name"):
        CompileCache(arch="../x")


# --- damaged entries ----------------------------------------------------------------------

DAMAGE = {
    "truncated": lambda data: data[: len(data) // 2],
    "empty": lambda data: b"",
    "not UTF-8": lambda data: b"\xff\xfe\x80" + data[3:],
    "not an object": lambda data: b"[1, 2, 3]\n",
    "JSON null": lambda data: b"null",
    "one byte changed": lambda data: data[:100] + bytes([data[100] ^ 0x01]) + data[101:],
}


class Golden(tuple):
    def __repr__(self):
        return "golden"


@pytest.fixture(scope="module")
def golden(tmp_path_factory):
    """An entry with its cubin (sm_90a) and the ptxas version memo, and the kernel it holds."""
    ptxas = _ptxas()
    folder = tmp_path_factory.mktemp("golden")
    kernel = napkin_ir.compile(TEXT, "sm90", cache=CompileCache(folder, arch="sm_90"))
    saved = dict(cachemod._ptxas_versions)
    cachemod._ptxas_versions.clear()
    cachemod.ptxas_version(ptxas, folder / "ptxas-versions.json")
    cachemod._ptxas_versions.update(saved)
    assert (folder / "ptxas-versions.json").is_file()
    return Golden((folder, kernel))


def _fresh_copy(golden, tmp_path):
    folder, kernel = golden
    target = tmp_path / "cache"
    shutil.copytree(folder, target)
    return target, kernel


def _file(folder, suffix):
    """The entry's file `KEY + suffix`, or the file named `suffix`."""
    if not suffix.startswith("."):
        return folder / suffix
    key = cache_key(TEXT, pipeline_spec("sm90", {}), "sm_90a")
    return folder / (key + suffix)


def _same(a, b):
    return a.ptx == b.ptx and a.contract == b.contract and a.cubin == b.cubin


@pytest.mark.parametrize("how", list(DAMAGE))
@pytest.mark.parametrize("suffix", [".json", ".ptx", ".sm_90a.cubin"])
def test_damaged_files_are_compiled_again_and_rewritten(golden, tmp_path, suffix, how):
    folder, kernel = _fresh_copy(golden, tmp_path)
    path = _file(folder, suffix)
    path.write_bytes(DAMAGE[how](path.read_bytes()))
    c = CompileCache(folder, arch="sm_90")
    got = napkin_ir.compile(TEXT, "sm90", cache=c)
    assert _same(got, kernel)
    assert c.stats == ({"disk": 1, "assembled": 1} if suffix == ".sm_90a.cubin" else {"compiled": 1, "assembled": 1})
    again = CompileCache(folder, arch="sm_90")
    assert _same(napkin_ir.compile(TEXT, "sm90", cache=again), kernel) and again.stats == {"disk": 1}  # written over whole
    assert not list(folder.glob("*.tmp"))


def test_a_changed_ptx_against_its_recorded_hash(golden, tmp_path):
    folder, kernel = _fresh_copy(golden, tmp_path)
    (ptx,) = folder.glob("*.ptx")
    text = ptx.read_text()
    ptx.write_text(text.replace("mma.sync", "mma.sYnc", 1) if "mma.sync" in text else text + "\n// edited\n")
    c = CompileCache(folder, arch="sm_90")
    assert _same(napkin_ir.compile(TEXT, "sm90", cache=c), kernel) and c.stats["compiled"] == 1


def test_a_changed_launch_contract_is_not_served(golden, tmp_path):
    """A contract edited after the fact (the grid) fails its recorded hash."""
    folder, kernel = _fresh_copy(golden, tmp_path)
    (json_path,) = _entries(folder)
    d = json.loads(json_path.read_text())
    d["grid"] = [d["grid"][0] + 1, *d["grid"][1:]]
    json_path.write_text(json.dumps(d))
    c = CompileCache(folder, arch="sm_90")
    assert _same(napkin_ir.compile(TEXT, "sm90", cache=c), kernel) and c.stats["compiled"] == 1


def test_another_entrys_files_under_this_key_are_not_served(golden, tmp_path):
    """Whole, self-consistent files of another key (copied over) are not this key's kernel."""
    folder, kernel = _fresh_copy(golden, tmp_path)
    other = napkin_ir.compile(gemm(128, 128, 64), "sm90", cache=CompileCache(tmp_path / "other", arch="sm_90"))
    (json_path,) = _entries(folder)
    key = json_path.stem
    for p in (tmp_path / "other").iterdir():
        if p.suffix in (".json", ".ptx", ".cubin") and not p.name.startswith("ptxas"):
            shutil.copy(p, folder / (key + p.name[len(p.name.split(".")[0]):]))
    c = CompileCache(folder, arch="sm_90")
    got = napkin_ir.compile(TEXT, "sm90", cache=c)
    assert _same(got, kernel) and not _same(got, other) and c.stats["compiled"] == 1


FILES = st.sampled_from([".json", ".ptx", ".sm_90a.cubin", "ptxas-versions.json"])


@st.composite
def corruptions(draw):
    """What may happen to a file: cut short, emptied, deleted, bytes overwritten or inserted."""
    kind = draw(st.sampled_from(["truncate", "overwrite", "insert", "delete", "empty"]))
    at = draw(st.floats(0, 1))
    junk = draw(st.binary(min_size=1, max_size=16))
    return kind, at, junk


def _corrupt(path, kind, at, junk):
    data = path.read_bytes()
    i = min(int(at * len(data)), max(len(data) - 1, 0))
    if kind == "delete":
        path.unlink()
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "truncate":
        path.write_bytes(data[:i])
    elif kind == "overwrite":
        path.write_bytes(data[:i] + junk + data[i + len(junk):])
    else:
        path.write_bytes(data[:i] + junk + data[i:])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(damage=st.lists(st.tuples(FILES, corruptions()), min_size=1, max_size=3))
def test_no_damage_yields_a_wrong_kernel_or_an_exception(golden, tmp_path, monkeypatch, damage):
    """Random damage to any of the entry's files: the kernel served is the right one, no
    exception escapes, and the entry is whole again afterwards. (The compile and ptxas are
    stood in for by the kernel they made, so that each example takes milliseconds.)"""
    folder, kernel = golden
    target = tmp_path / f"c{len(list(tmp_path.iterdir()))}"
    shutil.copytree(folder, target)
    monkeypatch.setattr(cachemod, "_compile", lambda text, pipeline: CompiledKernel(kernel.ptx, kernel.contract))
    monkeypatch.setattr(cachemod, "assemble", lambda ptx, arch, ptxas: kernel.cubin)
    monkeypatch.setattr(cachemod, "_ptxas_versions", {})
    for suffix, (kind, at, junk) in damage:
        path = _file(target, suffix)
        if path.exists():  # deleted by an earlier step
            _corrupt(path, kind, at, junk)
    assert _same(napkin_ir.compile(TEXT, "sm90", cache=CompileCache(target, arch="sm_90")), kernel)
    again = CompileCache(target, arch="sm_90")
    assert _same(napkin_ir.compile(TEXT, "sm90", cache=again), kernel) and again.stats == {"disk": 1}


# --- many processes -----------------------------------------------------------------------

def _compile_in_a_process(folder, counter, barrier, results):
    """One of the processes: count the compiles and the ptxas runs it does, then compile."""
    real_compile, real_assemble = cachemod._compile, cachemod.assemble

    def count(what, real):
        def counted(*args):
            with open(counter, "a") as fh:
                fh.write(what + "\n")
            return real(*args)
        return counted

    cachemod._compile = count("compile", real_compile)
    cachemod.assemble = count("assemble", real_assemble)
    c = CompileCache(folder, arch="sm_90")
    barrier.wait()
    kernel = napkin_ir.compile(TEXT, "sm90", cache=c)
    results.put((hashlib.sha256(kernel.ptx.encode()).hexdigest(), hashlib.sha256(kernel.cubin or b"").hexdigest(), dict(c.stats)))


def test_eight_processes_compile_one_diagram_once(tmp_path):
    _ptxas()
    ctx = multiprocessing.get_context("fork")
    barrier, results = ctx.Barrier(8), ctx.Queue()
    counter = tmp_path / "counter"
    counter.touch()
    procs = [ctx.Process(target=_compile_in_a_process, args=(tmp_path / "cache", counter, barrier, results)) for _ in range(8)]
    for p in procs:
        p.start()
    got = [results.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert sorted(counter.read_text().split()) == ["assemble", "compile"]
    assert len({(ptx, cubin) for ptx, cubin, _ in got}) == 1
    assert sorted(tuple(sorted(stats)) for _, _, stats in got) == [("assembled", "compiled")] + [("disk",)] * 7


# --- time ---------------------------------------------------------------------------------

def test_a_warm_cache_is_quick_in_a_fresh_process(tmp_path):
    """The first `napkin_ir.compile` of a fresh process from a warm cache (cubin included):
    the key, reading and checking the files, the kernel object; numpy imported first, as
    torch does (the runtime imports it). The CUDA module load is not part of it."""
    _ptxas()
    script = ("import sys, time, json, numpy, ml_dtypes, importlib.metadata\n"
              "import napkin_ir\n"
              "from napkin_ir.cache import CompileCache\n"
              "t = napkin_ir.gemm(1024, 1024, 1024)\n"
              "c = CompileCache(sys.argv[1], arch='sm_90')\n"
              "start = time.perf_counter()\n"
              "k = napkin_ir.compile(t, 'sm80', cache=c)\n"
              "print(json.dumps([time.perf_counter() - start, dict(c.stats), len(k.cubin or b'')]))\n")
    run = lambda: json.loads(subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True,
                                            check=True).stdout)
    seconds, stats, size = run()
    assert stats == {"compiled": 1, "assembled": 1} and size > 0
    times = []
    for _ in range(6):  # a run that compiles again found napkin-ir's sources changed meanwhile: not timed
        seconds, stats, size = run()
        assert size > 0
        if stats == {"disk": 1}:
            times.append(seconds)
        if len(times) == 3:
            break
    assert len(times) == 3
    print(f"warm cache, first call in a fresh process: {', '.join(f'{1e3 * t:.1f}' for t in times)} ms")
    assert min(times) <= 0.05


# --- the hit path: no xDSL, no pass, no parse ---------------------------------------------

HIT = """
import sys, json
import napkin_ir
from napkin_ir.cache import CompileCache
before = {m for m in sys.modules if m == "xdsl" or m.startswith("xdsl.")}
c = CompileCache(sys.argv[1], arch=sys.argv[2] or None, cubin=bool(sys.argv[2]))
k = napkin_ir.compile(napkin_ir.gemm(128, 256, 64), "sm80", cache=c, block=(128, 128, 32))
xdsl = sorted(m for m in sys.modules if m == "xdsl" or m.startswith("xdsl."))
passes = sorted(m for m in sys.modules if m.startswith(("napkin_ir.passes", "napkin_ir.lowering", "napkin_ir.dialects")))
print(json.dumps([sorted(before), dict(c.stats), xdsl, passes, len(k.cubin or b"")]))
"""


def test_a_cache_hit_imports_no_xdsl_and_runs_no_pass(tmp_path):
    """A fresh process that finds its kernel on disk (the cubin too, where ptxas is here)
    reads the key's parts without xDSL and builds the kernel object from the files: no
    xDSL module, no dialect, no pass is imported (so nothing is parsed or run)."""
    arch = "sm_80" if cachemod.find_ptxas() else ""
    run = lambda: json.loads(subprocess.run([sys.executable, "-c", HIT, str(tmp_path), arch], capture_output=True,
                                            text=True, check=True).stdout)
    before, stats, xdsl, passes, cubin = run()
    assert before == [] and "compiled" in stats and xdsl and passes  # the miss compiles: xDSL and the passes
    for _ in range(3):  # a run that compiles again found napkin-ir's sources changed meanwhile
        before, stats, xdsl, passes, cubin = run()
        if stats == {"disk": 1}:
            break
    assert stats == {"disk": 1} and xdsl == [] and passes == [] and (cubin > 0) == bool(arch)
    assert (tmp_path / "source-fingerprints.json").is_file()


def test_the_fixes_reach_xdsl_imported_after_napkin_ir():
    script = ("import sys, napkin_ir\n"
              "assert 'xdsl' not in sys.modules\n"
              "from xdsl.parser import Parser\n"
              "from xdsl.utils.mlir_lexer import MLIRLexer\n"
              "from napkin_ir import xdsl_fixes\n"
              "print(Parser.parse_operation is xdsl_fixes._parse_operation,\n"
              "      MLIRLexer._unescaped_characters_regex is xdsl_fixes._STRING_LITERAL,\n"
              "      type(sys.modules['xdsl'].__loader__).__name__ != '_FixingLoader')\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "True", "True"]


def test_napkin_pass_names_are_the_registrys():
    from napkin_ir.registry import napkin_passes

    assert cachemod.NAPKIN_PASS_NAMES == set(napkin_passes())


@pytest.mark.parametrize("spec", ["napkin-sm90", 'napkin-sm90{block="128,256,64" stages=4}', "ncd-grad,ncd-fold-casts",
                                  'ncd-grad,ncd-extract{function="matmul_grad" result=1},napkin-sm80{autotile=true}',
                                  "a{x=1},b", "canonicalize,cse"])
def test_plain_specs_are_read_without_xdsl_as_xdsl_reads_them(spec):
    from xdsl.utils.arg_spec import parse_pipeline

    assert cachemod._simple_pass_names(spec) == tuple(p.name for p in parse_pipeline(spec))


@pytest.mark.parametrize("spec", ["a{", "a{b{c}}", "a b", "", "a,,b", 'a{x="1}', "a}", "a{x=1}, b", " a"])
def test_other_specs_are_left_to_xdsl(spec):
    assert cachemod._simple_pass_names(spec) is None


def test_the_source_fingerprint_is_kept_by_the_files_stat(tmp_path, monkeypatch):
    monkeypatch.setattr(cachemod, "_fingerprints", {})
    memo = tmp_path / "source-fingerprints.json"
    plain = cachemod.source_fingerprint()
    assert cachemod.source_fingerprint(memo) == plain and memo.is_file()
    # a later process whose sources are as they were reads the memo, not the sources
    recorded = json.loads(memo.read_text())
    (stamp,) = recorded
    memo.write_text(json.dumps({stamp: "0123456789abcdef"}))
    monkeypatch.setattr(cachemod, "_fingerprints", {})
    read = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: pytest.fail(f"read {self}") if self.suffix == ".py" else read(self))
    assert cachemod.source_fingerprint(memo) == "0123456789abcdef"
    monkeypatch.undo()
    # a memo that names other sources (or is damaged) is not believed
    for text in (json.dumps({"elsewhere:0": "0123456789abcdef"}), "{ half"):
        memo.write_text(text)
        monkeypatch.setattr(cachemod, "_fingerprints", {})
        assert cachemod.source_fingerprint(memo) == plain
