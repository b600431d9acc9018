"""The compile cache: each diagram is compiled once per pipeline, target and compiler, and
assembled to machine code once per GPU architecture and assembler.

A compile goes through every level and, with `autotile=true`, through the napkin model's
search: from a fraction of a second to minutes; then the driver would JIT-compile the PTX
in every process (seconds for a large kernel). `CompileCache` keeps what it made in memory
(the kernel object, with the modules the driver loaded from it) and on disk, so that a
second call, or a second process, neither compiles nor JIT-compiles again:

- `KEY.ptx`: the PTX;
- `KEY.json`: the launch contract, with a `cache` record: the key, the SHA-256 of the
  contract and of the PTX, and per architecture the cubin's SHA-256 and the ptxas version
  that made it;
- `KEY.ARCH.cubin`: the PTX assembled by ptxas for the GPU's architecture (sm_80 PTX is
  assembled for the GPU here, e.g. sm_90 on an H100, since a cubin runs on one
  architecture only; sm_90a PTX for sm_90a), which the kernel object loads instead of the
  PTX (`CompiledKernel.cubin`);
- `KEY.lock`: a lock file (`fcntl.flock`): processes asking for the same key at once
  compile and assemble it once, the others wait for it and read it.

The key is a SHA-256 of the diagram's text, the pipeline with its options, the PTX target,
napkin-ir's version and a fingerprint of its source files (an editable install changes
without a new version), xDSL's version, and the source of every pass the pipeline names
that comes from outside napkin-ir and xDSL (a pass of your own, registered through an
`xdsl.universe` entry point: edit it and the diagram compiles anew). A cubin is keyed by the
hash of its PTX, the architecture and ptxas's version.

Every entry is checked when read: a file that is missing, truncated, empty, not UTF-8, not
a JSON object, of another key, or whose hash does not match is never served and never
raises: the entry is compiled (or assembled) again and written over, whole (each file to a
temporary name, then renamed; the JSON last). ptxas is the `nvidia-cuda-nvcc` wheel's, else
the one on PATH, else `/usr/local/cuda/bin/ptxas`; where there is none, kernels load from
PTX through the driver's JIT, and the logger `napkin_ir` says so once. Without a GPU no
cubin is made unless an architecture is named (`CompileCache(arch="sm_90")`).

The folder is `$NAPKIN_CACHE_DIR`, else `$XDG_CACHE_HOME/napkin-ir`, else
`~/.cache/napkin-ir`. A folder that cannot be written is used from memory alone.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import re
import sys
import tempfile
import threading
import warnings
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from napkin_ir.runtime.compiled import CompiledKernel

logger = logging.getLogger("napkin_ir")

ENTRY_FORMAT = "napkin-cache/2"
_ARCH = re.compile(r"sm_(\d+)([af]?)\Z")
_PTX_TARGET = re.compile(r"^\s*\.target\s+(sm_\d+[af]?)", re.MULTILINE)


# --- where ---------------------------------------------------------------------------------

def default_directory() -> Path:
    """`$NAPKIN_CACHE_DIR`, else `$XDG_CACHE_HOME/napkin-ir`, else `~/.cache/napkin-ir`."""
    if os.environ.get("NAPKIN_CACHE_DIR"):
        return Path(os.environ["NAPKIN_CACHE_DIR"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base).expanduser() if base else Path.home() / ".cache") / "napkin-ir"


# --- the key -------------------------------------------------------------------------------

@functools.cache
def napkin_version() -> str:
    from napkin_ir.runtime.contract import napkin_version as version

    return version()


@functools.cache
def xdsl_version() -> str:
    """xDSL's version: its passes, parser and printer are part of every compile. Read from
    the installed package's metadata, so that the key needs no xDSL import."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("xdsl")
    except PackageNotFoundError:  # xDSL from a source tree: its own word
        import xdsl

        return str(getattr(xdsl, "__version__", None) or "unknown")


_ROOT = Path(__file__).resolve().parent
_fingerprints: dict[Path | None, str] = {}  # memo file (None: none) -> the fingerprint, once per process


def _source_files() -> list[tuple[str, os.stat_result]]:
    """napkin-ir's Python sources (paths relative to the package, `/`-separated, sorted as
    `source_fingerprint` always hashed them) with their stat."""
    found = []
    stack = [(str(_ROOT), ())]
    while stack:
        folder, parts = stack.pop()
        with os.scandir(folder) as entries:
            for e in entries:
                if e.is_dir(follow_symlinks=False):
                    if e.name != "__pycache__":
                        stack.append((e.path, (*parts, e.name)))
                elif e.name.endswith(".py"):
                    found.append(((*parts, e.name), e.stat()))
    found.sort(key=lambda f: f[0])  # as sorted(Path.rglob) orders them: part by part
    return [("/".join(parts), st) for parts, st in found]


def source_fingerprint(memo: Path | None = None) -> str:
    """A hash of napkin-ir's Python sources: a compiler changed in place compiles anew.
    Computed once per process. With `memo` (a JSON file), the hash of the files' contents
    is kept there by their names, sizes and modification times, so a process whose sources
    are as the last one saw them reads nothing but their stat."""
    found = _fingerprints.get(memo)
    if found is not None:
        return found
    files = _source_files()
    stamp = hashlib.sha256("\n".join(f"{name}:{st.st_size}:{st.st_mtime_ns}" for name, st in files).encode())
    stamp_key = f"{_ROOT}:{stamp.hexdigest()}"
    known = _read_memo(memo)
    if isinstance(known.get(stamp_key), str) and len(known[stamp_key]) == 16:
        _fingerprints[memo] = known[stamp_key]
        return known[stamp_key]
    h = hashlib.sha256()
    for name, _ in files:
        h.update(str(Path(name)).encode() + b"\0" + (_ROOT / name).read_bytes() + b"\0")
    found = _fingerprints[memo] = h.hexdigest()[:16]
    # a few source trees (worktrees, versions) side by side
    _write_memo(memo, {**dict(list(known.items())[-7:]), stamp_key: found})
    return found


def _read_memo(memo: Path | None) -> dict[str, Any]:
    """A memo file's entries: none where there is no file or it is not a JSON object."""
    if memo is None:
        return {}
    with contextlib.suppress(Exception):
        loaded = json.loads(memo.read_bytes().decode("utf-8"))
        if isinstance(loaded, dict):
            return loaded
    return {}


def _write_memo(memo: Path | None, entries: dict[str, Any]) -> None:
    """The memo file, written whole (a failure to write only costs the next process the work)."""
    if memo is not None:
        with contextlib.suppress(OSError):
            _write_whole(memo, json.dumps(entries, indent=1).encode())


# registry.napkin_passes()'s names, known here without importing the registry (and so xDSL);
# tests/unit/test_cache.py checks that they agree. A name missing here is only looked up
# the slow way (`_outside_pass_file`), to the same identity.
NAPKIN_PASS_NAMES = frozenset({
    "convert-arith-to-ptx", "ncd-relabel", "ncd-autotile", "ncd-grad", "ncd-fold-casts", "ncd-extract", "ncd-reassociate",
    "ncd-sink-scales", "ncd-fold-log2e", "ncd-widen-results", "ncd-to-hbm", "hbm-launch", "hbm-to-smem", "smem-to-reg",
    "smem-unroll-stages", "reg-carry-fragments", "reg-prefetch",
    "reg-hoist-loads", "reg-wgmma-overlap", "reg-wgmma-schedule", "reg-pingpong", "reg-reload-loads", "reg-early-reads",
    "reg-early-waits", "reg-partial-row-sums", "reg-lazy-rescale", "reg-to-ptx", "napkin-sm80", "napkin-sm90",
})
_PASS_NAME = re.compile(r"[A-Za-z0-9_.-]+\Z")


def _simple_pass_names(pipeline: str) -> tuple[str, ...] | None:
    """The pass names of `pipeline` read without xDSL where the spec is plain: names with
    options in braces (`a,b{x=1 y="2,3"}`), split at the commas outside braces and quotes;
    None for anything else (xDSL's parser reads it)."""
    names, part, depth, quoted = [], [], 0, False
    for ch in pipeline + ",":
        if quoted:
            quoted = ch != '"'
        elif ch == '"':
            quoted = True
        elif ch == "{":
            depth += 1
            if depth > 1:
                return None
        elif ch == "}":
            depth -= 1
            if depth < 0:
                return None
        elif ch == "," and depth == 0:
            name, brace, rest = "".join(part).partition("{")
            if not _PASS_NAME.match(name) or (brace and not rest.endswith("}")):  # no spaces: xDSL allows none there
                return None
            names.append(name)
            part = []
            continue
        part.append(ch)
    return tuple(names) if not quoted and depth == 0 else None


@functools.cache
def _pipeline_pass_names(pipeline: str) -> tuple[str, ...] | None:
    simple = _simple_pass_names(pipeline)
    if simple is not None:
        return simple
    from xdsl.utils.arg_spec import parse_pipeline
    from xdsl.utils.exceptions import ArgSpecParseError

    try:
        return tuple(p.name for p in parse_pipeline(pipeline))
    except (Exception, ArgSpecParseError):  # a spec xDSL cannot read (a BaseException there): the compile says why
        return None


@functools.cache
def _outside_pass_file(name: str) -> str | None:
    """The source file of the pass `name` where an `xdsl.universe` entry point other than
    napkin-ir's and xDSL's own registers it; None for any other name."""
    from importlib.metadata import entry_points

    for plugin in entry_points(group="xdsl.universe"):
        module = plugin.value.split(":", 1)[0]
        if module.split(".", 1)[0] in ("napkin_ir", "xdsl"):
            continue
        try:
            factory = plugin.load().all_passes.get(name)
            if factory is None:
                continue
            cls = factory()
            return getattr(sys.modules[cls.__module__], "__file__", None) or f"<{cls.__module__}>"
        except Exception as e:  # a broken plugin: the compile reports it; the key still differs
            return f"<{plugin.name} does not load: {type(e).__name__}>"
    return None


def pass_identities(pipeline: str) -> list[str]:
    """What identifies each pass `pipeline` names: napkin-ir's own and xDSL's by name (the
    source fingerprint and xDSL's version cover them), a pass from another package by the
    SHA-256 of its module's source."""
    names = _pipeline_pass_names(pipeline)
    if names is None:
        return ["<unparsed>"]
    out = []
    for name in names:
        where = None if name in NAPKIN_PASS_NAMES else _outside_pass_file(name)
        if where is None:
            out.append(name)
            continue
        try:
            out.append(f"{name}={hashlib.sha256(Path(where).read_bytes()).hexdigest()}")
        except OSError:
            out.append(f"{name}={where}")
    return out


def cache_key(text: str, pipeline: str, target: str = "", *, memo: Path | None = None) -> str:
    """The entry's name: SHA-256 of everything the PTX and its launch contract depend on
    (`memo`: where `source_fingerprint` keeps what it found)."""
    payload = {"napkin_ir": napkin_version(), "source": source_fingerprint(memo), "xdsl": xdsl_version(),
               "passes": pass_identities(pipeline), "diagram": text, "pipeline": pipeline, "target": target}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


# --- machine code --------------------------------------------------------------------------

@functools.cache
def find_ptxas() -> str | None:
    """ptxas from the `nvidia-cuda-nvcc` wheel, else on PATH, else in /usr/local/cuda."""
    import importlib.util
    import shutil

    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        spec = None
    for root in (spec.submodule_search_locations or []) if spec is not None else []:
        for sub in ("cu13", "cuda_nvcc"):
            candidate = os.path.join(root, sub, "bin", "ptxas")
            if os.access(candidate, os.X_OK):
                return candidate
    found = shutil.which("ptxas")
    if found:
        return found
    return "/usr/local/cuda/bin/ptxas" if os.access("/usr/local/cuda/bin/ptxas", os.X_OK) else None


_ptxas_versions: dict[tuple[str, int, int], str | None] = {}


def ptxas_version(path: str, memo: Path | None = None) -> str | None:
    """`ptxas --version`'s release (`13.0.88`), asked once per binary: in this process, and
    in the JSON file `memo` across processes (by the binary's path, size and time)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    ident = (os.path.realpath(path), st.st_size, st.st_mtime_ns)
    if ident in _ptxas_versions:
        return _ptxas_versions[ident]
    name = f"{ident[0]}:{ident[1]}:{ident[2]}"
    known = _read_memo(memo)
    if isinstance(known.get(name), str) and known[name]:
        _ptxas_versions[ident] = known[name]
        return known[name]
    import subprocess

    try:
        run = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        run = None
    version = None
    if run is not None and run.returncode == 0:
        found = re.findall(r"\bV(\d+(?:\.\d+)+)", run.stdout)
        version = found[-1] if found else hashlib.sha256(run.stdout.encode()).hexdigest()[:16]
    _ptxas_versions[ident] = version
    if version is not None:
        _write_memo(memo, {**known, name: version})
    return version


def assemble(ptx: str, arch: str, ptxas: str) -> bytes:
    """`ptxas -arch=ARCH` on `ptx`: the cubin's bytes; a UserError with ptxas's log if it refuses."""
    import subprocess

    from napkin_ir.errors import UserError

    with tempfile.TemporaryDirectory(prefix="napkin-ptxas-") as tmp:
        source, cubin = Path(tmp) / "kernel.ptx", Path(tmp) / "kernel.cubin"
        source.write_text(ptx, encoding="utf-8")
        run = subprocess.run([ptxas, f"-arch={arch}", "-o", str(cubin), str(source)], capture_output=True, text=True)
        if run.returncode != 0:
            log = (run.stderr or run.stdout).strip()
            raise UserError(f"ptxas -arch={arch} refused the PTX (exit {run.returncode}): {log[:2000]}")
        return cubin.read_bytes()


def ptx_target(ptx: str) -> str | None:
    """The PTX module's `.target` (`sm_80`, `sm_90a`)."""
    found = _PTX_TARGET.search(ptx)
    return found.group(1) if found else None


def machine_arch(target: str | None, gpu: str | None) -> str | None:
    """The architecture to assemble PTX of `target` for, to run on a GPU of architecture
    `gpu`: `sm_90a` PTX only for sm_90 (as sm_90a), `sm_80` PTX for the GPU's own
    architecture (sm_80 and newer); None where the PTX cannot run there."""
    t = _ARCH.match(target or "")
    g = _ARCH.match(gpu or "")
    if t is None or g is None:
        return None
    if t.group(2):  # arch-specific PTX runs on that architecture alone
        return target if t.group(1) == g.group(1) else None
    return f"sm_{g.group(1)}{g.group(2)}" if int(g.group(1)) >= int(t.group(1)) else None


_gpu_archs: dict[int, str | None] = {}


def gpu_arch(device: int = 0) -> str | None:
    """`sm_90` for an H100 as `device`; None where no GPU or driver can be asked."""
    if device in _gpu_archs:
        return _gpu_archs[device]
    arch = None
    try:
        if sys.platform.startswith("linux"):
            import ctypes

            ctypes.CDLL("libcuda.so.1")  # no driver: say so at once, before cuda-bindings looks everywhere for it
        from napkin_ir.runtime.driver import check, cuda, init

        init()
        drv = cuda()
        dev = check(drv.cuDeviceGet(device), f"getting CUDA device {device}")
        attr = drv.CUdevice_attribute
        major = check(drv.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "reading sm major")
        minor = check(drv.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "reading sm minor")
        arch = f"sm_{int(major)}{int(minor)}"
    except Exception:
        arch = None
    _gpu_archs[device] = arch
    return arch


_said_no_ptxas = False


def _say_no_ptxas() -> None:
    global _said_no_ptxas
    if not _said_no_ptxas:
        _said_no_ptxas = True
        logger.warning("napkin-ir: no ptxas found (the nvidia-cuda-nvcc wheel, PATH, /usr/local/cuda/bin); kernels are "
                       "loaded from PTX, which the driver JIT-compiles at the first call in every process "
                       "(pip install nvidia-cuda-nvcc to assemble them once)")


# --- the cache -----------------------------------------------------------------------------

def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _contract_sha(d: dict[str, Any]) -> str:
    return _sha(json.dumps(d, sort_keys=True).encode())


def _compile(text: str, pipeline: str) -> CompiledKernel:
    from napkin_ir.build import compile_kernel

    return compile_kernel(text, pipeline)


class CompileCache:
    """Compiled kernels by (diagram text, pipeline, target), in memory and in `directory`
    (None: `default_directory()`; `disk=False`: memory only), with their machine code for
    `arch` (None: the GPU's here, none without a GPU; `cubin=False`: PTX only). `stats`
    counts where each `get` found its kernel (`memory`, `disk` or `compiled`) and how many
    cubins ptxas `assembled`."""

    def __init__(self, directory: str | Path | None = None, *, disk: bool = True, arch: str | None = None,
                 cubin: bool = True) -> None:
        if arch is not None and not _ARCH.match(arch):
            from napkin_ir.errors import UserError

            raise UserError(f"CompileCache: arch must name a GPU architecture such as 'sm_90' or 'sm_90a', found {arch!r}")
        self.directory = Path(directory) if directory is not None else default_directory()
        self.disk = disk
        self.arch = arch
        self.cubin = cubin
        self.stats: Counter[str] = Counter()
        self._memory: dict[str, CompiledKernel] = {}
        self._lock = threading.Lock()
        self._warned = False

    def get(self, text: str, pipeline: str, target: str = "", *, device: int = 0) -> CompiledKernel:
        """The kernel `pipeline` makes of `text`, compiled only if no cache holds it, with
        its cubin for GPU `device`'s architecture where ptxas can make one."""
        key = cache_key(text, pipeline, target, memo=self.directory / "source-fingerprints.json" if self.disk else None)
        with self._lock:
            kernel = self._memory.get(key)
            if kernel is not None:
                self.stats["memory"] += 1
                return kernel
            if self.disk:
                kernel, where = self._from_disk(key, text, pipeline, device)
            else:
                kernel, where = _compile(text, pipeline), "compiled"
                arch, tool = self._tool(kernel, device)
                if arch is not None and tool is not None:
                    kernel.cubin = self._assemble(kernel.ptx, arch, tool[0])
            self.stats[where] += 1
            self._memory[key] = kernel
            return kernel

    # -- files ---------------------------------------------------------------------------
    def paths(self, key: str) -> tuple[Path, Path]:
        """The entry's PTX and JSON."""
        return self.directory / f"{key}.ptx", self.directory / f"{key}.json"

    def cubin_path(self, key: str, arch: str) -> Path:
        return self.directory / f"{key}.{arch}.cubin"

    def _from_disk(self, key: str, text: str, pipeline: str, device: int) -> tuple[CompiledKernel, str]:
        found = self._read(key)
        if found is not None:  # no lock needed to read: every file is renamed into place whole
            kernel, meta = found
            arch, tool = self._tool(kernel, device)
            if arch is None or tool is None:
                return kernel, "disk"
            kernel.cubin = self._read_cubin(key, meta, arch, tool[1])
            if kernel.cubin is not None:
                return kernel, "disk"
        with self._file_lock(key):
            found = self._read(key)  # another process may have written it while this one waited
            if found is None:
                kernel, where = _compile(text, pipeline), "compiled"
                meta = {"format": ENTRY_FORMAT, "key": key, "ptx_sha256": _sha(kernel.ptx.encode()), "cubins": {}}
                changed = True
            else:
                (kernel, meta), where, changed = found, "disk", False
            arch, tool = self._tool(kernel, device)
            if arch is not None and tool is not None:
                kernel.cubin = self._read_cubin(key, meta, arch, tool[1])
                if kernel.cubin is None:
                    kernel.cubin = self._assemble(kernel.ptx, arch, tool[0])
                    if kernel.cubin is not None:
                        meta["cubins"][arch] = {"sha256": _sha(kernel.cubin), "ptxas": tool[1], "ptx_sha256": meta["ptx_sha256"]}
                        changed = self._write_file(self.cubin_path(key, arch), kernel.cubin) or changed
            if changed:
                self._write(key, kernel, meta, ptx=where == "compiled")
        return kernel, where

    def _read(self, key: str) -> tuple[CompiledKernel, dict[str, Any]] | None:
        """The entry `key`, checked whole; None where anything about it is missing or wrong."""
        ptx_path, json_path = self.paths(key)
        try:
            d = json.loads(json_path.read_bytes().decode("utf-8"))
            if not isinstance(d, dict):
                return None
            meta = d.pop("cache", None)
            if not (isinstance(meta, dict) and meta.get("format") == ENTRY_FORMAT and meta.get("key") == key
                    and meta.get("contract_sha256") == _contract_sha(d) and isinstance(meta.get("cubins"), dict)):
                return None
            ptx = ptx_path.read_bytes()
            if meta.get("ptx_sha256") != _sha(ptx):
                return None
            from napkin_ir.runtime.compiled import CompiledKernel
            from napkin_ir.runtime.contract import LaunchContract

            return CompiledKernel(ptx.decode("utf-8"), LaunchContract.from_dict(d)), meta
        except Exception as e:  # absent, cut short, overwritten, of another version: compile anew
            if not isinstance(e, FileNotFoundError):
                logger.debug("napkin-ir: compile cache entry %s is unreadable (%s: %s); compiling it again",
                             key, type(e).__name__, e)
            return None

    def _read_cubin(self, key: str, meta: dict[str, Any], arch: str, ptxas: str) -> bytes | None:
        record = meta["cubins"].get(arch)
        if not (isinstance(record, dict) and record.get("ptxas") == ptxas and record.get("ptx_sha256") == meta.get("ptx_sha256")):
            return None
        try:
            image = self.cubin_path(key, arch).read_bytes()
        except OSError:
            return None
        return image if image and _sha(image) == record.get("sha256") else None

    def _tool(self, kernel: CompiledKernel, device: int) -> tuple[str | None, tuple[str, str] | None]:
        """The architecture to assemble `kernel` for here, and ptxas (path, version)."""
        if not self.cubin:
            return None, None
        target = ptx_target(kernel.ptx)
        if target is None:
            return None, None
        arch = machine_arch(target, self.arch if self.arch is not None else gpu_arch(device))
        if arch is None:
            return None, None
        path = find_ptxas()
        version = ptxas_version(path, self.directory / "ptxas-versions.json" if self.disk else None) if path else None
        if path is None or version is None:
            _say_no_ptxas()
            return arch, None
        return arch, (path, version)

    def _assemble(self, ptx: str, arch: str, ptxas: str) -> bytes | None:
        try:
            image = assemble(ptx, arch, ptxas)
        except Exception as e:  # the driver's JIT gets the PTX, and says what is wrong with it at load
            logger.warning("napkin-ir: %s; the kernel is loaded from PTX instead", e)
            return None
        self.stats["assembled"] += 1
        return image

    @contextlib.contextmanager
    def _file_lock(self, key: str) -> Iterator[None]:
        """The entry's lock across processes, where the folder and the platform allow one."""
        try:
            import fcntl
        except ImportError:  # not POSIX: entries are still written whole, perhaps twice
            yield
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.directory / f"{key}.lock", os.O_RDWR | os.O_CREAT, 0o666)
        except OSError:
            yield  # a folder that cannot be written: the write warns
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def _write(self, key: str, kernel: CompiledKernel, meta: dict[str, Any], *, ptx: bool) -> None:
        ptx_path, json_path = self.paths(key)
        d = kernel.contract.to_dict()
        meta["contract_sha256"] = _contract_sha(d)
        if ptx and not self._write_file(ptx_path, kernel.ptx.encode()):
            return
        self._write_file(json_path, (json.dumps({**d, "cache": meta}, indent=2) + "\n").encode())  # last: it vouches for the rest

    def _write_file(self, path: Path, data: bytes) -> bool:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            _write_whole(path, data)
            return True
        except OSError as e:
            if not self._warned:
                warnings.warn(f"napkin-ir: cannot write the compile cache in {self.directory} ({e}); "
                              "kernels are kept in memory only (set NAPKIN_CACHE_DIR to a writable folder)", stacklevel=5)
                self._warned = True
            return False

    def clear(self, *, disk: bool = False) -> None:
        """Forget the kernels in memory and, with `disk`, the cache's files."""
        with self._lock:
            self._memory.clear()
            if disk and self.directory.is_dir():
                for pattern in ("*.ptx", "*.json", "*.cubin", "*.lock"):
                    for path in self.directory.glob(pattern):
                        path.unlink(missing_ok=True)


def _write_whole(path: Path, data: bytes) -> None:
    """`data` to a temporary file beside `path`, renamed over it once written whole."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


_default: CompileCache | None = None


def default_cache() -> CompileCache:
    """The process's cache, in `default_directory()` as it was when first asked for."""
    global _default
    if _default is None:
        _default = CompileCache()
    return _default


__all__ = ["CompileCache", "assemble", "cache_key", "default_cache", "default_directory", "find_ptxas", "gpu_arch",
           "machine_arch", "pass_identities", "ptx_target", "ptxas_version", "source_fingerprint", "xdsl_version"]
