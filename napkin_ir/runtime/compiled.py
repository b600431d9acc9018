"""A kernel the pipelines compiled, ready to launch on named arrays.

A `CompiledKernel` is the PTX text and its `LaunchContract` (grid, threads, dynamic shared
memory, cluster, persistent-grid rule, tensor-map boxes, and each parameter's element type
and shape from the diagram), so a caller passes device arrays by the diagram's argument
names and nothing else:

    gemm = napkin_ir.compile(text, target="sm90")
    gemm(a=a, b=b, out=c, stream=torch.cuda.current_stream())

Every argument is checked against the diagram's types before any CUDA call
(`check_arguments`: a missing or unknown name, a host array, the dtype, the shape, the
strides, the device), and a failing check names the argument. Launches are asynchronous
on `stream` (the legacy default stream where none is given) unless `sync=True`.

A call costs microseconds of host time: torch tensors are read through `data_ptr()`, and
a set of argument layouts (dtype, shape, strides, device) that passed the checks once is
only looked up again; the loaded function, grid, shared memory attribute and tensor-map
encoders live in one `Launcher` per device, and the packed parameters are kept by pointer.
`bind` packs them ahead of time, for the cheapest launch (`kernel(bound=...)`). Nothing in
a call allocates, synchronises (unless `sync`) or asks the driver, so a call can be
captured in a CUDA graph once the kernel has been launched (loaded) outside the capture.
The runtime never compiles: `napkin_ir.compile` (cached) and `napkin_ir.build.compile_kernel`
(not) make one.
"""

from __future__ import annotations

import re

from dataclasses import dataclass, field
from math import prod
from pathlib import Path
from typing import Any

import numpy as np

from napkin_ir.runtime.arrays import DeviceView, device_view, dtype_name, normalize_dtype, torch_tensor_type
from napkin_ir.runtime.contract import LaunchContract, ParamContract, TmaBox
from napkin_ir.runtime.driver import ArgumentError, CudaError
from napkin_ir.runtime.kernels import Kernel, KernelParams, Launcher, load_cubin, load_ptx, stream_pointer
from napkin_ir.runtime.params import Param
from napkin_ir.runtime.tensormap import TensorMap, TiledEncoder, plan_tiled

_TORCH_HINT = "torch.as_tensor(x, device='cuda')"


def check_arguments(contract: LaunchContract, arrays: dict[str, Any], device: int | None = None) -> tuple[dict[str, DeviceView], int]:
    """Check `arrays` (the diagram's names to device arrays) against the kernel's parameters
    and find the device they live on; raises ArgumentError naming the argument. Pure: it
    reads what each array says of itself and calls no CUDA function."""
    where = f"kernel {contract.kernel!r}"
    names = contract.arg_names()
    unknown = [n for n in arrays if n not in names]
    if unknown:
        raise ArgumentError(f"{where} has no argument named {', '.join(map(repr, unknown))}; it takes {', '.join(names)}")
    missing = [n for n in names if n not in arrays]
    if missing:
        raise ArgumentError(f"{where}: no array given for {', '.join(missing)} (it takes {', '.join(names)})")
    views: dict[str, DeviceView] = {}
    found: dict[int, str] = {}
    for p in contract.params:
        view = _device_array(p, arrays[p.arg], f"{where}, argument {p.arg!r}")
        if view.device is not None:
            found.setdefault(view.device, p.arg)
        views[p.arg] = view
    if device is None and len(found) > 1:
        (d0, a0), (d1, a1) = list(found.items())[:2]
        raise ArgumentError(f"{where}: argument {a0!r} lives on CUDA device {d0}, argument {a1!r} on device {d1}; "
                            "a kernel reads the memory of one device")
    target = device if device is not None else next(iter(found), 0)
    for d, arg in found.items():
        if d != target:
            raise ArgumentError(f"{where}, argument {arg!r}: the array lives on CUDA device {d}, the kernel runs on device {target}")
    return views, target


def _device_array(p: ParamContract, value: Any, where: str) -> DeviceView:
    expected = p.describe()
    if isinstance(value, np.ndarray):
        raise ArgumentError(f"{where}: a host (numpy) array; the kernel reads device memory: {expected}, copied to the "
                            f"GPU (DeviceArray.from_numpy(x) or {_TORCH_HINT})")
    view = device_view(value, where)
    if view is None:
        raise ArgumentError(f"{where}: expected a device array ({expected}: torch, cupy, DeviceArray, anything with "
                            f"__cuda_array_interface__ or DLPack), found {type(value).__name__}")
    if isinstance(view, np.ndarray):
        raise ArgumentError(f"{where}: the array lives in host memory; the kernel reads device memory: {expected}, "
                            f"on the GPU ({_TORCH_HINT})")
    if p.dtype is not None and view.dtype != normalize_dtype(p.dtype):
        raise ArgumentError(f"{where}: expected {expected} ({dtype_name(normalize_dtype(p.dtype))}), found {dtype_name(view.dtype)}")
    if p.shape is not None and tuple(view.shape) != tuple(p.shape):
        raise ArgumentError(f"{where}: expected shape {list(p.shape)} ({expected}), found {list(view.shape)}")
    if not view.contiguous:
        raise ArgumentError(f"{where}: expected a C-contiguous array, found strides {list(view.strides or ())} (bytes) for "
                            f"shape {list(view.shape)}; pass a contiguous copy (x.contiguous())")
    if p.role in ("out", "accumulate") and view.readonly:
        raise ArgumentError(f"{where}: the kernel writes this array, but its {view.source} producer marks it read-only")
    if view.pointer % 16:
        raise ArgumentError(f"{where}: the kernel needs 16-byte aligned memory, found address 0x{view.pointer:x} "
                            f"({view.pointer % 16} bytes past); pass a fresh or contiguous copy")
    return view


@dataclass
class CompiledKernel:
    """PTX and its launch contract; call it with the diagram's arrays by name."""

    ptx: str
    contract: LaunchContract
    _kernels: dict[Any, Kernel] = field(default_factory=dict, repr=False, compare=False)  # device, or (device, instance)
    _launchers: dict[Any, Launcher] = field(default_factory=dict, repr=False, compare=False)
    _accepted: dict[tuple, int] = field(default_factory=dict, repr=False, compare=False)  # layouts that passed -> device
    _args: tuple[str, ...] | None = field(default=None, init=False, repr=False, compare=False)  # the diagram's names, in order
    cubin: bytes | None = field(default=None, repr=False, compare=False)  # the PTX assembled (napkin_ir.cache); loaded instead

    # -- what the contract says ----------------------------------------------------------
    @property
    def name(self) -> str:
        return self.contract.kernel

    @property
    def params(self) -> list[tuple[str, str]]:
        """(parameter name, PTX type), as the `ptx.kernel` declares them."""
        return [(p.name, "u64" if p.kind == "pointer" else p.kind) for p in self.contract.params]

    @property
    def grid(self) -> list[int]:
        return _trim(self.contract.grid)

    @property
    def block(self) -> list[int]:
        return _trim(self.contract.block)

    @property
    def smem(self) -> int:
        return self.contract.smem_bytes

    @property
    def persistent(self) -> int:
        return self.contract.persistent

    @property
    def cluster(self) -> list[int] | None:
        return list(self.contract.cluster) if self.contract.cluster else None

    @property
    def boxes(self) -> dict[str, TmaBox]:
        return {p.arg: p.tma for p in self.contract.params if p.tma is not None}

    def arg_names(self) -> list[str]:
        """The diagram's names for the parameters (`matmul_a` -> `a`)."""
        return self.contract.arg_names()

    # -- files ---------------------------------------------------------------------------
    def save(self, stem: str | Path) -> tuple[Path, Path]:
        """Write `STEM.ptx` and `STEM.json` (the launch contract): what docs/launch.md launches.
        `STEM` keeps any dots of its own (`k.v2` -> `k.v2.ptx`); a `.ptx` or `.json` on it is
        dropped. Each file is written whole to a temporary file beside it and renamed into
        place only when both are written, so a failure leaves the old pair as it was."""
        from napkin_ir.files import AtomicFile

        ptx, contract = _kernel_files(stem)
        pending: list[AtomicFile] = []
        try:
            for path, text in ((ptx, self.ptx), (contract, self.contract.to_json())):
                pending.append(AtomicFile(path))
                pending[-1].stream.write(text)
            for f in pending:
                f.commit()
        finally:
            for f in pending:
                f.discard()
        return ptx, contract

    @classmethod
    def load(cls, stem: str | Path) -> CompiledKernel:
        ptx, contract = _kernel_files(stem)
        return cls(ptx.read_text(), LaunchContract.from_json(contract.read_text()))

    # -- launching -----------------------------------------------------------------------
    @property
    def stateful(self) -> bool:
        """Whether the module keeps state its launches share: module-scope `.global` arrays (a
        split's turn counters, a 16-bit split's scratch and arrival counters), which two
        launches running at once would both use. Each `instance` of `kernel` and `launcher`
        is a module of its own, with its own."""
        return re.search(r"^\.global ", self.ptx, re.M) is not None

    def kernel(self, device: int = 0, instance: int = 0) -> Kernel:
        """The kernel loaded (JIT-compiled by the driver) on `device`, once per device (and
        `instance`: another loads the module again, with module-scope arrays of its own)."""
        key = (device, instance) if instance else device
        if key not in self._kernels:
            specs = [Param.tensor_map(name=p.arg) if p.kind == "tensormap" else Param.scalar("u64", name=p.arg)
                     for p in self.contract.params]
            self._kernels[key] = self._module(device).kernel(self.name, specs)
        return self._kernels[key]

    def _module(self, device: int) -> Any:
        """The cubin where there is one and it loads here (it is built for one architecture), else the PTX."""
        if self.cubin is not None:
            try:
                return load_cubin(self.cubin, device=device, name=f"<{self.name}>")
            except CudaError:
                pass
        return load_ptx(self.ptx, device=device, name=f"<{self.name}>")

    def launcher(self, device: int = 0, instance: int = 0) -> Launcher:
        """The kernel's `Launcher` on `device` (and of `kernel`'s `instance`), made once: the
        module loaded, the grid fixed (a persistent kernel's from the device's multiprocessor
        count, asked here once), the shared memory attribute raised, the tensor-map encoders
        ready."""
        key = (device, instance) if instance else device
        found = self._launchers.get(key)
        if found is None:
            kernel = self.kernel(device, instance)
            grid = self.contract.grid
            if self.persistent:
                grid = self.contract.launch_grid(kernel.module.context.attribute("MULTIPROCESSOR_COUNT"))
            maps = {k: TiledEncoder(_tma_plan(p), device) for k, p in enumerate(self.contract.params) if p.kind == "tensormap"}
            zeroed = {k: 4 * prod(p.shape or ()) for k, p in enumerate(self.contract.params) if p.role == "accumulate"}
            found = self._launchers[key] = Launcher(kernel, grid, self.contract.block, self.smem, self.contract.cluster,
                                                    maps, zeroed=zeroed)
        return found

    def launch_grid(self, device: int = 0) -> list[int]:
        """The grid; a persistent kernel gets as many blocks as the device holds at once."""
        if not self.persistent:
            return self.grid
        return _trim(self.launcher(device).grid)

    def check(self, arrays: dict[str, Any], device: int | None = None) -> tuple[dict[str, DeviceView], int]:
        """`check_arguments` for this kernel: the arrays' views and their device."""
        return check_arguments(self.contract, arrays, device)

    def pointers(self, arrays: dict[str, Any], device: int | None = None) -> tuple[tuple[int, ...], int]:
        """The arrays' device addresses in parameter order and the device they are on, after
        the checks. Torch tensors whose layouts (dtype, shape, strides, device) passed once
        are only looked up (and their addresses' alignment tested); anything else is
        checked in full (`check_arguments`)."""
        tensor = torch_tensor_type()
        key = None
        names = self._args
        if names is None:
            names = self._args = tuple(self.contract.arg_names())
        if tensor is not None and len(arrays) == len(names):
            layouts: list[Any] | None = [device]
            for name in names:  # one pass, no generator: this is the steady state of every checked call
                v = arrays.get(name)
                if not isinstance(v, tensor):
                    layouts = None
                    break
                layouts.append((v.dtype, v.shape, v.stride(), v.device))  # type: ignore[union-attr]
            if layouts is not None:
                key = tuple(layouts)
                found = self._accepted.get(key)
                if found is not None:
                    pointers = tuple([arrays[name].data_ptr() for name in names])
                    misaligned = 0
                    for p in pointers:
                        misaligned |= p
                    if not misaligned & 15:
                        return pointers, found
        views, device = self.check(arrays, device)
        pointers = tuple(views[p.arg].pointer for p in self.contract.params)
        if key is None:
            self._check_devices(views, device)
        else:
            if len(self._accepted) > 1024:
                self._accepted.clear()
            self._accepted[key] = device
        return pointers, device

    def _check_devices(self, views: dict[str, DeviceView], device: int) -> None:
        """Where a producer does not say its device (`__cuda_array_interface__`), ask the driver."""
        from napkin_ir.runtime.driver import pointer_device

        for p in self.contract.params:
            view = views[p.arg]
            if view.device is None:
                found = pointer_device(view.pointer)
                if found is not None and found != device:
                    raise ArgumentError(f"kernel {self.name!r}, argument {p.arg!r}: the array lives on CUDA device {found}, "
                                        f"the kernel runs on device {device}")

    def bind(self, arrays: dict[str, Any], device: int | None = None) -> BoundArguments:
        """Launch arguments from device arrays by name, checked against the diagram's types
        and packed (tensor maps encoded for TMA parameters, device addresses for the rest):
        `kernel(bound=...)` then launches with no check and no packing. The result holds
        the arrays, so that their memory lives as long as the addresses launched with it."""
        pointers, device = self.pointers(arrays, device)
        launcher = self.launcher(device)
        return BoundArguments(pointers, device, launcher.params_for(pointers), self, launcher, tuple(arrays.values()))

    def __call__(self, *, stream: Any = None, sync: bool = False, device: int | None = None, bound: list[Any] | None = None,
                 **arrays: Any) -> None:
        """Launch on `stream` (a torch or cupy stream, a CUstream or a handle; the legacy
        default stream where None), asynchronously unless `sync`. `device` is where the
        arrays say they are (device 0 where none says); `bound` reuses `bind`'s arguments,
        made by this kernel (on `device`, where one is named)."""
        if bound.__class__ is BoundArguments or isinstance(bound, BoundArguments):
            # the cheapest launch: everything was packed by `bind`; only the stream is new
            if bound.kernel is not self or arrays or (device is not None and device != bound.device):
                self._refuse_bound(bound, device, arrays)
            direct = bound.direct
            if direct is not None and (stream is None or type(stream) is int):
                code = direct(stream_pointer(stream), bound.pointer)
                if code:
                    bound.launcher.launch_failed(code, bound.params, stream)
            else:
                bound.launcher.launch_params(bound.params, stream)
            if sync:
                bound.launcher.synchronize(stream)
            return
        if bound is None:
            pointers, device = self.pointers(arrays, device)
        else:  # a list of addresses and tensor maps, as `bind` once returned
            pointers = tuple(b.plan.address if isinstance(b, TensorMap) else int(b) for b in bound)
        device = device or 0
        launcher = self._launchers.get(device) or self.launcher(device)
        launcher.launch(pointers, stream)
        if sync:
            launcher.synchronize(stream)


    def _refuse_bound(self, bound: BoundArguments, device: int | None, arrays: dict[str, Any]) -> None:
        where = f"kernel {self.name!r}"
        if bound.kernel is not self:
            other = bound.kernel.name if bound.kernel is not None else "no kernel"
            same = " (another CompiledKernel of the same name)" if other == self.name else ""
            raise ArgumentError(f"{where}: bound= holds arguments that {other!r}{same} bound; a bound set launches only "
                                f"the kernel whose bind() made it: call {self.name}.bind(...)")
        if arrays:
            raise ArgumentError(f"{where}: give either bound= or the arrays ({', '.join(arrays)}), not both")
        raise ArgumentError(f"{where}: bound= holds arguments bound on CUDA device {bound.device}, but device={device} "
                            f"was asked for; bind them on device {device}")


class BoundArguments(list):
    """`CompiledKernel.bind`'s result: the device addresses (a list, in parameter order),
    the device, and the packed kernel parameters a launch hands the driver; with them the
    kernel that bound them and its launcher on that device, and the launcher's direct
    launch (or None), so that `kernel(bound=...)` looks nothing else up; and the arrays
    bound (`arrays`), kept alive with it: a tensor dropped after `bind` would otherwise
    free the memory its address points at."""

    __slots__ = ("device", "params", "kernel", "launcher", "direct", "pointer", "arrays")

    def __init__(self, pointers: tuple[int, ...], device: int, params: KernelParams, kernel: CompiledKernel | None = None,
                 launcher: Launcher | None = None, arrays: tuple[Any, ...] = ()) -> None:
        super().__init__(pointers)
        self.device, self.params, self.kernel, self.launcher, self.arrays = device, params, kernel, launcher, arrays
        self.direct = launcher.direct if launcher is not None else None
        self.pointer = params.pointer


def _tma_plan(p: ParamContract) -> Any:
    """The tensor map a TMA parameter needs, at a stand-in address (each launch encodes
    its own): the contract's dtype, shape and box over a C-contiguous array."""
    if p.tma is None or p.dtype is None or p.shape is None:
        raise ArgumentError(f"parameter {p.name!r} ({p.arg!r}) is a tensor map, but the launch contract does not give "
                            "its element type, shape and box")
    return plan_tiled(16, normalize_dtype(p.dtype), p.shape, None, p.tma.box, swizzle=p.tma.swizzle)


def _kernel_files(stem: str | Path) -> tuple[Path, Path]:
    """STEM.ptx and STEM.json; `k.v2` keeps its dot, `k.ptx` and `k.json` name the pair `k`."""
    path = Path(stem)
    if path.suffix in (".ptx", ".json"):
        path = path.with_suffix("")
    return path.with_name(path.name + ".ptx"), path.with_name(path.name + ".json")


def _trim(dims: tuple[int, ...]) -> list[int]:
    """(8, 1, 1) -> [8]: the dimensions up to the last that is not 1."""
    out = list(dims)
    while len(out) > 1 and out[-1] == 1:
        out.pop()
    return out


__all__ = ["BoundArguments", "CompiledKernel", "TensorMap", "TmaBox", "check_arguments"]
