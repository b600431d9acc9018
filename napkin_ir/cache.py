"""The compile cache: each diagram is compiled once per pipeline, target and napkin-ir.

A compile goes through every level and, with `autotile=true`, through the napkin model's
search: from a fraction of a second to minutes. `CompileCache` keeps what it made in
memory (the kernel object, with the modules the driver loaded from it) and on disk (the
PTX and the launch contract JSON, `KEY.ptx` and `KEY.json`), so that a second call, or a
second process, does not compile again. The key is a SHA-256 of the diagram's text, the
pipeline with its options, the PTX target, napkin-ir's version and a fingerprint of its
source files (an editable install changes without a new version). The folder is
`$NAPKIN_CACHE_DIR`, else `$XDG_CACHE_HOME/napkin-ir`, else `~/.cache/napkin-ir`; files
are written whole (to a temporary name, then renamed), so processes may share it. A cache
folder that cannot be written is used from memory alone.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
import threading
import warnings
from collections import Counter
from pathlib import Path

from napkin_ir.errors import UserError
from napkin_ir.build import compile_kernel
from napkin_ir.runtime.compiled import CompiledKernel
from napkin_ir.runtime.contract import LaunchContract, napkin_version


def default_directory() -> Path:
    """`$NAPKIN_CACHE_DIR`, else `$XDG_CACHE_HOME/napkin-ir`, else `~/.cache/napkin-ir`."""
    if os.environ.get("NAPKIN_CACHE_DIR"):
        return Path(os.environ["NAPKIN_CACHE_DIR"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base).expanduser() if base else Path.home() / ".cache") / "napkin-ir"


@functools.cache
def source_fingerprint() -> str:
    """A hash of napkin-ir's Python sources: a compiler changed in place compiles anew."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def cache_key(text: str, pipeline: str, target: str = "") -> str:
    payload = {"napkin_ir": napkin_version(), "source": source_fingerprint(), "diagram": text, "pipeline": pipeline, "target": target}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


class CompileCache:
    """Compiled kernels by (diagram text, pipeline, target), in memory and in `directory`
    (None: `default_directory()`; `disk=False`: memory only). `stats` counts where each
    `get` found its kernel: `memory`, `disk` or `compiled`."""

    def __init__(self, directory: str | Path | None = None, *, disk: bool = True) -> None:
        self.directory = Path(directory) if directory is not None else default_directory()
        self.disk = disk
        self.stats: Counter[str] = Counter()
        self._memory: dict[str, CompiledKernel] = {}
        self._lock = threading.Lock()
        self._warned = False

    def get(self, text: str, pipeline: str, target: str = "") -> CompiledKernel:
        """The kernel `pipeline` makes of `text`, compiled only if no cache holds it."""
        key = cache_key(text, pipeline, target)
        with self._lock:
            kernel = self._memory.get(key)
            if kernel is not None:
                self.stats["memory"] += 1
                return kernel
            kernel = self._read(key) if self.disk else None
            if kernel is not None:
                self.stats["disk"] += 1
            else:
                kernel = compile_kernel(text, pipeline)
                self.stats["compiled"] += 1
                if self.disk:
                    self._write(key, kernel)
            self._memory[key] = kernel
            return kernel

    def paths(self, key: str) -> tuple[Path, Path]:
        return self.directory / f"{key}.ptx", self.directory / f"{key}.json"

    def _read(self, key: str) -> CompiledKernel | None:
        ptx, contract = self.paths(key)
        try:
            return CompiledKernel(ptx.read_text(), LaunchContract.from_json(contract.read_text()))
        except (OSError, UserError):  # absent, or half-written by an older napkin-ir: compile anew
            return None

    def _write(self, key: str, kernel: CompiledKernel) -> None:
        ptx, contract = self.paths(key)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            _write_whole(ptx, kernel.ptx)
            _write_whole(contract, kernel.contract.to_json())  # last: a contract means its PTX is there
        except OSError as e:
            if not self._warned:
                warnings.warn(f"napkin-ir: cannot write the compile cache in {self.directory} ({e}); "
                              "kernels are kept in memory only (set NAPKIN_CACHE_DIR to a writable folder)", stacklevel=3)
                self._warned = True

    def clear(self, *, disk: bool = False) -> None:
        """Forget the kernels in memory and, with `disk`, the cache's files."""
        with self._lock:
            self._memory.clear()
            if disk and self.directory.is_dir():
                for path in [*self.directory.glob("*.ptx"), *self.directory.glob("*.json")]:
                    path.unlink(missing_ok=True)


def _write_whole(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
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


__all__ = ["CompileCache", "cache_key", "default_cache", "default_directory", "source_fingerprint"]
