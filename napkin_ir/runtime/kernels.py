"""Loaded modules, their kernels, and launches.

`load_ptx` and `load_cubin` hand an image to the driver; `Module.kernel` looks a kernel up
with the parameter specs its arguments are checked against (`params.bind_arguments`,
before anything runs); `Kernel.launch` stages host arrays, launches and copies results
back. `Launcher` is the fast path for a kernel whose configuration is fixed (what
`CompiledKernel` launches): everything the driver is asked once is asked when it is made,
and a launch is one `cuLaunchKernel` on parameters cached by pointer. The launch configuration's checks (`launch_dims`, `check_launch`,
`needs_smem_optin`, `check_param_sizes`) are pure and testable without a GPU.
"""

from __future__ import annotations

import ctypes
import numbers
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from napkin_ir.runtime.driver import ArgumentError, Context, CudaError, check, cuda, error_name, get_context, pointer_device
from napkin_ir.runtime.params import BoundArgument, Param, bind_arguments
from napkin_ir.runtime.tensormap import TiledEncoder

# The driver refuses more than this much dynamic shared memory per block unless the
# function's MAX_DYNAMIC_SHARED_SIZE_BYTES attribute is raised first.
DEFAULT_DYNAMIC_SMEM_LIMIT = 48 * 1024
MAX_THREADS_PER_BLOCK = 1024
_JIT_LOG_BYTES = 64 * 1024
_MAX_PARAMS = 4096  # the PTX parameter space is 32 KiB; no kernel has more parameters


# --- modules ----------------------------------------------------------------------------

def _entries(ptx: str) -> list[str]:
    return re.findall(r"\.entry\s+([A-Za-z_$%][\w$]*)", ptx)


class Module:
    """A loaded PTX or cubin image; `kernel` looks its kernels up."""

    def __init__(self, handle: Any, context: Context, label: str, entries: list[str] | None, info_log: str) -> None:
        self.handle, self.context, self.label, self.entries, self.info_log = handle, context, label, entries, info_log

    def kernel(self, name: str, params: Sequence[Param]) -> Kernel:
        """The kernel `name`, to be launched with arguments matching `params`."""
        drv = cuda()
        self.context.activate()
        result = drv.cuModuleGetFunction(self.handle, name.encode())
        if int(result[0]) != 0:
            code_name, description = error_name(result[0])
            if self.entries is not None:
                defined = ", ".join(self.entries) or "no kernels"
                description = f"{description}; the module defines {defined}" if description else f"the module defines {defined}"
            raise CudaError(f"looking up kernel {name!r} in module {self.label}", code_name, description, int(result[0]))
        return Kernel(result[1], name, tuple(params), self)

    def unload(self) -> None:
        if self.handle is not None:
            self.context.activate()
            check(cuda().cuModuleUnload(self.handle), f"unloading module {self.label}")
            self.handle = None

    def __enter__(self) -> Module:
        return self

    def __exit__(self, *exc: object) -> None:
        self.unload()


def _load_image(image: bytes, context: Context, label: str, entries: list[str] | None) -> Module:
    drv = cuda()
    error_log, info_log = bytearray(_JIT_LOG_BYTES), bytearray(_JIT_LOG_BYTES)
    opt = drv.CUjit_option
    options = [opt.CU_JIT_ERROR_LOG_BUFFER, opt.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
               opt.CU_JIT_INFO_LOG_BUFFER, opt.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES]
    values = [error_log, _JIT_LOG_BYTES, info_log, _JIT_LOG_BYTES]
    context.activate()
    result = drv.cuModuleLoadDataEx(image, len(options), options, values)
    log = _log_text(error_log)
    handle = check(result, f"loading module {label}", log=log)
    return Module(handle, context, label, entries, _log_text(info_log))


def _log_text(buffer: bytearray) -> str:
    return bytes(buffer).split(b"\0", 1)[0].decode(errors="replace").strip()


def load_ptx(ptx: str | bytes, *, device: int = 0, name: str = "<ptx>") -> Module:
    """JIT-compile PTX text for `device`; a CudaError carries the JIT log if it is refused."""
    text = ptx.decode() if isinstance(ptx, bytes) else ptx
    image = text.encode().rstrip(b"\0") + b"\0"  # the driver reads PTX up to a NUL
    return _load_image(image, get_context(device), name, _entries(text))


def load_cubin(image: bytes, *, device: int = 0, name: str = "<cubin>") -> Module:
    """Load a cubin (or fatbin) produced by ptxas/nvcc."""
    if not isinstance(image, (bytes, bytearray)):
        raise ArgumentError(f"load_cubin: expected the cubin as bytes, found {type(image).__name__}")
    return _load_image(bytes(image), get_context(device), name, None)


# --- launch configuration (pure) --------------------------------------------------------

def launch_dims(value: int | Sequence[int], what: str) -> tuple[int, int, int]:
    """A grid, block or cluster shape of 1 to 3 positive ints, padded with 1s."""
    dims = tuple(value) if isinstance(value, Sequence) else (value,)
    if not 1 <= len(dims) <= 3:
        raise ArgumentError(f"{what}: expected 1 to 3 dimensions, found {len(dims)} ({value!r})")
    for k, d in enumerate(dims):
        if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 1:
            raise ArgumentError(f"{what}[{k}]: expected a positive int, found {d!r}")
    return tuple(int(d) for d in (*dims, *(1,) * (3 - len(dims))))  # type: ignore[return-value]


def check_launch(grid: tuple[int, int, int], block: tuple[int, int, int], cluster: tuple[int, int, int] | None) -> None:
    """Refuse configurations the driver would refuse, with a message that says why."""
    threads = block[0] * block[1] * block[2]
    if threads > MAX_THREADS_PER_BLOCK:
        raise ArgumentError(f"block {block}: {threads} threads per block, at most {MAX_THREADS_PER_BLOCK}")
    if block[2] > 64:
        raise ArgumentError(f"block {block}: the z dimension is at most 64, found {block[2]}")
    if grid[0] > 2**31 - 1 or grid[1] > 65535 or grid[2] > 65535:
        raise ArgumentError(f"grid {grid}: at most (2**31 - 1, 65535, 65535) blocks")
    if cluster is not None:
        for k in range(3):
            if grid[k] % cluster[k]:
                raise ArgumentError(f"grid {grid} is not a whole number of clusters {cluster} (dimension {k})")


def needs_smem_optin(smem: int, static_smem: int, optin_limit: int, kernel: str) -> bool:
    """Whether `smem` dynamic bytes need the function attribute raised; refuse what cannot fit."""
    if smem <= DEFAULT_DYNAMIC_SMEM_LIMIT:
        return False
    if smem + static_smem > optin_limit:
        raise ArgumentError(
            f"kernel {kernel!r}: {smem} bytes of dynamic shared memory (plus {static_smem} static) exceed "
            f"this device's opt-in limit of {optin_limit} bytes per block (MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)")
    return True


def check_param_sizes(params: Sequence[Param], sizes: Sequence[int], kernel: str) -> None:
    """Compare the caller's parameter specs with the sizes the compiled kernel declares."""
    if len(sizes) != len(params):
        raise ArgumentError(f"kernel {kernel!r} declares {len(sizes)} parameters, "
                            f"but {len(params)} parameter specs were given")
    for k, (p, size) in enumerate(zip(params, sizes)):
        if p.size != size:
            raise ArgumentError(
                f"kernel {kernel!r}, parameter {k}{p.label}: the spec ({p.describe()}) is {p.size} bytes, "
                f"the kernel's parameter is {size} bytes")


# --- kernel parameters (ctypes storage the driver copies from) --------------------------

class KernelParams:
    """The `void*[]` that cuLaunchKernel's kernelParams wants, and the storage it points to.

    Each entry points to the bytes of one parameter: the 8-byte device address for a
    pointer, the scalar itself, or the 128 bytes of a tensor map (passed by value).
    cuda-bindings takes the array's address as an int; this object keeps it alive.
    """

    def __init__(self, values: Sequence[bytes | ctypes._SimpleCData], zeroed: Sequence[tuple[int, int]] = ()) -> None:
        self.zeroed = tuple(zeroed)  # (device address, 4-byte words) zeroed before each launch
        # the same as the direct zeroing passes them (`direct_memset`), made once
        self.zeroed_c = tuple((ctypes.c_uint64(pointer), ctypes.c_size_t(words)) for pointer, words in self.zeroed)
        self._storage: list[Any] = []
        addresses = [self._store(v) for v in values]
        self.array = (ctypes.c_void_p * max(len(addresses), 1))(*addresses)
        self.pointer = ctypes.c_void_p(ctypes.addressof(self.array))  # what the direct launch passes, made once

    def _store(self, value: bytes | ctypes._SimpleCData) -> int:
        if isinstance(value, ctypes._SimpleCData):
            self._storage.append(value)
            return ctypes.addressof(value)
        # by-value blobs (tensor maps) keep the 64-byte alignment CUtensorMap has in C
        raw = (ctypes.c_ubyte * (len(value) + 64))()
        self._storage.append(raw)
        address = ctypes.addressof(raw)
        address += -address % 64
        ctypes.memmove(address, value, len(value))
        return address

    @property
    def address(self) -> int:
        return ctypes.addressof(self.array)

    def __len__(self) -> int:
        return len(self._storage)


_streams: dict[int, Any] = {}  # handle -> CUstream, so a launch on a torch stream's handle makes no object
_stream_pointers: dict[int, ctypes.c_void_p] = {}  # handle -> the c_void_p the direct launch passes
_direct: list[Any] = []  # the driver's cuLaunchKernel through ctypes (or None), found once
_direct_set: list[Any] = []  # the driver's cuMemsetD32Async through ctypes (or None), found once
_direct_ex: list[Any] = []  # the driver's cuLaunchKernelEx through ctypes (or None), found once


def _driver_function(name: str) -> Any:
    """The driver library's `name` through ctypes (restype int), or None where the library
    does not open this way or `NAPKIN_DIRECT_LAUNCH=0`."""
    if os.environ.get("NAPKIN_DIRECT_LAUNCH", "1") == "0":
        return None
    for library in ("libcuda.so.1", "libcuda.so", "nvcuda.dll"):
        try:
            fn = getattr(ctypes.CDLL(library), name)
        except (OSError, AttributeError):
            continue
        fn.restype = ctypes.c_int
        return fn
    return None


def direct_memset() -> Any:
    """The driver's own `cuMemsetD32Async`, through ctypes as `direct_launch`'s launch: a
    launch that zeroes the outputs its blocks add into costs no cuda-bindings call. Called
    with the address as a `c_uint64`, the value as an int, the words as a `c_size_t` and the
    stream as `stream_pointer`'s (`KernelParams.zeroed_c`). None as for `direct_launch`."""
    if not _direct_set:
        _direct_set.append(_driver_function("cuMemsetD32Async"))
    return _direct_set[0]


def direct_launch() -> Any:
    """The driver's own `cuLaunchKernel`, called through ctypes: under a microsecond of
    host time where cuda-bindings' wrapper costs several. None where the driver library
    cannot be opened this way, or `NAPKIN_DIRECT_LAUNCH=0` (the launch then goes through
    cuda-bindings).

    It is called without `argtypes`, which would convert all eleven arguments on every
    call: the caller passes the 32-bit dimensions as Python ints (ctypes passes an int as
    a C int, the same bits as the unsigned int the driver reads for values below 2**31,
    which `check_launch` and the shared memory limits keep them), and every pointer as a
    prepared `c_void_p` or None (`_direct_launcher`, `stream_pointer`, `KernelParams.pointer`)."""
    if not _direct:
        _direct.append(_driver_function("cuLaunchKernel"))
    return _direct[0]


def direct_launch_ex() -> Any:
    """The driver's own `cuLaunchKernelEx` through ctypes, as `direct_launch`: a cluster's
    launch (its dimensions an attribute of the launch) without a cuda-bindings config made
    and converted at every call. Called with a `_LaunchConfig` by reference, the function
    as a `c_void_p`, the parameters' `KernelParams.pointer` and None. None as for
    `direct_launch`."""
    if not _direct_ex:
        _direct_ex.append(_driver_function("cuLaunchKernelEx"))
    return _direct_ex[0]


CLUSTER_DIMENSION = 4  # CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION


class _LaunchAttribute(ctypes.Structure):
    """The driver's CUlaunchAttribute: an id, padded to 8 bytes, then a 64-byte union."""

    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", ctypes.c_uint * 16)]


class _LaunchConfig(ctypes.Structure):
    """The driver's CUlaunchConfig."""

    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint), ("gridDimZ", ctypes.c_uint),
                ("blockDimX", ctypes.c_uint), ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(_LaunchAttribute)), ("numAttrs", ctypes.c_uint)]


def _cluster_launcher(fn: Any, function: int, dims: tuple[int, ...], cluster: tuple[int, int, int]) -> Any:
    """`launch(stream, params)` as `_direct_launcher`'s, through `fn` (the driver's
    cuLaunchKernelEx through ctypes) with the cluster dimensions `cluster`: a config for
    each stream, made at its first launch and read by the driver at each (never written
    after, so launches from several threads may share it)."""
    handle = ctypes.c_void_p(function)
    attribute = (_LaunchAttribute * 1)()
    attribute[0].id = CLUSTER_DIMENSION
    attribute[0].value[0], attribute[0].value[1], attribute[0].value[2] = cluster
    configs: dict[int, Any] = {}

    def config(stream: ctypes.c_void_p | None) -> Any:
        if len(configs) > 1024:
            configs.clear()
        # a pointer keeps its config alive, and the config the attribute array it points at
        found = configs[stream.value if stream is not None else 0] = ctypes.pointer(_LaunchConfig(*dims, stream, attribute, 1))
        return found

    def launch(stream: ctypes.c_void_p | None, params: ctypes.c_void_p) -> int:
        found = configs.get(stream.value if stream is not None else 0)
        return fn(found if found is not None else config(stream), handle, params, None)

    return launch


def stream_pointer(stream: int | None) -> ctypes.c_void_p | None:
    """A stream handle (an int) as the direct launch passes it: None for 0 or None (the
    legacy default stream), else a `c_void_p`, made once per handle."""
    if not stream:
        return None
    found = _stream_pointers.get(stream)
    if found is None:
        if len(_stream_pointers) > 1024:
            _stream_pointers.clear()
        found = _stream_pointers[stream] = ctypes.c_void_p(stream)
    return found


def _direct_launcher(fn: Any, function: int, dims: tuple[int, ...]) -> Any:
    """`launch(stream, params)`: `fn` (the driver's cuLaunchKernel through ctypes) on
    `function` with the grid, block and dynamic shared memory `dims`, fixed here, so that a
    launch reads them from the closure: no attribute, tuple or keyword at call time.
    `stream` is `stream_pointer`'s, `params` a `KernelParams.pointer`; returns the CUresult.
    None where a dimension would not fit a C int."""
    if not all(0 <= d < 2**31 for d in dims):  # passed as C ints (see direct_launch): through cuda-bindings
        return None
    handle = ctypes.c_void_p(function)
    gx, gy, gz, bx, by, bz, smem = dims

    def launch(stream: ctypes.c_void_p | None, params: ctypes.c_void_p) -> int:
        return fn(handle, gx, gy, gz, bx, by, bz, smem, stream, params, None)

    return launch


def _as_stream(stream: Any) -> Any:
    if type(stream) is int:
        found = _streams.get(stream)
        if found is None:
            if len(_streams) > 1024:
                _streams.clear()
            found = _streams[stream] = cuda().CUstream(stream)
        return found
    drv = cuda()
    if stream is None:
        return drv.CUstream(0)
    if isinstance(stream, drv.CUstream):
        return stream
    if isinstance(stream, int) and not isinstance(stream, bool):
        return drv.CUstream(stream)
    if hasattr(stream, "__cuda_stream__"):  # the CUDA stream protocol: (version, handle)
        return drv.CUstream(int(stream.__cuda_stream__()[1]))
    if hasattr(stream, "cuda_stream"):  # torch.cuda.Stream, cupy streams (.ptr)
        return drv.CUstream(int(stream.cuda_stream))
    if hasattr(stream, "ptr"):
        return drv.CUstream(int(stream.ptr))
    raise ArgumentError(f"stream: expected None, an int handle, a CUstream or a stream object, found {type(stream).__name__}")


# --- kernels ----------------------------------------------------------------------------

@dataclass
class _Staged:
    """A host array's temporary device copy for one launch."""

    argument: BoundArgument
    pointer: int


class Kernel:
    """One kernel of a loaded module, with the parameter specs its arguments are checked against."""

    def __init__(self, handle: Any, name: str, params: tuple[Param, ...], module: Module) -> None:
        self.handle, self.name, self.params, self.module = handle, name, params, module
        self._smem_optin = DEFAULT_DYNAMIC_SMEM_LIMIT
        self.param_sizes = self._query_param_sizes()
        if self.param_sizes is not None:
            check_param_sizes(params, self.param_sizes, name)

    def _query_param_sizes(self) -> list[int] | None:
        # cuFuncGetParamInfo (driver 12.4+) reports what the compiled kernel declares, so a
        # spec list that does not match is caught here instead of corrupting the launch
        drv = cuda()
        query = getattr(drv, "cuFuncGetParamInfo", None)
        if query is None:
            return None
        # ask for the count first where the driver can tell it (13.0+): probing past the last
        # parameter is an API error that compute-sanitizer reports on every kernel lookup
        count = _MAX_PARAMS + 1
        counter = getattr(drv, "cuFuncGetParamCount", None)
        if counter is not None:
            try:
                res = counter(self.handle)
                if int(res[0]) == 0:
                    count = int(res[1])
            except Exception:
                pass
        sizes: list[int] = []
        for k in range(count):
            try:
                result = query(self.handle, k)
            except Exception:
                return None
            if int(result[0]) == int(drv.CUresult.CUDA_ERROR_INVALID_VALUE):
                return sizes  # past the last parameter
            if int(result[0]) != 0:
                return None  # not supported by this driver: skip the check
            sizes.append(int(result[2]))
        return sizes if count <= _MAX_PARAMS else None

    def launch(self, grid: int | Sequence[int], block: int | Sequence[int], args: Sequence[Any], *,
               smem: int = 0, stream: Any = None, cluster: int | Sequence[int] | None = None,
               sync: bool = True) -> None:
        """Launch on `grid` x `block` with `smem` bytes of dynamic shared memory.

        Arguments are checked against the kernel's parameter specs before anything runs.
        Numpy arrays are copied to the device and, for `out` parameters, back afterwards;
        device arrays (DeviceArray, __cuda_array_interface__, DLPack) are used in place.
        With `sync` (the default) the stream is synchronised so that errors surface here;
        launches with numpy arguments always synchronise, to copy results back.
        """
        grid3, block3 = launch_dims(grid, "grid"), launch_dims(block, "block")
        cluster3 = launch_dims(cluster, "cluster") if cluster is not None else None
        check_launch(grid3, block3, cluster3)
        if isinstance(smem, bool) or not isinstance(smem, numbers.Integral) or smem < 0:
            raise ArgumentError(f"smem: expected a byte count >= 0, found {smem!r}")
        smem = int(smem)
        context = self.module.context
        bound = bind_arguments(self.params, args, kernel=self.name, device=context.ordinal)
        context.activate()
        self._allow_dynamic_smem(smem)
        hstream = _as_stream(stream)
        staged: list[_Staged] = []
        try:
            for b in bound:
                if b.host is not None:
                    staged.append(_stage_in(b, hstream, self.name))
                elif b.pointer is not None:
                    _check_pointer_device(b, context, self.name)
            pointers = {s.argument.index: s.pointer for s in staged}
            kernel_params = KernelParams([b.storage(pointers.get(b.index)) for b in bound])
            where = f"launching kernel {self.name!r} (grid {grid3}, block {block3}, {smem} bytes dynamic shared memory)"
            self._launch(grid3, block3, cluster3, smem, hstream, kernel_params, where)
            if sync or staged:
                check(cuda().cuStreamSynchronize(hstream), f"running kernel {self.name!r} (grid {grid3}, block {block3})")
            outputs = [s for s in staged if s.argument.param.out]
            for s in outputs:
                _stage_out(s, hstream, self.name)
            if outputs:
                check(cuda().cuStreamSynchronize(hstream), f"copying the results of kernel {self.name!r} back")
        finally:
            _free_staged(staged)

    def _allow_dynamic_smem(self, smem: int) -> None:
        if smem <= self._smem_optin:
            return
        drv = cuda()
        static = check(drv.cuFuncGetAttribute(drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, self.handle),
                       f"reading kernel {self.name!r}'s static shared memory size")
        optin = self.module.context.attribute("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN")
        if needs_smem_optin(smem, int(static), optin, self.name):
            attr = drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            check(drv.cuFuncSetAttribute(self.handle, attr, smem),
                  f"allowing kernel {self.name!r} {smem} bytes of dynamic shared memory")
            self._smem_optin = smem

    def _launch(self, grid: tuple[int, int, int], block: tuple[int, int, int], cluster: tuple[int, int, int] | None,
                smem: int, hstream: Any, params: KernelParams, where: str) -> None:
        drv = cuda()
        if cluster is None:
            check(drv.cuLaunchKernel(self.handle, *grid, *block, smem, hstream, params.address, 0), where)
            return
        attribute = drv.CUlaunchAttribute()
        attribute.id = drv.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        attribute.value.clusterDim.x, attribute.value.clusterDim.y, attribute.value.clusterDim.z = cluster
        config = drv.CUlaunchConfig()
        config.gridDimX, config.gridDimY, config.gridDimZ = grid
        config.blockDimX, config.blockDimY, config.blockDimZ = block
        config.sharedMemBytes, config.hStream = smem, hstream
        config.attrs, config.numAttrs = [attribute], 1
        check(drv.cuLaunchKernelEx(config, self.handle, params.address, 0), f"{where} with clusters {cluster}")

    def __repr__(self) -> str:
        return f"Kernel({self.name!r}, {len(self.params)} params, module {self.module.label})"


class Launcher:
    """`kernel` launched on a fixed grid, block, dynamic shared memory and cluster, with
    every parameter a device address: the per-launch work reduced to a dictionary look-up
    and one `cuLaunchKernel`, so that it costs a few microseconds of host time and can be
    captured in a CUDA graph (no allocation, synchronisation or driver query).

    Made once per kernel and device: the configuration is checked and the shared memory
    attribute raised here. `params_for(pointers)` packs the parameters of one launch (the
    8-byte addresses; for the parameters in `maps`, a tensor map re-encoded at the address
    by its `TiledEncoder`) and keeps them by pointers, up to `cache_size` sets, so a caller
    whose buffers come back at the same addresses (torch's caching allocator, a captured
    graph) packs nothing. Arguments are not checked here: `CompiledKernel` checks them.
    The parameters in `zeroed` (index -> bytes; outputs the kernel adds into) are zeroed
    on the launch's stream before each launch (`cuMemsetD32Async`, which graphs capture).
    """

    def __init__(self, kernel: Kernel, grid: Sequence[int], block: Sequence[int], smem: int,
                 cluster: Sequence[int] | None = None, maps: dict[int, TiledEncoder] | None = None, *,
                 cache_size: int = 256, zeroed: dict[int, int] | None = None) -> None:
        self.kernel, self.maps, self.cache_size = kernel, dict(maps or {}), cache_size
        self.zeroed = dict(zeroed or {})
        self.grid, self.block = launch_dims(grid, "grid"), launch_dims(block, "block")
        self.cluster = launch_dims(cluster, "cluster") if cluster is not None else None
        check_launch(self.grid, self.block, self.cluster)
        self.smem = int(smem)
        self.context = kernel.module.context
        self.context.activate()
        kernel._allow_dynamic_smem(self.smem)
        drv = cuda()
        self._success = drv.CUresult.CUDA_SUCCESS
        self._handle = kernel.handle
        self._dims = (*self.grid, *self.block, self.smem)
        self._launch_kernel = drv.cuLaunchKernel
        self._config: list[Any] | None = None  # the cluster attribute of cuLaunchKernelEx
        if self.cluster is not None:
            attribute = drv.CUlaunchAttribute()
            attribute.id = drv.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
            attribute.value.clusterDim.x, attribute.value.clusterDim.y, attribute.value.clusterDim.z = self.cluster
            self._config = [attribute]
        # `direct(stream_pointer(handle), params.pointer)`: the launch without cuda-bindings, where
        # the driver library opens through ctypes (cuLaunchKernel; with a cluster, cuLaunchKernelEx);
        # a kernel with outputs to zero launches so from `launch_params` only, after its zeroing
        # (`direct_memset`), and `direct` stays None for the callers that launch it themselves
        self.direct: Any = None
        self._direct: Any = None
        self._memset = direct_memset() if self.zeroed else None
        fn = (direct_launch() if self._config is None else direct_launch_ex()) if self._memset is not None or not self.zeroed else None
        if fn is not None:
            try:
                function = int(self._handle)  # the CUfunction's address
            except (TypeError, ValueError):  # not a driver handle (a stand-in driver in tests): through cuda-bindings
                function = None
            if function is not None:
                self._direct = (_direct_launcher(fn, function, self._dims) if self.cluster is None else
                                _cluster_launcher(fn, function, self._dims, self.cluster)
                                if all(0 <= d < 2**31 for d in self._dims) else None)
                self.direct = None if self.zeroed else self._direct
        self._params: dict[tuple[int, ...], KernelParams] = {}
        self._encoded: dict[tuple[int, int], bytes] = {}  # (parameter, address) -> tensor map
        self.packed = 0  # how many parameter sets were packed (the rest came from the cache)

    def params_for(self, pointers: tuple[int, ...]) -> KernelParams:
        """The kernel parameters for device addresses `pointers` (one per parameter)."""
        found = self._params.get(pointers)
        if found is not None:
            return found
        values: list[bytes | ctypes._SimpleCData] = []
        for k, pointer in enumerate(pointers):
            encoder = self.maps.get(k)
            if encoder is None:
                values.append(ctypes.c_uint64(pointer))
                continue
            blob = self._encoded.get((k, pointer))
            if blob is None:  # a map is re-encoded only where its own pointer is new
                if len(self._encoded) >= 4 * self.cache_size:
                    self._encoded.clear()
                blob = self._encoded[(k, pointer)] = encoder.encode(pointer)
            values.append(blob)
        params = KernelParams(values, [(pointers[k], size // 4) for k, size in self.zeroed.items()])
        if len(self._params) >= self.cache_size:
            try:
                del self._params[next(iter(self._params))]  # the oldest
            except (KeyError, StopIteration, RuntimeError):  # another thread got there first
                pass
        self._params[pointers] = params
        self.packed += 1
        return params

    def launch(self, pointers: tuple[int, ...], stream: Any = None) -> None:
        """Launch on `stream` (a handle, a CUstream or a stream object) with `pointers`."""
        self.launch_params(self._params.get(pointers) or self.params_for(pointers), stream)

    def launch_params(self, params: KernelParams, stream: Any = None) -> None:
        direct = self._direct
        if direct is not None and (stream is None or type(stream) is int):
            # the common case, a handle (torch's current stream): straight to the driver
            handle = stream_pointer(stream)
            for pointer, words in params.zeroed_c:  # the outputs the blocks add into start at zero
                code = self._memset(pointer, 0, words, handle)
                if code:
                    check((cuda().CUresult(code),), f"zeroing an output of kernel {self.kernel.name!r}")
            code = direct(handle, params.pointer)
            if code:
                self.launch_failed(code, params, stream)
            return
        hstream = _as_stream(stream)
        for pointer, words in params.zeroed:  # the outputs the blocks add into start at zero
            check(cuda().cuMemsetD32Async(pointer, 0, words, hstream), f"zeroing an output of kernel {self.kernel.name!r}")
        if self._config is None:
            result = self._launch_kernel(self._handle, *self._dims, hstream, params.address, 0)
        else:
            result = self._launch_ex(params, hstream)
        if result[0] != self._success:
            self._launch_elsewhere(params, hstream, result)

    def launch_failed(self, code: int, params: KernelParams, stream: Any) -> None:
        """A direct launch that returned `code`: launched again in the kernel's context where
        another was current, else a CudaError naming the error."""
        self._launch_elsewhere(params, _as_stream(stream), (cuda().CUresult(code),))

    def _launch_ex(self, params: KernelParams, hstream: Any) -> Any:
        config = cuda().CUlaunchConfig()  # a fresh config: launches from two threads may not share one
        config.gridDimX, config.gridDimY, config.gridDimZ = self.grid
        config.blockDimX, config.blockDimY, config.blockDimZ = self.block
        config.sharedMemBytes, config.hStream = self.smem, hstream
        config.attrs, config.numAttrs = self._config, 1
        return cuda().cuLaunchKernelEx(config, self._handle, params.address, 0)

    def _launch_elsewhere(self, params: KernelParams, hstream: Any, result: Any) -> None:
        """A launch refused because another context was current (another device's, or
        none): launch in the kernel's own context and give the thread its context back."""
        drv = cuda()
        where = (f"launching kernel {self.kernel.name!r} (grid {self.grid}, block {self.block}, "
                 f"{self.smem} bytes dynamic shared memory)")
        retry = {int(drv.CUresult.CUDA_ERROR_INVALID_CONTEXT), int(drv.CUresult.CUDA_ERROR_INVALID_HANDLE),
                 int(drv.CUresult.CUDA_ERROR_CONTEXT_IS_DESTROYED)}
        if int(result[0]) not in retry:
            check(result, where)
        previous = check(drv.cuCtxGetCurrent(), "reading the current CUDA context")
        self.context.activate()
        try:
            if self._config is None:
                result = self._launch_kernel(self._handle, *self._dims, hstream, params.address, 0)
            else:
                result = self._launch_ex(params, hstream)
            check(result, where)
        finally:
            if previous is not None and int(previous) != 0:
                drv.cuCtxSetCurrent(previous)

    def synchronize(self, stream: Any = None) -> None:
        check(cuda().cuStreamSynchronize(_as_stream(stream)), f"running kernel {self.kernel.name!r}")

    def __repr__(self) -> str:
        return f"Launcher({self.kernel.name!r}, grid {self.grid}, block {self.block}, smem {self.smem})"


def _stage_in(b: BoundArgument, hstream: Any, kernel: str) -> _Staged:
    drv = cuda()
    host = b.host
    assert host is not None
    nbytes = max(host.nbytes, 1)
    pointer = int(check(drv.cuMemAlloc(nbytes), f"allocating {nbytes} bytes for argument {b.index} of {kernel!r}"))
    staged = _Staged(b, pointer)
    try:
        if host.nbytes:
            check(drv.cuMemcpyHtoDAsync(pointer, host.ctypes.data, host.nbytes, hstream),
                  f"copying argument {b.index} of {kernel!r} to the device")
    except BaseException:
        _free_staged([staged])
        raise
    return staged


def _stage_out(s: _Staged, hstream: Any, kernel: str) -> None:
    drv = cuda()
    host = s.argument.host
    assert host is not None
    if host.nbytes:
        check(drv.cuMemcpyDtoHAsync(host.ctypes.data, s.pointer, host.nbytes, hstream),
              f"copying argument {s.argument.index} of {kernel!r} back to the host")


def _free_staged(staged: list[_Staged]) -> None:
    for s in staged:
        try:
            cuda().cuMemFree(s.pointer)
        except Exception:  # a faulted context cannot free; the original error matters more
            pass
    staged.clear()


def _check_pointer_device(b: BoundArgument, context: Context, kernel: str) -> None:
    """Refuse device memory of another GPU; unknown pointers are left to the launch to judge."""
    ordinal = pointer_device(b.pointer)  # type: ignore[arg-type]
    if ordinal is not None and ordinal != context.ordinal:
        raise ArgumentError(
            f"kernel {kernel!r}, argument {b.index}{b.param.label}: the array lives on device {ordinal}, "
            f"the kernel runs on device {context.ordinal}")
